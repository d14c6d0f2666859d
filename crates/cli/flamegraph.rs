//! `profiler flamegraph`: a recording's call stacks (or those of every rank
//! of a job, or of one with `--rank`) as an interactive SVG, written
//! atomically to a file, or to the standard output with `-o -`.

use std::process::ExitCode;

use anyhow::Result;
use profiler_model::{CallGraph, Recording};
use profiler_report::{FlameOptions, StackOptions, StackWeight, ThreadFrames, render_flamegraph};

use crate::args::FlamegraphArgs;
use crate::job_input::open_inputs;
use crate::messages::say;
use crate::output::{describe, write_output};

pub(crate) fn run(args: FlamegraphArgs) -> Result<ExitCode> {
    let inputs = open_inputs(&args.input.paths, false)?.only_rank(args.job.rank)?;
    let recording = inputs.recording();
    let options = StackOptions {
        event: args.event.clone(),
        without_inline_frames: args.no_inline,
        filter: args.filter.filter(),
        ..StackOptions::default()
    };
    let thread_frames = ThreadFrames {
        process: false,
        thread: args.per_thread,
    };
    let stacks = inputs.read_stacks(&args.symbols, &options)?;
    let event = stacks.first_event().unwrap_or_default();
    let stacks = stacks.folded(thread_frames);
    let unit = stacks.weight.unit();
    let flame = FlameOptions {
        title: args
            .title
            .unwrap_or_else(|| recording.header.command.join(" ")),
        subtitle: Some(subtitle(recording, &event, stacks.total(), stacks.weight)),
        reverse: args.reverse,
        inverted: args.inverted,
        min_width: args.min_width,
        count_name: unit.into(),
    };
    write_output(&args.output, |out| {
        Ok(render_flamegraph(&stacks, &flame, out)?)
    })?;
    say!(
        "profiler: wrote {} ({} {unit}); open it in a browser",
        describe(&args.output),
        stacks.total()
    );
    Ok(ExitCode::SUCCESS)
}

/// `cpu-clock, 1262 samples, frame-pointer stacks`, or `off-cpu,
/// 1.234 s off the CPU, ...`, and the ranks of a job's.
fn subtitle(recording: &Recording, event: &str, total: u64, weight: StackWeight) -> String {
    let stacks = match recording.header.call_graph {
        Some(CallGraph::FramePointer) => "frame-pointer stacks",
        Some(CallGraph::Dwarf { .. }) => "DWARF-unwound stacks",
        None => "no call stacks (record with -g or --call-graph dwarf)",
    };
    let seconds = total as f64 / 1e9;
    let total = match weight {
        StackWeight::Samples => format!("{total} samples"),
        StackWeight::OffCpu => format!("{seconds:.3} s off the CPU"),
        StackWeight::Wall => format!("{seconds:.3} s on and off the CPU"),
    };
    let job = recording.header.job.as_ref();
    let ranks = match (job.and_then(|j| j.rank), job.and_then(|j| j.size)) {
        (Some(rank), _) => format!(", rank {rank}"),
        (None, Some(size)) => format!(", {size} ranks"),
        (None, None) => String::new(),
    };
    format!("{event}, {total}, {stacks}{ranks}")
}
