//! The stacks of samples while they are counted, each a small flat key:
//! its thread, command, leaf and an id for its list of callers, so that a
//! sample is counted with one lookup and its frames are copied once per
//! distinct list.

use rustc_hash::FxHashMap;

use profiler_model::Location;

use crate::samples::{CommandId, ThreadStack};

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
