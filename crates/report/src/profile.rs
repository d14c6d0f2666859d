//! The flat profile: per event, the functions (or modules) sorted by the
//! share of the event they account for.

use std::collections::HashMap;

use profiler_model::{
    EventDescription, EventStats, HistogramSettings, HistogramTotals, Recording, RecordingHeader,
};

use crate::calltree::{CallTree, TreeDirection, call_tree};
use crate::naming::ModuleKey;
use crate::places::{PlaceKind, PlaceRow, place_rows};
use crate::samples::Weight;
use crate::stacks::{NamedStack, StackProfile};

/// What the rows of a text report are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    /// One row per function (the default).
    #[default]
    Symbol,
    /// One row per module.
    Module,
    /// One row per source line (read with [`StackOptions::places`](crate::StackOptions::places)).
    Line,
    /// One row per instruction address (read with places, too).
    Address,
}

/// Choices for [`flat_profile`] (which samples, and how they are named,
/// are [`StackOptions`](crate::StackOptions) of the stacks read).
#[derive(Clone, Debug, Default)]
pub struct ReportOptions {
    /// Sort and limit by total (inclusive) share rather than self share.
    pub children: bool,
    /// Add a call tree to each event, callers first or callees first.
    pub call_graph: Option<TreeDirection>,
    /// One section per thread instead of one per event.
    pub split_threads: bool,
    pub sort: SortKey,
    /// Rows below this percentage of their event are left out.
    pub percent_limit: f64,
}

/// A flat profile of a recording.
#[derive(Clone, Debug)]
pub struct FlatProfile {
    pub header: RecordingHeader,
    pub duration_ns: u64,
    /// How the profiled command ended.
    pub outcome: String,
    pub processes: u64,
    pub thread_count: u64,
    pub events: Vec<EventProfile>,
    /// Why some modules' code is unnamed.
    pub problems: Vec<String>,
    /// Samples per thread, all reported events together, most first
    /// (empty for histogram recordings, which keep no threads).
    pub threads: Vec<ThreadRow>,
    /// For a histogram recording: its settings, and per event what became
    /// of the samples (those outside the histograms are not in the rows).
    pub histogram: Option<(HistogramSettings, Vec<HistogramTotals>)>,
    pub sort: SortKey,
    /// Rows are sorted by total share (`--children`).
    pub children: bool,
}

/// The rows of one event.
#[derive(Clone, Debug)]
pub struct EventProfile {
    pub description: EventDescription,
    pub stats: EventStats,
    /// With `split_threads`: the thread these rows are of.
    pub thread: Option<ThreadRow>,
    /// For recordings with call graphs: samples whose stack reached a root
    /// (`main`, a thread's start, `_start`), and samples in all.
    pub call_stacks: Option<(u64, u64)>,
    /// The call tree, when asked for.
    pub tree: Option<CallTree>,
    /// The members of this event's group, counted with its samples: one
    /// more column of each function row.
    pub group: Vec<String>,
    /// Functions by share of the event, most first.
    pub functions: Vec<FunctionRow>,
    /// Modules by share of the event, most first.
    pub modules: Vec<ModuleRow>,
    /// Sorted by line or address: source lines or addresses by share of
    /// the event, most first.
    pub places: Vec<PlaceRow>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRow {
    pub name: String,
    /// The module's short name (file name).
    pub module: String,
    /// Samples in the function itself (it is the stack's leaf).
    pub weight: Weight,
    /// Share of the event's total period, in percent.
    pub percent: f64,
    /// Samples in the function and its callees, each sample once.
    pub total: Weight,
    pub total_percent: f64,
    /// What each member of the event's group counted in the function's
    /// samples.
    pub group: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ModuleRow {
    pub module: String,
    /// The module's path, or its bracketed name.
    pub path: String,
    pub weight: Weight,
    pub percent: f64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadRow {
    pub pid: u32,
    pub tid: u32,
    pub name: String,
    pub samples: u64,
}

/// The flat profile of the `stacks` read from `recording`. Shares are of
/// each event's total period (the events the samples stand for), as
/// `perf report` computes its overhead.
pub fn flat_profile(
    recording: &Recording,
    stacks: &StackProfile,
    options: &ReportOptions,
) -> FlatProfile {
    let events = &recording.header.events;
    let mut profiles = Vec::new();
    // Group members are columns of their leader's rows, not events of their own.
    let leaders = events
        .iter()
        .enumerate()
        .filter(|(i, e)| stacks.wanted[*i] && e.leader.is_none());
    for (index, description) in leaders {
        let members: Vec<usize> = (events.iter().enumerate())
            .filter(|(_, e)| e.leader.map(usize::from) == Some(index))
            .map(|(i, _)| i)
            .collect();
        let stats = recording
            .trailer
            .stats
            .events
            .get(index)
            .copied()
            .unwrap_or_default();
        let (rooted, with_stacks) = stacks.rooted(index);
        let split = options.split_threads;
        let counted: Vec<_> = (members.iter())
            .map(|&member| member_counts(stacks, member, split))
            .collect();
        // The whole event, or each thread's share of it.
        let mut parts: Vec<(Option<Thread>, Vec<&NamedStack>)> = Vec::new();
        if options.split_threads {
            let mut by_thread: HashMap<(u32, u32), Vec<&NamedStack>> = HashMap::new();
            for stack in &stacks.events[index] {
                by_thread
                    .entry((stack.pid, stack.tid))
                    .or_default()
                    .push(stack);
            }
            let mut by_thread: Vec<_> = by_thread.into_iter().collect();
            by_thread.sort_by_key(|(thread, stacks)| {
                let samples: u64 = stacks.iter().map(|s| s.weight.samples).sum();
                (std::cmp::Reverse(samples), *thread)
            });
            parts.extend(by_thread.into_iter().map(|(t, s)| (Some(t), s)));
        } else {
            parts.push((None, stacks.events[index].iter().collect()));
        }
        for (thread, part) in parts {
            let none = HashMap::new();
            let counted: Vec<&HashMap<u32, u64>> = (counted.iter())
                .map(|by_thread| by_thread.get(&thread).unwrap_or(&none))
                .collect();
            let mut profile =
                event_profile(stacks, &part, &counted, options, description.clone(), stats);
            profile.group = (members.iter())
                .map(|&member| events[member].name.clone())
                .collect();
            profile.call_stacks = recording.header.call_graph.map(|_| (rooted, with_stacks));
            profile.thread = thread.map(|(pid, tid)| ThreadRow {
                pid,
                tid,
                name: stacks.thread_name(pid, tid).to_owned(),
                samples: part.iter().map(|s| s.weight.samples).sum(),
            });
            profiles.push(profile);
        }
    }

    let wanted = &stacks.wanted;
    let trailer = &recording.trailer;
    FlatProfile {
        header: recording.header.clone(),
        duration_ns: trailer.duration_ns,
        outcome: trailer.outcome.clone(),
        processes: trailer.stats.processes,
        thread_count: trailer.stats.threads,
        events: profiles,
        threads: stacks
            .threads
            .iter()
            .map(|t| ThreadRow {
                pid: t.pid,
                tid: t.tid,
                name: t.name.clone(),
                samples: t.samples,
            })
            .collect(),
        problems: stacks.problems.clone(),
        histogram: recording.header.histogram.clone().map(|settings| {
            let totals = events
                .iter()
                .enumerate()
                .filter(|(i, _)| wanted[*i])
                .map(|(i, _)| trailer.histogram_totals.get(i).copied().unwrap_or_default())
                .collect();
            (settings, totals)
        }),
        sort: options.sort,
        children: options.children,
    }
}

/// A thread as `(pid, tid)`.
type Thread = (u32, u32);

/// What a group member counted in each function (where its leader's
/// samples were taken): per thread when `split_threads`, else under `None`.
fn member_counts(
    stacks: &StackProfile,
    member: usize,
    split_threads: bool,
) -> HashMap<Option<Thread>, HashMap<u32, u64>> {
    let mut counts: HashMap<Option<Thread>, HashMap<u32, u64>> = HashMap::new();
    for stack in &stacks.events[member] {
        let thread = split_threads.then_some((stack.pid, stack.tid));
        if let Some(&leaf) = stack.frames.first() {
            *counts.entry(thread).or_default().entry(leaf).or_default() += stack.weight.period;
        }
    }
    counts
}

/// The rows of one event (or of one thread's share of it): each function's
/// self weight (samples where it is the leaf) and total weight (samples
/// where it is anywhere on the stack, counted once however deep it
/// recurses).
fn event_profile(
    stacks: &StackProfile,
    part: &[&NamedStack],
    members: &[&HashMap<u32, u64>],
    options: &ReportOptions,
    description: EventDescription,
    stats: EventStats,
) -> EventProfile {
    let mut self_weight: HashMap<u32, Weight> = HashMap::new();
    let mut total_weight: HashMap<u32, Weight> = HashMap::new();
    let mut by_module: HashMap<ModuleKey, Weight> = HashMap::new();
    let mut seen: Vec<u32> = Vec::new();
    for stack in part {
        let Some(&leaf) = stack.frames.first() else {
            continue;
        };
        self_weight.entry(leaf).or_default().add(stack.weight);
        let module = stacks.functions[leaf as usize].module;
        by_module.entry(module).or_default().add(stack.weight);
        seen.clear();
        for &function in &stack.frames {
            if !seen.contains(&function) {
                seen.push(function);
                total_weight.entry(function).or_default().add(stack.weight);
            }
        }
    }
    let total = by_module.values().map(|w| w.period).sum::<u64>().max(1) as f64;
    let percent = |w: &Weight| w.period as f64 * 100.0 / total;
    let mut functions: Vec<FunctionRow> = total_weight
        .into_iter()
        .map(|(function, total_weight)| {
            let key = &stacks.functions[function as usize];
            let weight = self_weight.get(&function).copied().unwrap_or_default();
            FunctionRow {
                name: key.name.clone(),
                module: stacks.module_names(key.module).0,
                percent: percent(&weight),
                weight,
                total_percent: percent(&total_weight),
                total: total_weight,
                group: (members.iter())
                    .map(|m| m.get(&function).copied().unwrap_or(0))
                    .collect(),
            }
        })
        .filter(|row| {
            let shown = match options.children {
                true => row.total_percent,
                false => row.percent,
            };
            shown >= options.percent_limit
        })
        .collect();
    let by_children = options.children;
    functions.sort_by(|a, b| {
        let key = |r: &FunctionRow| match by_children {
            true => (r.total.period, r.weight.period, r.total.samples),
            false => (r.weight.period, r.total.period, r.weight.samples),
        };
        key(b)
            .cmp(&key(a))
            .then_with(|| (&a.name, &a.module).cmp(&(&b.name, &b.module)))
    });
    let mut modules: Vec<ModuleRow> = by_module
        .into_iter()
        .map(|(key, weight)| {
            let (module, path) = stacks.module_names(key);
            ModuleRow {
                module,
                path,
                percent: percent(&weight),
                weight,
            }
        })
        .filter(|row| row.percent >= options.percent_limit)
        .collect();
    modules.sort_by(|a, b| {
        (b.weight.period, b.weight.samples, &a.path).cmp(&(
            a.weight.period,
            a.weight.samples,
            &b.path,
        ))
    });
    let place_kind = match options.sort {
        SortKey::Line => Some(PlaceKind::Line),
        SortKey::Address => Some(PlaceKind::Address),
        SortKey::Symbol | SortKey::Module => None,
    };
    let places = place_kind.map_or_else(Vec::new, |kind| {
        let total = total as u64;
        place_rows(stacks, part, kind, total, options.percent_limit)
    });
    let tree = options
        .call_graph
        .map(|direction| call_tree(stacks, part, direction, options.percent_limit));
    EventProfile {
        description,
        stats,
        thread: None,
        call_stacks: None,
        functions,
        modules,
        places,
        tree,
        group: Vec::new(),
    }
}
