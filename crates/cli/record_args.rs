//! `profiler record`'s arguments: what to sample, how, where to write it,
//! and PAPI_profil's histogram mode.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;
use profiler_model::CallGraph;
use profiler_sampler::DEFAULT_STACK_BYTES;

use crate::shared_args::{TargetArgs, parse_seconds};

const RECORD_AFTER_HELP: &str = "\
Each -c or -F applies to the -e before it; given before any -e, it applies to every event \
without its own.

As perf does, events without a :u, :k or :h of their own count user space and the kernel \
where this user may sample the kernel (root, CAP_PERFMON, or kernel.perf_event_paranoid 1 or \
less), and user space only otherwise, saying so; --user-only (perf's --all-user) keeps to user \
space, --kernel insists on the kernel.

perf record's -F max, -z and --compression-level=N, --call-graph=dwarf,8192 and -a with a \
command after -- are taken with perf's meaning; --user-regs and --user-callchains are refused.

-p and -t attach to running processes or threads and record until --duration is up, Ctrl-C, \
or they all exit; they are left running. -a and -C sample every process on the CPUs: until a \
COMMAND given after -- exits, or else until --duration is up or Ctrl-C.

Exit status: the command's own, or 128+N if a signal N ended it; 125 if the profiler \
failed, 126 if the command cannot be run, 127 if it was not found.";

#[derive(Debug, Args)]
#[command(after_help = RECORD_AFTER_HELP)]
pub(crate) struct RecordArgs {
    /// Event to sample, e.g. cycles, instructions, cpu-clock, page-faults; NAME:u or NAME:k
    /// to count only user space or only the kernel [default: cycles, or cpu-clock where the
    /// machine has no hardware counters]
    #[arg(short = 'e', long = "event", value_name = "EVENT")]
    pub events: Vec<String>,

    /// Take a sample every THRESHOLD occurrences of the event (PAPI's threshold, libcpc's
    /// preset); for cpu-clock and task-clock, every THRESHOLD nanoseconds
    #[arg(short = 'c', long = "count", value_name = "THRESHOLD")]
    pub thresholds: Vec<u64>,

    /// Take about HZ samples per second [default: 4000]; max: as many as the kernel allows
    /// (kernel.perf_event_max_sample_rate)
    #[arg(short = 'F', long = "freq", value_name = "HZ|max", value_parser = parse_frequency)]
    pub frequencies: Vec<Frequency>,

    /// Where to write the recording (- for the standard output, where the command's own output
    /// then goes to the standard error); a file is replaced once complete, a device, FIFO or
    /// socket is written in place
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "profiler.data"
    )]
    pub output: PathBuf,

    /// Record call stacks, by frame pointers (same as --call-graph fp, which, given too,
    /// says how)
    #[arg(short = 'g')]
    pub frame_pointers: bool,

    /// Record call stacks: fp follows frame pointers (cheap; code built without them loses
    /// frames), and copies the top STACK_BYTES of the stack [default: 512] to find the caller
    /// of a function that sets up no frame (0: the kernel's chain alone); dwarf copies
    /// STACK_BYTES of the user stack per sample [default: 8192] and unwinds it with the
    /// modules' unwind tables at report time
    #[arg(long, value_name = "fp|dwarf[,STACK_BYTES]", value_parser = parse_call_graph)]
    pub call_graph: Option<CallGraphArg>,

    /// Pages of ring buffer per CPU, a power of two [default: 512 KiB, 16 MiB with -g, 32 MiB
    /// with --call-graph dwarf, less on many CPUs or where the locked-memory budget is smaller];
    /// more lose fewer samples; beyond the budget they are cut to fit, with a notice
    #[arg(long, value_name = "N", value_parser = parse_mmap_pages)]
    pub mmap_pages: Option<usize>,

    #[command(flatten)]
    pub target: TargetArgs,

    /// At the end, add to the recording what reporting it needs of its binaries (see `profiler
    /// archive`)
    #[arg(long)]
    pub archive: bool,

    /// Record a launched command until every process it started has exited too [default:
    /// until the command exits, saying how many it left running]
    #[arg(long)]
    pub wait_descendants: bool,

    /// With -p, -t, or -a/-C without a command: stop after SECS seconds [default: at Ctrl-C,
    /// or when every attached process has exited]
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub duration: Option<std::time::Duration>,

    /// Sample user space only: the events without a :u, :k or :h of their own [default:
    /// user space and the kernel where this user may sample the kernel, else user space]
    #[arg(long, visible_aliases = ["user", "all-user"], conflicts_with = "kernel")]
    pub user_only: bool,

    /// Sample the kernel's execution too, for the events without a :u, :k or :h of their
    /// own, or fail (needs kernel.perf_event_paranoid <= 1, CAP_PERFMON or root)
    #[arg(long)]
    pub kernel: bool,

    /// Compress the recording's chunks with zstd at LEVEL, 1 (fastest) to 22 (smallest); 0
    /// writes them plain, in the format older versions read. -z alone is level 1, as in perf
    /// [default: 1]
    #[arg(
        short = 'z',
        long = "compression-level",
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        value_parser = clap::value_parser!(u8).range(0..=22)
    )]
    pub compression_level: Option<u8>,

    /// perf's --user-regs: refused (stacks are copied with their registers by
    /// --call-graph dwarf)
    #[arg(
        long,
        hide = true,
        value_name = "REGS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub user_regs: Option<String>,

    /// perf's --user-callchains: refused (see --user-only)
    #[arg(long, hide = true)]
    pub user_callchains: bool,

    /// Also record where and for how long each thread waits off the CPU (blocked or preempted):
    /// the recording gains the events off-cpu (nanoseconds off the CPU, at the stack each thread
    /// left from) and wall (cpu-clock samples and off-cpu time together), for `--event`
    #[arg(long, conflicts_with = "histogram")]
    pub off_cpu: bool,

    #[command(flatten)]
    pub histogram: HistogramArgs,

    /// The command to profile, with its arguments (optional with -a or -C; not with -p or -t)
    #[arg(
        value_name = "COMMAND",
        required_unless_present_any = ["pids", "tids", "all_cpus", "cpus"],
        trailing_var_arg = true
    )]
    pub command: Vec<OsString>,
}

/// `-F`: a rate, or the most the kernel allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frequency {
    Hz(u64),
    Max,
}

fn parse_frequency(text: &str) -> Result<Frequency, String> {
    match text {
        "max" => Ok(Frequency::Max),
        _ => (text.parse().map(Frequency::Hz))
            .map_err(|_| format!("'{text}' is not a number of samples per second, or max")),
    }
}

/// `--call-graph`: how stacks are taken and, with frame pointers, how much
/// of the stack's top is copied (`None`: the default).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallGraphArg {
    pub mode: CallGraph,
    pub fp_stack_bytes: Option<u32>,
}

fn parse_call_graph(text: &str) -> Result<CallGraphArg, String> {
    let (mode, bytes) = match text.split_once(',') {
        Some((mode, bytes)) => (mode, Some(bytes)),
        None => (text, None),
    };
    let example = match mode {
        "fp" => "fp,256",
        _ => "dwarf,16384",
    };
    let bytes = bytes
        .map(|bytes| {
            bytes
                .parse::<u32>()
                .map_err(|_| format!("'{bytes}' is not a number of bytes; e.g. {example}"))
        })
        .transpose()?;
    match mode {
        "fp" => Ok(CallGraphArg {
            mode: CallGraph::FramePointer,
            fp_stack_bytes: bytes,
        }),
        "dwarf" => Ok(CallGraphArg {
            mode: CallGraph::Dwarf {
                stack_bytes: bytes.unwrap_or(DEFAULT_STACK_BYTES),
            },
            fp_stack_bytes: None,
        }),
        _ => Err(format!(
            "unknown mode '{mode}'; use fp[,STACK_BYTES] or dwarf[,STACK_BYTES]"
        )),
    }
}

fn parse_mmap_pages(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(pages) if pages.is_power_of_two() => Ok(pages),
        _ => Err(format!(
            "'{text}' is not a power of two; e.g. --mmap-pages 64 (256 KiB of 4 KiB pages)"
        )),
    }
}

// The fields' docs are their --help text, where brackets are words
// (`[default]`, `[ and ]`), not links.
#[allow(rustdoc::broken_intra_doc_links)]
/// PAPI_profil's mode of `record`.
#[derive(Debug, Args)]
#[command(next_help_heading = "Histogram mode (PAPI_profil)")]
pub(crate) struct HistogramArgs {
    /// Pour the samples into histograms over the program's and libraries' text
    /// instead of keeping them: memory and the recording's size stay the same
    /// however long the command runs
    #[arg(long)]
    pub histogram: bool,

    /// Bucket width in bits: 16, 32 or 64
    #[arg(
        long,
        value_name = "BITS",
        default_value_t = 16,
        requires = "histogram"
    )]
    pub bucket: u64,

    /// PAPI's scale: 65536 gives a bucket to every 2 bytes of text, 131072 to every
    /// byte, 32768 to every 4 bytes; 2 to 65536 or 131072
    #[arg(
        long,
        value_name = "SCALE",
        default_value_t = 65536,
        requires = "histogram"
    )]
    pub scale: u64,

    /// Cover only these addresses of the program itself (hexadecimal, as nm and
    /// objdump print them), END excluded, at SCALE if given; repeatable
    #[arg(
        long = "region",
        value_name = "START:END[:SCALE]",
        requires = "histogram"
    )]
    pub regions: Vec<String>,

    /// Let full buckets wrap around to zero, as PAPI does, instead of saturating
    #[arg(long, requires = "histogram")]
    pub wrap: bool,

    /// PAPI_PROFIL_RANDOM: drop a quarter of the samples at random
    #[arg(long, requires = "histogram")]
    pub random: bool,

    /// PAPI_PROFIL_COMPRESS: drop a sample with probability bucket/65536
    #[arg(long, requires = "histogram")]
    pub compress: bool,

    /// PAPI_PROFIL_WEIGHTED: add each sample's period (the events it stands
    /// for) instead of 1
    #[arg(long, requires = "histogram")]
    pub weighted: bool,
}
