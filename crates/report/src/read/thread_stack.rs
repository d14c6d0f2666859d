//! A sampled call stack as counting keeps it: its locations, leaf first,
//! with the process, thread and command it was taken in.

use profiler_model::Location;

/// A command name samples were taken under: where it lies among
/// [`SampleCounts::commands`](crate::read::samples::SampleCounts::commands).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CommandId(u32);

impl CommandId {
    pub(crate) fn new(index: usize) -> CommandId {
        CommandId(index as u32)
    }

    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a thread was doing when it was sampled, told apart with `report
/// --sort state`: running, or off the CPU blocked or preempted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadState {
    Running,
    /// Off the CPU, waiting for something (asleep, I/O, a lock).
    Blocked,
    /// Off the CPU though runnable: another thread had its CPU.
    Preempted,
}

impl ThreadState {
    pub fn name(self) -> &'static str {
        match self {
            ThreadState::Running => "running",
            ThreadState::Blocked => "blocked",
            ThreadState::Preempted => "preempted",
        }
    }
}

/// A sampled call stack, leaf first, in the thread it was taken in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ThreadStack {
    pub pid: u32,
    pub tid: u32,
    /// The thread's command name when the sample was taken.
    pub command: CommandId,
    /// With `--sort state`: what the thread was doing.
    pub state: Option<ThreadState>,
    pub frames: Box<[Location]>,
}
