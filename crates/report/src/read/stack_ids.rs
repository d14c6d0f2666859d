//! The stacks of samples while they are counted, each a small flat key:
//! its thread, command, leaf and an id for its list of callers, so that a
//! sample is counted with one lookup and its frames are copied once per
//! distinct list; and the stacks counted, as counting hands them on.

use rustc_hash::{FxBuildHasher, FxHashMap};

use profiler_model::{Location, ModuleId};

use crate::read::naming::FunctionId;
use crate::read::thread_stack::{CommandId, ThreadStack, ThreadState};
use crate::read::weight::Weight;

/// A stack while samples are counted: its thread and command, its leaf,
/// and its callers as an id among [`FrameLists`] (if it has any). Small
/// and flat, so that a sample is counted with one lookup, and a sample
/// without callers without looking its frames up at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StackId {
    pid: u32,
    tid: u32,
    command: CommandId,
    state: Option<ThreadState>,
    leaf: Option<Location>,
    callers: u32,
}

/// Who a stack was sampled in: process, thread, command, and (with `--sort
/// state`) what the thread was doing.
pub(crate) type StackTask = (u32, u32, CommandId, Option<ThreadState>);

/// [`StackId::callers`] of a stack without callers.
const NO_CALLERS: u32 = u32::MAX;

/// Each distinct list of frames once, by id in the order first seen.
#[derive(Default)]
pub(crate) struct FrameLists {
    ids: FxHashMap<Box<[Location]>, u32>,
}

impl FrameLists {
    /// The id of `frames`, which are copied only the first time.
    pub(crate) fn id(&mut self, frames: &[Location]) -> u32 {
        if let Some(&id) = self.ids.get(frames) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(frames.into(), id);
        id
    }

    /// The lists, indexed by id.
    pub(crate) fn into_lists(self) -> Vec<Box<[Location]>> {
        let mut lists: Vec<(Box<[Location]>, u32)> = self.ids.into_iter().collect();
        lists.sort_unstable_by_key(|(_, id)| *id);
        lists.into_iter().map(|(frames, _)| frames).collect()
    }
}

impl StackId {
    pub(crate) fn new(
        (pid, tid, command, state): StackTask,
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
            state,
            leaf,
            callers,
        }
    }

    /// The same stack in a tally whose commands and frame lists the
    /// ones of this stack's tally were given the ids `commands` and
    /// `lists` of.
    pub(crate) fn renumbered(self, commands: &[CommandId], lists: &[u32]) -> StackId {
        StackId {
            command: commands[self.command.index()],
            callers: match self.callers {
                NO_CALLERS => NO_CALLERS,
                id => lists[id as usize],
            },
            ..self
        }
    }

    /// The same stack with its leaf's module renumbered by `modules`.
    fn with_modules(self, modules: &[ModuleId]) -> StackId {
        StackId {
            leaf: self.leaf.map(|leaf| renumbered(leaf, modules)),
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

    /// The stack's thread, command and state.
    pub(crate) fn task(&self) -> StackTask {
        (self.pid, self.tid, self.command, self.state)
    }

    /// The stack's frames once named: its leaf's (`leaf` names a
    /// location), then its callers' (`lists`, each list named, by id).
    pub(crate) fn named<'a>(
        &self,
        leaf: impl Fn(&Location) -> &'a [FunctionId],
        lists: &[Box<[FunctionId]>],
    ) -> Vec<FunctionId> {
        let callers = match self.callers {
            NO_CALLERS => &[][..],
            id => &lists[id as usize][..],
        };
        let leaf = self.leaf.as_ref().map_or(&[][..], leaf);
        [leaf, callers].concat()
    }

    pub(crate) fn stack(self, lists: &[Box<[Location]>]) -> ThreadStack {
        let callers = match self.callers {
            NO_CALLERS => &[][..],
            id => &lists[id as usize][..],
        };
        ThreadStack {
            pid: self.pid,
            tid: self.tid,
            command: self.command,
            state: self.state,
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
    pub(crate) fn entry(&mut self, stack: StackId) -> &mut Weight {
        self.shards[stack.shard()].entry(stack).or_default()
    }

    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(FxHashMap::len).sum()
    }

    fn ids(&self) -> impl Iterator<Item = &StackId> {
        self.shards.iter().flat_map(FxHashMap::keys)
    }
}

impl IntoIterator for StackWeights {
    type Item = (StackId, Weight);
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<FxHashMap<StackId, Weight>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.shards.into_iter().flatten()
    }
}

/// Each event's weight per stack, the stacks as they were counted or whole.
pub(crate) enum Stacks {
    /// As counted: by thread, leaf and callers' list, the lists (indexed by
    /// id) shared by every event. What most views name, each list once.
    Counted {
        by_id: Vec<StackWeights>,
        lists: Vec<Box<[Location]>>,
    },
    /// Whole: each stack's frames its own.
    Whole(Vec<FxHashMap<ThreadStack, Weight>>),
}

impl Stacks {
    /// Whether no event has a stack.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Stacks::Counted { by_id, .. } => by_id.iter().all(|w| w.len() == 0),
            Stacks::Whole(by_stack) => by_stack.iter().all(FxHashMap::is_empty),
        }
    }

    /// Every location of the stacks (some more than once).
    pub(crate) fn locations(&self) -> Box<dyn Iterator<Item = &Location> + '_> {
        match self {
            Stacks::Counted { by_id, lists } => {
                let leaves = by_id.iter().flat_map(StackWeights::ids);
                let leaves = leaves.filter_map(|id| id.leaf.as_ref());
                Box::new(leaves.chain(lists.iter().flat_map(|list| list.iter())))
            }
            Stacks::Whole(by_stack) => Box::new(
                (by_stack.iter())
                    .flat_map(|stacks| stacks.keys())
                    .flat_map(|stack| stack.frames.iter()),
            ),
        }
    }

    /// Renumbers the modules of every location: module `m` becomes
    /// `modules[m]` (several may become one).
    pub(crate) fn renumber_modules(&mut self, modules: &[ModuleId]) {
        match self {
            Stacks::Counted { by_id, lists } => {
                for weights in by_id.iter_mut() {
                    let mut renumbered = StackWeights::default();
                    for (id, weight) in std::mem::take(weights) {
                        renumbered.entry(id.with_modules(modules)).add(weight);
                    }
                    *weights = renumbered;
                }
                for location in lists.iter_mut().flat_map(|list| list.iter_mut()) {
                    *location = renumbered(*location, modules);
                }
            }
            Stacks::Whole(by_stack) => {
                for stacks in by_stack.iter_mut() {
                    let mut whole: FxHashMap<ThreadStack, Weight> = FxHashMap::default();
                    for (mut stack, weight) in std::mem::take(stacks) {
                        for location in stack.frames.iter_mut() {
                            *location = renumbered(*location, modules);
                        }
                        whole.entry(stack).or_default().add(weight);
                    }
                    *stacks = whole;
                }
            }
        }
    }

    /// Each event's stacks whole.
    pub(crate) fn into_whole(self) -> Vec<FxHashMap<ThreadStack, Weight>> {
        match self {
            Stacks::Counted { by_id, lists } => (by_id.into_iter())
                .map(|stacks| {
                    // Made at its size: see `StackWeights`.
                    let mut whole =
                        FxHashMap::with_capacity_and_hasher(stacks.len(), FxBuildHasher);
                    whole.extend((stacks.into_iter()).map(|(id, w)| (id.stack(&lists), w)));
                    whole
                })
                .collect(),
            Stacks::Whole(by_stack) => by_stack,
        }
    }
}

/// `location` with its module renumbered by `modules`.
pub(crate) fn renumbered(location: Location, modules: &[ModuleId]) -> Location {
    match location {
        Location::Module { module, offset } => Location::Module {
            module: modules.get(module as usize).copied().unwrap_or(module),
            offset,
        },
        other => other,
    }
}
