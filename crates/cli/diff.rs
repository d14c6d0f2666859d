//! `profiler diff BASE NEW`: per-function changes between two recordings
//! (each may be a job's: a directory, or a quoted glob), and on request a
//! differential flame graph.

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use profiler_model::Recording;
use profiler_report::{
    EventProfile, FlameOptions, ReportOptions, StackOptions, StackProfile, ThreadFrames,
    diff_profiles, flat_profile, pair_modules, render_diff_flamegraph, render_diff_json,
    render_diff_text,
};

use crate::args::{DiffArgs, Format};
use crate::job_input::{Inputs, open_inputs};
use crate::messages::say;
use crate::output::{describe, is_stdout, write_output};
use crate::symbols::with_symbolizer_for;

pub(crate) fn run(args: DiffArgs) -> Result<ExitCode> {
    let base = open_inputs(std::slice::from_ref(&args.base), false)?;
    let new = open_inputs(std::slice::from_ref(&args.new), false)?;
    let options = StackOptions {
        event: Some(args.event.clone().unwrap_or_else(|| "0".into())),
        ..StackOptions::default()
    };
    // One symbolizer for both, with the archives of both: the same files
    // are named once. Whether the kernel's symbols apply is judged by the
    // newer recording.
    let recordings = [base.recordings(), new.recordings()].concat();
    let (base_stacks, new_stacks) =
        with_symbolizer_for(&args.symbols, &recordings, |symbolizer, unwinder| {
            let read = |inputs: &Inputs, path: &Path| {
                (inputs.read_with(symbolizer, unwinder, &options))
                    .map_err(|error| anyhow!("{}: {error}", path.display()))
            };
            Ok::<_, anyhow::Error>((read(&base, &args.base)?, read(&new, &args.new)?))
        })?;
    let diff = diff_profiles(
        &event_profile(base.recording(), &base_stacks, &args.base, args.inline)?,
        &event_profile(new.recording(), &new_stacks, &args.new, args.inline)?,
        &pair_modules(base.recording(), new.recording()),
        args.percent_limit,
    );
    // With the flame graph on the standard output, the table goes to the
    // standard error.
    let table: Box<dyn Write> = match args.flamegraph.as_deref().is_some_and(is_stdout) {
        true => Box::new(io::stderr().lock()),
        false => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::new(table);
    match args.format {
        Format::Text => render_diff_text(&diff, args.width.row_width(), &mut out)?,
        Format::Json => render_diff_json(&diff, &mut out)?,
    }
    out.flush()?;

    if let Some(path) = &args.flamegraph {
        let flame = FlameOptions {
            title: format!("{} against {}", args.new.display(), args.base.display()),
            ..FlameOptions::default()
        };
        let (base, new) = (
            base_stacks.folded(ThreadFrames::default()),
            new_stacks.folded(ThreadFrames::default()),
        );
        write_output(path, |out| {
            Ok(render_diff_flamegraph(&base, &new, &flame, out)?)
        })?;
        say!("profiler: wrote {}; open it in a browser", describe(path));
    }
    Ok(ExitCode::SUCCESS)
}

/// The rows of the compared event, every function with its total.
fn event_profile(
    recording: &Recording,
    stacks: &StackProfile,
    path: &Path,
    inline: bool,
) -> Result<EventProfile> {
    let options = ReportOptions {
        children: true,
        inline,
        ..ReportOptions::default()
    };
    flat_profile(recording, stacks, &options)
        .events
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("{} has no samples of the event", path.display()))
}
