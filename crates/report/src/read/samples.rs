//! Where a recording's samples lay (module and file offset), with their call
//! stacks, counted per event and per thread: from the samples of a full
//! recording (two streaming passes: side-band records first, then samples),
//! or from the buckets of a histogram recording (each bucket's count at its
//! first address).

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::ops::Range;

use profiler_histogram::{BucketWidth, Scale};
use profiler_model::{
    EventRole, FileOffset, Location, MappedRange, MemberDeltas, ModuleTable, ProcessModel,
    Recording, Sample, Samples, StackUnwinder,
};

use crate::error::ReportError;
use crate::read::histograms::recording_histograms;
use crate::read::stack_ids::{FrameLists, StackId, StackWeights, Stacks};
use crate::read::thread_stack::{CommandId, ThreadStack, ThreadState};
use crate::read::time_slices::{TimeSlices, TimeWindows, sample_span};
use crate::read::timeline::Timeline;
use crate::read::walk::StackWalker;
use crate::read::weight::Weight;

/// Which samples to count: those of these processes and threads (an
/// empty list admits all), taken in these slices of time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleFilter {
    pub pids: Vec<u32>,
    pub tids: Vec<u32>,
    /// `--time`; `None`: the whole recording.
    pub time: Option<TimeSlices>,
}

impl SampleFilter {
    /// Whether the filter admits every sample.
    pub fn is_empty(&self) -> bool {
        self.pids.is_empty() && self.tids.is_empty() && self.time.is_none()
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
        let time = (self.time.as_ref()).map(|t| format!("the time {}", t.text()));
        [list("pid", &self.pids), list("tid", &self.tids), time]
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

/// Which tasks the counted stacks tell apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskDetail {
    /// Each thread's stacks apart.
    #[default]
    Threads,
    /// Each process's: the threads of a process together (tid 0).
    Processes,
    /// Only command names: every thread under one name together (pid and
    /// tid 0). Far fewer stacks to name and count, for views that show no
    /// process or thread.
    Commands,
}

/// What [`count_samples`] keeps besides the counts.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Keep {
    /// Each sample, with its time and stack.
    pub timeline: bool,
    /// The executable mappings of each process with samples.
    pub mappings: bool,
    /// Which tasks the stacks tell apart (each thread's samples are
    /// counted whatever this says).
    pub tasks: TaskDetail,
    /// Keep this many frames of each stack at most, from the leaf
    /// (`--max-stack`); `None`: all.
    pub max_stack: Option<usize>,
    /// What each sample's thread was doing: running, blocked, preempted.
    pub states: bool,
    /// Count in one pass, on the calling thread: the caller counts several
    /// recordings side by side.
    pub one_pass: bool,
}

/// What the samples of a recording add up to, before symbolization.
pub(crate) struct SampleCounts {
    pub modules: ModuleTable,
    /// Per event (indexed like the header's events): weight per stack. A
    /// recording without call graphs has one-frame stacks; a histogram
    /// recording's have no thread (pid and tid 0). As counted, but whole
    /// with a timeline or from histograms.
    pub stacks: Stacks,
    /// Per thread: samples of every event, and the thread's name.
    pub threads: Vec<ThreadCount>,
    /// The command names samples were taken under ("" where unknown).
    pub commands: Vec<String>,
    /// The threads whose samples the filter left out, with their names.
    pub excluded: BTreeMap<(u32, u32), String>,
    /// With [`Keep::timeline`] (and a recording of samples).
    pub timeline: Option<Timeline>,
    /// With [`Keep::mappings`]: by process.
    pub mappings: FxHashMap<u32, Vec<MappedRange>>,
    /// When the recording's first and last samples were taken (of any
    /// event, kept or not), in perf-clock nanoseconds.
    pub span: Option<(u64, u64)>,
}

pub(crate) struct ThreadCount {
    pub pid: u32,
    pub tid: u32,
    pub name: String,
    /// The name of its process's main thread, when it last took a sample
    /// (the process's even where the main thread itself took none).
    pub process: String,
    pub samples: u64,
}

/// Counts the samples of the events `wanted` (indices into the header's
/// events) that `filter` admits, unwinding stack copies with `unwinder`,
/// and keeps what `keep` asks for.
pub(crate) fn count_samples(
    recording: &Recording,
    wanted: &[bool],
    filter: &SampleFilter,
    unwinder: &dyn StackUnwinder,
    keep: Keep,
) -> Result<SampleCounts, ReportError> {
    if recording.header.histogram.is_some() {
        if let Some(time) = &filter.time {
            return Err(ReportError::Options(format!(
                "--time {}: a histogram recording keeps no times, only its buckets",
                time.text()
            )));
        }
        count_buckets(recording, wanted)
    } else {
        let parts = match keep.one_pass {
            true => 1,
            false => sample_parts(recording, keep),
        };
        count_sample_records(recording, wanted, filter, unwinder, keep, parts)
    }
}

/// A histogram recording's buckets as counts at their first addresses.
/// Samples outside the histograms have no address and are left out.
fn count_buckets(recording: &Recording, wanted: &[bool]) -> Result<SampleCounts, ReportError> {
    let set = recording_histograms(recording, BucketWidth::default(), Scale::FULL)?;
    let mut by_stack = vec![FxHashMap::default(); wanted.len()];
    for r in &set.regions {
        let event = usize::from(r.event);
        if !wanted.get(event).copied().unwrap_or(false) {
            continue;
        }
        for (index, count) in r.buckets.nonzero() {
            let offset = FileOffset(r.region.first_address(index));
            let location = Location::Module {
                module: r.module,
                offset,
            };
            let stack = ThreadStack {
                pid: 0,
                tid: 0,
                command: CommandId::new(0),
                state: None,
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
        stacks: Stacks::Whole(by_stack),
        threads: Vec::new(),
        commands: vec![String::new()],
        excluded: BTreeMap::new(),
        timeline: None,
        mappings: FxHashMap::default(),
        span: None,
    })
}

/// Below this many samples a recording is counted in one pass: a second
/// thread would cost more than it saves. On 2 CPUs, two parts already save
/// 5% at 107k samples, and 16% at 301k.
const SAMPLES_PER_THREAD: u64 = 50_000;

fn count_sample_records(
    recording: &Recording,
    wanted: &[bool],
    filter: &SampleFilter,
    unwinder: &dyn StackUnwinder,
    keep: Keep,
    parts: usize,
) -> Result<SampleCounts, ReportError> {
    let times = match &filter.time {
        Some(slices) => match sample_span(recording)? {
            Some((first, last)) => slices.windows(first, last),
            None => TimeWindows::default(),
        },
        None => TimeWindows::default(),
    };
    let (model, samples) = recording.replay()?;
    let counting = Counting {
        recording,
        roles: recording.header.events.iter().map(|e| e.role).collect(),
        model: &model,
        wanted,
        filter,
        times,
        unwinder,
        keep,
    };
    let parts = match parts > 1 {
        true => recording.samples_in_parts(parts)?,
        false => None,
    };
    let tally = match parts {
        Some(parts) if parts.len() > 1 => {
            drop(samples);
            let tallies: Vec<Result<Tally, ReportError>> = std::thread::scope(|scope| {
                let workers: Vec<_> = (parts.into_iter())
                    .map(|part| {
                        let counting = &counting;
                        scope.spawn(move || {
                            let mut tally = Tally::new(wanted.len(), None);
                            counting.count(part, &mut tally).map(|()| tally)
                        })
                    })
                    .collect();
                (workers.into_iter())
                    .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            // The first error in file order is the one a single pass meets.
            let mut tallies = tallies.into_iter();
            let mut total = tallies
                .next()
                .unwrap_or_else(|| Ok(Tally::new(wanted.len(), None)))?;
            for tally in tallies {
                total.merge(tally?);
            }
            total
        }
        _ => {
            let timeline = keep
                .timeline
                .then(|| Timeline::new(recording, wanted.len()));
            let mut tally = Tally::new(wanted.len(), timeline);
            counting.count(samples, &mut tally)?;
            tally
        }
    };
    let Tally {
        by_id,
        lists,
        threads,
        commands,
        excluded,
        mut timeline,
        span,
    } = tally;
    let lists = lists.into_lists();
    let stacks = match &mut timeline {
        Some(timeline) => Stacks::Whole(timeline.finish(&lists)),
        None => Stacks::Counted { by_id, lists },
    };
    let threads = thread_counts(threads, &model);
    let commands = commands.names;
    let mappings = match keep.mappings {
        true => (threads.iter().map(|t| t.pid))
            .map(|pid| (pid, model.mappings(pid)))
            .collect(),
        false => FxHashMap::default(),
    };
    Ok(SampleCounts {
        modules: model.into_modules(),
        stacks,
        threads,
        commands,
        excluded,
        timeline,
        mappings,
        span,
    })
}

/// In how many parts to count the samples of `recording` side by side:
/// one per CPU for a large recording, where the parts add up as one pass
/// would count them (no group members, whose counts are deltas from the
/// thread's last sample; no timeline, which keeps samples in file order).
fn sample_parts(recording: &Recording, keep: Keep) -> usize {
    let samples = recording.trailer.stats.total().samples;
    let groups = (recording.header.events.iter()).any(|e| e.leader.is_some());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    match keep.timeline || groups {
        true => 1,
        false => cpus
            .min((samples / SAMPLES_PER_THREAD) as usize)
            .clamp(1, 8),
    }
}

/// What counting a stretch of samples reads them against.
struct Counting<'a> {
    recording: &'a Recording,
    /// Each event's role, indexed like the header's events.
    roles: Vec<EventRole>,
    model: &'a ProcessModel,
    wanted: &'a [bool],
    filter: &'a SampleFilter,
    /// Where `filter`'s slices of time lie.
    times: TimeWindows,
    unwinder: &'a dyn StackUnwinder,
    keep: Keep,
}

/// What a stretch of samples adds up to.
struct Tally {
    /// Per event: weight per stack.
    by_id: Vec<StackWeights>,
    lists: FrameLists,
    /// Per thread: samples, and the time of the last.
    threads: FxHashMap<(u32, u32), (u64, u64)>,
    commands: Commands,
    excluded: BTreeMap<(u32, u32), String>,
    timeline: Option<Timeline>,
    /// The first and last times of every sample read.
    span: Option<(u64, u64)>,
}

impl Tally {
    fn new(events: usize, timeline: Option<Timeline>) -> Tally {
        Tally {
            by_id: (0..events).map(|_| StackWeights::default()).collect(),
            lists: FrameLists::default(),
            threads: FxHashMap::default(),
            commands: Commands::default(),
            excluded: BTreeMap::new(),
            timeline,
            span: None,
        }
    }

    fn add_time(&mut self, time: u64) {
        let (first, last) = self.span.get_or_insert((time, time));
        *first = (*first).min(time);
        *last = (*last).max(time);
    }

    fn add_run(&mut self, run: ThreadRun) {
        self.add_thread((run.pid, run.tid), run.samples, run.last_time);
    }

    fn add_thread(&mut self, thread: (u32, u32), samples: u64, last_time: u64) {
        let (count, last) = self.threads.entry(thread).or_default();
        *count += samples;
        *last = (*last).max(last_time);
    }

    /// Adds the tally of the stretch of samples after this one's.
    fn merge(&mut self, later: Tally) {
        let commands: Vec<CommandId> = (later.commands.names.iter())
            .map(|name| self.commands.named(name))
            .collect();
        let lists: Vec<u32> = (later.lists.into_lists().iter())
            .map(|frames| self.lists.id(frames))
            .collect();
        for (mine, stacks) in self.by_id.iter_mut().zip(later.by_id) {
            for (stack, weight) in stacks {
                let stack = stack.renumbered(&commands, &lists);
                mine.entry(stack).add(weight);
            }
        }
        for (thread, (count, last_time)) in later.threads {
            self.add_thread(thread, count, last_time);
        }
        for (thread, name) in later.excluded {
            self.excluded.entry(thread).or_insert(name);
        }
        if let Some((first, last)) = later.span {
            self.add_time(first);
            self.add_time(last);
        }
    }
}

impl Counting<'_> {
    /// Counts `samples` into `tally`.
    fn count(&self, samples: Samples, tally: &mut Tally) -> Result<(), ReportError> {
        let (model, keep) = (self.model, self.keep);
        let mut frames = Vec::new();
        let mut walker = StackWalker::new(model, self.unwinder);
        let mut members = MemberDeltas::default();
        let mut run: Option<ThreadRun> = None;
        let (mut samples, mut sample) = (samples, Sample::default());
        while let Some(read) = samples.next_into(&mut sample) {
            read?;
            tally.add_time(sample.time);
            let event = usize::from(sample.event);
            let deltas = members.of(&sample);
            if !self.wanted.get(event).copied().unwrap_or(false) {
                continue;
            }
            if !self.filter.admits(sample.pid, sample.tid) || !self.times.admits(sample.time) {
                (tally.excluded)
                    .entry((sample.pid, sample.tid))
                    .or_insert_with(|| {
                        let name = model.thread_name(sample.tid, sample.time);
                        name.unwrap_or("").to_owned()
                    });
                continue;
            }
            walker.frames_into(&sample, &mut frames);
            if let Some(most) = keep.max_stack {
                frames.truncate(most.max(1));
            }
            let pid = match keep.tasks {
                TaskDetail::Commands => 0,
                _ => sample.pid,
            };
            let tid = match keep.tasks {
                TaskDetail::Threads => sample.tid,
                _ => 0,
            };
            let run = match &mut run {
                Some(run) if run.holds(&sample) => run,
                _ => {
                    if let Some(ended) = run.take() {
                        tally.add_run(ended);
                    }
                    run.insert(ThreadRun::new(&sample, model, &mut tally.commands))
                }
            };
            run.samples += 1;
            run.last_time = run.last_time.max(sample.time);
            let state = keep.states.then(|| self.state(&sample));
            let task = (pid, tid, run.command, state);
            let stack = StackId::new(task, &frames, &mut tally.lists);
            let weight = Weight {
                samples: 1,
                period: sample.period,
            };
            if let Some(timeline) = &mut tally.timeline {
                timeline.add(stack, &sample, weight, &deltas);
                continue;
            }
            // Group members count where their leader's sample was taken.
            for (member, delta) in deltas {
                if let Some(stacks) = tally.by_id.get_mut(usize::from(member)) {
                    let weight: &mut Weight = stacks.entry(stack);
                    weight.period = weight.period.saturating_add(delta);
                }
            }
            tally.by_id[event].entry(stack).add(weight);
        }
        if let Some(ended) = run {
            tally.add_run(ended);
        }
        Ok(())
    }
}

impl Counting<'_> {
    /// What the thread of `sample` was doing: off the CPU where the
    /// sample stands for a stretch off it, else running.
    fn state(&self, sample: &Sample) -> ThreadState {
        let role = self.roles.get(usize::from(sample.event));
        if !matches!(role, Some(EventRole::OffCpu | EventRole::Wall)) {
            return ThreadState::Running;
        }
        match self.recording.off_cpu_stretch(sample.tid, sample.time) {
            Some(stretch) if stretch.preempt => ThreadState::Preempted,
            Some(_) => ThreadState::Blocked,
            None => ThreadState::Running,
        }
    }
}

/// Samples of one thread in a row, under one name: most samples follow
/// one of their own thread, and are counted without looking the thread or
/// its name up.
struct ThreadRun {
    pid: u32,
    tid: u32,
    /// When the thread had the name: the run ends where it is renamed.
    named: Range<u64>,
    command: CommandId,
    samples: u64,
    last_time: u64,
}

impl ThreadRun {
    fn new(sample: &Sample, model: &ProcessModel, commands: &mut Commands) -> ThreadRun {
        let (name, named) =
            (model.thread_name_span(sample.tid, sample.time)).unwrap_or(("", 0..u64::MAX));
        ThreadRun {
            pid: sample.pid,
            tid: sample.tid,
            named,
            command: commands.id(name),
            samples: 0,
            last_time: 0,
        }
    }

    fn holds(&self, sample: &Sample) -> bool {
        (self.pid, self.tid) == (sample.pid, sample.tid) && self.named.contains(&sample.time)
    }
}

/// The threads with samples, with their names when they last took one,
/// the busiest first.
fn thread_counts(
    threads: FxHashMap<(u32, u32), (u64, u64)>,
    model: &ProcessModel,
) -> Vec<ThreadCount> {
    let mut threads: Vec<ThreadCount> = threads
        .into_iter()
        .map(|((pid, tid), (samples, time))| ThreadCount {
            pid,
            tid,
            name: model.thread_name(tid, time).unwrap_or("").to_owned(),
            process: model.thread_name(pid, time).unwrap_or("").to_owned(),
            samples,
        })
        .collect();
    threads.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then(a.pid.cmp(&b.pid))
            .then(a.tid.cmp(&b.tid))
    });
    threads
}

/// Command names, each kept once. The names the process model hands out
/// stay put while it lives, so a name is found by where it lies, without
/// hashing its text for every sample.
#[derive(Default)]
struct Commands {
    names: Vec<String>,
    ids: FxHashMap<(usize, usize), CommandId>,
    by_text: FxHashMap<String, CommandId>,
}

impl Commands {
    /// The id of `name`, found by its text alone (for names that do not
    /// stay put).
    fn named(&mut self, name: &str) -> CommandId {
        match self.by_text.get(name) {
            Some(&id) => id,
            None => {
                self.names.push(name.to_owned());
                let id = CommandId::new(self.names.len() - 1);
                self.by_text.insert(name.to_owned(), id);
                id
            }
        }
    }

    fn id(&mut self, name: &str) -> CommandId {
        let at = (name.as_ptr() as usize, name.len());
        if let Some(&id) = self.ids.get(&at) {
            return id;
        }
        let id = self.named(name);
        self.ids.insert(at, id);
        id
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use profiler_model::{
        Avma, CallchainEntry, ChunkLimits, Comm, CpuMode, EventDescription, HostInfo, Mmap,
        NoUnwinder, Record, RecordSink, RecordingHeader, RecordingWriter, Sample, Sampling,
        Trailer,
    };

    use super::*;

    /// A recording of two processes, renamed halfway, with call chains of
    /// one to three frames, a few samples to a chunk.
    fn recording(name: &str) -> Recording {
        let header = RecordingHeader {
            events: vec![EventDescription {
                name: "cpu-clock".into(),
                perf_type: 1,
                config: 0,
                config1: 0,
                config2: 0,
                sampling: Sampling::Period(1),
                unit: "ns".into(),
                user: true,
                kernel: false,
                leader: None,
                role: EventRole::Sampled,
            }],
            command: vec!["./app".into()],
            program: None,
            user: None,
            histogram: None,
            call_graph: None,
            host: HostInfo::default(),
            job: None,
            start_unix_ns: 0,
            profiler_version: "0".into(),
        };
        let limits = ChunkLimits {
            bytes: 1,
            age: Duration::MAX,
            most_bytes: usize::MAX,
            ..ChunkLimits::default()
        };
        let mut writer = RecordingWriter::with_limits(Vec::new(), &header, limits).unwrap();
        for pid in [7, 8] {
            writer
                .push(&Record::Mmap(Mmap {
                    time: 1,
                    pid,
                    tid: pid,
                    start: Avma(0x40_0000),
                    len: 0x10_000,
                    offset: FileOffset(0),
                    path: format!("/bin/app{pid}"),
                    build_id: None,
                }))
                .unwrap();
        }
        for time in 2..600u64 {
            if time == 300 {
                let comm = Comm {
                    time,
                    pid: 8,
                    tid: 8,
                    exec: false,
                    name: "renamed".into(),
                };
                writer.push(&Record::Comm(comm)).unwrap();
            }
            let pid = 7 + (time % 2) as u32;
            let callchain = (0..1 + time % 3)
                .map(|depth| CallchainEntry::Address(Avma(0x40_0000 + (time * 7 + depth) % 97)))
                .collect();
            let sample = Sample {
                time,
                pid,
                tid: pid + (time % 5 == 0) as u32 * 100,
                cpu: 0,
                event: 0,
                mode: CpuMode::User,
                ip: Avma(0x40_0000 + time % 13),
                period: time,
                callchain,
                user_stack: None,
                read: Vec::new(),
            };
            writer.push(&Record::Sample(sample)).unwrap();
            if time % 7 == 0 {
                writer.end_batch().unwrap();
            }
        }
        let bytes = writer.finish(Trailer::default()).unwrap();
        let path = std::env::temp_dir().join(format!("samples-{name}-{}.data", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        Recording::open(&path).unwrap()
    }

    #[test]
    fn samples_counted_in_parts_add_up_to_one_pass() {
        let recording = recording("parts");
        for tasks in [
            TaskDetail::Threads,
            TaskDetail::Processes,
            TaskDetail::Commands,
        ] {
            let keep = Keep {
                tasks,
                ..Keep::default()
            };
            let count = |parts| {
                let filter = SampleFilter::default();
                count_sample_records(&recording, &[true], &filter, &NoUnwinder, keep, parts)
                    .unwrap()
            };
            let whole = count(1);
            assert_eq!(whole.commands, ["", "renamed"]);
            let stacks = |c: SampleCounts| c.stacks.into_whole();
            let one_pass = stacks(count(1));
            let samples: u64 = one_pass[0].values().map(|w| w.samples).sum();
            assert_eq!(samples, 598);
            for parts in [2, 3, 7] {
                let counted = count(parts);
                assert_eq!(counted.commands, whole.commands, "{parts} parts");
                let threads = |c: &SampleCounts| -> Vec<(u32, u32, u64, String)> {
                    (c.threads.iter())
                        .map(|t| (t.pid, t.tid, t.samples, t.name.clone()))
                        .collect()
                };
                assert_eq!(threads(&counted), threads(&whole), "{parts} parts");
                assert_eq!(stacks(counted), one_pass, "{parts} parts");
            }
        }
    }
}
