//! `profiler archive`: the recording -> the views' own pass over its
//! stacks, named through an Archiver -> the archive -> the recording
//! rewritten with it, atomically. `record --archive` ends the same way.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use profiler_model::{CallGraph, Recording, write_archived};
use profiler_report::{Places, StackOptions, read_stacks};
use profiler_symbols::{Archiver, ElfSymbolizer, ElfUnwinder};

use crate::args::{ArchiveArgs, SymbolArgs};
use crate::messages::say;
use crate::output::{describe, write_output};
use crate::symbols::recording_options;

pub(crate) fn run(args: ArchiveArgs) -> Result<ExitCode> {
    let path = &args.input.path;
    if profiler_perfdata::is_perf_data(path) {
        bail!(
            "{} is a perf.data file: profiler archives its own recordings only; `perf archive` \
             keeps what perf needs to report it elsewhere",
            path.display()
        );
    }
    let recording = crate::input::open(path)?;
    if !recording.trailer.archive.is_empty() {
        say!("profiler: {} is archived already", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    archive(
        &recording,
        &args.symbols,
        args.output.as_deref().unwrap_or(path),
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `recording` with its archive to `output` (which may be the
/// recording itself), and says what it holds.
pub(crate) fn archive(recording: &Recording, symbols: &SymbolArgs, output: &Path) -> Result<()> {
    let path = recording.path();
    if let Some(damage) = &recording.damage {
        bail!(
            "cannot archive {}: it is damaged ({damage}); an archived copy would no longer say \
             what it lost",
            path.display()
        );
    }
    let options = recording_options(symbols, &[recording]);
    let elf = ElfSymbolizer::new(options.clone());
    let archiver = Archiver::new(&elf);
    // Every address any view names: every event, stacks whole, inline
    // chains and lines.
    let stack_options = StackOptions {
        without_inline_frames: false,
        places: Places::Addresses,
        ..StackOptions::default()
    };
    read_stacks(
        recording,
        &archiver,
        &ElfUnwinder::new(&options),
        &stack_options,
    )?;
    let unwind = matches!(recording.header.call_graph, Some(CallGraph::Dwarf { .. }));
    let archived = archiver.finish(unwind);
    let before = std::fs::metadata(path).map_or(0, |m| m.len());
    write_output(output, |out| {
        write_archived(recording, &archived.archive, out)
            .with_context(|| format!("cannot archive {}", path.display()))
    })?;
    for (module, why) in &archived.left_out {
        say!("profiler: warning: {module} is not archived: {why}");
    }
    let archive = &archived.archive;
    let count = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let modules = &archive.modules;
    let addresses = modules.iter().map(|m| m.addresses.len()).sum();
    let code = modules.iter().map(|m| m.code.len()).sum();
    let mut held = vec![
        count(addresses, "address", "addresses"),
        format!("the code of {}", count(code, "function", "functions")),
    ];
    if unwind {
        let tables = modules.iter().filter(|m| m.unwind.is_some()).count();
        held.push(format!(
            "the unwind tables of {}",
            count(tables, "module", "modules")
        ));
    }
    if !archive.kernel.is_empty() {
        held.push(count(archive.kernel.len(), "kernel name", "kernel names"));
    }
    let after = std::fs::metadata(output).map_or(before, |m| m.len());
    say!(
        "profiler: archived {} in {}: {}; {} bytes added",
        count(modules.len(), "module", "modules"),
        describe(output),
        held.join(", "),
        after.saturating_sub(before)
    );
    Ok(())
}
