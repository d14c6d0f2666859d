//! What can go wrong while sampling, each said with what to change.
//!
//! `perf_event_open` answers with a bare errno; the profiler owns the
//! diagnosis: which event, why, and what to do instead.

use std::io;

use profiler_events::EventsError;
use profiler_histogram::HistogramError;

#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    #[error(
        "event '{event}' cannot be sampled: {reason}; sample a software event instead, e.g. -e cpu-clock"
    )]
    EventNotSupported { event: String, reason: String },

    #[error(
        "-F {requested} is above the kernel's maximum sample rate of {max} Hz \
         (kernel.perf_event_max_sample_rate); use -F {max} or lower, or raise the limit \
         with `sysctl kernel.perf_event_max_sample_rate={requested}`"
    )]
    FrequencyTooHigh { requested: u64, max: u64 },

    #[error(
        "--call-graph dwarf,{bytes}: the stack copy must be a multiple of 8 bytes from 8 to 65528; \
         the default is 8192"
    )]
    StackSize { bytes: u32 },

    #[error(
        "--call-graph fp,{bytes}: the copy of the stack's top must be a multiple of 8 bytes up \
         to 65528, or 0 for none; the default is {default}"
    )]
    CallerStackSize { bytes: u32, default: u32 },

    #[error("event '{event}': {problem}")]
    InvalidSampling {
        event: String,
        problem: &'static str,
    },

    #[error("the kernel refused to open '{event}' (permission denied): {reason}; {advice}")]
    PermissionDenied {
        event: String,
        /// What the kernel's rules forbade.
        reason: String,
        /// What would allow it.
        advice: String,
    },

    #[error("the kernel refused to open '{event}': {error}{}", open_hint(error))]
    OpenFailed { event: String, error: io::Error },

    #[error(
        "cannot open '{event}': too many open files{}; every counter is a file descriptor \
         (events × threads × CPUs): raise the limit with `ulimit -n`, or count fewer events, \
         threads or CPUs",
        limit.map(|l| format!(" (the limit is {l})")).unwrap_or_default()
    )]
    TooManyFiles { event: String, limit: Option<u64> },

    #[error(
        "event '{event}': the :p modifier (precise_ip={precise}) is not supported by this event \
         or CPU; use fewer p's, or none"
    )]
    PreciseNotSupported { event: String, precise: u8 },

    #[error(
        "the kernel refused to open '{event}': the counter is busy (in use by another tool, or \
         by the NMI watchdog: `sysctl kernel.nmi_watchdog=0` frees it); stop the other user, or \
         count another event"
    )]
    CounterBusy { event: String },

    #[error(
        "cannot map the sample buffers ({error}): they exceed the locked-memory budget \
         (kernel.perf_event_mlock_kb is {mlock_kb} KiB per CPU, then `ulimit -l`); use a \
         smaller `--mmap-pages N`, raise kernel.perf_event_mlock_kb or `ulimit -l`, or run as \
         root"
    )]
    RingBuffer { error: io::Error, mlock_kb: String },

    #[error("{problem}")]
    InvalidStat { problem: String },

    #[error("command not found: '{command}'; check the name, or give its path")]
    CommandNotFound { command: String },

    #[error("cannot run '{command}': {reason}")]
    NotExecutable { command: String, reason: String },

    #[error("cannot run '{command}': {error}")]
    Exec { command: String, error: io::Error },

    #[error("{what} failed: {error}")]
    System {
        what: &'static str,
        error: io::Error,
    },

    #[error("cannot write the recording: {error}")]
    Sink { error: io::Error },

    #[error(
        "--off-cpu needs the kernel's context-switch records (Linux 4.3 or later), and the \
         kernel refused them: {reason}"
    )]
    NoSwitches { reason: String },

    /// The output refused the recording's header, before anything ran; its
    /// error says which output and why.
    #[error("{error}")]
    Output { error: io::Error },

    /// A signal came before the target was started: nothing was.
    #[error("interrupted by signal {signal} before the command started; nothing was recorded")]
    Interrupted { signal: i32 },

    #[error("there is no process {pid}; check the process id, e.g. with `pgrep NAME`")]
    NoSuchProcess { pid: u32 },

    #[error("there is no thread {tid}; check the thread id, e.g. with `ps -eLf`")]
    NoSuchThread { tid: u32 },

    #[error(
        "process {pid} has exited: it is a zombie, kept until its parent (process {parent}) \
         collects its exit status, and runs no code to sample"
    )]
    ZombieProcess { pid: u32, parent: u32 },

    #[error(
        "thread {tid} has exited: it is a zombie, kept until it is reaped, and runs no code to \
         sample"
    )]
    ZombieThread { tid: u32 },

    #[error("cannot attach to {target} (permission denied): {reason}")]
    AttachDenied { target: String, reason: String },

    #[error("system-wide sampling (-a, -C) was refused (permission denied): {reason}; {advice}")]
    SystemWideDenied { reason: String, advice: String },

    #[error("CPU {cpu} is not online; the online CPUs are {online}")]
    CpuNotOnline { cpu: usize, online: String },

    #[error(
        "--duration applies to -p, -t, -a and -C without a command; a launched command is \
         profiled until it exits, so leave out --duration or the command"
    )]
    DurationWithCommand,

    #[error("{problem}")]
    EmptyTarget { problem: &'static str },

    #[error(
        "cannot find the text of this program ({exe}) among the executable mappings in \
         /proc/self/maps; give the region to profile as an address range instead"
    )]
    OwnTextNotFound { exe: String },

    #[error(
        "event '{event}' cannot be counted here: {reason}; count a software event instead, \
         e.g. task-clock"
    )]
    EventNotCounted { event: String, reason: String },

    /// A set of counters asked for what cannot be: no events, too many,
    /// an index outside the set, a signal that is not real-time.
    #[error("{problem}")]
    InvalidCounters { problem: String },

    /// A set of counters used as it cannot be (an array too short, too
    /// many overflowing counters at once). The message is static: it may
    /// be made in a signal handler.
    #[error("{problem}")]
    CountersMisuse { problem: &'static str },

    /// A set of counters in the wrong state for the call: started while
    /// running, stopped while stopped. Static, as `CountersMisuse`.
    #[error("{problem}")]
    CountersState { problem: &'static str },

    #[error(transparent)]
    Events(#[from] EventsError),

    #[error(transparent)]
    Histogram(#[from] HistogramError),
}

/// What an errno without a diagnosis of its own usually means here.
fn open_hint(error: &io::Error) -> &'static str {
    match error.raw_os_error() {
        Some(libc::ESRCH) => "; the process or thread has exited (or never existed)",
        Some(libc::EINVAL) => "; this kernel or event does not accept one of the settings",
        Some(libc::ENFILE) => "; the system's file table is full (fs.file-max)",
        _ => "",
    }
}

impl SamplerError {
    /// True when the profiled command itself could not be started (as
    /// opposed to the profiler failing): not found, not executable.
    pub fn is_command_not_found(&self) -> bool {
        matches!(self, SamplerError::CommandNotFound { .. })
    }

    /// The signal that stopped the recording before it started, if one did.
    pub fn interrupted_by(&self) -> Option<i32> {
        match self {
            SamplerError::Interrupted { signal } => Some(*signal),
            _ => None,
        }
    }

    /// True when the command exists but cannot be executed.
    pub fn is_command_not_runnable(&self) -> bool {
        matches!(
            self,
            SamplerError::NotExecutable { .. } | SamplerError::Exec { .. }
        )
    }
}
