//! `profiler flamegraph`: a recording's call stacks as an interactive SVG,
//! written atomically to a file, or to the standard output with `-o -`.

use std::process::ExitCode;

use anyhow::Result;
use profiler_model::{CallGraph, Recording};
use profiler_report::{FlameOptions, StackOptions, ThreadFrames, read_stacks, render_flamegraph};

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
    })?
    .folded(thread_frames);
    let flame = FlameOptions {
        title: args
            .title
            .unwrap_or_else(|| recording.header.command.join(" ")),
        subtitle: Some(subtitle(&recording, stacks.total())),
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

/// `cpu-clock, 1262 samples, frame-pointer stacks`.
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
    format!("{}, {samples} samples, {stacks}", events.join(", "))
}
