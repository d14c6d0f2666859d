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

/// A row being summed: its weight, and per command and process what ran it.
#[derive(Default)]
struct Group {
    weight: Weight,
    commands: FxHashMap<CommandId, u64>,
    pids: FxHashMap<u32, u64>,
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
    let mut groups: FxHashMap<GroupKey, Group> = FxHashMap::default();
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
        let group = groups.entry(key).or_default();
        group.weight.add(*weight);
        *group.commands.entry(row.command).or_default() += weight.samples;
        *group.pids.entry(row.pid).or_default() += weight.samples;
        if input.key == SortKey::Symbol {
            group.function = Some(row.function);
            group.module = Some(names.module_of(row.function));
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
        .map(|(key, group)| {
            let top = |counts: &FxHashMap<_, u64>| {
                counts
                    .iter()
                    .max_by_key(|(id, n)| (**n, Reverse(**id)))
                    .map(|(id, _)| *id)
            };
            let command = top(&group.commands).map_or_else(|| Arc::from("-"), command_name);
            let name = match &key {
                GroupKey::Function(f) => names.functions[*f as usize].name.clone(),
                GroupKey::Module(m) | GroupKey::Command(m) => m.clone(),
                GroupKey::Pid(_) => command.clone(),
            };
            let module = match (&key, group.module) {
                (GroupKey::Module(m), _) => m.clone(),
                (_, Some(module)) => module,
                _ => Arc::from(""),
            };
            Row {
                name,
                module,
                command,
                other_commands: group.commands.len().saturating_sub(1),
                pid: (group.pids.len() == 1).then(|| top(&group.pids)).flatten(),
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
