//! `profiler top`'s command line.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use crate::shared_args::{SymbolArgs, TargetArgs, parse_seconds};

#[derive(Debug, Args)]
#[command(after_help = TOP_AFTER_HELP)]
pub(crate) struct TopArgs {
    /// Event to sample, e.g. cpu-clock, cycles, page-faults; repeatable (e switches between
    /// them) [default: cycles, or cpu-clock where the machine has no hardware counters]
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,

    /// Take a sample every THRESHOLD occurrences of each event
    #[arg(
        short = 'c',
        long = "count",
        value_name = "THRESHOLD",
        conflicts_with = "frequency"
    )]
    pub threshold: Option<u64>,

    /// Take about HZ samples per second [default: 4000]
    #[arg(short = 'F', long = "freq", value_name = "HZ")]
    pub frequency: Option<u64>,

    /// Sample call stacks (frame pointers), for the panel of callers (g)
    #[arg(short = 'g')]
    pub call_graph: bool,

    /// Also sample the kernel's execution (needs kernel.perf_event_paranoid <= 1, CAP_PERFMON
    /// or root)
    #[arg(long)]
    pub kernel: bool,

    #[command(flatten)]
    pub target: TargetArgs,

    /// Refresh every SECS seconds
    #[arg(short = 'd', long = "delay", value_name = "SECS", default_value = "1", value_parser = parse_seconds)]
    pub delay: std::time::Duration,

    /// Print a table every interval instead of the full screen [the default when the output
    /// is not a terminal]
    #[arg(long)]
    pub stdio: bool,

    /// Rows of each table with --stdio
    #[arg(long, value_name = "N", default_value_t = 25)]
    pub rows: usize,

    /// Stop after SECS seconds (not with a command, which is sampled until it exits)
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, conflicts_with = "command")]
    pub duration: Option<std::time::Duration>,

    /// Show a recording on the same screen instead (as `profiler report --tui FILE`)
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["events", "threshold", "frequency", "call_graph", "kernel",
            "all_cpus", "cpus", "pids", "tids", "stdio", "duration", "command"]
    )]
    pub replay: Option<PathBuf>,

    #[command(flatten)]
    pub symbols: SymbolArgs,

    /// A command to launch and sample until it exits
    #[arg(value_name = "COMMAND", trailing_var_arg = true)]
    pub command: Vec<OsString>,
}

const TOP_AFTER_HELP: &str = "\
Keys: q quit, s sort by symbol, module, command or pid, e next event, / filter by name, z zero \
the counts, d decaying counts, Enter annotate the selected function, g callers and callees (with \
-g), ? help. Without a target every CPU is sampled where that is allowed, else your own \
processes. NO_COLOR turns colours off.";
