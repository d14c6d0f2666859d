//! What was sampled: the description of each event, as stored in a recording.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Index of an event in [`RecordingHeader::events`](crate::RecordingHeader::events).
pub type EventIndex = u16;

/// How often an event takes a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// One sample every N occurrences of the event: PAPI's threshold, libcpc's
    /// preset, `perf record -c`.
    Period(u64),
    /// About this many samples per second of the event's own time; the kernel
    /// adjusts the period (`perf record -F`).
    Frequency(u64),
}

/// One event of a recording, resolved to what the kernel was asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventDescription {
    /// The canonical name (`cpu-clock`, `cycles`), with modifiers (`cycles:u`).
    pub name: String,
    /// `perf_event_attr.type`.
    pub perf_type: u32,
    /// `perf_event_attr.config`, and `config1` and `config2` where the
    /// event uses them (sysfs PMU fields such as ldlat or offcore_rsp).
    pub config: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub config1: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub config2: u64,
    pub sampling: Sampling,
    /// What one occurrence of the event is: `ns` for the clocks, `events`
    /// otherwise. A period of 250000 on `cpu-clock` is a quarter millisecond.
    pub unit: String,
    /// Whether user-space and kernel-space execution were counted.
    pub user: bool,
    pub kernel: bool,
    /// For a member of a group (`-e '{cpu-clock,page-faults}'`): the index
    /// of the group's leader. A member takes no samples of its own; each
    /// sample of the leader carries its count (see `Sample::read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<EventIndex>,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl fmt::Display for Sampling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sampling::Period(n) => write!(f, "every {n}"),
            Sampling::Frequency(hz) => write!(f, "{hz} Hz"),
        }
    }
}

impl EventDescription {
    /// A short phrase such as `cpu-clock, 4000 Hz` or
    /// `page-faults, every 1 events`, for report headers.
    pub fn summary(&self) -> String {
        if self.leader.is_some() {
            return format!("{}, read with each sample of its group's leader", self.name);
        }
        match self.sampling {
            Sampling::Period(n) => format!("{}, every {n} {}", self.name, self.unit),
            Sampling::Frequency(hz) => format!("{}, {hz} Hz", self.name),
        }
    }
}
