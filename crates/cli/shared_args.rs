//! What several subcommands' arguments share, apart from the command line
//! that gathers them (`args`, `top_args`): the running tasks or CPUs to
//! watch, durations in seconds and how code is named.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use profiler_sampler::Target;

/// What `record`, `top` and `stat` watch other than a command they launch
/// (each subcommand's after-help says until when). Each conflicts with the
/// subcommand's `command` argument except -a and -C, which `record` and
/// `top` run beside one.
#[derive(Debug, Default, Args)]
pub(crate) struct TargetArgs {
    /// Attach to these running processes: every thread they have, and the threads and children
    /// they start later
    #[arg(
        short = 'p',
        long = "pid",
        value_name = "PID[,PID...]",
        value_delimiter = ',',
        conflicts_with_all = ["tids", "all_cpus", "cpus", "command"]
    )]
    pub pids: Vec<u32>,

    /// Attach to these running threads, and the threads they start later
    #[arg(
        short = 't',
        long = "tid",
        value_name = "TID[,TID...]",
        value_delimiter = ',',
        conflicts_with_all = ["all_cpus", "cpus", "command"]
    )]
    pub tids: Vec<u32>,

    /// Every process on every online CPU (needs kernel.perf_event_paranoid <= 0, CAP_PERFMON or
    /// root)
    #[arg(short = 'a', long = "all-cpus")]
    pub all_cpus: bool,

    /// Every process on these CPUs, e.g. 0,2-3 (privileged, as -a)
    #[arg(short = 'C', long = "cpu", value_name = "LIST", value_parser = parse_cpu_list)]
    pub cpus: Option<CpuList>,
}

impl TargetArgs {
    /// Whether none of -p, -t, -a and -C was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.pids.is_empty() && self.tids.is_empty() && !self.all_cpus && self.cpus.is_none()
    }

    /// The target these options and `command` name (clap has refused the
    /// combinations that cannot be meant): without any option, the
    /// command.
    pub(crate) fn target(self, command: Vec<OsString>) -> Target {
        if !self.pids.is_empty() {
            Target::Processes(self.pids)
        } else if !self.tids.is_empty() {
            Target::Threads(self.tids)
        } else if self.all_cpus || self.cpus.is_some() {
            Target::SystemWide {
                cpus: self.cpus.map(|CpuList(cpus)| cpus),
                command: (!command.is_empty()).then_some(command),
            }
        } else {
            Target::Command(command)
        }
    }
}

/// The CPUs of `-C`: one value for clap, however many CPUs it names.
#[derive(Clone, Debug)]
pub(crate) struct CpuList(pub Vec<usize>);

fn parse_cpu_list(text: &str) -> Result<CpuList, String> {
    profiler_events::parse_cpu_list(text)
        .map(CpuList)
        .map_err(|error| error.to_string())
}

pub(crate) fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|seconds| *seconds > 0.0)
        .and_then(|seconds| std::time::Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| format!("'{text}' is not a number of seconds above 0; e.g. 2.5"))
}

/// How a reading subcommand names code.
#[derive(Debug, Args)]
#[command(next_help_heading = "Symbols")]
pub(crate) struct SymbolArgs {
    /// Also look for separate debug files here (by build-id, `.build-id/xx/yyyy.debug`, and by
    /// debuglink name), before /usr/lib/debug; repeatable
    #[arg(long = "debug-dir", value_name = "DIR")]
    pub debug_dirs: Vec<PathBuf>,

    /// Keep C++ argument lists and return types in names
    #[arg(long)]
    pub full_signatures: bool,

    /// Name code with N threads at most [default: one per CPU]; what is printed is the same
    /// with any number
    #[arg(long, value_name = "N")]
    pub jobs: Option<std::num::NonZeroUsize>,

    /// Name code afresh from its files, without the names kept from earlier runs in
    /// $XDG_CACHE_HOME/profiler (or ~/.cache/profiler); what is printed is the same either way
    #[arg(long)]
    pub no_symbol_cache: bool,
}

/// Text for people, or JSON for programs: `report`, `stat` and `hist`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Text,
    Json,
}
