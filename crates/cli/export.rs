//! `profiler export`: a recording (or every rank of a job, or one with
//! `--rank`) in another tool's format, written atomically (or, for folded
//! stacks, to the standard output).

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use profiler_histogram::Scale;
use profiler_report::{
    HistOptions, StackOptions, StackProfile, ThreadFrames, render_firefox, render_pprof,
    render_speedscope, write_gmon, write_job_gmon,
};
use profiler_symbols::{SymbolTable, symbol_table};

use crate::args::{ExportArgs, ExportFormat};
use crate::job_input::{Inputs, open_inputs};
use crate::messages::say;
use crate::output::{describe, write_output};

pub(crate) fn run(args: ExportArgs) -> Result<ExitCode> {
    let inputs = open_inputs(&args.input.paths, false)?.only_rank(args.job.rank)?;
    match args.format {
        ExportFormat::Gmon => export_gmon(&args, &inputs),
        ExportFormat::Folded => export_folded(&args, &inputs),
        ExportFormat::Pprof => export_pprof(&args, &inputs),
        ExportFormat::Firefox | ExportFormat::Speedscope => export_timeline(&args, &inputs),
    }
}

fn export_gmon(args: &ExportArgs, inputs: &Inputs) -> Result<ExitCode> {
    if let Some(time) = &args.time.time {
        bail!(
            "--time {}: gmon.out holds the histogram of the whole recording; leave out --time",
            time.text()
        );
    }
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
    // gprof names code from the file's .symtab alone: said before gprof
    // says "has no symbols", with the debug file that has them, if any.
    let symbols_from = match symbol_table(Path::new(&summary.path), &args.symbols.debug_dirs) {
        Ok(SymbolTable::InDebugFile(debug)) => {
            say!(
                "profiler: {} is stripped of its symbol table, which gprof names functions from: \
                 give gprof its debug file, {}",
                summary.path,
                debug.display()
            );
            debug.display().to_string()
        }
        Ok(SymbolTable::Missing) => {
            say!(
                "profiler: warning: {} has no symbol table (it is stripped), which gprof names \
                 functions from: gprof will say it has no symbols; install its debug file (e.g. \
                 the -dbg or -dbgsym package) and pass it with --debug-dir if it is elsewhere",
                summary.path
            );
            summary.path.clone()
        }
        _ => summary.path.clone(),
    };
    say!(
        "profiler: wrote {}: {} samples of {} in {}{picked} in {} bins{capped}; read it with \
         `gprof -p -b {} {}`",
        describe(output),
        summary.samples,
        summary.event,
        summary.module,
        summary.bins,
        symbols_from,
        output.display()
    );
    if !summary.unshown.is_empty() {
        let share = |n: u64| n as f64 * 100.0 / summary.samples.max(1) as f64;
        let listed: Vec<String> = (summary.unshown.iter())
            .map(|(name, n)| format!("{name} {:.1}%", share(*n)))
            .collect();
        say!(
            "profiler: gprof shows no row for copies of functions whose names carry GCC's \
             .isra, .part or .cold and the like; their samples count in its total, not for the \
             function before them: {}",
            listed.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn export_folded(args: &ExportArgs, inputs: &Inputs) -> Result<ExitCode> {
    let options = StackOptions {
        event: args.event.clone(),
        without_inline_frames: args.no_inline,
        filter: args.time.filter(),
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
        without_inline_frames: args.no_inline,
        filter: args.time.filter(),
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
        without_inline_frames: args.no_inline,
        filter: args.time.filter(),
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
