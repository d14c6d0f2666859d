//! Counts kept while a recording is written: what the record summary prints
//! and what a report's header states without reading every record.

use rustc_hash::FxHashSet;

use serde::{Deserialize, Serialize};

use crate::record::Record;

/// Totals over a whole recording.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingStats {
    /// Per event, indexed like the header's events.
    pub events: Vec<EventStats>,
    /// Distinct processes and threads seen in samples or task records.
    pub processes: u64,
    pub threads: u64,
    /// Times a thread left the CPU (`record --off-cpu`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub switches: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// Totals for one event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventStats {
    pub samples: u64,
    /// Sum of the samples' periods: the number of events they stand for.
    pub period: u64,
    /// Records the kernel dropped because the ring buffer was full.
    pub lost: u64,
    /// Times the kernel throttled the event for exceeding the sample rate limit.
    pub throttled: u64,
}

/// Accumulates [`RecordingStats`] from records as they pass.
#[derive(Debug)]
pub(crate) struct StatsCollector {
    events: Vec<EventStats>,
    pids: FxHashSet<u32>,
    tids: FxHashSet<u32>,
    /// The task of the last sample: samples come in runs of one task's.
    last: Option<(u32, u32)>,
    switches: u64,
}

impl StatsCollector {
    pub(crate) fn new(event_count: usize) -> StatsCollector {
        StatsCollector {
            events: vec![EventStats::default(); event_count],
            pids: FxHashSet::default(),
            tids: FxHashSet::default(),
            last: None,
            switches: 0,
        }
    }

    pub(crate) fn add(&mut self, record: &Record) {
        match record {
            Record::Sample(s) => {
                let e = self.event(s.event);
                e.samples += 1;
                e.period = e.period.saturating_add(s.period);
                self.task(s.pid, s.tid);
            }
            Record::Lost(l) => {
                let lost = &mut self.event(l.event).lost;
                *lost = lost.saturating_add(l.count);
            }
            Record::Throttle(t) if !t.unthrottle => self.event(t.event).throttled += 1,
            Record::Fork(t) => self.task(t.pid, t.tid),
            Record::Comm(c) => self.task(c.pid, c.tid),
            Record::Switch(s) if s.out => self.switches += 1,
            _ => {}
        }
    }

    pub(crate) fn snapshot(&self) -> RecordingStats {
        RecordingStats {
            events: self.events.clone(),
            processes: self.pids.len() as u64,
            threads: self.tids.len() as u64,
            switches: self.switches,
        }
    }

    fn event(&mut self, index: u16) -> &mut EventStats {
        let index = usize::from(index);
        if index >= self.events.len() {
            self.events.resize(index + 1, EventStats::default());
        }
        &mut self.events[index]
    }

    fn task(&mut self, pid: u32, tid: u32) {
        if self.last != Some((pid, tid)) {
            self.last = Some((pid, tid));
            self.pids.insert(pid);
            self.tids.insert(tid);
        }
    }
}

impl RecordingStats {
    /// Totals over all events.
    pub fn total(&self) -> EventStats {
        self.events
            .iter()
            .fold(EventStats::default(), |acc, e| EventStats {
                // A trailer may state any counts.
                samples: acc.samples.saturating_add(e.samples),
                period: acc.period.saturating_add(e.period),
                lost: acc.lost.saturating_add(e.lost),
                throttled: acc.throttled.saturating_add(e.throttled),
            })
    }
}
