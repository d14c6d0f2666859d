//! `fuzz`: mutation fuzzing of the readers that take hostile files, on
//! stable Rust. Each target feeds mutated inputs (bit flips, interesting
//! values, chunks duplicated, cut or spliced between seeds) to one reader:
//! the profiler's recordings, perf.data files, event strings, ELF and DWARF
//! images. Seeds are built in and taken from `--corpus` directories (the
//! recordings the tests leave in target/test-scratch, the fixture
//! binaries).
//!
//! Recordings are also rearranged whole: chunks dropped, repeated or moved
//! with their checksums intact.
//!
//! Every input runs in a worker process (this binary again) under a cap
//! on its address space and a watchdog, so a panic, an abort, a hang or a
//! runaway allocation is a finding, and so is an input whose peak of
//! resident memory crosses the ceiling (1 GiB, what the readers promise):
//! the input is saved under target/fuzz-findings as TARGET-N.bin, to be
//! replayed with `--replay`.
//!
//! ```text
//! fuzz recording --seconds 60 --corpus target/test-scratch
//! fuzz symbols --seconds 600 --corpus target/fixtures --corpus fixtures
//! fuzz symbols --replay target/fuzz-findings/symbols-0.bin
//! ```

mod corpus;
mod events;
mod mutate;
mod perfdata;
mod recording;
mod rng;
mod runner;
mod structure;
mod symbols;
mod target;
mod views;
mod worker;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use crate::target::Target;

/// Fuzzes one of the profiler's readers for a bounded time, or replays an
/// input it found.
#[derive(Parser, Debug)]
#[command(name = "fuzz")]
pub struct Args {
    /// What to fuzz: recording, perfdata, events or symbols.
    #[arg(value_parser = Target::by_name)]
    target: &'static Target,
    /// How long to fuzz, in seconds.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// A directory (searched recursively) or file of seed inputs; the
    /// files the target reads are picked out of it. May be repeated.
    #[arg(long)]
    corpus: Vec<PathBuf>,
    /// The random generator's seed; by default one from the clock, printed
    /// so that a run can be repeated.
    #[arg(long)]
    seed: Option<u64>,
    /// An input still running after this many seconds is a hang.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// The address space each worker may use, in MiB: a reader that wants
    /// more is a finding. The readers' own budgets are below it (1 GiB of
    /// histogram buckets, two rounds of 2 GiB for perf.data's sorting).
    #[arg(long, default_value_t = 4096)]
    memory_mib: u64,
    /// The resident memory one input may take at its peak, in MiB: an
    /// input that takes more is a finding. The readers promise 1 GiB.
    #[arg(long, default_value_t = 1024)]
    ceiling_mib: u64,
    /// Where findings are saved.
    #[arg(long, default_value = "target/fuzz-findings")]
    findings: PathBuf,
    /// Runs this one input (a saved finding) and says how it ends.
    #[arg(long, conflicts_with = "corpus")]
    replay: Option<PathBuf>,
    /// Runs as a worker: inputs on stdin, one byte on stdout after each.
    #[arg(long, hide = true)]
    worker: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fuzz: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<ExitCode> {
    if args.worker {
        worker::serve(args.target, args.memory_mib)?;
        return Ok(ExitCode::SUCCESS);
    }
    let findings = match &args.replay {
        Some(path) => runner::replay(&args, path)?,
        None => runner::fuzz(&args)?,
    };
    Ok(match findings {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
