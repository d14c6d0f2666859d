//! What `doctor` finds this machine allows: the kernel and CPU, the event
//! sources it exposes, the perf_event limits and this process's privileges,
//! and which common events can be sampled now. The sampler finds it; the
//! report renders it.

use crate::privileges::Privileges;

/// An event source the kernel exposes in /sys/bus/event_source/devices:
/// a PMU (`cpu`, `software`, `tracepoint`, an uncore unit) and the number
/// that goes into `perf_event_attr.type` for its events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSource {
    pub name: String,
    pub perf_type: Option<u32>,
}

/// What this machine allows, as found now.
#[derive(Clone, Debug)]
pub struct Checkup {
    /// The kernel release.
    pub kernel: Option<String>,
    pub cpu_model: Option<String>,
    pub online_cpus: Vec<usize>,
    /// The event sources in /sys/bus/event_source/devices, by name.
    pub event_sources: Vec<EventSource>,
    /// Whether one of them is a CPU's hardware PMU.
    pub has_cpu_pmu: bool,
    pub privileges: Privileges,
    /// `kernel.perf_event_max_sample_rate`.
    pub max_sample_rate: Option<u64>,
    /// `kernel.perf_cpu_time_max_percent`.
    pub cpu_time_max_percent: Option<u64>,
    /// Each event `doctor` checks, sampled (user space) on this process.
    pub events: Vec<EventCheck>,
    /// What to change, one line each, for whatever stands in the way;
    /// empty when nothing does.
    pub advice: Vec<String>,
}

/// Whether an event can be sampled here now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventCheck {
    pub event: String,
    /// `None` when it works; why not otherwise.
    pub refused: Option<String>,
}

impl EventCheck {
    pub fn works(&self) -> bool {
        self.refused.is_none()
    }
}
