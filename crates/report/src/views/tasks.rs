//! Who spent the time: the command names and processes samples were taken
//! in, as `perf report --sort comm` and `--sort pid` tell them apart, and
//! the ranks of a job (`--sort rank`), and (`--sort state`) whether their
//! threads were running, blocked or preempted.

use rustc_hash::FxHashMap;

use crate::read::naming::FunctionId;
use crate::read::stacks::{NamedStack, StackProfile};
use crate::read::thread_stack::{CommandId, ThreadState};
use crate::read::weight::Weight;
use crate::views::sort::SortKey;

/// A stack with the row its samples count for.
#[derive(Clone, Copy)]
pub(crate) struct Leaf<'a> {
    pub stack: &'a NamedStack,
    pub task: TaskKey,
    pub row: FunctionId,
}

/// The command and process of a row, as far as the sort keys tell them
/// apart (all `None` when they do not).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Task {
    /// The MPI rank (`--sort rank`).
    pub rank: Option<u32>,
    /// The command name (`--sort comm`).
    pub command: Option<String>,
    /// The process (`--sort pid`), and its name.
    pub process: Option<(u32, String)>,
    /// What the thread was doing (`--sort state`).
    pub state: Option<ThreadState>,
}

/// A command or process and the samples taken in it.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRow {
    pub task: Task,
    pub weight: Weight,
    /// Share of the event's total period, in percent.
    pub percent: f64,
}

/// [`Task`] before naming: a rank, a command, a pid and a state.
pub(crate) type TaskKey = (
    Option<u32>,
    Option<CommandId>,
    Option<u32>,
    Option<ThreadState>,
);

/// Which parts of a sample's task the sort keys keep.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TaskKeys {
    rank: bool,
    command: bool,
    pid: bool,
    state: bool,
}

impl TaskKeys {
    pub(crate) fn new(sort: &[SortKey]) -> TaskKeys {
        TaskKeys {
            rank: sort.contains(&SortKey::Rank),
            command: sort.contains(&SortKey::Command),
            pid: sort.contains(&SortKey::Pid),
            state: sort.contains(&SortKey::State),
        }
    }

    /// Only the command name.
    pub(crate) fn commands() -> TaskKeys {
        TaskKeys {
            rank: false,
            command: true,
            ..TaskKeys::default()
        }
    }

    pub(crate) fn of(self, stack: &NamedStack) -> TaskKey {
        (
            self.rank.then_some(stack.rank),
            self.command.then_some(stack.command),
            self.pid.then_some(stack.pid),
            stack.state.filter(|_| self.state),
        )
    }
}

impl StackProfile {
    /// The task `key` stands for, named.
    pub(crate) fn task(&self, (rank, command, pid, state): TaskKey) -> Task {
        let name = |command: CommandId| match self.commands[command.index()].as_str() {
            "" => "[unknown]".to_owned(),
            name => name.to_owned(),
        };
        Task {
            rank,
            command: command.map(name),
            process: pid.map(|pid| {
                let thread = self.threads.iter().find(|t| t.pid == pid);
                let process = match thread.map_or("", |t| self.process_name(pid, t.tid)) {
                    "" => "[unknown]",
                    named => named,
                };
                (pid, process.to_owned())
            }),
            state,
        }
    }
}

/// Each task's samples, most first, those below `percent_limit` left out.
pub(crate) fn task_rows(
    stacks: &StackProfile,
    counted: impl Iterator<Item = (TaskKey, Weight)>,
    total_period: f64,
    percent_limit: f64,
) -> Vec<TaskRow> {
    let mut by_task: FxHashMap<TaskKey, Weight> = FxHashMap::default();
    for (task, weight) in counted {
        by_task.entry(task).or_default().add(weight);
    }
    let mut rows: Vec<TaskRow> = by_task
        .into_iter()
        .map(|(key, weight)| TaskRow {
            task: stacks.task(key),
            percent: weight.period as f64 * 100.0 / total_period,
            weight,
        })
        .filter(|row| row.percent >= percent_limit)
        .collect();
    rows.sort_by(|a, b| {
        (b.weight.period, b.weight.samples)
            .cmp(&(a.weight.period, a.weight.samples))
            .then_with(|| a.task.cmp(&b.task))
    });
    rows
}
