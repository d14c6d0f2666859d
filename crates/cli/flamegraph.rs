//! `profiler flamegraph`: a recording's call stacks as an interactive SVG,
//! written atomically to a file, or to the standard output with `-o -`.

use std::process::ExitCode;

use anyhow::Result;
use profiler_model::{CallGraph, Recording};
use profiler_report::{
    FlameOptions, StackOptions, StackWeight, ThreadFrames, read_stacks, render_flamegraph,
};

use crate::args::FlamegraphArgs;
use crate::messages::say;
use crate::output::{describe, write_output};
use crate::symbols::with_symbolizer;

pub fn run(args: FlamegraphArgs) -> Result<ExitCode> {
    let recording = crate::input::open(&args.input.path)?;
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
    let stacks = with_symbolizer(&args.symbols, &recording, |symbolizer, unwinder| {
        read_stacks(&recording, symbolizer, unwinder, &options)
    })?;
    let event = stacks.first_event().unwrap_or_default();
    let stacks = stacks.folded(thread_frames);
    let unit = stacks.weight.unit();
    let flame = FlameOptions {
        title: args
            .title
            .unwrap_or_else(|| recording.header.command.join(" ")),
        subtitle: Some(subtitle(&recording, &event, stacks.total(), stacks.weight)),
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
/// 1.234 s off the CPU, ...`.
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
    format!("{event}, {total}, {stacks}")
}
