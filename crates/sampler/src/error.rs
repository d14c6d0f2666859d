//! What can go wrong while sampling, each said with what to change.
//!
//! `perf_event_open` answers with a bare errno; the profiler owns the
//! diagnosis: which event, why, and what to do instead.

use std::io;

use profiler_histogram::HistogramError;

#[derive(Debug, thiserror::Error)]
pub enum SamplerError {
    #[error(
        "unknown event '{name}'{}; known events: {known}",
        suggestion.map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default()
    )]
    UnknownEvent {
        name: String,
        suggestion: Option<&'static str>,
        known: String,
    },

    #[error(
        "event '{event}': modifier '{modifier}' is not supported; use :u (user space), :k (kernel) or :uk"
    )]
    UnsupportedModifier { event: String, modifier: char },

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

    #[error("event '{event}': {problem}")]
    InvalidSampling {
        event: String,
        problem: &'static str,
    },

    #[error(
        "the kernel refused to sample '{event}' (permission denied){}; run as root, grant the \
         profiler CAP_PERFMON, or allow it with `sysctl kernel.perf_event_paranoid={}`",
        paranoid.map(|p| format!(": kernel.perf_event_paranoid is {p}")).unwrap_or_default(),
        if *kernel { 1 } else { 2 }
    )]
    PermissionDenied {
        event: String,
        paranoid: Option<i64>,
        kernel: bool,
    },

    #[error("the kernel refused to sample '{event}': {error}")]
    OpenFailed { event: String, error: io::Error },

    #[error(
        "cannot map the sample buffers ({error}): the locked-memory budget is too small \
         (kernel.perf_event_mlock_kb is {mlock_kb} KiB per CPU, plus `ulimit -l`); raise one \
         of them, or run as root"
    )]
    RingBuffer { error: io::Error, mlock_kb: String },

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
        "cannot find the text of this program ({exe}) among the executable mappings in \
         /proc/self/maps; give the region to profile as an address range instead"
    )]
    OwnTextNotFound { exe: String },

    #[error(transparent)]
    Histogram(#[from] HistogramError),
}

impl SamplerError {
    /// True when the profiled command itself could not be started (as
    /// opposed to the profiler failing): not found, not executable.
    pub fn is_command_not_found(&self) -> bool {
        matches!(self, SamplerError::CommandNotFound { .. })
    }

    /// True when the command exists but cannot be executed.
    pub fn is_command_not_runnable(&self) -> bool {
        matches!(
            self,
            SamplerError::NotExecutable { .. } | SamplerError::Exec { .. }
        )
    }
}
