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
    /// What its samples are; absent in the file for a sampled event.
    #[serde(default, skip_serializing_if = "EventRole::is_sampled")]
    pub role: EventRole,
}

/// What an event's samples are. With `record --off-cpu`, the kernel takes
/// a sample as each thread leaves the CPU, and two more events are read
/// from those samples and the threads' switches (see
/// [`Recording::replay`](crate::Recording::replay)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventRole {
    /// Taken by the kernel as the event's counter overflowed.
    #[default]
    Sampled,
    /// Taken by the kernel each time a thread left the CPU
    /// (`context-switches`, period 1): each holds the stack the thread
    /// waited in, and is read as a sample of the [`OffCpu`](Self::OffCpu)
    /// event, never as its own.
    SwitchOut,
    /// Read, not taken: each time a thread was off the CPU, at the stack
    /// it left from, weighing the nanoseconds until it came back.
    OffCpu,
    /// Read, not taken: the samples of the recording's first clock event
    /// (`cpu-clock`, `task-clock`), weighing their periods, and the
    /// off-CPU event's, so that a thread's total is its elapsed time.
    Wall,
}

impl EventRole {
    pub fn is_sampled(&self) -> bool {
        *self == EventRole::Sampled
    }

    /// Whether the samples of an event in this role are read from others
    /// rather than recorded.
    pub fn is_derived(self) -> bool {
        matches!(self, EventRole::OffCpu | EventRole::Wall)
    }
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
