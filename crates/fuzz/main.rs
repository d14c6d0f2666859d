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

mod args;
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

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;

use crate::args::Args;

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
