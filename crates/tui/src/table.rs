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
    /// with as many), and how many commands ran it.
    command: Option<(u64, Reverse<CommandId>)>,
    commands: usize,
    function: Option<FunctionId>,
    module: Option<Arc<str>>,
}

/// What the table is built from.
pub(crate) struct TableInput<'a> {
    pub tally: &'a Tally,
    pub names: &'a Names,
    pub commands: &'a [Arc<str>],
    pub event: u16,
    pub key: SortKey,
    /// Rows whose name holds this (ignoring case) are kept; empty: all.
    pub filter: &'a str,
}

/// Builds the table of `input.event`.
pub(crate) fn build_table(input: &TableInput<'_>) -> Table {
    let names = input.names;
    let command_name = |id: CommandId| {
        (input.commands.get(id as usize).cloned()).unwrap_or_else(|| Arc::from("-"))
    };
    // One map of groups and one of samples per group and command, rather
    // than maps in each group: a refresh over thousands of rows allocates
    // little.
    let mut index: FxHashMap<GroupKey, usize> = FxHashMap::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut by_command: FxHashMap<(usize, CommandId), u64> = FxHashMap::default();
    for (row, weight) in input
        .tally
        .rows
        .iter()
        .filter(|(r, _)| r.event == input.event)
    {
        let key = match input.key {
            SortKey::Symbol => GroupKey::Function(row.function),
            SortKey::Module => GroupKey::Module(names.module_of(row.function)),
            SortKey::Command => GroupKey::Command(command_name(row.command)),
            SortKey::Pid => GroupKey::Pid(row.pid),
        };
        let at = *index.entry(key.clone()).or_insert_with(|| {
            groups.push(Group {
                key,
                weight: Weight::default(),
                pid: Some(row.pid),
                several_pids: false,
                command: None,
                commands: 0,
                function: None,
                module: None,
            });
            groups.len() - 1
        });
        let group = &mut groups[at];
        group.weight.add(*weight);
        group.several_pids |= group.pid != Some(row.pid);
        *by_command.entry((at, row.command)).or_default() += weight.samples;
        if input.key == SortKey::Symbol && group.function.is_none() {
            group.function = Some(row.function);
            group.module = Some(names.module_of(row.function));
        }
    }
    for ((at, command), samples) in by_command {
        let group = &mut groups[at];
        group.commands += 1;
        let this = (samples, Reverse(command));
        if group.command.is_none_or(|top| this > top) {
            group.command = Some(this);
        }
    }
    let total = input.tally.totals.get(input.event as usize).copied();
    let total = total.unwrap_or_default();
    let share = |w: Weight| match total.period {
        0 => w.samples as f64 * 100.0 / total.samples.max(1) as f64,
        period => w.period as f64 * 100.0 / period as f64,
    };
    let filter = input.filter.to_lowercase();
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|group| {
            let key = &group.key;
            let command =
                (group.command).map_or_else(|| Arc::from("-"), |(_, id)| command_name(id.0));
            let name = match key {
                GroupKey::Function(f) => names.functions[*f as usize].name.clone(),
                GroupKey::Module(m) | GroupKey::Command(m) => m.clone(),
                GroupKey::Pid(_) => command.clone(),
            };
            let module = match (key, group.module) {
                (GroupKey::Module(m), _) => m.clone(),
                (_, Some(module)) => module,
                _ => Arc::from(""),
            };
            Row {
                name,
                module,
                command,
                other_commands: group.commands.saturating_sub(1),
                pid: group.pid.filter(|_| !group.several_pids),
                percent: share(group.weight),
                weight: group.weight,
                function: group.function,
            }
        })
        .filter(|row| {
            filter.is_empty()
                || row.name.to_lowercase().contains(&filter)
                || row.pid.is_some_and(|pid| pid.to_string() == filter)
        })
        .collect();
    rows.sort_by(|a, b| {
        (b.weight.period, b.weight.samples)
            .cmp(&(a.weight.period, a.weight.samples))
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.pid.cmp(&b.pid))
    });
    Table { rows, total }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum GroupKey {
    Function(FunctionId),
    Module(Arc<str>),
    Command(Arc<str>),
    Pid(u32),
}
