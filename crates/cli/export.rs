//! `profiler export`: a recording (or every rank of a job, or one with
//! `--rank`) in another tool's format, written atomically (or, for folded
//! stacks, to the standard output).

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use profiler_histogram::Scale;
use profiler_report::{
    HistOptions, StackOptions, StackProfile, ThreadFrames, render_firefox, render_pprof,
    render_speedscope, write_gmon, write_job_gmon,
};

use crate::args::{ExportArgs, ExportFormat};
use crate::job_input::{Inputs, open_inputs};
use crate::messages::say;
use crate::output::{describe, write_output};

pub fn run(args: ExportArgs) -> Result<ExitCode> {
    let inputs = open_inputs(&args.input.paths, false)?.only_rank(args.job.rank)?;
    match args.format {
        ExportFormat::Gmon => export_gmon(&args, &inputs),
        ExportFormat::Folded => export_folded(&args, &inputs),
        ExportFormat::Pprof => export_pprof(&args, &inputs),
        ExportFormat::Firefox | ExportFormat::Speedscope => export_timeline(&args, &inputs),
    }
}

fn export_gmon(args: &ExportArgs, inputs: &Inputs) -> Result<ExitCode> {
    let output = args.output.as_deref().unwrap_or(Path::new("gmon.out"));
    let options = HistOptions {
        event: args.event.clone(),
        module: args.module.clone(),
        width: None,
        scale: args.scale.map(Scale::new).transpose().context("--scale")?,
    };
    let symbolizer = crate::symbols::symbolizer_for(&args.symbols, &inputs.recordings());
    let summary = write_output(output, |out| match inputs {
        Inputs::One(recording) => Ok(write_gmon(recording, &symbolizer, &options, out)?),
        Inputs::Job(job) => Ok(write_job_gmon(job, &symbolizer, &options, out)?),
    })?;
    let capped = match summary.capped {
        0 => String::new(),
        n => format!(" ({n} bins capped at 65535)"),
    };
    let picked = match summary.picked {
        true => format!(
            " (the module with the most samples, {:.1}% of them; another with --module)",
            summary.samples as f64 * 100.0 / summary.event_samples.max(1) as f64
        ),
        false => String::new(),
    };
    say!(
        "profiler: wrote {}: {} samples of {} in {}{picked} in {} bins{capped}; read it with \
         `gprof -p -b {} {}`",
        describe(output),
        summary.samples,
        summary.event,
        summary.module,
        summary.bins,
        summary.path,
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn export_folded(args: &ExportArgs, inputs: &Inputs) -> Result<ExitCode> {
    let options = StackOptions {
        event: args.event.clone(),
        fold_inline: args.no_inline,
        ..StackOptions::default()
    };
    let thread_frames = ThreadFrames {
        process: args.pid,
        thread: args.tid,
    };
    let stacks = (inputs.read_stacks(&args.symbols, &options)?).folded(thread_frames);
    match &args.output {
        Some(path) => write_output(path, |out| Ok(stacks.write(out)?))?,
        None => {
            let mut out = BufWriter::new(io::stdout().lock());
            stacks.write(&mut out)?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn export_pprof(args: &ExportArgs, inputs: &Inputs) -> Result<ExitCode> {
    let output = args.output.as_deref().unwrap_or(Path::new("profile.pb.gz"));
    let options = StackOptions {
        event: args.event.clone(),
        fold_inline: args.no_inline,
        locations: true,
        ..StackOptions::default()
    };
    let stacks = inputs.read_stacks(&args.symbols, &options)?;
    let recording = inputs.recording();
    write_output(output, |out| Ok(render_pprof(recording, &stacks, out)?))?;
    wrote(
        output,
        &stacks,
        &format!("go tool pprof -top {}", output.display()),
    );
    Ok(ExitCode::SUCCESS)
}

/// The formats that replay samples in time order.
fn export_timeline(args: &ExportArgs, inputs: &Inputs) -> Result<ExitCode> {
    let (default, reader) = match args.format {
        ExportFormat::Firefox => (
            "profile.firefox.json",
            "the Firefox Profiler (drop it on https://profiler.firefox.com)",
        ),
        _ => (
            "profile.speedscope.json",
            "speedscope (https://www.speedscope.app, or npx speedscope FILE)",
        ),
    };
    let output = args.output.as_deref().unwrap_or(Path::new(default));
    let options = StackOptions {
        event: args.event.clone(),
        fold_inline: args.no_inline,
        timeline: true,
        ..StackOptions::default()
    };
    let stacks = inputs.read_stacks(&args.symbols, &options)?;
    let recording = inputs.recording();
    write_output(output, |out| match args.format {
        ExportFormat::Firefox => Ok(render_firefox(recording, &stacks, out)?),
        _ => Ok(render_speedscope(recording, &stacks, out)?),
    })?;
    wrote(output, &stacks, reader);
    Ok(ExitCode::SUCCESS)
}

/// `profiler: wrote FILE (N samples); open it with ...`.
fn wrote(output: &Path, stacks: &StackProfile, reader: &str) {
    let samples = stacks.sample_count();
    let s = if samples == 1 { "" } else { "s" };
    say!(
        "profiler: wrote {} ({samples} sample{s}); open it with {reader}",
        describe(output),
    );
}
