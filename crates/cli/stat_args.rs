//! `profiler stat`'s command line.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use crate::shared_args::{Format, TargetArgs, parse_seconds};

pub(crate) const STAT_AFTER_HELP: &str = "\
Each count is scaled for multiplexing (count × enabled / running) and followed by the share of \
the time its counter ran. Default events: task-clock (cpu-clock with -a, -C), context-switches, \
cpu-migrations, page-faults, cycles and instructions; those the machine cannot count show as \
<not supported>.

-p and -t count until the processes or threads all exit, --duration is up or Ctrl-C; -a and -C \
count every task on the CPUs until --duration is up or Ctrl-C.

Exit status: the command's own, or 128+N if a signal N ended it; 125 if the profiler failed, \
126 if the command cannot be run, 127 if it was not found.";

#[derive(Debug, Args)]
pub(crate) struct StatArgs {
    /// Event to count, e.g. task-clock, page-faults, cycles; several separated by commas, or
    /// -e again; NAME:u or NAME:k to count only user space or only the kernel [default: both
    /// where the kernel allows]
    #[arg(short = 'e', long = "event", value_name = "EVENT[,EVENT...]")]
    pub events: Vec<String>,

    #[command(flatten)]
    pub target: TargetArgs,

    /// Also print the counts of every MS milliseconds as they pass (at least 10)
    #[arg(short = 'I', long = "interval-ms", value_name = "MS")]
    pub interval_ms: Option<u64>,

    /// Stop counting processes, threads or CPUs after SECS seconds
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub duration: Option<std::time::Duration>,

    /// One row per thread (with -p or -t)
    #[arg(long)]
    pub per_thread: bool,

    /// Output format: text, or JSON (with --interval-ms, one object per line per interval,
    /// then the totals)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Write the counts to FILE [default: text to the standard error, as perf stat writes
    /// it; JSON to the standard output]
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The command to count, with its arguments
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        required_unless_present_any = ["pids", "tids", "all_cpus", "cpus"],
        conflicts_with_all = ["pids", "tids", "all_cpus", "cpus"]
    )]
    pub command: Vec<OsString>,
}
