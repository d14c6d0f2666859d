//! The stacks of samples while they are counted, each a small flat key:
//! its thread, command, leaf and an id for its list of callers, so that a
//! sample is counted with one lookup and its frames are copied once per
//! distinct list.

use rustc_hash::FxHashMap;

use profiler_model::Location;

use crate::samples::{CommandId, ThreadStack, Weight};

/// A stack while samples are counted: its thread and command, its leaf,
/// and its callers as an id among [`FrameLists`] (if it has any). Small
/// and flat, so that a sample is counted with one lookup, and a sample
/// without callers without looking its frames up at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StackId {
    pid: u32,
    tid: u32,
    command: CommandId,
    leaf: Option<Location>,
    callers: u32,
}

/// [`StackId::callers`] of a stack without callers.
const NO_CALLERS: u32 = u32::MAX;

/// Each distinct list of frames once, by id in the order first seen.
#[derive(Default)]
pub(crate) struct FrameLists {
    ids: FxHashMap<Box<[Location]>, u32>,
}

impl FrameLists {
    /// The id of `frames`, which are copied only the first time.
    pub fn id(&mut self, frames: &[Location]) -> u32 {
        if let Some(&id) = self.ids.get(frames) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(frames.into(), id);
        id
    }

    /// The lists, indexed by id.
    pub fn into_lists(self) -> Vec<Box<[Location]>> {
        let mut lists: Vec<(Box<[Location]>, u32)> = self.ids.into_iter().collect();
        lists.sort_unstable_by_key(|(_, id)| *id);
        lists.into_iter().map(|(frames, _)| frames).collect()
    }
}

impl StackId {
    pub fn new(
        pid: u32,
        tid: u32,
        command: CommandId,
        frames: &[Location],
        lists: &mut FrameLists,
    ) -> StackId {
        let (leaf, callers) = match frames.split_first() {
            Some((leaf, [])) => (Some(*leaf), NO_CALLERS),
            Some((leaf, callers)) => (Some(*leaf), lists.id(callers)),
            None => (None, NO_CALLERS),
        };
        StackId {
            pid,
            tid,
            command,
            leaf,
            callers,
        }
    }

    /// The same stack in a tally whose commands and frame lists the
    /// ones of this stack's tally were given the ids `commands` and
    /// `lists` of.
    pub fn renumbered(self, commands: &[CommandId], lists: &[u32]) -> StackId {
        StackId {
            command: commands[self.command.index()],
            callers: match self.callers {
                NO_CALLERS => NO_CALLERS,
                id => lists[id as usize],
            },
            ..self
        }
    }

    /// Which of [`StackWeights`]' maps holds the stack: from its leaf's
    /// address bits and its callers, which cost nothing to mix, where a
    /// hash of all of it was 9% of counting.
    fn shard(&self) -> usize {
        let address = match self.leaf {
            Some(Location::Module { offset, .. }) => offset.0,
            Some(Location::Kernel { address }) => address.0,
            Some(Location::Unmapped) | None => 0,
        };
        ((address >> 2) as usize ^ self.callers as usize) % SHARDS
    }

    pub fn stack(self, lists: &[Box<[Location]>]) -> ThreadStack {
        let callers = match self.callers {
            NO_CALLERS => &[][..],
            id => &lists[id as usize][..],
        };
        ThreadStack {
            pid: self.pid,
            tid: self.tid,
            command: self.command,
            frames: self.leaf.iter().chain(callers).copied().collect(),
        }
    }
}

/// The weight of each stack while samples are counted, spread over maps
/// small enough to come from the allocator's heap. One map of all was
/// megabytes, and each of its doublings freed the last from a mapping of
/// glibc's own, which raises the size glibc maps afresh and with it how
/// much freed memory each thread's heap keeps: a report of a recording
/// with 38k stacks held 1.8 MB more to its end.
pub(crate) struct StackWeights {
    shards: Vec<FxHashMap<StackId, Weight>>,
}

/// How many maps [`StackWeights`] spreads its stacks over.
const SHARDS: usize = 64;

impl Default for StackWeights {
    fn default() -> StackWeights {
        StackWeights {
            shards: vec![FxHashMap::default(); SHARDS],
        }
    }
}

impl StackWeights {
    /// The weight of `stack`, zero if new.
    pub fn entry(&mut self, stack: StackId) -> &mut Weight {
        self.shards[stack.shard()].entry(stack).or_default()
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(FxHashMap::len).sum()
    }
}

impl IntoIterator for StackWeights {
    type Item = (StackId, Weight);
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<FxHashMap<StackId, Weight>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.shards.into_iter().flatten()
    }
}
