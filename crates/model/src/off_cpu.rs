//! Off-CPU time, read from the switches of a `record --off-cpu`
//! recording: each thread's stretches off the CPU (from leaving it to
//! coming back), and how each thread spent its life, on the CPU, blocked
//! or preempted.
//!
//! The off-CPU event and the wall event are read from these, not
//! recorded (see [`EventRole`]): a sample of the switch-out event stands
//! for the stretch its thread then spent off the CPU, and a switch out
//! without such a sample (the kernel refused the event, or lost the
//! sample) for the same stretch at an unknown stack.

use rustc_hash::FxHashMap;

use crate::event::{EventIndex, EventRole};
use crate::header::RecordingHeader;
use crate::record::{Record, Switch};
use crate::stats::EventStats;

/// How one thread spent its life, in nanoseconds, from its switches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadTimes {
    pub pid: u32,
    pub tid: u32,
    /// When it was created (or executed its program, or was first seen
    /// running), and when it exited (or the recording ended).
    pub start: u64,
    pub end: u64,
    /// Running.
    pub on_cpu: u64,
    /// Off the CPU, waiting for something: asleep, for I/O, a lock, a
    /// child.
    pub blocked: u64,
    /// Off the CPU though runnable: another thread had its CPU.
    pub preempted: u64,
}

impl ThreadTimes {
    /// From start to end.
    pub fn lifetime(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// On the CPU, blocked and preempted together: the lifetime, less
    /// what the switches do not tell (a switch lost, time before the
    /// recording saw the thread).
    pub fn total(&self) -> u64 {
        (self.on_cpu)
            .saturating_add(self.blocked)
            .saturating_add(self.preempted)
    }
}

/// A stretch of a thread's time off the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffCpuStretch {
    /// When it left the CPU and when it came back.
    pub out: u64,
    pub back: u64,
    /// It was runnable all along (preempted), rather than blocked.
    pub preempt: bool,
}

impl OffCpuStretch {
    pub fn len(&self) -> u64 {
        self.back.saturating_sub(self.out)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The off-CPU stretches of every thread, and the events they are read as.
#[derive(Debug, Default)]
pub(crate) struct OffCpu {
    /// Per thread: its stretches off the CPU, in time order.
    stretches: FxHashMap<u32, Vec<OffCpuStretch>>,
    threads: Vec<ThreadTimes>,
    /// Switches whose other half never came (lost, or cut off by damage).
    pub unpaired: u64,
    pub events: OffCpuEvents,
}

/// Which of a recording's events take part in reading off-CPU time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OffCpuEvents {
    /// The kernel's samples as threads left the CPU.
    pub switch_out: Option<EventIndex>,
    pub off_cpu: EventIndex,
    /// The wall event and the clock event whose samples it takes.
    pub wall: Option<(EventIndex, EventIndex)>,
}

impl OffCpuEvents {
    /// The roles of `header`'s events, if it has an off-CPU event.
    pub(crate) fn of(header: &RecordingHeader) -> Option<OffCpuEvents> {
        let events = &header.events;
        let index = |role| {
            (events.iter())
                .position(|e| e.role == role)
                .map(|i| i as EventIndex)
        };
        let clock = (events.iter())
            .position(|e| e.role == EventRole::Sampled && e.leader.is_none() && e.unit == "ns");
        Some(OffCpuEvents {
            switch_out: index(EventRole::SwitchOut),
            off_cpu: index(EventRole::OffCpu)?,
            wall: index(EventRole::Wall).zip(clock.map(|c| c as EventIndex)),
        })
    }
}

/// What one thread's records say, before its switches are put in order.
#[derive(Default)]
struct ThreadRecords {
    pid: u32,
    switches: Vec<Switch>,
    /// When it was created (fork, clone) or executed a program.
    born: Option<u64>,
    /// The first and last time any record of it was seen.
    first_seen: Option<u64>,
    exited: Option<u64>,
}

/// Collects what [`OffCpu`] is read from, record by record.
pub(crate) struct OffCpuBuilder {
    events: OffCpuEvents,
    threads: FxHashMap<u32, ThreadRecords>,
    /// The last time of any record: where a thread still alive ends.
    last_time: u64,
}

impl OffCpuBuilder {
    pub(crate) fn new(events: OffCpuEvents) -> OffCpuBuilder {
        OffCpuBuilder {
            events,
            threads: FxHashMap::default(),
            last_time: 0,
        }
    }

    pub(crate) fn add(&mut self, record: &Record) {
        self.last_time = self.last_time.max(record.time());
        let (pid, tid, time) = match record {
            Record::Switch(s) => (s.pid, s.tid, s.time),
            Record::Fork(t) | Record::Exit(t) => (t.pid, t.tid, t.time),
            Record::Comm(c) if c.exec => (c.pid, c.tid, c.time),
            _ => return,
        };
        // The idle task (tid 0) switches on every CPU (system-wide).
        if tid == 0 {
            return;
        }
        let thread = self.threads.entry(tid).or_default();
        thread.pid = pid;
        thread.first_seen = Some(thread.first_seen.map_or(time, |t| t.min(time)));
        match record {
            Record::Switch(s) => thread.switches.push(*s),
            Record::Exit(_) => thread.exited = Some(time),
            _ => thread.born = Some(thread.born.map_or(time, |t| t.min(time))),
        }
    }

    pub(crate) fn build(self) -> OffCpu {
        let mut off_cpu = OffCpu {
            events: self.events,
            ..OffCpu::default()
        };
        for (tid, mut thread) in self.threads {
            thread.switches.sort_by_key(|s| s.time);
            let end = thread.exited.unwrap_or(self.last_time);
            let (times, stretches, unpaired) = walk(tid, &thread, end);
            off_cpu.unpaired += unpaired;
            if !thread.switches.is_empty() {
                off_cpu.threads.push(times);
            }
            off_cpu.stretches.insert(tid, stretches);
        }
        off_cpu.threads.sort_by_key(|t| (t.pid, t.tid));
        off_cpu
    }
}

/// A thread's switches in time order, walked: how it spent its life from
/// its start to `end`, its stretches off the CPU, and how many switches
/// had no other half.
fn walk(tid: u32, thread: &ThreadRecords, end: u64) -> (ThreadTimes, Vec<OffCpuStretch>, u64) {
    let first = thread.switches.first().map(|s| s.time);
    let start = thread.born.or(first).or(thread.first_seen).unwrap_or(end);
    let mut times = ThreadTimes {
        pid: thread.pid,
        tid,
        start,
        end: end.max(start),
        ..ThreadTimes::default()
    };
    let mut stretches = Vec::new();
    let mut unpaired = 0;
    // A thread first seen leaving the CPU ran until then; one first seen
    // coming back waited from its start (a new thread waits to be run).
    let mut running_since = match thread.switches.first() {
        Some(s) if !s.out => None,
        _ => Some(start),
    };
    let mut off: Option<Switch> = None;
    if let Some(first) = thread.switches.first().filter(|s| !s.out) {
        times.preempted += first.time.saturating_sub(start);
    }
    for switch in thread.switches.iter().filter(|s| s.time <= end) {
        match (switch.out, off.take()) {
            (true, previous) => {
                unpaired += u64::from(previous.is_some());
                if let Some(since) = running_since.take() {
                    times.on_cpu += switch.time.saturating_sub(since);
                }
                off = Some(*switch);
            }
            (false, Some(out)) => {
                let stretch = OffCpuStretch {
                    out: out.time,
                    back: switch.time,
                    preempt: out.preempt,
                };
                add_off(&mut times, &stretch);
                stretches.push(stretch);
                running_since = Some(switch.time);
            }
            (false, None) => {
                // Back without having left: the switch out was lost, or
                // this is the thread's first switch.
                unpaired += u64::from(running_since.is_some());
                running_since = running_since.or(Some(switch.time));
            }
        }
    }
    if let Some(since) = running_since {
        times.on_cpu += end.saturating_sub(since);
    }
    // Still off the CPU when the recording ended: waiting until then. (A
    // thread that exited does not come back: its last switch out, if the
    // kernel reports one, is past its exit.)
    if let Some(out) = off.filter(|_| thread.exited.is_none()) {
        let stretch = OffCpuStretch {
            out: out.time,
            back: end,
            preempt: out.preempt,
        };
        add_off(&mut times, &stretch);
        stretches.push(stretch);
    }
    (times, stretches, unpaired)
}

fn add_off(times: &mut ThreadTimes, stretch: &OffCpuStretch) {
    match stretch.preempt {
        true => times.preempted += stretch.len(),
        false => times.blocked += stretch.len(),
    }
}

impl OffCpu {
    /// The stretch thread `tid` spent off the CPU from `out` on.
    pub(crate) fn stretch(&self, tid: u32, out: u64) -> Option<OffCpuStretch> {
        let stretches = self.stretches.get(&tid)?;
        let at = stretches.partition_point(|s| s.out < out);
        stretches.get(at).filter(|s| s.out == out).copied()
    }

    /// Every thread that switched, by process and thread.
    pub(crate) fn threads(&self) -> &[ThreadTimes] {
        &self.threads
    }

    /// The totals of the off-CPU event (and the wall event, given the
    /// clock event's), into `stats`, indexed like the header's events.
    /// Records lost from the rings may have been switches: they count as
    /// lost off-CPU time, with the switches that lost their other half.
    pub(crate) fn fill_stats(&self, stats: &mut Vec<EventStats>) {
        let lost_records = (stats.iter()).fold(0u64, |sum, e| sum.saturating_add(e.lost));
        let stretches = self.stretches.values().flatten();
        let off_cpu = EventStats {
            samples: stretches.clone().count() as u64,
            period: stretches.fold(0u64, |sum, s| sum.saturating_add(s.len())),
            lost: lost_records.saturating_add(self.unpaired),
            throttled: 0,
        };
        let wanted = 1 + usize::from(self.events.off_cpu)
            .max((self.events.wall).map_or(0, |(wall, _)| usize::from(wall)));
        if stats.len() < wanted {
            stats.resize(wanted, EventStats::default());
        }
        stats[usize::from(self.events.off_cpu)] = off_cpu;
        if let Some((wall, clock)) = self.events.wall {
            let clock = stats[usize::from(clock)];
            stats[usize::from(wall)] = EventStats {
                samples: clock.samples.saturating_add(off_cpu.samples),
                period: clock.period.saturating_add(off_cpu.period),
                lost: off_cpu.lost,
                throttled: clock.throttled,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::TaskEvent;

    fn switch(time: u64, tid: u32, out: bool, preempt: bool) -> Record {
        Record::Switch(Switch {
            time,
            pid: 1,
            tid,
            out,
            preempt,
            sampled: false,
        })
    }

    fn events() -> OffCpuEvents {
        OffCpuEvents {
            switch_out: Some(1),
            off_cpu: 2,
            wall: Some((3, 0)),
        }
    }

    #[test]
    fn a_threads_life_adds_up_from_its_switches() {
        let mut builder = OffCpuBuilder::new(events());
        let records = [
            Record::Fork(TaskEvent {
                time: 100,
                pid: 1,
                ppid: 1,
                tid: 2,
                ptid: 1,
            }),
            // Waits 10 to run first, runs 40, blocks 300, runs 50, is
            // preempted 20, runs 30, exits.
            switch(110, 2, false, false),
            switch(150, 2, true, false),
            switch(450, 2, false, false),
            switch(500, 2, true, true),
            switch(520, 2, false, false),
            Record::Exit(TaskEvent {
                time: 550,
                pid: 1,
                ppid: 1,
                tid: 2,
                ptid: 1,
            }),
            // Its last switch out, past its exit, is no wait.
            switch(560, 2, true, false),
        ];
        // In any order, as the rings of several CPUs hand them over.
        for record in records.iter().rev() {
            builder.add(record);
        }
        let off_cpu = builder.build();
        let times = &off_cpu.threads()[0];
        assert_eq!((times.start, times.end, times.lifetime()), (100, 550, 450));
        assert_eq!(
            (times.on_cpu, times.blocked, times.preempted),
            (120, 300, 30)
        );
        assert_eq!(times.total(), times.lifetime());
        assert_eq!(off_cpu.unpaired, 0);
        let blocked = off_cpu.stretch(2, 150).unwrap();
        assert_eq!((blocked.len(), blocked.preempt), (300, false));
        assert!(off_cpu.stretch(2, 500).unwrap().preempt);
        assert_eq!(off_cpu.stretch(2, 151), None);
        assert_eq!(off_cpu.stretch(3, 150), None);
    }

    #[test]
    fn lost_halves_are_counted_and_a_wait_at_the_end_lasts_to_it() {
        let mut builder = OffCpuBuilder::new(events());
        // Executed at 10; out at 20 and again at 30 (the way back lost);
        // back at 40 twice (the second switch out lost); out at 60 and
        // still waiting when the recording ends at 100.
        builder.add(&Record::Comm(crate::record::Comm {
            time: 10,
            pid: 1,
            tid: 1,
            name: "app".into(),
            exec: true,
        }));
        for record in [
            switch(20, 1, true, false),
            switch(30, 1, true, false),
            switch(40, 1, false, false),
            switch(50, 1, false, false),
            switch(60, 1, true, false),
            switch(100, 9, true, true),
        ] {
            builder.add(&record);
        }
        let off_cpu = builder.build();
        assert_eq!(off_cpu.unpaired, 2);
        let times = &off_cpu.threads()[0];
        assert_eq!((times.start, times.end), (10, 100));
        // Ran 10..20 and 40..60; waited 30..40 and 60..100.
        assert_eq!((times.on_cpu, times.blocked, times.preempted), (30, 50, 0));
        assert_eq!(off_cpu.stretch(1, 60).map(|s| s.back), Some(100));

        let mut stats = vec![
            EventStats {
                samples: 4,
                period: 1000,
                lost: 1,
                throttled: 0,
            };
            2
        ];
        off_cpu.fill_stats(&mut stats);
        // Thread 9's stretch lasts 0 but is one.
        assert_eq!(stats[2].samples, 3);
        assert_eq!(stats[2].period, 50);
        assert_eq!(stats[2].lost, 2 + 2);
        assert_eq!((stats[3].samples, stats[3].period), (7, 1050));
    }
}
