//! The command line, as clap sees it. Conversion into library configs lives
//! beside each subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use profiler_report::{SampleFilter, SortKey, TimeSlices};

use crate::perf_options::{
    CallGraphForm, DEFAULT_CALL_GRAPH, PerfReportArgs, parse_report_call_graph,
};
pub(crate) use crate::record_args::{Frequency, HistogramArgs, RecordArgs};
pub(crate) use crate::shared_args::{Format, SymbolArgs, parse_seconds};
use crate::width::WidthArgs;

#[derive(Debug, Parser)]
#[command(
    name = "profiler",
    version,
    about = "A statistical program-counter sampling profiler for Linux",
    long_about = "A statistical program-counter sampling profiler for Linux.\n\n\
        Record a command with `profiler record -- COMMAND`, then read the recording with \
        `profiler report`."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Record program-counter samples of a command and its descendants, of running processes
    /// or threads (-p, -t), or of whole CPUs (-a, -C)
    // An option given again (on the command line after PROFILER_OPTIONS)
    // takes the later value, as perf's do.
    #[command(args_override_self = true)]
    Record(RecordArgs),
    /// Print a flat per-function profile of a recording (--tui: browse it on a full screen)
    Report(ReportArgs),
    /// Print every sample on its own line, as perf script does: command, pid/tid, CPU, time,
    /// period, event and the sampled code, with the stack under it where recorded
    #[command(after_help = SCRIPT_AFTER_HELP)]
    Script(ScriptArgs),
    /// Show the hottest functions live, of every CPU, processes, threads or a command, on a full
    /// screen (or as a table every interval with --stdio)
    Top(crate::top_args::TopArgs),
    /// Print the histogram of a recording: one row per nonzero bucket
    Hist(HistArgs),
    /// Show where inside one function the samples fell: its source lines and instructions
    #[command(after_help = ANNOTATE_AFTER_HELP)]
    Annotate(AnnotateArgs),
    /// Write an interactive flame graph (SVG) of a recording's call stacks
    Flamegraph(FlamegraphArgs),
    /// Compare two recordings: per-function changes, and a differential flame graph
    Diff(DiffArgs),
    /// Write a recording in another tool's format
    Export(ExportArgs),
    /// Add to a recording what reporting it needs of its binaries (names, inline chains, lines,
    /// the sampled functions' code), so that it reports the same without them
    #[command(after_help = ARCHIVE_AFTER_HELP)]
    Archive(ArchiveArgs),
    /// Name addresses of an executable or library read from stdin, like llvm-symbolizer or
    /// addr2line -f -C
    Symbolize(SymbolizeArgs),
    /// List the events this machine knows, and whether each can be counted now
    #[command(after_help = LIST_AFTER_HELP)]
    List(ListArgs),
    /// Count events of a command, processes, threads or whole CPUs: totals, rates, and the
    /// share of time each counter ran
    #[command(after_help = crate::stat_args::STAT_AFTER_HELP)]
    Stat(crate::stat_args::StatArgs),
    /// Show what this machine lets the profiler do, and what to change where something blocks it
    Doctor(DoctorArgs),
    /// Print the completion script of a shell: bash, zsh or fish
    #[command(after_help = COMPLETIONS_AFTER_HELP)]
    Completions(CompletionsArgs),
    /// Print the manual page of the profiler or of a subcommand, or write every page into a
    /// directory
    #[command(after_help = MAN_AFTER_HELP)]
    Man(ManArgs),
}

const COMPLETIONS_AFTER_HELP: &str = "\
Install it where the shell looks for completions:
  profiler completions bash > ~/.local/share/bash-completion/completions/profiler
  profiler completions zsh > ~/.zfunc/_profiler    (with fpath+=(~/.zfunc) before compinit)
  profiler completions fish > ~/.config/fish/completions/profiler.fish";

const MAN_AFTER_HELP: &str = "\
`profiler man record | man -l -` reads a page now; `profiler man --out-dir \
~/.local/share/man/man1` installs profiler(1), profiler-record(1) and the others where man finds \
them.";

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// The subcommand whose page to print [default: the page of profiler itself]
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,

    /// Write the page of profiler and of every subcommand into DIR (profiler.1,
    /// profiler-record.1, ...), making it if need be
    #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
    pub out_dir: Option<PathBuf>,
}

const LIST_AFTER_HELP: &str = "\
Each event is opened for a moment as a counter on the profiler itself, user space only, and \
said usable or not (and why). Raw event descriptors are syntax, not events: nothing is opened.";

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Print JSON: [{"name","group","usable","reason","encoding":{"type","config",...}},...]
    #[arg(long)]
    pub json: bool,

    /// Print every event name and alias and every PMU (as `PMU/`) on one line, separated by
    /// spaces, without opening any: what the completion scripts offer after -e, as perf's
    #[arg(long, conflicts_with = "json")]
    pub raw_dump: bool,
}

const ANNOTATE_AFTER_HELP: &str = "\
SYMBOL is a function with samples, by its demangled name (as any view prints it: `burn \
(inlined)`, `hot_a+0x1c`) or by a prefix only one such function has; or MODULE:ADDRESS for any \
function, the address as nm and objdump print it (e.g. app:0x1139, libc.so.6:9a0f0). A \
function inlined into others has no code of its own: then the places it was inlined are \
listed, each with its samples.";

#[derive(Debug, Args)]
pub(crate) struct AnnotateArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// The function: a name, a unique prefix of one, or MODULE:ADDRESS
    #[arg(value_name = "SYMBOL")]
    pub symbol: String,

    /// Show the source lines only (the disassembly still stands in when the source cannot be
    /// read)
    #[arg(long, conflicts_with_all = ["asm", "both"])]
    pub source: bool,

    /// Show the disassembly only, with the source lines interleaved
    #[arg(long, conflicts_with = "both")]
    pub asm: bool,

    /// Show the source lines, then the disassembly (the default)
    #[arg(long)]
    pub both: bool,

    /// Show only lines and instructions within N of one with samples [default: the whole
    /// function]
    #[arg(long, value_name = "N")]
    pub context: Option<usize>,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Highlight the hottest lines: on a terminal (auto), always or never
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Instruction syntax
    #[arg(short = 'M', long = "asm-syntax", value_enum, default_value_t = AsmSyntaxArg::Att)]
    pub asm_syntax: AsmSyntaxArg,

    /// Read sources from NEW where the debug info says OLD (a directory prefix); repeatable
    #[arg(long = "source-dir", value_name = "OLD=NEW", value_parser = parse_source_dir)]
    pub source_dirs: Vec<(PathBuf, PathBuf)>,

    /// The event to annotate (by name, or by its position from 0) [default: the first]
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,

    #[command(flatten)]
    pub time: TimeArgs,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum AsmSyntaxArg {
    /// AT&T, as objdump and perf annotate write it
    Att,
    Intel,
}

fn parse_source_dir(value: &str) -> Result<(PathBuf, PathBuf), String> {
    match value.split_once('=') {
        Some((old, new)) if !old.is_empty() && !new.is_empty() => {
            Ok((PathBuf::from(old), PathBuf::from(new)))
        }
        _ => Err(format!(
            "'{value}' is not OLD=NEW; e.g. --source-dir /build/app=/home/me/app"
        )),
    }
}

#[derive(Debug, Args)]
#[command(after_help = REPORT_AFTER_HELP)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    pub input: JobInputArgs,

    /// The recording to read, as with -i
    #[arg(value_name = "FILE", conflicts_with = "paths")]
    pub file: Option<PathBuf>,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// What rows are told apart by, each a column: comm (command name), pid, dso (or
    /// module), sym (or symbol), line (or srcline), address, rank (of a job's recordings);
    /// several separated by commas, e.g. comm,dso,sym [default: sym]
    // The full path keeps clap from taking a `Vec` for many values: the
    // whole list is one value.
    #[arg(short = 's', long, value_name = "KEY[,KEY...]", value_parser = SortKey::parse_list)]
    pub sort: Option<::std::vec::Vec<SortKey>>,

    /// Hide rows below P percent of the samples
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub percent_limit: f64,

    /// Report only this event (by name, or by its position from 0) [default: every event]
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,

    /// Count code inlined into a function as the function it was inlined from (the innermost
    /// frame of the debug info) [default: as the function holding the code, as perf report
    /// and gprof count it, with the inlined functions named on its row]
    #[arg(long)]
    pub inline: bool,

    /// The default: code inlined into a function counts as that function's
    #[arg(long, hide = true, conflicts_with = "inline")]
    pub no_inline: bool,

    /// Add a Children column, each function's share with its callees (inclusive time, each
    /// sample once however deep the recursion), and sort by it
    #[arg(long)]
    pub children: bool,

    /// Print the call tree of each event: caller (from main down) or callee (from where the
    /// samples were taken up to main); perf's forms too, e.g. graph,0.5,caller (a threshold
    /// in percent; without one, --percent-limit prunes it); -g alone is graph,0.5,caller
    #[arg(
        short = 'g',
        long,
        value_name = "caller|callee|PERF-FORM",
        num_args = 0..=1,
        default_missing_value = DEFAULT_CALL_GRAPH,
        value_parser = parse_report_call_graph
    )]
    pub call_graph: Option<CallGraphForm>,

    /// One section per thread instead of one for the whole recording
    #[arg(long)]
    pub threads: bool,

    /// The load imbalance of a job's recordings (one per MPI rank): per function, the least,
    /// median, mean and most self time over the ranks, the rank with the most and the
    /// imbalance (most / mean), sorted by (most - mean) x ranks; functions below 0.5% of the
    /// samples are left out unless --percent-limit is given
    #[arg(long, conflicts_with_all = ["call_graph", "threads", "children", "rank"])]
    pub ranks: bool,

    #[command(flatten)]
    pub job: RankArgs,

    #[command(flatten)]
    pub width: WidthArgs,

    /// Browse the recording on a full screen, as `profiler top` shows a running system: Enter
    /// annotates a function, c shows its callers and callees, the bracket keys step a window
    /// through time
    #[arg(long, conflicts_with_all = ["format", "sort", "children", "call_graph", "threads"])]
    pub tui: bool,

    /// With --tui: how long a window the bracket keys step through is, in seconds
    #[arg(long, value_name = "SECS", default_value = "1", value_parser = parse_seconds, requires = "tui")]
    pub window: std::time::Duration,

    #[command(flatten)]
    pub filter: FilterArgs,

    #[command(flatten)]
    pub perf: PerfReportArgs,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

/// One rank of a job's recordings.
#[derive(Debug, Args)]
pub(crate) struct RankArgs {
    /// Of the recordings of a job, read only rank R's
    #[arg(long, value_name = "R")]
    pub rank: Option<u32>,
}

const REPORT_AFTER_HELP: &str = "\
Each sample counts for the function holding its code, as perf report --no-children and gprof \
count it; a function whose samples lie mostly in code inlined into it says so on its row, e.g. \
`hot_a  (92% inlined: burn)`. Rows fit the terminal (or 100 columns): long names lose their \
template arguments, then their middle; -w keeps them whole. With more than one command name in \
the recording, the text report adds a Command column and a line with each command's share.

perf report's spellings are taken with perf's meaning: -i, --stdio, --children and \
--no-children, -n, -q, -g and --call-graph (graph,0.5,caller...), -G, -s/--sort, -F/--fields, \
--percent-limit, --pid, --tid, --time, -c/--comms, -d/--dsos, -S/--symbols, --max-stack, \
--header-only. The default view is perf's --no-children, without a call tree; --pid, --tid and \
--time give shares of the samples they keep, --comms, --dsos and --symbols of the whole event.";

const SCRIPT_AFTER_HELP: &str = "\
Samples are listed in time order, their times in seconds from the recording's first sample \
(those --time takes; perf script prints its clock's own unless --reltime). Lines are laid out \
as perf script lays them out, so that its readers take them: `profiler script | \
stackcollapse-perf.pl | flamegraph.pl > out.svg`, or awk. A function's offset is from its \
start; a stack's addresses in a file are offsets into it, as perf script prints them.";

// The fields' docs are their --help text, where brackets are words
// (`[default]`, `[ and ]`), not links.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Debug, Args)]
#[command(after_help = SCRIPT_AFTER_HELP)]
pub(crate) struct ScriptArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// The recording to read, as with -i
    #[arg(value_name = "FILE", conflicts_with = "path")]
    pub file: Option<PathBuf>,

    /// Only this event (by name, or by its position from 0) [default: every event]
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,

    /// Leave out the frames of inlined functions [default: each inlined function on a line
    /// of its own, `NAME (inlined)`, before the function it was inlined into]
    #[arg(long)]
    pub no_inline: bool,

    /// Each sample's own line only, without its stack
    #[arg(short = 'G', long)]
    pub hide_call_graph: bool,

    /// Read N frames of each stack at most, from the sampled one
    #[arg(long, value_name = "N")]
    pub max_stack: Option<usize>,

    /// perf script's: times from the first sample (always)
    #[arg(long)]
    pub reltime: bool,

    #[command(flatten)]
    pub filter: FilterArgs,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

#[derive(Debug, Args)]
pub(crate) struct FlamegraphArgs {
    #[command(flatten)]
    pub input: JobInputArgs,

    /// Where to write the SVG (- for the standard output); a file is replaced once complete,
    /// a device, FIFO or socket is written in place
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE.svg",
        default_value = "flamegraph.svg"
    )]
    pub output: PathBuf,

    /// The title [default: the recorded command]
    #[arg(long, value_name = "TITLE")]
    pub title: Option<String>,

    /// Merge stacks from their leaves: each function's callers above it
    #[arg(long)]
    pub reverse: bool,

    /// Draw an icicle graph: roots at the top
    #[arg(long)]
    pub inverted: bool,

    /// Leave out frames narrower than this share of the graph's width, in percent
    #[arg(long, value_name = "PERCENT", default_value_t = 0.01)]
    pub min_width: f64,

    /// One tower per thread, under a frame naming it
    #[arg(long)]
    pub per_thread: bool,

    /// The event to draw (by name, or by its position from 0) [default: the first]
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,

    /// Leave out the frames of inlined functions, naming their code after the function it
    /// was inlined into [default: inlined functions are frames of their own, in violet,
    /// named NAME (inlined)]
    #[arg(long)]
    pub no_inline: bool,

    #[command(flatten)]
    pub job: RankArgs,

    #[command(flatten)]
    pub filter: FilterArgs,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The recording to compare against: a file, or a job's recordings (a directory, or a
    /// quoted glob such as 'base.*.data')
    #[arg(value_name = "BASE")]
    pub base: PathBuf,

    /// The recording to compare, as BASE
    #[arg(value_name = "NEW")]
    pub new: PathBuf,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Hide functions whose self and total shares changed by less than P points
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    pub percent_limit: f64,

    /// Compare this event (by name, or by its position from 0) [default: the first]
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,

    /// Also write a differential flame graph of NEW: red where a function's total share grew,
    /// blue where it shrank (- for the standard output; the table then goes to the standard
    /// error)
    #[arg(long, value_name = "OUT.svg")]
    pub flamegraph: Option<PathBuf>,

    /// Count code inlined into a function as the function it was inlined from [default: as
    /// the function holding the code]
    #[arg(long)]
    pub inline: bool,

    /// The default: code inlined into a function counts as that function's
    #[arg(long, hide = true, conflicts_with = "inline")]
    pub no_inline: bool,

    #[command(flatten)]
    pub width: WidthArgs,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

/// Which processes and threads a reading subcommand keeps, and when.
#[derive(Debug, Args)]
pub(crate) struct FilterArgs {
    /// Only samples of these processes
    #[arg(long, value_name = "PID[,PID...]", value_delimiter = ',')]
    pub pid: Vec<u32>,

    /// Only samples of these threads
    #[arg(long, value_name = "TID[,TID...]", value_delimiter = ',')]
    pub tid: Vec<u32>,

    #[command(flatten)]
    pub time: TimeArgs,
}

impl FilterArgs {
    pub(crate) fn filter(&self) -> SampleFilter {
        SampleFilter {
            pids: self.pid.clone(),
            tids: self.tid.clone(),
            time: self.time.time.clone(),
        }
    }
}

/// `--time`: the stretches of the recording a reading subcommand counts.
#[derive(Debug, Args)]
pub(crate) struct TimeArgs {
    /// Only samples taken in these stretches: START,STOP in seconds from the recording's first
    /// sample (either end may be left out; several separated by spaces), or perf's shares of
    /// its time: 10%-20%, or 10%/2 for the second tenth (several separated by commas)
    #[arg(long, value_name = "START,STOP|A%-B%|A%/N", value_parser = TimeSlices::parse)]
    pub time: Option<TimeSlices>,
}

impl TimeArgs {
    /// The samples `--time` keeps.
    pub(crate) fn filter(&self) -> SampleFilter {
        SampleFilter {
            time: self.time.clone(),
            ..SampleFilter::default()
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct HistArgs {
    #[command(flatten)]
    pub input: JobInputArgs,

    /// Only this event (by name, or by its position from 0) [default: every event, side by side]
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,

    /// Only this module (its file name or path)
    #[arg(long, value_name = "MODULE")]
    pub module: Option<String>,

    /// Bucket width in bits: 16, 32 or 64 [default: the recording's, or 16]
    #[arg(long, value_name = "BITS")]
    pub bucket: Option<u64>,

    /// PAPI's scale [default: the recording's, or 65536]; a histogram recording can be
    /// shown at its scale or a coarser one
    #[arg(long, value_name = "SCALE")]
    pub scale: Option<u64>,

    /// Output format
    #[arg(long, value_enum, default_value_t = HistFormat::Text)]
    pub format: HistFormat,

    #[command(flatten)]
    pub width: WidthArgs,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum HistFormat {
    Text,
    Json,
    Csv,
}

const ARCHIVE_AFTER_HELP: &str = "\
For each module with samples, the archive keeps what its file said of every sampled and stack \
address (the function, its inline chain and lines), the extents and code of the functions that \
hold them (for annotate), with dwarf stacks the unwind tables, and the names of sampled kernel \
addresses. Archived modules are named from the archive from then on, whether their files are \
there, rebuilt or gone; source files are not archived (annotate shows lines without them).

The recording is rewritten whole, atomically; a damaged recording or a perf.data file is not \
archived.";

#[derive(Debug, Args)]
pub(crate) struct ArchiveArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Write the archived recording here [default: the recording itself, replaced once
    /// complete]
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The format to write: gmon, the gmon.out of GNU gprof (a 16-bit time histogram of
    /// one module, for `gprof -p -b PROGRAM gmon.out`); folded, collapsed stacks
    /// (`root;...;leaf count` per line, for FlameGraph, inferno and speedscope); pprof, a
    /// gzipped profile.proto for `go tool pprof`, Pyroscope, Parca and Grafana; firefox, the
    /// Firefox Profiler's processed JSON (for profiler.firefox.com: a track per process and
    /// thread, samples in time order); speedscope, speedscope's own JSON (one profile per
    /// thread, samples in time order)
    #[arg(long, value_enum)]
    pub format: ExportFormat,

    #[command(flatten)]
    pub input: JobInputArgs,

    /// Where to write (- for the standard output) [default: gmon.out for gmon, the standard
    /// output for folded, profile.pb.gz for pprof, profile.firefox.json for firefox,
    /// profile.speedscope.json for speedscope]
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// folded: start each stack with its process, `command-PID`
    #[arg(long)]
    pub pid: bool,

    /// folded: start each stack with its thread, `command-PID/TID`
    #[arg(long)]
    pub tid: bool,

    /// Leave out the frames of inlined functions [default: each is a frame of its own, named
    /// `NAME (inlined)` in folded stacks]
    #[arg(long)]
    pub no_inline: bool,

    /// gmon: the module to export (its file name or path) [default: the one with the most
    /// samples]
    #[arg(long, value_name = "MODULE")]
    pub module: Option<String>,

    /// The event to export (by name, or by its position from 0) [default: the first; every
    /// event for pprof]
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,

    /// PAPI's scale for the bins of a full recording, a power of two [default: 65536, one
    /// bin per 2 bytes]
    #[arg(long, value_name = "SCALE")]
    pub scale: Option<u64>,

    #[command(flatten)]
    pub time: TimeArgs,

    #[command(flatten)]
    pub job: RankArgs,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExportFormat {
    Gmon,
    Folded,
    Pprof,
    Firefox,
    Speedscope,
}

/// The recording a reading subcommand reads.
#[derive(Debug, Args)]
pub(crate) struct InputArgs {
    /// The recording to read
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        default_value = "profiler.data"
    )]
    pub path: PathBuf,
}

/// The recordings a reading subcommand reads: one, or the recordings of
/// a job read as one profile.
#[derive(Debug, Args)]
pub(crate) struct JobInputArgs {
    /// The recording to read; the recordings of a job (one per MPI rank) are read as one
    /// profile: give -i for each, a directory, or a quoted glob, e.g. -i 'profiler.data.*'
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        default_value = "profiler.data"
    )]
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct SymbolizeArgs {
    /// The executable or library the addresses belong to
    #[arg(long = "exe", short = 'e', value_name = "FILE")]
    pub exe: PathBuf,

    /// Print the whole inline chain of each address, innermost first, each caller with
    /// the line of the call (addr2line -i) [default: the function holding the code, with
    /// the instruction's own line, as llvm-symbolizer --no-inlines prints it]
    #[arg(long)]
    pub inlines: bool,

    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    #[command(flatten)]
    pub symbols: SymbolArgs,
}

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}
