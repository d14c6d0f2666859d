//! What the sampler has delivered since the screen last looked: samples by
//! process, command and place, the caller edges of their stacks, losses,
//! and the modules and command names they refer to. The recorder's thread
//! fills it, the screen's thread takes it whole at each refresh, so it
//! never holds more than one interval's worth.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use profiler_model::{Location, Module};

/// A command name, an index into [`Intake::commands`].
pub(crate) type CommandId = u32;

/// Where samples of one event fell, in one process under one command name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct HitKey {
    pub event: u16,
    pub pid: u32,
    pub command: CommandId,
    pub location: Location,
}

/// One step of a call stack: `caller` called `callee` (its return address
/// lies at `caller`'s place), for one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct EdgeKey {
    pub event: u16,
    pub callee: Location,
    pub caller: Location,
}

/// Samples and the events they stand for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Weight {
    pub samples: u64,
    pub period: u64,
}

impl Weight {
    pub(crate) fn add(&mut self, other: Weight) {
        self.samples = self.samples.saturating_add(other.samples);
        self.period = self.period.saturating_add(other.period);
    }
}

/// One interval's deliveries (samples, edges, losses), and every module and
/// command name seen so far (both only ever appended to).
#[derive(Debug, Default)]
pub(crate) struct Intake {
    pub hits: FxHashMap<HitKey, Weight>,
    pub edges: FxHashMap<EdgeKey, u64>,
    /// Per event.
    pub lost: Vec<u64>,
    pub throttled: Vec<u64>,
    /// Indexed by `ModuleId`.
    pub modules: Vec<Module>,
    /// Indexed by [`CommandId`].
    pub commands: Vec<Arc<str>>,
}

impl Intake {
    pub(crate) fn new(events: usize) -> Intake {
        Intake {
            lost: vec![0; events],
            throttled: vec![0; events],
            ..Intake::default()
        }
    }

    /// Counts one sample at `location`, and each caller edge of its stack
    /// (`stack` holds the places of its callers, innermost first, each
    /// edge counted once per sample).
    pub(crate) fn hit(&mut self, key: HitKey, weight: Weight, stack: &[Location]) {
        self.hits.entry(key).or_default().add(weight);
        let mut callee = key.location;
        let mut seen: Vec<(Location, Location)> = Vec::with_capacity(stack.len());
        for &caller in stack {
            if !seen.contains(&(callee, caller)) {
                seen.push((callee, caller));
                let edge = EdgeKey {
                    event: key.event,
                    callee,
                    caller,
                };
                let count = self.edges.entry(edge).or_default();
                *count = count.saturating_add(1);
            }
            callee = caller;
        }
    }

    /// Hands over the samples, edges and losses delivered since the last
    /// call, leaving the modules and commands.
    #[cfg(test)]
    pub(crate) fn take(&mut self) -> Delivery {
        self.exchange(Delivery::default())
    }

    /// As [`take`](Intake::take), counting on in `empty`'s maps: emptied,
    /// they keep their size, and the next interval's counts go in without
    /// growing them again.
    pub(crate) fn exchange(&mut self, empty: Delivery) -> Delivery {
        let events = self.lost.len();
        Delivery {
            hits: std::mem::replace(&mut self.hits, empty.hits),
            edges: std::mem::replace(&mut self.edges, empty.edges),
            lost: std::mem::replace(&mut self.lost, vec![0; events]),
            throttled: std::mem::replace(&mut self.throttled, vec![0; events]),
        }
    }
}

/// One interval's samples, edges and losses.
#[derive(Debug, Default)]
pub(crate) struct Delivery {
    pub hits: FxHashMap<HitKey, Weight>,
    pub edges: FxHashMap<EdgeKey, u64>,
    pub lost: Vec<u64>,
    pub throttled: Vec<u64>,
}
