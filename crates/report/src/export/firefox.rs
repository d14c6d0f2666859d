//! The Firefox Profiler's processed format (what profiler.firefox.com
//! opens, dragged in), written by fxprof-processed-profile as samply
//! writes it: a process track per recorded process and a thread track per
//! thread, with their names; each thread's samples in time order with their
//! stacks; the recording's command, start, interval and kernel.
//!
//! The profile is symbolicated already: every frame is a label naming its
//! function (an inlined function a frame of its own, `NAME (inlined)`, as
//! the format has no inline marker this crate version can write), so the
//! profiler never asks for symbols. Frames are in categories by the kind of
//! module they are in (the program, a library, the kernel, other), each
//! module a subcategory.
//!
//! Time off the CPU (`--event off-cpu`, and its part of `--event wall`) is
//! written as samply writes it: samples with no CPU delta, each weighing
//! as many sampling intervals as its thread spent off the CPU since the
//! last (what is left of an interval carries over to the next).

use rustc_hash::FxHashMap;
use std::io::{BufWriter, Write};
use std::time::Duration;

use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CategoryPairHandle, CpuDelta, Frame, FrameFlags, FrameInfo,
    Profile, ReferenceTimestamp, SamplingInterval, StackHandle, ThreadHandle, Timestamp,
};
use profiler_model::{EventRole, Recording};

use crate::error::ReportError;
use crate::export::thread_timelines::{Replay, ReplayThread, shown_event};
use crate::read::events::sample_period;
use crate::read::naming::ModuleKey;
use crate::read::stacks::StackProfile;
use crate::views::folded::{FrameKind, INLINED_SUFFIX};

/// Writes the samples of the first event read (in time order where the
/// stacks were read with [`StackOptions::timeline`](crate::StackOptions::timeline))
/// as a Firefox Profiler profile.
pub fn render_firefox(
    recording: &Recording,
    stacks: &StackProfile,
    out: impl Write,
) -> Result<(), ReportError> {
    let header = &recording.header;
    let event = shown_event(stacks);
    let replay = event.map(|e| Replay::new(recording, stacks, e));
    let threads = replay.as_ref().map_or(&[][..], |r| &r.threads[..]);
    let start = threads.iter().map(|t| t.first).min().unwrap_or(0);
    let role = event.map_or(EventRole::Sampled, |e| header.events[e].role);
    let clock = event.is_some_and(|e| header.events[e].unit == "ns");
    let start_time = Duration::from_nanos(header.start_unix_ns);
    let mut profile = Profile::new(
        &header.command.join(" "),
        ReferenceTimestamp::from_duration_since_unix_epoch(start_time),
        SamplingInterval::from_nanos(match role {
            EventRole::Sampled | EventRole::SwitchOut => interval(recording, event, clock).max(1),
            EventRole::OffCpu | EventRole::Wall => off_cpu_interval(recording),
        }),
    );
    profile.set_os_name(&format!("Linux {}", header.host.kernel));
    profile.set_symbolicated(true);
    let off_cpu = (role != EventRole::Sampled).then(|| OffCpuWeights {
        recording,
        all: role == EventRole::OffCpu,
        interval: off_cpu_interval(recording),
        carried: vec![0; threads.len()],
    });
    let mut writer = Writer {
        stacks,
        categories: Categories::new(&mut profile),
        profile,
        start,
        clock,
        off_cpu,
    };
    if let (Some(event), Some(replay)) = (event, &replay) {
        writer.add_samples(event, replay);
    }
    let mut out = BufWriter::new(out);
    serde_json::to_writer(&mut out, &writer.profile).map_err(std::io::Error::from)?;
    out.flush()?;
    Ok(())
}

/// The time between samples: a clock's period, or else the recording's
/// length over its samples.
fn interval(recording: &Recording, event: Option<usize>, clock: bool) -> u64 {
    let Some(event) = event else {
        return 0;
    };
    if clock {
        return sample_period(recording, event);
    }
    let samples = recording
        .trailer
        .stats
        .events
        .get(event)
        .map_or(0, |s| s.samples);
    recording.trailer.duration_ns / samples.max(1)
}

/// The sampling interval off-CPU time is told in: the wall event's
/// clock's, or a millisecond.
fn off_cpu_interval(recording: &Recording) -> u64 {
    let clock = recording.wall_clock().map(|c| sample_period(recording, c));
    clock.filter(|&ns| ns > 0).unwrap_or(1_000_000)
}

/// Off-CPU samples as sampling intervals.
struct OffCpuWeights<'a> {
    recording: &'a Recording,
    /// Every sample is off the CPU (`off-cpu`), rather than those that
    /// stand for a stretch off it (`wall`).
    all: bool,
    interval: u64,
    /// Per thread: the time off the CPU not yet told as a whole interval.
    carried: Vec<u64>,
}

impl OffCpuWeights<'_> {
    /// The intervals an off-CPU sample of `weight` ns weighs, of thread
    /// `index` (`tid`) at `time`; `None` for a sample taken on the CPU.
    fn intervals(&mut self, index: usize, tid: u32, time: u64, weight: u64) -> Option<u64> {
        if !self.all && self.recording.off_cpu_stretch(tid, time).is_none() {
            return None;
        }
        let carried = self.carried[index].saturating_add(weight);
        self.carried[index] = carried % self.interval;
        Some(carried / self.interval)
    }
}

/// The categories of frames: one per kind of module, one subcategory per
/// module.
struct Categories {
    kinds: [CategoryHandle; 4],
    modules: FxHashMap<ModuleKey, CategoryPairHandle>,
}

impl Categories {
    fn new(profile: &mut Profile) -> Categories {
        Categories {
            kinds: [
                profile.add_category("Program", CategoryColor::Yellow),
                profile.add_category("Library", CategoryColor::Orange),
                profile.add_category("Kernel", CategoryColor::Red),
                CategoryHandle::OTHER,
            ],
            modules: FxHashMap::default(),
        }
    }
}

struct Writer<'a> {
    stacks: &'a StackProfile,
    profile: Profile,
    categories: Categories,
    /// The perf-clock time of the first sample, which the profile's
    /// reference timestamp (the recording's start) stands for.
    start: u64,
    /// The event is a clock: its periods are the CPU time between samples.
    clock: bool,
    /// With the off-CPU or wall event: how off-CPU samples weigh.
    off_cpu: Option<OffCpuWeights<'a>>,
}

impl Writer<'_> {
    /// A process track per process, a thread track per thread.
    fn add_threads(&mut self, threads: &[ReplayThread]) -> Vec<ThreadHandle> {
        let mut processes = FxHashMap::default();
        // Each process ends with its last thread's last sample.
        let mut ends: FxHashMap<u32, u64> = FxHashMap::default();
        for thread in threads {
            let end = ends.entry(thread.pid).or_default();
            *end = (*end).max(thread.last);
        }
        let busiest = (threads.iter().enumerate())
            .max_by_key(|(_, t)| t.samples)
            .map(|(i, _)| i);
        let mut handles = Vec::new();
        for (index, thread) in threads.iter().enumerate() {
            let (first, last) = (self.timestamp(thread.first), self.timestamp(thread.last));
            let process = *processes
                .entry(thread.pid)
                .or_insert_with(|| self.profile.add_process(&thread.process, thread.pid, first));
            let is_main = thread.tid == thread.pid;
            let handle = self.profile.add_thread(process, thread.tid, first, is_main);
            self.profile.set_thread_name(handle, &thread.name);
            self.profile.set_thread_end_time(handle, last);
            let process_last = self.timestamp(ends[&thread.pid]);
            self.profile.set_process_end_time(process, process_last);
            if busiest == Some(index) {
                self.profile.add_initial_selected_thread(handle);
            }
            handles.push(handle);
        }
        handles
    }

    /// Each sample, in time order, to its thread.
    fn add_samples(&mut self, event: usize, replay: &Replay) {
        let handles = self.add_threads(&replay.threads);
        let mut stack_handles: Vec<Option<Option<StackHandle>>> =
            vec![None; self.stacks.events[event].len()];
        let mut previous: Vec<Option<u64>> = vec![None; handles.len()];
        for sample in replay.samples() {
            let handle = handles[sample.thread];
            let stack = match stack_handles[sample.stack as usize] {
                Some(stack) => stack,
                None => {
                    let stack = self.stack(handle, event, sample.stack);
                    stack_handles[sample.stack as usize] = Some(stack);
                    stack
                }
            };
            // The CPU time since the thread's previous sample: a clock's
            // period, or else the time passed.
            let since = sample
                .time
                .saturating_sub(previous[sample.thread].unwrap_or(sample.time));
            previous[sample.thread] = Some(sample.time);
            let mut cpu = CpuDelta::from_nanos(if self.clock { sample.weight } else { since });
            let mut weight = i32::try_from(sample.samples).unwrap_or(i32::MAX);
            let tid = replay.threads[sample.thread].tid;
            if let Some(off_cpu) = &mut self.off_cpu
                && let Some(intervals) =
                    off_cpu.intervals(sample.thread, tid, sample.time, sample.weight)
            {
                if intervals == 0 {
                    continue;
                }
                cpu = CpuDelta::ZERO;
                weight = i32::try_from(intervals).unwrap_or(i32::MAX);
            }
            let time = self.timestamp(sample.time);
            self.profile.add_sample(handle, time, stack, cpu, weight);
        }
    }

    /// The stack of a named stack, root first, each function a label.
    fn stack(&mut self, handle: ThreadHandle, event: usize, stack: u32) -> Option<StackHandle> {
        let named = &self.stacks.events[event][stack as usize];
        let frames: Vec<FrameInfo> = (named.frames.iter().rev())
            .map(|&function| {
                let key = &self.stacks.functions[function.index()];
                let name = match key.inlined {
                    true => format!("{}{INLINED_SUFFIX}", key.name),
                    false => key.name.clone(),
                };
                FrameInfo {
                    frame: Frame::Label(self.profile.intern_string(&name)),
                    category_pair: self.category(key.module),
                    flags: FrameFlags::empty(),
                }
            })
            .collect();
        self.profile.intern_stack_frames(handle, frames.into_iter())
    }

    /// The category of a module's frames: its kind, the module a
    /// subcategory.
    fn category(&mut self, module: ModuleKey) -> CategoryPairHandle {
        if let Some(&pair) = self.categories.modules.get(&module) {
            return pair;
        }
        let kind = match self.stacks.frame_kind(module) {
            FrameKind::Program => 0,
            FrameKind::Library => 1,
            FrameKind::Kernel => 2,
            FrameKind::Other => 3,
        };
        let (name, _) = self.stacks.module_names(module);
        let pair = self
            .profile
            .add_subcategory(self.categories.kinds[kind], &name);
        self.categories.modules.insert(module, pair);
        pair
    }

    fn timestamp(&self, time: u64) -> Timestamp {
        Timestamp::from_nanos_since_reference(time.saturating_sub(self.start))
    }
}
