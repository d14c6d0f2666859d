//! Every sample of a recording in the order it was read, each with its
//! time, stack and period: what the exports with a timeline (the Firefox
//! Profiler, speedscope) replay.

use rustc_hash::FxHashMap;

use profiler_model::{Avma, EventIndex, Location, Recording, Sample};

use crate::read::stack_ids::StackId;
use crate::read::thread_stack::ThreadStack;
use crate::read::weight::Weight;

/// One sample, as a timeline keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimedSample {
    /// When it was taken, in nanoseconds of the perf clock.
    pub time: u64,
    /// Its stack: an index into [`Timeline::stacks`] (or, once named, into
    /// its event's named stacks).
    pub stack: u32,
    /// The CPU it was taken on.
    pub cpu: u32,
    pub period: u64,
    /// The sampled instruction's address in its process (or the kernel).
    pub ip: Avma,
}

/// Every sample of the events read, in the order they were read.
#[derive(Default)]
pub(crate) struct Timeline {
    /// Per event (indexed like the header's events).
    pub samples: Vec<Vec<TimedSample>>,
    /// The distinct stacks the samples have, once [`Timeline::finish`]ed.
    pub stacks: Vec<ThreadStack>,
    ids: FxHashMap<StackId, u32>,
    /// The stacks by id, until [`Timeline::finish`].
    keys: Vec<StackId>,
    /// Per event, per stack: what its samples weigh, if it has any.
    weights: Vec<Vec<Option<Weight>>>,
}

impl Timeline {
    /// A timeline of `events` events, with room for the samples the
    /// recording's trailer counted.
    pub(crate) fn new(recording: &Recording, events: usize) -> Timeline {
        let stats = &recording.trailer.stats.events;
        // The trailer is the file's word: room for more than a recording
        // of ordinary length holds is made as the samples come.
        let room = |event: usize| {
            stats
                .get(event)
                .map_or(0, |s| s.samples.min(1 << 20) as usize)
        };
        Timeline {
            samples: (0..events).map(|e| Vec::with_capacity(room(e))).collect(),
            weights: vec![Vec::new(); events],
            ..Timeline::default()
        }
    }

    /// Adds a sample of `event` on `stack`, with what its group's members
    /// counted. The stack is hashed once: this stands for the weight per
    /// stack, which [`Timeline::finish`] gives back.
    pub(crate) fn add(
        &mut self,
        stack: StackId,
        sample: &Sample,
        weight: Weight,
        members: &[(EventIndex, u64)],
    ) {
        let next = self.keys.len() as u32;
        let id = *self.ids.entry(stack).or_insert(next);
        if id == next {
            self.keys.push(stack);
        }
        let timed = |period| TimedSample {
            time: sample.time,
            stack: id,
            cpu: sample.cpu,
            period,
            ip: sample.ip,
        };
        self.count(usize::from(sample.event), timed(weight.period), weight);
        for &(member, period) in members {
            if usize::from(member) < self.samples.len() {
                let weight = Weight { samples: 0, period };
                self.count(usize::from(member), timed(period), weight);
            }
        }
    }

    fn count(&mut self, event: usize, timed: TimedSample, weight: Weight) {
        let stack = timed.stack;
        self.samples[event].push(timed);
        let weights = &mut self.weights[event];
        if weights.len() <= stack as usize {
            weights.resize(stack as usize + 1, None);
        }
        weights[stack as usize].get_or_insert_default().add(weight);
    }

    /// The weight of each stack per event, as [`SampleCounts::by_stack`]
    /// has it; the stacks are listed by id from now on.
    pub(crate) fn finish(
        &mut self,
        lists: &[Box<[Location]>],
    ) -> Vec<FxHashMap<ThreadStack, Weight>> {
        self.ids = FxHashMap::default();
        self.stacks = (std::mem::take(&mut self.keys).into_iter())
            .map(|key| key.stack(lists))
            .collect();
        (self.weights.iter())
            .map(|weights| {
                (weights.iter().enumerate())
                    .filter_map(|(id, w)| Some((self.stacks[id].clone(), (*w)?)))
                    .collect()
            })
            .collect()
    }
}
