//! The flat profile: per event, the functions (or modules) sorted by the
//! share of the event they account for.

use rustc_hash::FxHashMap;

use profiler_model::{
    EventDescription, EventStats, HistogramSettings, HistogramTotals, Recording, RecordingHeader,
    ThreadTimes,
};

use crate::read::naming::{FunctionId, ModuleKey};
use crate::read::stacks::{NamedStack, RankInfo, StackProfile};
use crate::read::weight::{Weight, total};
use crate::views::attribution::{Attribution, InlineTally};
use crate::views::call_tree::{CallTree, TreeDirection, call_tree};
use crate::views::places::{PlaceRow, place_rows};
use crate::views::row_filter::RowFilter;
use crate::views::sort::{RowKind, SortKey, row_kind};
use crate::views::tasks::{Leaf, Task, TaskKey, TaskKeys, TaskRow, task_rows};

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
    /// What rows are told apart by, in column order (`perf report
    /// --sort`); empty: by function. Line and address rows need stacks
    /// read with [`StackOptions::places`](crate::StackOptions::places).
    pub sort: Vec<SortKey>,
    /// Rows below this percentage of their event are left out.
    pub percent_limit: f64,
    /// Call-tree nodes below this percentage of their event are left out;
    /// `None`: `percent_limit`'s.
    pub call_graph_threshold: Option<f64>,
    /// Only these commands', modules' and functions' rows (and call-tree
    /// samples); shares stay of the whole event.
    pub only: RowFilter,
    /// Count code inlined into a function as the inlined function's (the
    /// innermost frame of its debug info) rather than as the function's
    /// holding it.
    pub inline: bool,
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
    /// With `record --off-cpu`: how each thread read spent its life, by
    /// process and thread.
    pub thread_times: Vec<ThreadTime>,
    /// For a histogram recording: its settings, and per event what became
    /// of the samples (those outside the histograms are not in the rows).
    pub histogram: Option<(HistogramSettings, Vec<HistogramTotals>)>,
    pub sort: Vec<SortKey>,
    /// Rows are sorted by total share (`--children`).
    pub children: bool,
    /// Rows are the innermost inlined functions (`--inline`).
    pub inline: bool,
    /// A call tree was asked for.
    pub call_graph: bool,
    /// Rows below this share were left out.
    pub percent_limit: f64,
    /// When the recordings of a job were read together: each one's rank
    /// and host.
    pub ranks: Vec<RankInfo>,
}

/// The rows of one event.
#[derive(Clone, Debug)]
pub struct EventProfile {
    pub description: EventDescription,
    pub stats: EventStats,
    /// With `--pid`, `--tid` or `--time`: the samples they admitted, and
    /// what they asked for.
    pub selected: Option<(u64, String)>,
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
    /// Sorted by command or process alone: those by share of the event.
    pub tasks: Vec<TaskRow>,
    /// Every command name the samples were taken under, by share.
    pub commands: Vec<TaskRow>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FunctionRow {
    /// The command or process, when the sort keys tell them apart.
    pub task: Task,
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
    /// Of the self weight, what fell in code inlined into the function
    /// (none with `--inline`, where that code is its inlined function's).
    pub inlined_weight: Weight,
    /// The functions inlined into it, most samples first.
    pub inlined: Vec<InlinedRow>,
}

/// A function inlined into a row's function, and the row's samples in it.
#[derive(Clone, Debug, PartialEq)]
pub struct InlinedRow {
    pub name: String,
    /// Samples in its code, and in what was inlined into it in turn.
    pub weight: Weight,
    /// Samples where it is the innermost function.
    pub innermost: Weight,
    /// Samples in it where it was inlined into the row's function itself
    /// rather than into another inlined function: these partition
    /// [`FunctionRow::inlined_weight`].
    pub direct: Weight,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ModuleRow {
    pub task: Task,
    pub module: String,
    /// The module's path, or its bracketed name.
    pub path: String,
    pub weight: Weight,
    pub percent: f64,
}

/// A thread's time on the CPU, blocked and preempted, and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadTime {
    pub name: String,
    pub times: ThreadTimes,
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
    let counter = Counter::new(stacks, options);
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
        let counted: Vec<_> = (members.iter())
            .map(|&member| counter.member_counts(member, options.split_threads))
            .collect();
        for (thread, part) in parts(stacks, index, options.split_threads) {
            let none = FxHashMap::default();
            let counted: Vec<&FxHashMap<RowKey, u64>> = (counted.iter())
                .map(|by_thread| by_thread.get(&thread).unwrap_or(&none))
                .collect();
            let mut profile = counter.event_profile(&part, &counted, description.clone(), stats);
            profile.group = (members.iter())
                .map(|&member| events[member].name.clone())
                .collect();
            profile.call_stacks = recording.header.call_graph.map(|_| (rooted, with_stacks));
            profile.selected = (!stacks.filter.is_empty()).then(|| {
                let admitted = stacks.events[index].iter().map(|s| s.weight.samples);
                (total(admitted), stacks.filter.describe())
            });
            profile.thread = thread.map(|(pid, tid)| ThreadRow {
                pid,
                tid,
                name: stacks.thread_name(pid, tid).to_owned(),
                samples: total(part.iter().map(|s| s.weight.samples)),
            });
            profiles.push(profile);
        }
    }
    whole_profile(recording, stacks, options, profiles)
}

/// The stacks of event `index`: all of them, or each thread's, the thread
/// with the most samples first.
fn parts(
    stacks: &StackProfile,
    index: usize,
    split_threads: bool,
) -> Vec<(Option<Thread>, Vec<&NamedStack>)> {
    if !split_threads {
        return vec![(None, stacks.events[index].iter().collect())];
    }
    let mut by_thread: FxHashMap<Thread, Vec<&NamedStack>> = FxHashMap::default();
    for stack in &stacks.events[index] {
        by_thread
            .entry((stack.pid, stack.tid))
            .or_default()
            .push(stack);
    }
    let mut by_thread: Vec<_> = by_thread.into_iter().collect();
    by_thread.sort_by_key(|(thread, stacks)| {
        let samples = total(stacks.iter().map(|s| s.weight.samples));
        (std::cmp::Reverse(samples), *thread)
    });
    (by_thread.into_iter())
        .map(|(thread, stacks)| (Some(thread), stacks))
        .collect()
}

/// The profile of the recording, around the profiles of its events.
fn whole_profile(
    recording: &Recording,
    stacks: &StackProfile,
    options: &ReportOptions,
    events: Vec<EventProfile>,
) -> FlatProfile {
    let wanted = &stacks.wanted;
    let trailer = &recording.trailer;
    FlatProfile {
        header: recording.header.clone(),
        duration_ns: trailer.duration_ns,
        outcome: trailer.outcome.clone(),
        processes: trailer.stats.processes,
        thread_count: trailer.stats.threads,
        events,
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
        thread_times: (recording.thread_times().iter())
            .filter(|t| stacks.filter.admits(t.pid, t.tid))
            .map(|times| ThreadTime {
                name: stacks.thread_name(times.pid, times.tid).to_owned(),
                times: times.clone(),
            })
            .collect(),
        histogram: recording.header.histogram.clone().map(|settings| {
            let totals = (recording.header.events.iter().enumerate())
                .filter(|(i, _)| wanted[*i])
                .map(|(i, _)| trailer.histogram_totals.get(i).copied().unwrap_or_default())
                .collect();
            (settings, totals)
        }),
        sort: options.sort.clone(),
        children: options.children,
        inline: options.inline,
        call_graph: options.call_graph.is_some(),
        percent_limit: options.percent_limit,
        ranks: stacks.ranks.clone(),
    }
}

/// A sample's row, before naming: its task and the function (or row id)
/// its self weight counts for.
type RowKey = (TaskKey, FunctionId);

/// Counts stacks into rows as the options say.
struct Counter<'a> {
    stacks: &'a StackProfile,
    options: &'a ReportOptions,
    attribution: Attribution,
    tasks: TaskKeys,
}

/// What a function row adds up while counting.
#[derive(Default)]
struct FunctionTally {
    weight: Weight,
    total: Weight,
    inlined: InlineTally,
}

impl<'a> Counter<'a> {
    fn new(stacks: &'a StackProfile, options: &'a ReportOptions) -> Counter<'a> {
        Counter {
            stacks,
            options,
            attribution: Attribution::new(&stacks.functions, options.inline),
            tasks: TaskKeys::new(&options.sort),
        }
    }

    /// What a group member counted in each row (where its leader's
    /// samples were taken): per thread when `split_threads`, else under
    /// `None`.
    fn member_counts(
        &self,
        member: usize,
        split_threads: bool,
    ) -> FxHashMap<Option<Thread>, FxHashMap<RowKey, u64>> {
        let mut counts: FxHashMap<Option<Thread>, FxHashMap<RowKey, u64>> = FxHashMap::default();
        for stack in &self.stacks.events[member] {
            let thread = split_threads.then_some((stack.pid, stack.tid));
            if let Some(row) = self.attribution.leaf(&stack.frames) {
                let key = (self.tasks.of(stack), row);
                let count = counts.entry(thread).or_default().entry(key).or_default();
                *count = count.saturating_add(stack.weight.period);
            }
        }
        counts
    }

    /// The rows of one event (or of one thread's share of it).
    fn event_profile(
        &self,
        part: &[&NamedStack],
        members: &[&FxHashMap<RowKey, u64>],
        description: EventDescription,
        stats: EventStats,
    ) -> EventProfile {
        let all: Vec<Leaf> = part
            .iter()
            .filter_map(|&stack| {
                let row = self.attribution.leaf(&stack.frames)?;
                let task = self.tasks.of(stack);
                Some(Leaf { stack, task, row })
            })
            .collect();
        let whole = total(all.iter().map(|l| l.stack.weight.period));
        let total = whole.max(1) as f64;
        let (stacks, limit, only) = (self.stacks, self.options.percent_limit, &self.options.only);
        let commands = task_rows(stacks, self.weights(&all, TaskKeys::commands()), total, 0.0);
        // Function rows are filtered by their own module and name (a
        // caller's total passes where it is named); every other row and
        // the tree by the code each sample was taken in.
        let (mut leaves, mut shown) = (Vec::new(), Vec::new());
        for leaf in all {
            if only.admits_leaf(stacks, &leaf) {
                shown.push(leaf);
            }
            if only.admits_stack(stacks, leaf.stack) {
                leaves.push(leaf);
            }
        }
        let kind = row_kind(&self.options.sort);
        let places = match kind {
            RowKind::Places(kind) => place_rows(stacks, &shown, kind, total as u64, limit),
            _ => Vec::new(),
        };
        let tasks = match kind {
            RowKind::Tasks => task_rows(stacks, self.weights(&shown, self.tasks), total, limit),
            _ => Vec::new(),
        };
        let tree = (self.options.call_graph).map(|direction| {
            let threshold = self.options.call_graph_threshold.unwrap_or(limit);
            let part: Vec<&NamedStack> = match only.is_empty() {
                true => part.to_vec(),
                false => shown.iter().map(|l| l.stack).collect(),
            };
            call_tree(stacks, &part, direction, threshold, whole)
        });
        EventProfile {
            description,
            stats,
            selected: None,
            thread: None,
            call_stacks: None,
            functions: self.function_rows(&leaves, members, total),
            modules: self.module_rows(&shown, total),
            places,
            tasks,
            commands,
            tree,
            group: Vec::new(),
        }
    }

    /// Each leaf's weight under the task `keys` make of it.
    fn weights<'l>(
        &'l self,
        leaves: &'l [Leaf],
        keys: TaskKeys,
    ) -> impl Iterator<Item = (TaskKey, Weight)> + 'l {
        leaves
            .iter()
            .map(move |l| (keys.of(l.stack), l.stack.weight))
    }

    /// Each function's self weight (samples it holds the leaf's code of)
    /// and total weight (samples where it is anywhere on the stack, counted
    /// once however deep it recurses), sorted and limited.
    fn function_rows(
        &self,
        leaves: &[Leaf],
        members: &[&FxHashMap<RowKey, u64>],
        total: f64,
    ) -> Vec<FunctionRow> {
        let mut tallies: FxHashMap<RowKey, FunctionTally> = FxHashMap::default();
        let mut seen: Vec<FunctionId> = Vec::new();
        for leaf in leaves {
            let (frames, weight) = (&leaf.stack.frames, leaf.stack.weight);
            let tally = tallies.entry((leaf.task, leaf.row)).or_default();
            tally.weight.add(weight);
            (tally.inlined).add(self.attribution.inlined_frames(frames), weight);
            seen.clear();
            for row in self.attribution.rows(frames) {
                if !seen.contains(&row) {
                    seen.push(row);
                    tallies
                        .entry((leaf.task, row))
                        .or_default()
                        .total
                        .add(weight);
                }
            }
        }
        let percent = |w: &Weight| w.period as f64 * 100.0 / total;
        let only = &self.options.only;
        let mut rows: Vec<FunctionRow> = tallies
            .into_iter()
            .filter(|((_, function), _)| {
                let key = &self.stacks.functions[function.index()];
                let (module, path) = self.stacks.module_names(key.module);
                only.admits_function(&module, &path, &key.name)
            })
            .map(|((task, function), tally)| {
                let key = &self.stacks.functions[function.index()];
                FunctionRow {
                    task: self.stacks.task(task),
                    name: key.name.clone(),
                    module: self.stacks.module_names(key.module).0,
                    percent: percent(&tally.weight),
                    weight: tally.weight,
                    total_percent: percent(&tally.total),
                    total: tally.total,
                    group: (members.iter())
                        .map(|m| m.get(&(task, function)).copied().unwrap_or(0))
                        .collect(),
                    inlined_weight: tally.inlined.weight,
                    inlined: self.inlined_rows(&tally.inlined),
                }
            })
            .filter(|row| {
                let shown = match self.options.children {
                    true => row.total_percent,
                    false => row.percent,
                };
                shown >= self.options.percent_limit
            })
            .collect();
        let by_children = self.options.children;
        rows.sort_by(|a, b| {
            let key = |r: &FunctionRow| match by_children {
                true => (r.total.period, r.weight.period, r.total.samples),
                false => (r.weight.period, r.total.period, r.weight.samples),
            };
            key(b)
                .cmp(&key(a))
                .then_with(|| (&a.task, &a.name, &a.module).cmp(&(&b.task, &b.name, &b.module)))
        });
        rows
    }

    fn inlined_rows(&self, tally: &InlineTally) -> Vec<InlinedRow> {
        let mut rows: Vec<InlinedRow> = (tally.by_function.iter())
            .map(|(&function, &[weight, innermost, direct])| InlinedRow {
                name: self.stacks.functions[function.index()].name.clone(),
                weight,
                innermost,
                direct,
            })
            .collect();
        rows.sort_by(|a, b| {
            (b.weight.period, b.weight.samples, &a.name).cmp(&(
                a.weight.period,
                a.weight.samples,
                &b.name,
            ))
        });
        rows
    }

    /// Each module's self weight, sorted and limited.
    fn module_rows(&self, leaves: &[Leaf], total: f64) -> Vec<ModuleRow> {
        let mut by_module: FxHashMap<(TaskKey, ModuleKey), Weight> = FxHashMap::default();
        for leaf in leaves {
            let module = self.stacks.functions[leaf.row.index()].module;
            (by_module.entry((leaf.task, module)).or_default()).add(leaf.stack.weight);
        }
        let mut rows: Vec<ModuleRow> = by_module
            .into_iter()
            .map(|((task, key), weight)| {
                let (module, path) = self.stacks.module_names(key);
                ModuleRow {
                    task: self.stacks.task(task),
                    module,
                    path,
                    percent: weight.period as f64 * 100.0 / total,
                    weight,
                }
            })
            .filter(|row| row.percent >= self.options.percent_limit)
            .collect();
        rows.sort_by(|a, b| {
            (b.weight.period, b.weight.samples)
                .cmp(&(a.weight.period, a.weight.samples))
                .then_with(|| (&a.task, &a.path).cmp(&(&b.task, &b.path)))
        });
        rows
    }
}

/// A thread as `(pid, tid)`.
type Thread = (u32, u32);
