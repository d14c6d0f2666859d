//! A recording's samples in time order, each with its thread, as the
//! exports with a timeline (the Firefox Profiler, speedscope) replay them.

use std::collections::BTreeMap;

use profiler_model::Recording;

use crate::read::events::events_of;
use crate::read::stacks::StackProfile;

/// One sample as replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Replayed {
    /// Its thread: an index into [`Replay::threads`].
    pub thread: usize,
    /// When it was taken, in nanoseconds of the perf clock (0 for a
    /// histogram recording's buckets, which keep no time).
    pub time: u64,
    /// An index into the event's named stacks.
    pub stack: u32,
    /// The events it stands for (nanoseconds for the clocks).
    pub weight: u64,
    /// The samples it is: 1, or a whole stack's where times are not kept.
    pub samples: u64,
}

/// A thread with samples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReplayThread {
    pub pid: u32,
    pub tid: u32,
    /// The thread's name, or else the recorded command's.
    pub name: String,
    /// Its process's name, or else the recorded command's.
    pub process: String,
    /// The times of its first and last samples.
    pub first: u64,
    pub last: u64,
    pub samples: u64,
}

/// The samples of one event, and their threads.
pub(crate) struct Replay<'a> {
    recording: &'a Recording,
    stacks: &'a StackProfile,
    event: usize,
    /// By pid and tid.
    pub threads: Vec<ReplayThread>,
    /// The thread of each of the event's named stacks.
    thread_of: Vec<usize>,
}

/// The event an export with one weight per sample shows: the first read.
pub(crate) fn shown_event(stacks: &StackProfile) -> Option<usize> {
    stacks.wanted.iter().position(|&w| w)
}

impl<'a> Replay<'a> {
    pub(crate) fn new(
        recording: &'a Recording,
        stacks: &'a StackProfile,
        event: usize,
    ) -> Replay<'a> {
        let named = &stacks.events[event];
        let mut ids: BTreeMap<(u32, u32), usize> = BTreeMap::new();
        for stack in named {
            ids.insert((stack.pid, stack.tid), 0);
        }
        let command = recording
            .header
            .command
            .first()
            .map_or("", |c| c.rsplit('/').next().unwrap_or(c));
        let mut threads: Vec<ReplayThread> = (ids.iter_mut().enumerate())
            .map(|(index, ((pid, tid), id))| {
                *id = index;
                let or_command = |name: &str| match name {
                    "" => command.to_owned(),
                    name => name.to_owned(),
                };
                ReplayThread {
                    pid: *pid,
                    tid: *tid,
                    name: or_command(stacks.thread_name(*pid, *tid)),
                    process: or_command(stacks.process_name(*pid, *tid)),
                    first: u64::MAX,
                    last: 0,
                    samples: 0,
                }
            })
            .collect();
        let thread_of = named.iter().map(|s| ids[&(s.pid, s.tid)]).collect();
        let mut replay = Replay {
            recording,
            stacks,
            event,
            threads: Vec::new(),
            thread_of,
        };
        for sample in replay.samples() {
            let thread = &mut threads[sample.thread];
            thread.first = thread.first.min(sample.time);
            thread.last = thread.last.max(sample.time);
            thread.samples = thread.samples.saturating_add(sample.samples);
        }
        replay.threads = threads;
        replay
    }

    /// The samples in time order. Stacks read without
    /// [`StackOptions::timeline`](crate::StackOptions::timeline), and
    /// histogram recordings, replay each distinct stack once with its whole
    /// weight, at time 0.
    pub(crate) fn samples(&self) -> Box<dyn Iterator<Item = Replayed> + '_> {
        let named = &self.stacks.events[self.event];
        let timeline = &self.stacks.timeline[self.event];
        if timeline.is_empty() {
            return Box::new(named.iter().enumerate().map(|(index, stack)| Replayed {
                thread: self.thread_of[index],
                time: 0,
                stack: index as u32,
                weight: events_of(self.recording, self.event, stack.weight),
                samples: stack.weight.samples,
            }));
        }
        Box::new(timeline.iter().map(|sample| Replayed {
            thread: self.thread_of[sample.stack as usize],
            time: sample.time,
            stack: sample.stack,
            weight: sample.period,
            samples: 1,
        }))
    }
}
