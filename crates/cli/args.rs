//! The command line, as clap sees it. Conversion into library configs lives
//! beside each subcommand.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "profiler",
    version,
    about = "A statistical program-counter sampling profiler for Linux",
    long_about = "A statistical program-counter sampling profiler for Linux.\n\n\
        Record a command with `profiler record -- COMMAND`, then read the recording with \
        `profiler report`."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command and record program-counter samples of it and its descendants
    #[command(after_help = RECORD_AFTER_HELP)]
    Record(RecordArgs),
    /// Print a flat per-function profile of a recording
    Report(ReportArgs),
}

const RECORD_AFTER_HELP: &str = "\
Each -c or -F applies to the -e before it; given before any -e, it applies to every event \
without its own.

Exit status: the command's own, or 128+N if a signal N ended it; 125 if the profiler \
failed, 126 if the command cannot be run, 127 if it was not found.";

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Event to sample, e.g. cycles, instructions, cpu-clock, page-faults; NAME:u or NAME:k
    /// to count only user space or only the kernel [default: cycles, or cpu-clock where the
    /// machine has no hardware counters]
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,

    /// Take a sample every THRESHOLD occurrences of the event (PAPI's threshold, libcpc's
    /// preset); for cpu-clock and task-clock, every THRESHOLD nanoseconds
    #[arg(short = 'c', long = "count", value_name = "THRESHOLD")]
    pub thresholds: Vec<u64>,

    /// Take about HZ samples per second [default: 4000]
    #[arg(short = 'F', long = "freq", value_name = "HZ")]
    pub frequencies: Vec<u64>,

    /// Where to write the recording
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "profiler.data"
    )]
    pub output: PathBuf,

    /// The command to profile, with its arguments
    #[arg(
        value_name = "COMMAND",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The recording to read
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        default_value = "profiler.data"
    )]
    pub input: PathBuf,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Rows: one per function (symbol) or one per module
    #[arg(long, value_enum, default_value_t = SortKey::Symbol)]
    pub sort: SortKey,

    /// Hide rows below P percent of the samples
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub percent_limit: f64,

    /// Report only this event (by name, or by its position from 0) [default: every event]
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortKey {
    Symbol,
    Module,
}
