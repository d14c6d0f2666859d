//! Where a recording's samples lay (module and file offset), with their call
//! stacks, counted per event and per thread: from the samples of a full
//! recording (two streaming passes: side-band records first, then samples),
//! or from the buckets of a histogram recording (each bucket's count at its
//! first address).

use std::collections::{BTreeMap, HashMap};

use profiler_histogram::{BucketWidth, Scale};
use profiler_model::{FileOffset, Location, MemberDeltas, ModuleTable, Recording, StackUnwinder};

use crate::error::ReportError;
use crate::histograms::recording_histograms;
use crate::walk::StackWalker;

/// Samples and the events they stand for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Weight {
    pub samples: u64,
    pub period: u64,
}

impl Weight {
    pub fn add(&mut self, other: Weight) {
        self.samples += other.samples;
        self.period += other.period;
    }
}

/// Which samples to count: those of these processes and threads (an
/// empty list admits all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SampleFilter {
    pub pids: Vec<u32>,
    pub tids: Vec<u32>,
}

impl SampleFilter {
    /// Whether the filter admits every sample.
    pub fn is_empty(&self) -> bool {
        self.pids.is_empty() && self.tids.is_empty()
    }

    /// `pid 4242`, `pids 1, 2 and tid 3`: what the filter asks for.
    pub fn describe(&self) -> String {
        let list = |one: &str, ids: &[u32]| match ids {
            [] => None,
            [id] => Some(format!("{one} {id}")),
            ids => {
                let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
                Some(format!("{one}s {}", ids.join(", ")))
            }
        };
        [list("pid", &self.pids), list("tid", &self.tids)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" and ")
    }

    pub fn admits(&self, pid: u32, tid: u32) -> bool {
        (self.pids.is_empty() || self.pids.contains(&pid))
            && (self.tids.is_empty() || self.tids.contains(&tid))
    }
}

/// A command name samples were taken under: where it lies among
/// [`SampleCounts::commands`].
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

/// What the samples of a recording add up to, before symbolization.
pub(crate) struct SampleCounts {
    pub modules: ModuleTable,
    /// Per event (indexed like the header's events): weight per stack. A
    /// recording without call graphs has one-frame stacks; a histogram
    /// recording's have no thread (pid and tid 0).
    pub by_stack: Vec<HashMap<ThreadStack, Weight>>,
    /// Per thread: samples of every event, and the thread's name.
    pub threads: Vec<ThreadCount>,
    /// The command names samples were taken under ("" where unknown).
    pub commands: Vec<String>,
    /// The threads whose samples the filter left out, with their names.
    pub excluded: BTreeMap<(u32, u32), String>,
}

pub(crate) struct ThreadCount {
    pub pid: u32,
    pub tid: u32,
    pub name: String,
    pub samples: u64,
}

/// Counts the samples of the events `wanted` (indices into the header's
/// events) that `filter` admits, unwinding stack copies with `unwinder`.
pub(crate) fn count_samples(
    recording: &Recording,
    wanted: &[bool],
    filter: &SampleFilter,
    unwinder: &dyn StackUnwinder,
) -> Result<SampleCounts, ReportError> {
    if recording.header.histogram.is_some() {
        count_buckets(recording, wanted)
    } else {
        count_sample_records(recording, wanted, filter, unwinder)
    }
}

/// A histogram recording's buckets as counts at their first addresses.
/// Samples outside the histograms have no address and are left out.
fn count_buckets(recording: &Recording, wanted: &[bool]) -> Result<SampleCounts, ReportError> {
    let set = recording_histograms(recording, BucketWidth::default(), Scale::FULL)?;
    let mut by_stack = vec![HashMap::new(); wanted.len()];
    for r in &set.regions {
        let event = usize::from(r.event);
        if !wanted.get(event).copied().unwrap_or(false) {
            continue;
        }
        for (index, count) in r.buckets.counts().enumerate().filter(|(_, c)| *c > 0) {
            let offset = FileOffset(r.region.first_address(index));
            let location = Location::Module {
                module: r.module,
                offset,
            };
            let stack = ThreadStack {
                pid: 0,
                tid: 0,
                command: CommandId::new(0),
                frames: Box::new([location]),
            };
            let weight: &mut Weight = by_stack[event].entry(stack).or_default();
            weight.add(Weight {
                samples: count,
                period: count,
            });
        }
    }
    Ok(SampleCounts {
        modules: set.modules,
        by_stack,
        threads: Vec::new(),
        commands: vec![String::new()],
        excluded: BTreeMap::new(),
    })
}

fn count_sample_records(
    recording: &Recording,
    wanted: &[bool],
    filter: &SampleFilter,
    unwinder: &dyn StackUnwinder,
) -> Result<SampleCounts, ReportError> {
    let (model, samples) = recording.replay()?;

    let mut by_stack = vec![HashMap::new(); wanted.len()];
    let mut threads: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
    let mut walker = StackWalker::new(&model, unwinder);
    let mut members = MemberDeltas::default();
    let mut commands = Commands::default();
    let mut excluded = BTreeMap::new();
    for sample in samples {
        let sample = sample?;
        let event = usize::from(sample.event);
        let deltas = members.of(&sample);
        if !wanted.get(event).copied().unwrap_or(false) {
            continue;
        }
        if !filter.admits(sample.pid, sample.tid) {
            excluded.entry((sample.pid, sample.tid)).or_insert_with(|| {
                let name = model.thread_name(sample.tid, sample.time);
                name.unwrap_or("").to_owned()
            });
            continue;
        }
        let stack = ThreadStack {
            pid: sample.pid,
            tid: sample.tid,
            command: commands.id(model.thread_name(sample.tid, sample.time).unwrap_or("")),
            frames: walker.frames(&sample).into(),
        };
        // Group members count where their leader's sample was taken.
        for (member, delta) in deltas {
            if let Some(stacks) = by_stack.get_mut(usize::from(member)) {
                let weight: &mut Weight = stacks.entry(stack.clone()).or_default();
                weight.period += delta;
            }
        }
        let weight: &mut Weight = by_stack[event].entry(stack).or_default();
        weight.add(Weight {
            samples: 1,
            period: sample.period,
        });
        let (count, last_time) = threads.entry((sample.pid, sample.tid)).or_default();
        *count += 1;
        *last_time = (*last_time).max(sample.time);
    }
    let mut threads: Vec<ThreadCount> = threads
        .into_iter()
        .map(|((pid, tid), (samples, time))| ThreadCount {
            pid,
            tid,
            name: model.thread_name(tid, time).unwrap_or("").to_owned(),
            samples,
        })
        .collect();
    threads.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then(a.pid.cmp(&b.pid))
            .then(a.tid.cmp(&b.tid))
    });
    drop(walker);
    let commands = commands.names;
    Ok(SampleCounts {
        modules: model.into_modules(),
        by_stack,
        threads,
        commands,
        excluded,
    })
}

/// Command names, each kept once. The names the process model hands out
/// stay put while it lives, so a name is found by where it lies, without
/// hashing its text for every sample.
#[derive(Default)]
struct Commands {
    names: Vec<String>,
    ids: HashMap<(usize, usize), CommandId>,
    by_text: HashMap<String, CommandId>,
}

impl Commands {
    fn id(&mut self, name: &str) -> CommandId {
        let at = (name.as_ptr() as usize, name.len());
        if let Some(&id) = self.ids.get(&at) {
            return id;
        }
        let id = match self.by_text.get(name) {
            Some(&id) => id,
            None => {
                self.names.push(name.to_owned());
                let id = CommandId::new(self.names.len() - 1);
                self.by_text.insert(name.to_owned(), id);
                id
            }
        };
        self.ids.insert(at, id);
        id
    }
}
