//! Samples as named call stacks: every view with call graphs (inclusive
//! time, the call tree, folded stacks and flame graphs, diffs) starts here.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

use profiler_model::{
    EventRole, Location, ModuleTable, Recording, RecordingHeader, StackUnwinder, Symbolizer,
};

use crate::error::ReportError;
use crate::read::completeness::ROOTS;
use crate::read::events::select_events;
use crate::read::located::Located;
use crate::read::naming::{
    FunctionDetail, FunctionId, FunctionKey, ModuleKey, Names, Place, Places, name_locations,
};
use crate::read::samples::{
    Keep, SampleCounts, SampleFilter, TaskDetail, ThreadCount, count_samples,
};
use crate::read::stack_ids::{StackWeights, Stacks};
use crate::read::thread_stack::{CommandId, ThreadStack, ThreadState};
use crate::read::time_slices::sample_span;
use crate::read::timeline::{TimedSample, Timeline};
use crate::read::weight::{Weight, total};

/// A sampled place: where it lies among a [`StackProfile`]'s places.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct PlaceId(u32);

impl PlaceId {
    pub(crate) fn new(index: usize) -> PlaceId {
        PlaceId(index as u32)
    }

    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// A stack of named frames, leaf first, in one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NamedStack {
    /// The rank of the job whose recording holds it (0 when one recording
    /// is read).
    pub rank: u32,
    pub pid: u32,
    pub tid: u32,
    /// The command name the samples were taken under, an index into
    /// [`StackProfile::commands`].
    pub command: CommandId,
    /// With [`StackOptions::states`]: what the thread was doing.
    pub state: Option<ThreadState>,
    /// Leaf first: inlined functions as frames of their own, before the
    /// function holding them.
    pub frames: Vec<FunctionId>,
    /// With [`StackOptions::places`]: the leaf's place.
    pub place: Option<PlaceId>,
    pub weight: Weight,
}

/// The samples of a recording as named stacks, per event: read once, then
/// turned into any view ([`flat_profile`](crate::flat_profile),
/// [`StackProfile::folded`]).
pub struct StackProfile {
    pub(crate) modules: ModuleTable,
    pub(crate) functions: Vec<FunctionKey>,
    /// Indexed like `functions`.
    pub(crate) details: Vec<FunctionDetail>,
    /// With [`StackOptions::places`]: every sampled leaf location and where
    /// it is.
    pub(crate) places: Vec<(Location, Place)>,
    /// Per event of the header: its stacks (empty for events not wanted).
    pub(crate) events: Vec<Vec<NamedStack>>,
    /// With [`StackOptions::timeline`], per event: its samples in time
    /// order, each referring to one of its stacks.
    pub(crate) timeline: Vec<Vec<TimedSample>>,
    /// With [`StackOptions::locations`].
    pub(crate) located: Option<Located>,
    pub(crate) wanted: Vec<bool>,
    /// What each event's samples are, and its name, indexed like `wanted`.
    pub(crate) roles: Vec<EventRole>,
    pub(crate) event_names: Vec<String>,
    pub(crate) threads: Vec<ThreadCount>,
    /// The command names samples were taken under.
    pub(crate) commands: Vec<String>,
    /// `threads` by `(pid, tid)`.
    thread_index: FxHashMap<(u32, u32), usize>,
    /// Why some modules' code is unnamed.
    pub(crate) problems: Vec<String>,
    /// The program's path, to tell its frames from libraries'.
    pub(crate) program: Option<String>,
    /// The processes and threads read.
    pub(crate) filter: SampleFilter,
    /// When the recordings of a job were read together: each one's rank
    /// and host, by rank (empty for one recording).
    pub(crate) ranks: Vec<RankInfo>,
}

/// One recording of a job read with the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankInfo {
    pub rank: u32,
    pub host: String,
}

/// What to read of a recording, and how to name it.
#[derive(Clone, Debug, Default)]
pub struct StackOptions {
    /// Only this event (by name or index); `None`: every event.
    pub event: Option<String>,
    /// Leave out the frames of inlined functions: each location is only
    /// the function holding its code (cheaper: no inline chains to read).
    pub without_inline_frames: bool,
    /// Keep each sample's address (and source line), for views below
    /// functions (by line, by address, annotated listings).
    pub places: Places,
    pub filter: SampleFilter,
    /// Keep what exports that list addresses need (pprof): each frame's
    /// location, the source line of each function of its inline chain, and
    /// the mappings of each process.
    pub locations: bool,
    /// Keep each sample's time (exports with a timeline: the Firefox
    /// Profiler, speedscope).
    pub timeline: bool,
    /// Which tasks the stacks tell apart: the stacks of a view that shows
    /// no process or thread are merged across them.
    pub tasks: TaskDetail,
    /// Keep this many frames of each stack at most, from the leaf, as
    /// `perf report --max-stack` does; `None`: all.
    pub max_stack: Option<usize>,
    /// Tell stacks apart by what their thread was doing: running, blocked
    /// or preempted (`report --sort state`).
    pub states: bool,
}

/// What samples are merged by: process, thread, command, state, frames,
/// place.
type StackKey = (
    u32,
    u32,
    CommandId,
    Option<ThreadState>,
    Vec<FunctionId>,
    Option<PlaceId>,
);
type StackKeyRef<'a> = (
    u32,
    u32,
    CommandId,
    Option<ThreadState>,
    &'a [FunctionId],
    Option<PlaceId>,
);

/// Reads the samples of `recording` that `options` selects, unwinding
/// stack copies with `unwinder` and naming code with `symbolizer`.
pub fn read_stacks(
    recording: &Recording,
    symbolizer: &dyn Symbolizer,
    unwinder: &dyn StackUnwinder,
    options: &StackOptions,
) -> Result<StackProfile, ReportError> {
    let wanted = select_events(&recording.header.events, options.event.as_deref())?;
    let counts = count_samples(recording, &wanted, &options.filter, unwinder, keep(options))?;
    let filter = &options.filter;
    if !filter.is_empty() && counts.stacks.is_empty() {
        return Err(nothing_matches(recording, filter, &counts.excluded)?);
    }
    let names = name_locations(
        &counts.modules,
        counts.stacks.locations(),
        symbolizer,
        !options.without_inline_frames,
        options.places,
        options.locations,
    );
    let program = recording.header.program.clone();
    Ok(assemble(
        counts,
        &names,
        options,
        &recording.header,
        wanted,
        program,
    ))
}

/// What counting keeps of the samples for `options`.
pub(crate) fn keep(options: &StackOptions) -> Keep {
    Keep {
        timeline: options.timeline,
        mappings: options.locations,
        tasks: options.tasks,
        max_stack: options.max_stack,
        states: options.states,
        one_pass: false,
    }
}

/// Refuses a filter that left out every sample, naming what it left out.
pub(crate) fn check_filter(
    filter: &SampleFilter,
    excluded: &BTreeMap<(u32, u32), String>,
) -> Result<(), ReportError> {
    if filter.is_empty() {
        return Ok(());
    }
    Err(ReportError::NoMatchingSamples {
        filter: filter.describe(),
        available: excluded_list(excluded, !filter.tids.is_empty()),
    })
}

/// The profile of the samples `counts` counted, their locations named by
/// `names`.
pub(crate) fn assemble(
    mut counts: SampleCounts,
    names: &Names,
    options: &StackOptions,
    header: &RecordingHeader,
    wanted: Vec<bool>,
    program: Option<String>,
) -> StackProfile {
    let stacks = std::mem::replace(&mut counts.stacks, Stacks::Whole(Vec::new()));
    let (events, timeline, located, places) = match stacks {
        Stacks::Counted { by_id, lists }
            if !options.locations && options.places == Places::None =>
        {
            let events = named_as_counted(by_id, &lists, names);
            let timeline = vec![Vec::new(); events.len()];
            (events, timeline, None, Vec::new())
        }
        stacks => {
            let by_stack = stacks.into_whole();
            let located = options.locations.then(|| {
                let mappings = std::mem::take(&mut counts.mappings);
                Located::new(&by_stack, names, mappings)
            });
            let (places, place_ids) = leaf_places(&by_stack, names, options.places);
            let key_of = |stack: &ThreadStack| stack_key(stack, names, &place_ids);
            let events: Vec<Vec<NamedStack>> = (by_stack.into_iter())
                .map(|stacks| named_stacks(stacks.iter().map(|(s, w)| (key_of(s), *w))))
                .collect();
            let timeline = match counts.timeline.take() {
                Some(timeline) => named_timeline(timeline, &events, key_of),
                None => vec![Vec::new(); events.len()],
            };
            (events, timeline, located, places)
        }
    };
    StackProfile {
        modules: counts.modules,
        functions: names.functions().to_vec(),
        details: names.details().to_vec(),
        places,
        events,
        timeline,
        located,
        wanted,
        roles: header.events.iter().map(|e| e.role).collect(),
        event_names: (header.events.iter()).map(|e| e.name.clone()).collect(),
        thread_index: (counts.threads.iter().enumerate())
            .map(|(i, t)| ((t.pid, t.tid), i))
            .collect(),
        threads: counts.threads,
        commands: counts.commands,
        problems: names.problems.clone(),
        program,
        filter: options.filter.clone(),
        ranks: Vec::new(),
    }
}

/// With `places`, every sampled leaf's place, in the order of the
/// locations, and their ids.
fn leaf_places(
    by_stack: &[FxHashMap<ThreadStack, Weight>],
    names: &Names,
    places: Places,
) -> (Vec<(Location, Place)>, FxHashMap<Location, PlaceId>) {
    let mut leaves: Vec<Location> = match places {
        Places::None => Vec::new(),
        Places::Addresses | Places::Lines => (by_stack.iter())
            .flat_map(|stacks| stacks.keys())
            .filter_map(|stack| stack.frames.first().copied())
            .collect(),
    };
    leaves.sort_unstable();
    leaves.dedup();
    let place_ids: FxHashMap<Location, PlaceId> = (leaves.iter().enumerate())
        .map(|(index, &location)| (location, PlaceId::new(index)))
        .collect();
    let places = (leaves.into_iter())
        .map(|location| {
            let place = names.places.get(&location).cloned().unwrap_or_default();
            (location, place)
        })
        .collect();
    (places, place_ids)
}

/// What `stack` is merged by: its locations as functions, and its leaf's
/// place if `place_ids` has one.
fn stack_key(
    stack: &ThreadStack,
    names: &Names,
    place_ids: &FxHashMap<Location, PlaceId>,
) -> StackKey {
    let frames = (stack.frames.iter())
        .flat_map(|location| names.frames(location).iter().copied())
        .collect();
    let place = stack
        .frames
        .first()
        .and_then(|leaf| place_ids.get(leaf).copied());
    (
        stack.pid,
        stack.tid,
        stack.command,
        stack.state,
        frames,
        place,
    )
}

/// Each event's stacks as counted, named a list of callers at a time: the
/// lists are shared by many stacks.
fn named_as_counted(
    by_id: Vec<StackWeights>,
    lists: &[Box<[Location]>],
    names: &Names,
) -> Vec<Vec<NamedStack>> {
    let lists: Vec<Box<[FunctionId]>> = (lists.iter())
        .map(|list| list.iter().flat_map(|l| names.frames(l)).copied().collect())
        .collect();
    let leaf = |location: &Location| names.frames(location);
    (by_id.into_iter())
        .map(|stacks| {
            named_stacks(stacks.into_iter().map(|(id, weight)| {
                let (pid, tid, command, state) = id.task();
                (
                    (pid, tid, command, state, id.named(leaf, &lists), None),
                    weight,
                )
            }))
        })
        .collect()
}

/// An event's stacks, each by what it is merged by (the same functions'
/// stacks merged), in a stable order.
fn named_stacks(stacks: impl Iterator<Item = (StackKey, Weight)>) -> Vec<NamedStack> {
    let mut merged: FxHashMap<StackKey, Weight> = FxHashMap::default();
    for (key, weight) in stacks {
        merged.entry(key).or_default().add(weight);
    }
    let mut stacks: Vec<NamedStack> = merged
        .into_iter()
        .map(
            |((pid, tid, command, state, frames, place), weight)| NamedStack {
                rank: 0,
                pid,
                tid,
                command,
                state,
                frames,
                place,
                weight,
            },
        )
        .collect();
    stacks.sort_by(|a, b| {
        (a.rank, a.pid, a.tid, a.command, a.state, &a.frames, a.place)
            .cmp(&(b.rank, b.pid, b.tid, b.command, b.state, &b.frames, b.place))
    });
    stacks
}

/// Each event's samples in time order, each referring to its named stack
/// among `events`' (which `key_of` tells).
fn named_timeline(
    timeline: Timeline,
    events: &[Vec<NamedStack>],
    key_of: impl Fn(&ThreadStack) -> StackKey,
) -> Vec<Vec<TimedSample>> {
    let keys: Vec<StackKey> = timeline.stacks.iter().map(key_of).collect();
    (timeline.samples.into_iter().zip(events))
        .map(|(mut samples, stacks)| {
            let index: FxHashMap<StackKeyRef<'_>, u32> = (stacks.iter())
                .enumerate()
                .map(|(i, s)| {
                    let key = (s.pid, s.tid, s.command, s.state, &s.frames[..], s.place);
                    (key, i as u32)
                })
                .collect();
            // Each stack looked up once, not once per sample.
            let named: Vec<u32> = (keys.iter())
                .map(|(pid, tid, command, state, frames, place)| {
                    let key = (*pid, *tid, *command, *state, &frames[..], *place);
                    index.get(&key).copied().unwrap_or(u32::MAX)
                })
                .collect();
            for sample in &mut samples {
                sample.stack = named[sample.stack as usize];
            }
            samples.sort_by_key(|s| s.time);
            samples
        })
        .collect()
}

/// Why a filter kept no sample: what it asked for, and what there is.
pub(crate) fn nothing_matches(
    recording: &Recording,
    filter: &SampleFilter,
    excluded: &BTreeMap<(u32, u32), String>,
) -> Result<ReportError, ReportError> {
    let span = match &filter.time {
        Some(_) => sample_span(recording)?,
        None => None,
    };
    let available = match span {
        Some((first, last)) => format!(
            "samples from 0 to {:.3} s after its first",
            last.saturating_sub(first) as f64 / 1e9
        ),
        None => format!(
            "samples of {}",
            excluded_list(excluded, !filter.tids.is_empty())
        ),
    };
    Ok(ReportError::NoMatchingSamples {
        filter: filter.describe(),
        available,
    })
}

/// `100 (sh), 101 (grep), ...`: the processes (or threads, `pid/tid`) of
/// the samples a filter left out, the first few.
fn excluded_list(excluded: &BTreeMap<(u32, u32), String>, threads: bool) -> String {
    const LISTED: usize = 10;
    let mut seen: Vec<String> = Vec::new();
    for (&(pid, tid), name) in excluded {
        let id = match threads {
            true => format!("{pid}/{tid}"),
            false => pid.to_string(),
        };
        let entry = match name.as_str() {
            "" => id,
            name => format!("{id} ({name})"),
        };
        if seen.last() != Some(&entry) && (threads || !seen.iter().any(|s| s == &entry)) {
            seen.push(entry);
        }
    }
    let more = seen.len().saturating_sub(LISTED);
    seen.truncate(LISTED);
    if more > 0 {
        seen.push(format!("and {more} more"));
    }
    match seen.is_empty() {
        true => "none at all".into(),
        false => seen.join(", "),
    }
}

impl StackProfile {
    /// Indexes [`StackProfile::threads`] by process and thread (the first
    /// of a rank where several ranks had the same).
    pub(crate) fn index_threads(&mut self) {
        self.thread_index.clear();
        for (index, thread) in self.threads.iter().enumerate() {
            (self.thread_index)
                .entry((thread.pid, thread.tid))
                .or_insert(index);
        }
    }

    /// The profile of a job over `modules`, with nothing in it yet.
    pub(crate) fn for_job(modules: ModuleTable) -> StackProfile {
        StackProfile {
            modules,
            functions: Vec::new(),
            details: Vec::new(),
            places: Vec::new(),
            events: Vec::new(),
            timeline: Vec::new(),
            located: None,
            wanted: Vec::new(),
            roles: Vec::new(),
            event_names: Vec::new(),
            threads: Vec::new(),
            commands: Vec::new(),
            thread_index: FxHashMap::default(),
            problems: Vec::new(),
            program: None,
            filter: SampleFilter::default(),
            ranks: Vec::new(),
        }
    }

    /// A profile of the given functions and places, with no samples yet.
    #[cfg(test)]
    pub(crate) fn for_tests(
        modules: ModuleTable,
        functions: Vec<FunctionKey>,
        places: Vec<(Location, Place)>,
    ) -> StackProfile {
        StackProfile {
            modules,
            details: vec![FunctionDetail::default(); functions.len()],
            functions,
            places,
            events: Vec::new(),
            timeline: Vec::new(),
            located: None,
            wanted: Vec::new(),
            roles: Vec::new(),
            event_names: Vec::new(),
            threads: Vec::new(),
            commands: vec![String::new()],
            thread_index: FxHashMap::default(),
            problems: Vec::new(),
            program: None,
            filter: SampleFilter::default(),
            ranks: Vec::new(),
        }
    }

    /// The short name and the path of a function's module.
    pub(crate) fn module_names(&self, key: ModuleKey) -> (String, String) {
        match key {
            ModuleKey::Module(id) => {
                let module = self.modules.get(id);
                (module.name().to_owned(), module.path.clone())
            }
            ModuleKey::Kernel => ("[kernel]".into(), "[kernel]".into()),
            ModuleKey::Unmapped => ("[unknown]".into(), "[unknown]".into()),
        }
    }

    /// Whether the stack reaches a function a whole stack starts from.
    pub(crate) fn reaches_root(&self, stack: &NamedStack) -> bool {
        stack
            .frames
            .iter()
            .any(|&f| ROOTS.contains(&self.functions[f.index()].name.as_str()))
    }

    /// Of an event's samples that have more than one frame or none at all
    /// (recordings with call graphs), the weight whose stacks reach a root,
    /// and the total weight.
    pub(crate) fn rooted(&self, event: usize) -> (u64, u64) {
        let stacks = &self.events[event];
        let rooted = total(
            stacks
                .iter()
                .filter(|s| self.reaches_root(s))
                .map(|s| s.weight.samples),
        );
        (rooted, total(stacks.iter().map(|s| s.weight.samples)))
    }

    /// The name of the first event read, which views of one event show.
    pub fn first_event(&self) -> Option<String> {
        let index = self.wanted.iter().position(|&w| w)?;
        self.event_names.get(index).cloned()
    }

    /// The samples read, of every event read.
    pub fn sample_count(&self) -> u64 {
        total((self.events.iter().flatten()).map(|stack| stack.weight.samples))
    }

    /// How many command names the samples read were taken under.
    pub fn command_count(&self) -> usize {
        let mut seen = vec![false; self.commands.len()];
        for (stacks, _) in self.events.iter().zip(&self.wanted).filter(|(_, w)| **w) {
            for stack in stacks {
                seen[stack.command.index()] = true;
            }
        }
        seen.iter().filter(|&&s| s).count()
    }

    /// Whether `function` is a frame of inlined code.
    pub(crate) fn is_inlined(&self, function: FunctionId) -> bool {
        self.functions[function.index()].inlined
    }

    /// The name of thread `tid` of process `pid` ("" if it had none).
    pub(crate) fn thread_name(&self, pid: u32, tid: u32) -> &str {
        self.thread_index
            .get(&(pid, tid))
            .map_or("", |&i| self.threads[i].name.as_str())
    }

    /// The name of process `pid`, seen from its thread `tid`: its main
    /// thread's, else the thread's own ("" if neither had one).
    pub(crate) fn process_name(&self, pid: u32, tid: u32) -> &str {
        let process =
            (self.thread_index.get(&(pid, tid))).map_or("", |&i| &self.threads[i].process);
        match process {
            "" => self.thread_name(pid, tid),
            process => process,
        }
    }
}
