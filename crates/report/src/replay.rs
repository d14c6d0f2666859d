//! Each thread's samples in time order, as the exports with a timeline (the
//! Firefox Profiler, speedscope) replay them.

use std::collections::BTreeMap;

use profiler_model::Recording;

use crate::events::events_of;
use crate::stacks::StackProfile;

/// One sample as replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Replayed {
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

/// The samples of one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ThreadSamples {
    pub pid: u32,
    pub tid: u32,
    /// The thread's name, or else the recorded command's.
    pub name: String,
    /// In time order.
    pub samples: Vec<Replayed>,
}

/// The event an export with one weight per sample shows: the first read.
pub(crate) fn shown_event(stacks: &StackProfile) -> Option<usize> {
    stacks.wanted.iter().position(|&w| w)
}

/// The samples of `event` by thread, threads by pid and tid. Stacks read
/// without [`StackOptions::timeline`](crate::StackOptions::timeline), and
/// histogram recordings, replay each distinct stack once with its whole
/// weight.
pub(crate) fn thread_samples(
    recording: &Recording,
    stacks: &StackProfile,
    event: usize,
) -> Vec<ThreadSamples> {
    let named = &stacks.events[event];
    let timeline = &stacks.timeline[event];
    let mut threads: BTreeMap<(u32, u32), Vec<Replayed>> = BTreeMap::new();
    if timeline.is_empty() {
        for (index, stack) in named.iter().enumerate() {
            threads
                .entry((stack.pid, stack.tid))
                .or_default()
                .push(Replayed {
                    time: 0,
                    stack: index as u32,
                    weight: events_of(recording, event, stack.weight),
                    samples: stack.weight.samples,
                });
        }
    } else {
        for sample in timeline {
            let stack = &named[sample.stack as usize];
            threads
                .entry((stack.pid, stack.tid))
                .or_default()
                .push(Replayed {
                    time: sample.time,
                    stack: sample.stack,
                    weight: sample.period,
                    samples: 1,
                });
        }
    }
    let command = recording
        .header
        .command
        .first()
        .map_or("", |c| c.rsplit('/').next().unwrap_or(c));
    threads
        .into_iter()
        .map(|((pid, tid), samples)| {
            let name = match stacks.thread_name(pid, tid) {
                "" => command.to_owned(),
                name => name.to_owned(),
            };
            ThreadSamples {
                pid,
                tid,
                name,
                samples,
            }
        })
        .collect()
}
