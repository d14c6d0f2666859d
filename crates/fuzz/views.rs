//! What every view does with a recording, done to a fuzzed one: its records
//! read, its archive, its stacks, the flat profile and call trees, the
//! histogram table, gmon and each export, all written to nowhere.

use std::io;

use profiler_histogram::Scale;
use std::sync::Arc;

use profiler_model::{
    AsmSyntax, Disassembler, Module, NoSymbols, NoUnwinder, Recording, read_archive,
};
use profiler_report::{
    FlameOptions, HistOptions, Places, ReportOptions, RowWidth, StackOptions, ThreadFrames,
    TreeDirection, flat_profile, histogram_table, read_stacks, render_firefox, render_flamegraph,
    render_hist_text, render_json, render_pprof, render_speedscope, render_text,
    stack_completeness, write_gmon,
};
use profiler_symbols::{ArchivedSymbolizer, ElfSymbolizer, ElfUnwinder, SymbolizerOptions};

pub(crate) fn exercise(recording: &Recording) {
    if let Ok(records) = recording.records() {
        records.for_each(drop);
    }
    // With the recording's archive, names come from it, as `--archive`
    // views read them.
    if let Some(read) = read_archive(recording)
        .ok()
        .filter(|r| !r.archive.is_empty())
    {
        let archive = Arc::new(read.archive);
        let options = SymbolizerOptions {
            threads: 1,
            ..SymbolizerOptions::default()
        };
        let symbolizer = ArchivedSymbolizer::new(ElfSymbolizer::new(options), archive.clone());
        let options = StackOptions {
            places: Places::Lines,
            ..StackOptions::default()
        };
        if let Ok(stacks) = read_stacks(recording, &symbolizer, &NoUnwinder, &options) {
            let profile = flat_profile(recording, &stacks, &ReportOptions::default());
            let _ = render_text(&profile, RowWidth::Columns(80), &mut io::sink());
        }
        for module in &archive.modules {
            let module = Module {
                path: module.path.clone(),
                build_id: module.build_id.clone(),
                pid: module.pid,
            };
            for code in archive.module(&module).map_or(&[][..], |m| &m.code[..]) {
                let _ = symbolizer.listing(&module, code.svma, AsmSyntax::Intel);
            }
        }
    }
    let _ = stack_completeness(recording, &NoSymbols, &NoUnwinder);
    // Stack copies walked with the unwind tables of the binaries the
    // recording maps (the fixtures, for the tests' recordings).
    if recording.header.call_graph.is_some() {
        let unwinder = ElfUnwinder::new(&SymbolizerOptions::default());
        let _ = read_stacks(recording, &NoSymbols, &unwinder, &StackOptions::default());
    }
    let exports = StackOptions {
        places: Places::Addresses,
        locations: true,
        timeline: true,
        ..StackOptions::default()
    };
    for options in [StackOptions::default(), exports] {
        let Ok(stacks) = read_stacks(recording, &NoSymbols, &NoUnwinder, &options) else {
            continue;
        };
        let trees = [
            ReportOptions::default(),
            ReportOptions {
                children: true,
                call_graph: Some(TreeDirection::Caller),
                ..ReportOptions::default()
            },
            ReportOptions {
                call_graph: Some(TreeDirection::Callee),
                split_threads: true,
                ..ReportOptions::default()
            },
        ];
        for report in trees {
            let profile = flat_profile(recording, &stacks, &report);
            let _ = render_text(&profile, RowWidth::Columns(80), &mut io::sink());
            let _ = render_json(&profile, &mut io::sink());
        }
        let folded = stacks.folded(ThreadFrames::default());
        let _ = render_flamegraph(&folded, &FlameOptions::default(), io::sink());
        if options.locations {
            let _ = render_pprof(recording, &stacks, io::sink());
            let _ = render_speedscope(recording, &stacks, io::sink());
            let _ = render_firefox(recording, &stacks, io::sink());
        }
    }
    // A mapping may claim up to the 1 GiB of buckets a histogram may take,
    // which a debug build takes tens of seconds to walk: a bucket per 512
    // bytes keeps each input within the watchdog's time, through the same
    // code.
    let hist = HistOptions {
        scale: Scale::new(256).ok(),
        ..HistOptions::default()
    };
    if let Ok(table) = histogram_table(recording, &NoSymbols, &hist) {
        let _ = render_hist_text(&table, RowWidth::Columns(80), &mut io::sink());
    }
    let _ = write_gmon(recording, &NoSymbols, &hist, &mut io::sink());
}
