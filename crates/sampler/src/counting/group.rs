//! The kernel's side of a set of counters: the events opened as groups
//! (a leader and members, scheduled and read together), one or more per
//! counted thread or CPU, and read with one `read` system call per group.
//!
//! Events that cannot join a group (another PMU's, or a group the PMU
//! cannot schedule whole) start a group of their own; everything is read
//! all the same. Reading allocates nothing and takes no lock: it may be
//! done from a signal handler.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use perf_event::{Counter, ReadFormat, SampleFlag};
use profiler_events::EventSpec;

use crate::builder::counter_builder;
use crate::error::SamplerError;
use crate::refusal::{self, OpenScope};

/// At most this many events in a set: the group read's buffer is on the
/// stack, sized for them.
pub(crate) const MAX_EVENTS: usize = 32;

/// The sample period of an event whose overflow is off: it never
/// overflows, but stays a sampling event, whose period may be changed.
pub(crate) const PERIOD_OFF: u64 = 1 << 62;

/// Where the events count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpenTarget {
    /// A thread id, or -1 for every task on `cpu`.
    pub(crate) task: libc::pid_t,
    pub(crate) cpu: Option<usize>,
    /// Follow the threads (and processes) the task creates after the open.
    pub(crate) inherit: bool,
    /// Open each event as a sampling event (period [`PERIOD_OFF`], the
    /// program counter and thread id in each sample, a wakeup per sample),
    /// so that its overflow can be turned on later; an event the kernel
    /// counts but will not sample is opened for counting only.
    pub(crate) sampling: bool,
    pub(crate) scope: OpenScope,
}

/// One group: the leader first.
#[derive(Debug)]
pub(crate) struct KernelGroup {
    pub(crate) fds: Vec<OwnedFd>,
    /// The event each member counts, in the order of `fds`.
    pub(crate) events: Vec<usize>,
    /// Whether each member is a sampling event.
    pub(crate) sampling: Vec<bool>,
}

impl KernelGroup {
    pub(crate) fn leader(&self) -> RawFd {
        self.fds[0].as_raw_fd()
    }
}

/// A group being opened: the leader's counter, then the members'.
struct Opening {
    leader: Counter,
    members: Vec<Counter>,
    events: Vec<usize>,
    sampling: Vec<bool>,
}

/// Opens `specs` on one thread or CPU: as few groups as the kernel allows,
/// the events in the order given.
pub(crate) fn open_groups(
    specs: &[EventSpec],
    target: &OpenTarget,
) -> Result<Vec<KernelGroup>, SamplerError> {
    let mut groups: Vec<Opening> = Vec::new();
    // A clock (cpu-clock, task-clock) in a group with other software events
    // counts only part of its thread's time once the group has been
    // disabled and enabled again, and so do they with it as their leader:
    // a clock is read in a group of its own.
    let is_clock = |spec: &EventSpec| {
        spec.perf_type == perf_event_open_sys::bindings::PERF_TYPE_SOFTWARE
            && matches!(
                u32::try_from(spec.config),
                Ok(perf_event_open_sys::bindings::PERF_COUNT_SW_CPU_CLOCK
                    | perf_event_open_sys::bindings::PERF_COUNT_SW_TASK_CLOCK)
            )
    };
    for (index, spec) in specs.iter().enumerate() {
        let joinable = (groups.last_mut())
            .filter(|group| !is_clock(spec) && !group.events.iter().any(|&e| is_clock(&specs[e])));
        if let Some(group) = joinable {
            match open_one(spec, target, Some(&mut group.leader)) {
                Ok((counter, samples)) => {
                    group.members.push(counter);
                    group.events.push(index);
                    group.sampling.push(samples);
                    continue;
                }
                // Not with this group: in one of its own.
                Err(error) if can_not_join(&error) => {}
                Err(error) => return Err(refusal::explain(spec, error, target.scope)),
            }
        }
        let (leader, samples) = open_one(spec, target, None)
            .map_err(|error| refusal::explain(spec, error, target.scope))?;
        groups.push(Opening {
            leader,
            members: Vec::new(),
            events: vec![index],
            sampling: vec![samples],
        });
    }
    Ok(groups
        .into_iter()
        .map(|group| KernelGroup {
            fds: std::iter::once(group.leader)
                .chain(group.members)
                .map(owned_fd)
                .collect(),
            events: group.events,
            sampling: group.sampling,
        })
        .collect())
}

/// EINVAL or EOPNOTSUPP from joining a group: the event may well open
/// alone (another PMU's, or more than the PMU schedules at once).
fn can_not_join(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EINVAL | libc::EOPNOTSUPP))
}

/// Opens one event, disabled, as a sampling event if `target` asks and the
/// kernel allows, else for counting: the counter, and whether it samples.
fn open_one(
    spec: &EventSpec,
    target: &OpenTarget,
    leader: Option<&mut Counter>,
) -> io::Result<(Counter, bool)> {
    let build = |sampling: bool, leader: Option<&mut Counter>| {
        let mut builder = counter_builder(spec);
        builder
            .read_format(
                ReadFormat::GROUP | ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING,
            )
            .inherit(target.inherit);
        match target.cpu {
            Some(cpu) => builder.any_pid().one_cpu(cpu),
            None => builder.observe_pid(target.task).any_cpu(),
        };
        if sampling {
            builder
                .sample(SampleFlag::IP | SampleFlag::TID)
                .sample_period(PERIOD_OFF)
                .wakeup_events(1);
        }
        match leader {
            Some(leader) => builder.build_with_group(leader),
            None => builder.build(),
        }
    };
    if !target.sampling {
        return build(false, leader).map(|counter| (counter, false));
    }
    let mut leader = leader;
    match build(true, leader.as_deref_mut()) {
        Ok(counter) => Ok((counter, true)),
        Err(error) if can_not_join(&error) => build(false, leader).map(|counter| (counter, false)),
        Err(error) => Err(error),
    }
}

fn owned_fd(counter: Counter) -> OwnedFd {
    // SAFETY: `into_raw_fd` gives up the counter's descriptor, open and
    // owned by nothing else from here on.
    unsafe { OwnedFd::from_raw_fd(counter.into_raw_fd()) }
}

/// A group's counts, as one read gives them: how long the group was
/// enabled and running, and each member's count.
pub(crate) struct GroupRead {
    pub(crate) enabled_ns: u64,
    pub(crate) running_ns: u64,
    values: [u64; MAX_EVENTS],
    len: usize,
}

impl GroupRead {
    pub(crate) fn values(&self) -> &[u64] {
        &self.values[..self.len]
    }
}

/// Reads `group` with one system call. Async-signal-safe.
pub(crate) fn read_group(group: &KernelGroup) -> Result<GroupRead, SamplerError> {
    // nr, time_enabled, time_running, then a value and an id per member.
    let mut buffer = [0_u64; 3 + 2 * MAX_EVENTS];
    let bytes = size_of_val(&buffer);
    // SAFETY: the buffer is `bytes` long and writable; the fd is open.
    let read = unsafe { libc::read(group.leader(), buffer.as_mut_ptr().cast(), bytes) };
    let mut counts = GroupRead {
        enabled_ns: 0,
        running_ns: 0,
        values: [0; MAX_EVENTS],
        len: group.events.len(),
    };
    match read {
        -1 => Err(SamplerError::System {
            what: "reading the counters",
            error: io::Error::last_os_error(),
        }),
        // A group the kernel put in its error state (it could never be
        // scheduled) reads nothing: it counted nothing.
        0 => Ok(counts),
        _ => {
            let members = (buffer[0] as usize).min(counts.len);
            counts.enabled_ns = buffer[1];
            counts.running_ns = buffer[2];
            for member in 0..members {
                counts.values[member] = buffer[3 + 2 * member];
            }
            Ok(counts)
        }
    }
}

/// Enables or disables every group, or sets the kernel's counts back to 0.
pub(crate) fn control_groups(groups: &[KernelGroup], what: GroupControl) -> io::Result<()> {
    for group in groups {
        let flag = perf_event_open_sys::bindings::PERF_IOC_FLAG_GROUP;
        // SAFETY: an open perf event fd; the flag applies the ioctl to the
        // whole group.
        let done = unsafe {
            match what {
                GroupControl::Enable => perf_event_open_sys::ioctls::ENABLE(group.leader(), flag),
                GroupControl::Disable => perf_event_open_sys::ioctls::DISABLE(group.leader(), flag),
            }
        };
        if done == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupControl {
    Enable,
    Disable,
}

/// Sets a sampling event's period: its overflow threshold.
pub(crate) fn set_period(fd: RawFd, period: u64) -> io::Result<()> {
    // SAFETY: PERF_EVENT_IOC_PERIOD reads a u64 through the pointer, which
    // points to `period` for the call's duration.
    let done = unsafe {
        libc::ioctl(
            fd,
            perf_event_open_sys::bindings::PERIOD as _,
            &period as *const u64,
        )
    };
    match done {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}
