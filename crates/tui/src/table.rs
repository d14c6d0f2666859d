//! The table both screens show: the tally's rows grouped by the sort key
//! (each function, module, command or process with its share of the
//! event), hottest first, filtered by name.

use std::cmp::Reverse;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::intake::{CommandId, Weight};
use crate::names::{FunctionId, Names};
use crate::tally::Tally;

/// What a row stands for: `s` steps through them in this order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// A function (with the command that ran it most).
    #[default]
    Symbol,
    Module,
    Command,
    Pid,
}

impl SortKey {
    pub(crate) fn next(self) -> SortKey {
        match self {
            SortKey::Symbol => SortKey::Module,
            SortKey::Module => SortKey::Command,
            SortKey::Command => SortKey::Pid,
            SortKey::Pid => SortKey::Symbol,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            SortKey::Symbol => "symbol",
            SortKey::Module => "module",
            SortKey::Command => "command",
            SortKey::Pid => "pid",
        }
    }
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row {
    /// The function, module, command or process's command.
    pub name: Arc<str>,
    pub module: Arc<str>,
    /// The command with the most samples here, and how many others ran it.
    pub command: Arc<str>,
    pub other_commands: usize,
    /// The process, where only one ran it.
    pub pid: Option<u32>,
    pub weight: Weight,
    /// Share of the event, in percent.
    pub percent: f64,
    /// The function, for rows that are one.
    pub function: Option<FunctionId>,
}

/// The rows of one event, grouped, filtered and sorted.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Table {
    pub rows: Vec<Row>,
    /// The event's samples in all, filtered out or not.
    pub total: Weight,
}

/// A row being summed: its weight, and what ran it.
struct Group {
    key: GroupKey,
    weight: Weight,
    /// The process that ran it, while only one has.
    pid: Option<u32>,
    several_pids: bool,
    /// The command with the most samples here (the lowest id of those
    /// with as many), and how many commands ran it. While the rows are
    /// summed: the first command met and its samples, the others' being
    /// in [`Scratch::by_command`] (most rows have one command).
    command: (u64, Reverse<CommandId>),
    commands: usize,
}

impl Group {
    /// The process shown: the one that ran it, where only one has.
    fn shown_pid(&self) -> Option<u32> {
        self.pid.filter(|_| !self.several_pids)
    }
}

/// What a refresh reuses of the last: the maps and lists a table is built
/// with, kept at their size, so that a refresh over thousands of rows
/// neither allocates nor hands memory back and forth.
#[derive(Default)]
pub(crate) struct Scratch {
    /// By function: its group, with the symbol as the key.
    by_function: Vec<u32>,
    /// By key: its group, with any other key.
    index: FxHashMap<GroupKey, usize>,
    groups: Vec<Group>,
    /// Samples per group and command, but each group's first command.
    by_command: FxHashMap<(usize, CommandId), u64>,
    /// The groups shown, in order.
    order: Vec<u32>,
}

/// No group yet, in [`Scratch::by_function`].
const NO_GROUP: u32 = u32::MAX;

/// What the table is built from.
pub(crate) struct TableInput<'a> {
    pub tally: &'a Tally,
    pub names: &'a Names,
    pub commands: &'a [Arc<str>],
    pub event: u16,
    pub key: SortKey,
    /// Rows whose name holds this (ignoring case) are kept; empty: all.
    pub filter: &'a str,
    /// The most rows wanted (the hottest).
    pub limit: usize,
}

impl TableInput<'_> {
    fn command_name(&self, id: CommandId) -> Arc<str> {
        (self.commands.get(id as usize).cloned()).unwrap_or_else(|| Arc::from("-"))
    }

    /// The name `group`'s row shows.
    fn name<'s>(&'s self, group: &'s Group) -> &'s str {
        match &group.key {
            GroupKey::Function(f) => &self.names.functions[*f as usize].name,
            GroupKey::Module(m) | GroupKey::Command(m) => m,
            GroupKey::Pid(_) => {
                let id = group.command.1.0;
                self.commands.get(id as usize).map_or("-", |c| c)
            }
        }
    }
}

/// Builds the table of `input.event` into `table`, with `scratch`'s
/// memory.
pub(crate) fn build_table(input: &TableInput<'_>, scratch: &mut Scratch, table: &mut Table) {
    gather(input, scratch);
    let Scratch {
        groups,
        by_command,
        order,
        ..
    } = scratch;
    for ((at, command), samples) in by_command.drain() {
        let group = &mut groups[at];
        group.commands += 1;
        group.command = group.command.max((samples, Reverse(command)));
    }
    let filter = input.filter.to_lowercase();
    order.clear();
    order.extend((0..groups.len() as u32).filter(|&at| {
        let group = &groups[at as usize];
        filter.is_empty()
            || input.name(group).to_lowercase().contains(&filter)
            || group
                .shown_pid()
                .is_some_and(|pid| pid.to_string() == filter)
    }));
    // Hottest first; among equals by name, process, then as met.
    let hotter = |&a: &u32, &b: &u32| {
        let (first, second) = (&groups[a as usize], &groups[b as usize]);
        let weight = |g: &Group| (g.weight.period, g.weight.samples);
        (weight(second).cmp(&weight(first)))
            .then_with(|| input.name(first).cmp(input.name(second)))
            .then_with(|| first.shown_pid().cmp(&second.shown_pid()))
            .then(a.cmp(&b))
    };
    if input.limit < order.len() {
        order.select_nth_unstable_by(input.limit, hotter);
        order.truncate(input.limit);
    }
    order.sort_unstable_by(hotter);
    let total = input.tally.totals.get(input.event as usize).copied();
    table.total = total.unwrap_or_default();
    let share = |w: Weight| match table.total.period {
        0 => w.samples as f64 * 100.0 / table.total.samples.max(1) as f64,
        period => w.period as f64 * 100.0 / period as f64,
    };
    table.rows.clear();
    table.rows.extend(order.iter().map(|&at| {
        let group = &groups[at as usize];
        // Named only for the rows kept.
        let module = match &group.key {
            GroupKey::Module(m) => m.clone(),
            GroupKey::Function(f) => input.names.module_of(*f),
            GroupKey::Command(_) | GroupKey::Pid(_) => Arc::from(""),
        };
        Row {
            name: match &group.key {
                GroupKey::Function(f) => input.names.functions[*f as usize].name.clone(),
                GroupKey::Module(m) | GroupKey::Command(m) => m.clone(),
                GroupKey::Pid(_) => input.command_name(group.command.1.0),
            },
            module,
            command: input.command_name(group.command.1.0),
            other_commands: group.commands.saturating_sub(1),
            pid: group.shown_pid(),
            percent: share(group.weight),
            weight: group.weight,
            function: match group.key {
                GroupKey::Function(f) => Some(f),
                _ => None,
            },
        }
    }));
}

/// Sums the tally's rows of `input.event` into groups by the sort key.
fn gather(input: &TableInput<'_>, scratch: &mut Scratch) {
    let names = input.names;
    scratch.groups.clear();
    scratch.index.clear();
    scratch.by_function.clear();
    if input.key == SortKey::Symbol {
        scratch.by_function.resize(names.functions.len(), NO_GROUP);
    }
    let rows = (input.tally.rows.iter()).filter(|(r, _)| r.event == input.event);
    for (row, weight) in rows {
        let groups = &mut scratch.groups;
        let new = |groups: &mut Vec<Group>, key| {
            groups.push(Group {
                key,
                weight: Weight::default(),
                pid: Some(row.pid),
                several_pids: false,
                command: (0, Reverse(row.command)),
                commands: 1,
            });
            groups.len() - 1
        };
        let at = match input.key {
            SortKey::Symbol => {
                let slot = &mut scratch.by_function[row.function as usize];
                if *slot == NO_GROUP {
                    let at = new(groups, GroupKey::Function(row.function));
                    *slot = at as u32;
                }
                *slot as usize
            }
            key => {
                let key = match key {
                    SortKey::Module => GroupKey::Module(names.module_of(row.function)),
                    SortKey::Command => GroupKey::Command(input.command_name(row.command)),
                    // (The symbol's groups are found above.)
                    SortKey::Pid | SortKey::Symbol => GroupKey::Pid(row.pid),
                };
                match scratch.index.get(&key) {
                    Some(&at) => at,
                    None => {
                        let at = new(groups, key.clone());
                        scratch.index.insert(key, at);
                        at
                    }
                }
            }
        };
        let group = &mut groups[at];
        group.weight.add(*weight);
        group.several_pids |= group.pid != Some(row.pid);
        if group.command.1.0 == row.command {
            group.command.0 += weight.samples;
        } else {
            *scratch.by_command.entry((at, row.command)).or_default() += weight.samples;
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum GroupKey {
    Function(FunctionId),
    Module(Arc<str>),
    Command(Arc<str>),
    Pid(u32),
}
