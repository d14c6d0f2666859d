//! The command line, and the targets it names.

use std::path::PathBuf;

use clap::Parser;

use crate::target::Target;
use crate::{events, perfdata, recording, symbols};

/// Fuzzes one of the profiler's readers for a bounded time, or replays an
/// input it found.
#[derive(Parser, Debug)]
#[command(name = "fuzz")]
pub(crate) struct Args {
    /// What to fuzz: recording, perfdata, events or symbols.
    #[arg(value_parser = target_by_name)]
    pub(crate) target: &'static Target,
    /// How long to fuzz, in seconds.
    #[arg(long, default_value_t = 60)]
    pub(crate) seconds: u64,
    /// A directory (searched recursively) or file of seed inputs; the
    /// files the target reads are picked out of it. May be repeated.
    #[arg(long)]
    pub(crate) corpus: Vec<PathBuf>,
    /// The random generator's seed; by default one from the clock, printed
    /// so that a run can be repeated.
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// An input still running after this many seconds is a hang.
    #[arg(long, default_value_t = 10)]
    pub(crate) timeout: u64,
    /// The address space each worker may use, in MiB: a reader that wants
    /// more is a finding. The readers' own budgets are below it (1 GiB of
    /// histogram buckets, two rounds of 2 GiB for perf.data's sorting).
    #[arg(long, default_value_t = 4096)]
    pub(crate) memory_mib: u64,
    /// The resident memory one input may take at its peak, in MiB: an
    /// input that takes more is a finding. The readers promise 1 GiB.
    #[arg(long, default_value_t = 1024)]
    pub(crate) ceiling_mib: u64,
    /// Where findings are saved.
    #[arg(long, default_value = "target/fuzz-findings")]
    pub(crate) findings: PathBuf,
    /// Runs this one input (a saved finding) and says how it ends.
    #[arg(long, conflicts_with = "corpus")]
    pub(crate) replay: Option<PathBuf>,
    /// Runs as a worker: inputs on stdin, one byte on stdout after each.
    #[arg(long, hide = true)]
    pub(crate) worker: bool,
}

/// Every target, by the name the command line gives it.
static TARGETS: [Target; 4] = [
    recording::TARGET,
    perfdata::TARGET,
    events::TARGET,
    symbols::TARGET,
];

fn target_by_name(name: &str) -> Result<&'static Target, String> {
    TARGETS.iter().find(|t| t.name == name).ok_or_else(|| {
        let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        format!("no target {name}: choose one of {}", names.join(", "))
    })
}
