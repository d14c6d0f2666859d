//! A sampled call stack as counting keeps it: its locations, leaf first,
//! with the process, thread and command it was taken in.

use profiler_model::Location;

/// A command name samples were taken under: where it lies among
/// [`SampleCounts::commands`](crate::read::samples::SampleCounts::commands).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CommandId(u32);

impl CommandId {
    pub fn new(index: usize) -> CommandId {
        CommandId(index as u32)
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A sampled call stack, leaf first, in the thread it was taken in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ThreadStack {
    pub pid: u32,
    pub tid: u32,
    /// The thread's command name when the sample was taken.
    pub command: CommandId,
    pub frames: Box<[Location]>,
}
