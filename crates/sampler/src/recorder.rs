//! `record`: sample the target until it ends, the time is up or an
//! interrupt comes, and stream every record into a sink. The target is a
//! command launched for the purpose (sampled until it and its descendants
//! exit), processes or threads already running (attached, then left
//! running), or whole CPUs.

use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant, SystemTime};

use profiler_events::{
    CPU_CLOCK, CYCLES, EventSpec, Pmus, own_modifiers, parse_events, split_event_list,
};
use profiler_model::{
    CallGraph, EventDescription, EventIndex, EventRole, JobInfo, Record, RecordSink,
    RecordingHeader, Sampling,
};

use crate::attach::{self, AttachPlan, Liveness};
use crate::call_stacks::CallStacks;
use crate::command::ResolvedCommand;
use crate::counters::{self, ResolvedEvent, RingPlan, Rings, Role};
use crate::descendants::Descendants;
pub use crate::drain_priority::DrainPriority;
use crate::drain_priority::RaisedPriority;
use crate::error::SamplerError;
use crate::launch::{self, RunningChild};
use crate::privileges;
pub use crate::ring_size::{DEFAULT_RING_BYTES, DEFAULT_STACK_RING_BYTES};
use crate::target::{Attachment, ResolvedTarget, Target, TargetEnd, online_cpus};
use crate::{refusal, ring_size, signals, snapshot, switch_out, sysinfo};

/// Samples per second when neither `-c` nor `-F` is given.
pub const DEFAULT_FREQUENCY: u64 = 4000;
/// Bytes of user stack copied per sample with `--call-graph dwarf`, as
/// `perf record` copies.
pub const DEFAULT_STACK_BYTES: u32 = 8192;
/// Bytes of the top of the user stack copied per sample with frame-pointer
/// call graphs, to find the caller that the kernel's chain skips when the
/// sampled function has set up no frame: enough to hold the return address
/// in 99% of such samples of CPython, gzip, xz, sort, gcc and sh.
pub const DEFAULT_FP_STACK_BYTES: u32 = 512;
/// The most the kernel copies per sample (it must fit a 64 KiB record).
pub const MAX_STACK_BYTES: u32 = 65528;

/// How often the recorder wakes when no buffer fills up.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// What to record.
#[derive(Clone, Debug)]
pub struct RecordConfig {
    /// What to sample: a command to launch, running processes or threads,
    /// or CPUs.
    pub target: Target,
    /// The events; empty means the default (cycles, or cpu-clock without a PMU).
    pub events: Vec<EventRequest>,
    /// The rate for every event without its own; `None`: [`DEFAULT_FREQUENCY`].
    pub sampling: Option<Sampling>,
    /// How to collect call stacks; `None`: program counters only.
    pub call_graph: Option<CallGraph>,
    /// With frame-pointer call graphs, the bytes of the top of the user
    /// stack copied with each sample, which find the sampled function's
    /// caller where the kernel's chain skips it (see
    /// [`CallerSplicer`](profiler_model::CallerSplicer)); `None`:
    /// [`DEFAULT_FP_STACK_BYTES`], 0: none.
    pub fp_stack_bytes: Option<u32>,
    /// Ring-buffer data bytes per CPU; `None`: [`DEFAULT_RING_BYTES`], more
    /// with stack copies ([`DEFAULT_STACK_RING_BYTES`] with dwarf's), less
    /// where the locked-memory budget is smaller. A size beyond the budget
    /// is cut to fit, with a notice.
    pub ring_bytes: Option<usize>,
    /// Count the kernel's execution too, for every event without a `:u`,
    /// `:k` or `:h` of its own (`Some(false)`: such events count user space
    /// only). `None`: as perf does, wherever the kernel allows it (root,
    /// CAP_PERFMON, or `kernel.perf_event_paranoid` 1 or less), and user
    /// space only otherwise, with a notice saying so.
    pub kernel: Option<bool>,
    /// For a target that is not launched (attached, or system-wide without
    /// a command): stop after this long. `None`: until an interrupt, or
    /// until every attached task has ended.
    pub duration: Option<Duration>,
    /// For a launched command: record until every process it started has
    /// exited too, rather than until it exits (as perf does).
    pub wait_descendants: bool,
    /// Record each thread's switches off and onto the CPU, with the stack
    /// it leaves from: the recording then has an `off-cpu` event (and a
    /// `wall` event, with a clock event).
    pub off_cpu: bool,
}

/// One `-e` with the `-c`/`-F` that applies to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRequest {
    pub name: String,
    /// `None`: the config's rate.
    pub sampling: Option<Sampling>,
}

/// How a recording ended.
#[derive(Clone, Debug)]
pub struct RecordOutcome {
    pub end: TargetEnd,
    pub duration: Duration,
    /// The signal that interrupted the recording, if one did.
    pub interrupted_by: Option<i32>,
    /// Ring-buffer data bytes per CPU actually used.
    pub ring_bytes: usize,
    /// One-line notices of what the user may not expect, e.g. processes
    /// the command left running when the recording stopped.
    pub notices: Vec<String>,
    /// What became of the draining thread's scheduling priority.
    pub drain_priority: DrainPriority,
}

impl RecordOutcome {
    /// What became of the target, e.g. "exited with status 0", "was
    /// attached for 2.00 s and left running".
    pub fn describe(&self) -> String {
        self.end.describe(self.duration)
    }

    /// The exit status for `record`: the launched command's, else 0.
    pub fn exit_code(&self) -> u8 {
        self.end.code()
    }
}

/// A recording, checked and ready to run: events accepted by the kernel,
/// target found.
#[derive(Debug)]
pub struct Recorder {
    target: ResolvedTarget,
    duration: Option<Duration>,
    kernel: bool,
    events: Vec<ResolvedEvent>,
    notices: Vec<String>,
    /// Why the default event is cpu-clock rather than cycles, if it is.
    fallback: Option<String>,
    call_graph: Option<CallGraph>,
    stacks: Option<CallStacks>,
    /// Data bytes per ring, and how many rings: one per CPU sampled.
    ring_bytes: usize,
    rings: usize,
    wait_descendants: bool,
    /// `record --off-cpu`: the events read from the switches.
    derived: Option<Vec<EventDescription>>,
}

impl Recorder {
    /// Checks everything that can be checked before launching: event names,
    /// rates against the kernel's limit, that the kernel accepts each event,
    /// that the command exists and is executable, that the processes and
    /// threads exist, and that the CPUs are online.
    pub fn new(config: RecordConfig) -> Result<Recorder, SamplerError> {
        if config.target.launches() && config.duration.is_some() {
            return Err(SamplerError::DurationWithCommand);
        }
        let max_rate = sysinfo::max_sample_rate();
        let mut notices = Vec::new();
        // What is to be sampled first: a process that does not exist is
        // named as such, whatever the kernel says of the events.
        let target = ResolvedTarget::resolve(&config.target, &mut notices)?;
        let kernel = kernel_space(&config, &mut notices);
        let mut fallback = None;
        let events = if config.events.is_empty() {
            let sampling = resolve_sampling(CYCLES.name, config.sampling, max_rate, &mut notices)?;
            let (event, why) = default_event(sampling, kernel);
            fallback = why;
            vec![event]
        } else {
            let pmus = Pmus::system();
            let mut events = Vec::new();
            for request in &config.events {
                // One -e may hold several events, each sampled; in a braced
                // group the first samples and the others are read with it.
                for group in parse_events(&request.name, &pmus, kernel)? {
                    let leader = events.len();
                    for (position, spec) in group.events.into_iter().enumerate() {
                        let sampling = request.sampling.or(config.sampling);
                        let sampling =
                            resolve_sampling(&spec.base, sampling, max_rate, &mut notices)?;
                        events.push(ResolvedEvent {
                            spec,
                            sampling,
                            leader: (group.braced && position > 0).then_some(leader),
                            switch_out: None,
                        });
                    }
                }
            }
            events
        };
        let stacks = call_stacks(config.call_graph, config.fp_stack_bytes)?;
        for (index, event) in events.iter().enumerate() {
            counters::probe(event, Role::of(&events, index), stacks)?;
        }
        let mut events = events;
        let derived = match (config.off_cpu, events.first()) {
            (true, Some(first)) => {
                let switch_out = switch_out::resolve(first, kernel, stacks, &mut notices)?;
                events.extend(switch_out);
                let described: Vec<EventDescription> =
                    events.iter().map(|event| describe(event, kernel)).collect();
                Some(switch_out::derived_events(&described, &mut notices))
            }
            _ => None,
        };
        let online = online_cpus()?.len();
        let rings = match &target {
            ResolvedTarget::SystemWide { cpus, .. } => cpus.len(),
            _ => online,
        };
        let carried = ring_size::RingUse {
            stacks,
            switches: derived.is_some(),
        };
        let ring_bytes = ring_size::plan(
            config.ring_bytes,
            carried,
            rings,
            online,
            &privileges::read(),
            sysinfo::page_size(),
            &mut notices,
        );
        Ok(Recorder {
            target,
            duration: config.duration,
            kernel,
            events,
            notices,
            fallback,
            call_graph: config.call_graph,
            stacks,
            wait_descendants: config.wait_descendants,
            ring_bytes,
            rings,
            derived,
        })
    }

    /// One-line notices for the user (e.g. the kernel's rate limit).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Where no event was asked for and hardware cycles cannot be sampled
    /// (a machine without a PMU), the notice that cpu-clock is sampled
    /// instead: the same on every run, so the caller may say it once.
    pub fn fallback_notice(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// Whether samples carry the top of the stack beside a frame-pointer
    /// chain, to find the callers the chain skips.
    pub(crate) fn copies_stack_top(&self) -> bool {
        matches!(self.stacks, Some(CallStacks::FramePointer { copy_bytes }) if copy_bytes > 0)
    }

    /// The header of the recording this recorder will produce.
    pub fn header(&self) -> RecordingHeader {
        let derived = self.derived.iter().flatten().cloned();
        RecordingHeader {
            events: (self.events.iter())
                .map(|event| describe(event, self.kernel))
                .chain(derived)
                .collect(),
            command: self.target.command_line(),
            program: self.target.program(),
            user: self.target.user(),
            histogram: None,
            call_graph: self.call_graph,
            host: sysinfo::host_info(),
            job: JobInfo::from_env(|name| std::env::var(name).ok()),
            start_unix_ns: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            profiler_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// Records the target until it is done with: a launched command until it
    /// has exited (with `wait_descendants`, until every descendant has too),
    /// or until an interrupt (Ctrl-C, SIGTERM, SIGHUP), after which it gets
    /// a moment to exit before it is terminated; attached tasks until the
    /// duration is up, an interrupt comes, or all of them have ended,
    /// leaving them running; whole CPUs without a command until the
    /// duration is up or an interrupt comes.
    ///
    /// An interrupt that came before anything started (noted by a
    /// [`catch_interrupts`](crate::catch_interrupts) guard the caller took
    /// first) starts nothing: [`SamplerError::Interrupted`].
    pub fn run(self, sink: &mut dyn RecordSink) -> Result<RecordOutcome, SamplerError> {
        let _interrupts = signals::catch_interrupts();
        not_interrupted()?;
        let started = Instant::now();
        let mut outcome = match &self.target {
            ResolvedTarget::Launch(command) => self.launch(command, started, sink),
            ResolvedTarget::Attach(attachment) => self.attach(attachment, started, sink),
            ResolvedTarget::SystemWide { cpus, command } => {
                self.system_wide(cpus, command.as_ref(), started, sink)
            }
        }?;
        if outcome.ring_bytes < self.ring_bytes {
            let cut = ring_size::cut_notice(self.ring_bytes, outcome.ring_bytes, None, self.rings);
            outcome.notices.insert(0, cut);
        }
        Ok(outcome)
    }

    /// Launches the command suspended, opens the counters on it (enabled
    /// at its exec), and follows it and its descendants until it exits, or
    /// until they all have.
    fn launch(
        &self,
        command: &ResolvedCommand,
        started: Instant,
        sink: &mut dyn RecordSink,
    ) -> Result<RecordOutcome, SamplerError> {
        let cpus = online_cpus()?;
        let suspended = launch::fork(command)?;
        let rings = counters::open_rings(&RingPlan {
            events: &self.events,
            call_graph: self.stacks,
            tasks: &[suspended.pid()],
            cpus: &cpus,
            bytes: self.ring_bytes,
            enable_on_exec: true,
            side_band: true,
            switches: self.derived.is_some(),
        })?;
        let until = match self.wait_descendants {
            true => Until::AllHungUp,
            false => Until::ChildExits,
        };
        let mut descendants = Descendants::new(sink);
        let mut outcome =
            follow_command(suspended, command, rings, &mut descendants, until, started)?;
        if until == Until::ChildExits
            && let Some(notice) = left_running(&descendants.running())
        {
            outcome.notices.push(notice);
        }
        Ok(outcome)
    }

    /// Opens counters on the running tasks, tells the sink the state they
    /// are in, and records until the time is up, an interrupt comes or they
    /// have all ended. Closing the counters at the end detaches; the tasks
    /// themselves are never touched.
    fn attach(
        &self,
        attachment: &Attachment,
        started: Instant,
        sink: &mut dyn RecordSink,
    ) -> Result<RecordOutcome, SamplerError> {
        let cpus = online_cpus()?;
        let mut rings = attach::open(
            attachment,
            &AttachPlan {
                events: &self.events,
                call_graph: self.stacks,
                cpus: &cpus,
                bytes: self.ring_bytes,
                switches: self.derived.is_some(),
            },
        )?;
        let liveness = Liveness::new(attachment);
        let mut records = Vec::new();
        for &pid in &attachment.processes {
            let threads: Option<Vec<u32>> = attachment.threads.as_ref().map(|threads| {
                threads
                    .iter()
                    .filter(|&&(process, _)| process == pid)
                    .map(|&(_, tid)| tid)
                    .collect()
            });
            records.extend(snapshot::process(pid, threads.as_deref()));
        }
        push_all(sink, &records)?;
        let deadline = self.duration.map(|duration| started + duration);
        let priority = RaisedPriority::raise();
        let (interrupted_by, ended) =
            record_until(&mut rings, sink, deadline, || liveness.any_running())?;
        let end = match ended {
            true => TargetEnd::AllExited,
            false => TargetEnd::LeftRunning,
        };
        Ok(RecordOutcome {
            end,
            duration: started.elapsed(),
            interrupted_by,
            ring_bytes: rings.bytes_per_ring,
            notices: Vec::new(),
            drain_priority: priority.outcome(),
        })
    }

    /// Opens counters on every task of each CPU, tells the sink the state
    /// of the processes already running, and records until the command
    /// exits, or without one until the time is up or an interrupt comes.
    fn system_wide(
        &self,
        cpus: &[usize],
        command: Option<&ResolvedCommand>,
        started: Instant,
        sink: &mut dyn RecordSink,
    ) -> Result<RecordOutcome, SamplerError> {
        let mut rings = counters::open_rings(&RingPlan {
            events: &self.events,
            call_graph: self.stacks,
            tasks: &[-1],
            cpus,
            bytes: self.ring_bytes,
            enable_on_exec: false,
            side_band: true,
            switches: self.derived.is_some(),
        })
        .map_err(|error| self.system_wide_error(error))?;
        push_all(sink, &snapshot::every_process(self.kernel))?;
        let Some(command) = command else {
            let deadline = self.duration.map(|duration| started + duration);
            let priority = RaisedPriority::raise();
            let (interrupted_by, _) = record_until(&mut rings, sink, deadline, || true)?;
            return Ok(RecordOutcome {
                end: TargetEnd::Stopped,
                duration: started.elapsed(),
                interrupted_by,
                ring_bytes: rings.bytes_per_ring,
                notices: Vec::new(),
                drain_priority: priority.outcome(),
            });
        };
        let suspended = launch::fork(command)?;
        follow_command(suspended, command, rings, sink, Until::ChildExits, started)
    }

    /// A refusal to open whole CPUs is about the CPUs, not the events,
    /// which were checked on the profiler itself.
    fn system_wide_error(&self, error: SamplerError) -> SamplerError {
        match error {
            SamplerError::PermissionDenied { .. } => {
                let kernel = self.events.iter().any(|e| e.spec.kernel);
                let (reason, advice) = privileges::read().refusal(kernel, true);
                SamplerError::SystemWideDenied { reason, advice }
            }
            other => other,
        }
    }
}

/// Hands `records` to the sink as a batch of their own.
fn push_all(sink: &mut dyn RecordSink, records: &[Record]) -> Result<(), SamplerError> {
    let sink_error = |error| SamplerError::Sink { error };
    for record in records {
        sink.push(record).map_err(sink_error)?;
    }
    sink.end_batch().map_err(sink_error)
}

/// Resumes the launched command and records until `until`, then waits for
/// it and drains what is left.
fn follow_command(
    suspended: launch::SuspendedChild,
    command: &ResolvedCommand,
    mut rings: Rings,
    sink: &mut dyn RecordSink,
    until: Until,
    started: Instant,
) -> Result<RecordOutcome, SamplerError> {
    // Where the kernel can tell, the command's exit wakes the wait at once.
    let exit_fd = match until {
        Until::ChildExits => suspended.exit_fd(),
        Until::AllHungUp => None,
    };
    // The last moment to start nothing.
    not_interrupted()?;
    // Raised once the command is forked, which then starts as the
    // profiler was, and before it runs.
    let priority = RaisedPriority::raise();
    let mut child = suspended.exec(command)?;
    let followed = follow(&mut rings, &mut child, exit_fd.as_ref(), sink, until);
    let exit = child.wait()?;
    let interrupted_by = followed?;
    rings.drain_last(sink)?;
    Ok(RecordOutcome {
        end: TargetEnd::Exited(exit),
        duration: started.elapsed(),
        interrupted_by,
        ring_bytes: rings.bytes_per_ring,
        notices: Vec::new(),
        drain_priority: priority.outcome(),
    })
}

/// An interrupt noted before the target started, as an error: nothing is
/// started after it.
fn not_interrupted() -> Result<(), SamplerError> {
    match signals::interrupted() {
        Some(signal) => Err(SamplerError::Interrupted { signal }),
        None => Ok(()),
    }
}

/// The notice for processes the command started and left running when
/// the recording stopped, if any.
fn left_running(pids: &[u32]) -> Option<String> {
    const LISTED: usize = 5;
    let (count, them) = match pids.len() {
        0 => return None,
        1 => ("1 process".to_owned(), "it was"),
        n => (format!("{n} processes"), "they were"),
    };
    let mut listed: Vec<String> = pids.iter().take(LISTED).map(u32::to_string).collect();
    if pids.len() > LISTED {
        listed.push("...".to_owned());
    }
    Some(format!(
        "the command exited and left {count} it started running (pid {}); {them} recorded \
         until then: --wait-descendants records until every one has exited",
        listed.join(", ")
    ))
}

/// Drains the rings until `deadline`, an interrupt, or `running` says the
/// target has ended, then once more. Returns the interrupting signal, and
/// whether the target ended.
fn record_until(
    rings: &mut Rings,
    sink: &mut dyn RecordSink,
    deadline: Option<Instant>,
    mut running: impl FnMut() -> bool,
) -> Result<(Option<i32>, bool), SamplerError> {
    let outcome = loop {
        let timeout = deadline.map_or(POLL_INTERVAL, |deadline| {
            deadline
                .saturating_duration_since(Instant::now())
                .min(POLL_INTERVAL)
        });
        if rings.all_hung_up() {
            // Nothing left to poll (the tasks that own the rings have ended
            // while others write on): wait by the clock.
            std::thread::sleep(timeout);
        } else {
            rings.wait(timeout)?;
        }
        rings.drain(sink)?;
        if let Some(signal) = signals::interrupted() {
            break (Some(signal), false);
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            break (None, false);
        }
        if !running() {
            break (None, true);
        }
    };
    rings.drain_last(sink)?;
    Ok(outcome)
}

/// When a launched command's recording is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Until {
    /// Every task the counters follow has exited: the command and all its
    /// descendants.
    AllHungUp,
    /// The command has exited (system-wide counters never hang up).
    ChildExits,
}

/// Drains the rings until the command is done or an interrupt has been
/// dealt with; returns the interrupting signal.
fn follow(
    rings: &mut Rings,
    child: &mut RunningChild,
    exit_fd: Option<&OwnedFd>,
    sink: &mut dyn RecordSink,
    until: Until,
) -> Result<Option<i32>, SamplerError> {
    let mut interrupt: Option<(i32, Instant)> = None;
    loop {
        match exit_fd {
            Some(fd) => rings.wait_or_stop(POLL_INTERVAL, fd.as_fd()).map(drop)?,
            None => rings.wait(POLL_INTERVAL)?,
        }
        rings.drain(sink)?;
        if interrupt.is_none() {
            interrupt = signals::interrupted().map(|signal| (signal, Instant::now()));
        }
        let done = match until {
            Until::AllHungUp => rings.all_hung_up(),
            Until::ChildExits => child.try_wait()?.is_some(),
        };
        if done {
            return Ok(interrupt.map(|(signal, _)| signal));
        }
        let Some((signal, since)) = interrupt else {
            continue;
        };
        if child.try_wait()?.is_some() {
            return Ok(Some(signal));
        }
        child.stop_after_interrupt(since);
    }
}

/// What the counters copy of the stack for `call_graph`, checked.
fn call_stacks(
    call_graph: Option<CallGraph>,
    fp_stack_bytes: Option<u32>,
) -> Result<Option<CallStacks>, SamplerError> {
    let valid = |bytes: u32| bytes.is_multiple_of(8) && bytes <= MAX_STACK_BYTES;
    Ok(match call_graph {
        None => None,
        Some(CallGraph::FramePointer) => {
            let copy_bytes = fp_stack_bytes.unwrap_or(DEFAULT_FP_STACK_BYTES);
            if !valid(copy_bytes) {
                return Err(SamplerError::CallerStackSize {
                    bytes: copy_bytes,
                    default: DEFAULT_FP_STACK_BYTES,
                });
            }
            Some(CallStacks::FramePointer { copy_bytes })
        }
        Some(CallGraph::Dwarf { stack_bytes }) => {
            if stack_bytes == 0 || !valid(stack_bytes) {
                return Err(SamplerError::StackSize { bytes: stack_bytes });
            }
            Some(CallStacks::Dwarf { stack_bytes })
        }
    })
}

/// Checks a requested rate against the kernel's limit, or picks the default.
pub(crate) fn resolve_sampling(
    event: &str,
    requested: Option<Sampling>,
    max_rate: Option<u64>,
    notices: &mut Vec<String>,
) -> Result<Sampling, SamplerError> {
    let problem = |problem| SamplerError::InvalidSampling {
        event: event.to_owned(),
        problem,
    };
    match requested {
        None => Ok(default_sampling(max_rate, notices)),
        Some(Sampling::Period(0)) => Err(problem("the threshold (-c) must be at least 1")),
        Some(Sampling::Frequency(0)) => Err(problem("the frequency (-F) must be at least 1 Hz")),
        Some(Sampling::Frequency(hz)) if max_rate.is_some_and(|max| hz > max) => {
            Err(SamplerError::FrequencyTooHigh {
                requested: hz,
                max: max_rate.unwrap_or(hz),
            })
        }
        Some(sampling) => Ok(sampling),
    }
}

fn default_sampling(max_rate: Option<u64>, notices: &mut Vec<String>) -> Sampling {
    match max_rate {
        Some(max) if max < DEFAULT_FREQUENCY => {
            notices.push(format!(
                "the kernel limits sampling to {max} Hz (kernel.perf_event_max_sample_rate): \
                 sampling at {max} Hz"
            ));
            Sampling::Frequency(max.max(1))
        }
        _ => Sampling::Frequency(DEFAULT_FREQUENCY),
    }
}

/// Whether events without modifiers of their own count the kernel: as
/// asked, or where the kernel allows it, saying so where it does not.
fn kernel_space(config: &RecordConfig, notices: &mut Vec<String>) -> bool {
    if let Some(kernel) = config.kernel {
        return kernel;
    }
    let privileges = privileges::read();
    let allowed = privileges.may_count_kernel();
    let unmodified = config.events.is_empty()
        || (config.events.iter()).any(|r| {
            split_event_list(&r.name)
                .iter()
                .any(|e| own_modifiers(e).is_none())
        });
    if !allowed && unmodified {
        let level = (privileges.paranoid)
            .map(|p| format!(" at kernel.perf_event_paranoid {p}"))
            .unwrap_or_default();
        notices.push(format!(
            "sampling user space only: kernel time is not shown, as this user may not sample \
             the kernel{level}; run as root, grant CAP_PERFMON or `sysctl \
             kernel.perf_event_paranoid=1` to show it (--user-only: user space without this \
             notice)"
        ));
    }
    allowed
}

/// Hardware cycles where the kernel will sample them, cpu-clock otherwise,
/// with why; in user space only, or with `kernel` in the kernel too.
fn default_event(sampling: Sampling, kernel: bool) -> (ResolvedEvent, Option<String>) {
    let spec = |event| EventSpec {
        kernel,
        ..EventSpec::user_only(event)
    };
    let cycles = ResolvedEvent {
        spec: spec(CYCLES),
        sampling,
        leader: None,
        switch_out: None,
    };
    match counters::probe(&cycles, Role::Alone, None) {
        Ok(()) => (cycles, None),
        Err(error) => {
            let why = format!(
                "hardware cycles cannot be sampled: {}; sampling cpu-clock instead",
                refusal::reason(error)
            );
            let clock = ResolvedEvent {
                spec: spec(CPU_CLOCK),
                sampling,
                leader: None,
                switch_out: None,
            };
            (clock, Some(why))
        }
    }
}

/// An event as the recording describes it, named as perf names it: plainly
/// where it counts what events count by default (`kernel`: the kernel too),
/// with its modifiers where it counts less or more (`cpu-clock:u`).
fn describe(event: &ResolvedEvent, kernel: bool) -> EventDescription {
    let spec = &event.spec;
    let name = match (spec.user, spec.kernel, spec.hypervisor) {
        (true, k, false) if k == kernel => EventSpec {
            kernel: false,
            ..spec.clone()
        }
        .name(),
        (true, false, false) => {
            let precise = "p".repeat(usize::from(spec.precise));
            format!("{}:u{precise}", spec.base)
        }
        _ => spec.name(),
    };
    EventDescription {
        name,
        perf_type: event.spec.perf_type,
        config: event.spec.config,
        config1: event.spec.config1,
        config2: event.spec.config2,
        sampling: event.sampling,
        unit: event.spec.unit.to_owned(),
        user: event.spec.user,
        kernel: event.spec.kernel,
        leader: event.leader.map(|i| i as EventIndex),
        role: match event.switch_out {
            Some(_) => EventRole::SwitchOut,
            None => EventRole::Sampled,
        },
    }
}
