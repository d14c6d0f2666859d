//! What several subcommands' arguments share, apart from the command line
//! that gathers them (`args`, `top_args`): the CPUs of `-C`, durations in
//! seconds and how code is named.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// The CPUs of `-C`: one value for clap, however many CPUs it names.
#[derive(Clone, Debug)]
pub(crate) struct CpuList(pub Vec<usize>);

pub(crate) fn parse_cpu_list(text: &str) -> Result<CpuList, String> {
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
