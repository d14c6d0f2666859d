//! `profiler stat`'s command line.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use crate::shared_args::{CpuList, Format, parse_cpu_list, parse_seconds};

pub(crate) const STAT_AFTER_HELP: &str = "\
Each count is scaled for multiplexing (count × enabled / running) and followed by the share of \
the time its counter ran. Default events: task-clock (cpu-clock with -a, -C), context-switches, \
cpu-migrations, page-faults, cycles and instructions; those the machine cannot count show as \
<not supported>.

Exit status: the command's own, or 128+N if a signal N ended it; 125 if the profiler failed, \
126 if the command cannot be run, 127 if it was not found.";

#[derive(Debug, Args)]
pub(crate) struct StatArgs {
    /// Event to count, e.g. task-clock, page-faults, cycles; several separated by commas, or
    /// -e again; NAME:u or NAME:k to count only user space or only the kernel [default: both
    /// where the kernel allows]
    #[arg(short = 'e', long = "event", value_name = "EVENT[,EVENT...]")]
    pub events: Vec<String>,

    /// Count these running processes, every thread of them, until they exit or Ctrl-C
    #[arg(
        short = 'p',
        long = "pid",
        value_name = "PID[,PID...]",
        value_delimiter = ',',
        conflicts_with_all = ["tids", "all_cpus", "cpus"]
    )]
    pub pids: Vec<u32>,

    /// Count these threads, until they exit or Ctrl-C
    #[arg(
        short = 't',
        long = "tid",
        value_name = "TID[,TID...]",
        value_delimiter = ',',
        conflicts_with_all = ["all_cpus", "cpus"]
    )]
    pub tids: Vec<u32>,

    /// Count every task on every online CPU, until Ctrl-C (needs
    /// kernel.perf_event_paranoid <= 0 or CAP_PERFMON)
    #[arg(short = 'a', long = "all-cpus", conflicts_with = "cpus")]
    pub all_cpus: bool,

    /// Count every task on these CPUs, e.g. 0-3,8
    #[arg(short = 'C', long = "cpu", value_name = "LIST", value_parser = parse_cpu_list)]
    pub cpus: Option<CpuList>,

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
