//! `profiler flamegraph`: a recording's call stacks (or those of every rank
//! of a job, or of one with `--rank`) as an interactive SVG, written
//! atomically to a file, or to the standard output with `-o -`.

use std::process::ExitCode;

use anyhow::Result;
use profiler_model::{CallGraph, Recording};
use profiler_report::{FlameOptions, StackOptions, ThreadFrames, render_flamegraph};

use crate::args::FlamegraphArgs;
use crate::job_input::open_inputs;
use crate::messages::say;
use crate::output::{describe, write_output};

pub fn run(args: FlamegraphArgs) -> Result<ExitCode> {
    let inputs = open_inputs(&args.input.paths, false)?.only_rank(args.job.rank)?;
    let recording = inputs.recording();
    let options = StackOptions {
        event: args.event.clone(),
        fold_inline: args.no_inline,
        filter: args.filter.filter(),
        ..StackOptions::default()
    };
    let thread_frames = ThreadFrames {
        process: false,
        thread: args.per_thread,
    };
    let stacks = (inputs.read_stacks(&args.symbols, &options)?).folded(thread_frames);
    let flame = FlameOptions {
        title: args
            .title
            .unwrap_or_else(|| recording.header.command.join(" ")),
        subtitle: Some(subtitle(recording, stacks.total())),
        reverse: args.reverse,
        inverted: args.inverted,
        min_width: args.min_width,
        count_name: "samples".into(),
    };
    write_output(&args.output, |out| {
        Ok(render_flamegraph(&stacks, &flame, out)?)
    })?;
    say!(
        "profiler: wrote {} ({} samples); open it in a browser",
        describe(&args.output),
        stacks.total()
    );
    Ok(ExitCode::SUCCESS)
}

/// `cpu-clock, 1262 samples, frame-pointer stacks`, and the ranks of a
/// job's.
fn subtitle(recording: &Recording, samples: u64) -> String {
    let stacks = match recording.header.call_graph {
        Some(CallGraph::FramePointer) => "frame-pointer stacks",
        Some(CallGraph::Dwarf { .. }) => "DWARF-unwound stacks",
        None => "no call stacks (record with -g or --call-graph dwarf)",
    };
    let events: Vec<&str> = recording
        .header
        .events
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    let job = recording.header.job.as_ref();
    let ranks = match (job.and_then(|j| j.rank), job.and_then(|j| j.size)) {
        (Some(rank), _) => format!(", rank {rank}"),
        (None, Some(size)) => format!(", {size} ranks"),
        (None, None) => String::new(),
    };
    format!("{}, {samples} samples, {stacks}{ranks}", events.join(", "))
}
