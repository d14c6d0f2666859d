//! `record`: launch the command, sample it until it and its descendants exit,
//! and stream every record into a sink.

use std::ffi::OsString;
use std::time::{Duration, Instant, SystemTime};

use profiler_model::{CallGraph, EventDescription, RecordSink, RecordingHeader, Sampling};

use crate::command::{ResolvedCommand, resolve_command};
use crate::counters::{self, ResolvedEvent, RingPlan, Rings};
use crate::error::SamplerError;
use crate::event::{CPU_CLOCK, CYCLES, EventSpec};
use crate::launch::{self, RunningChild, TargetExit};
use crate::{signals, sysinfo};

/// Samples per second when neither `-c` nor `-F` is given.
pub const DEFAULT_FREQUENCY: u64 = 4000;
/// Ring-buffer data bytes per CPU: no losses at 100 kHz on this class of
/// machine, and within an unprivileged user's default mlock budget.
pub const DEFAULT_RING_BYTES: usize = 512 << 10;
/// Ring-buffer data bytes per CPU with stack copies (`--call-graph dwarf`):
/// room for about 500 samples of 8 KiB between two drains.
pub const DEFAULT_STACK_RING_BYTES: usize = 4 << 20;
/// Bytes of user stack copied per sample with `--call-graph dwarf`, as
/// `perf record` copies.
pub const DEFAULT_STACK_BYTES: u32 = 8192;
/// The most the kernel copies per sample (it must fit a 64 KiB record).
pub const MAX_STACK_BYTES: u32 = 65528;

/// How often the recorder wakes when no buffer fills up.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// After an interrupt, how long the command gets to exit by itself before
/// it is sent SIGTERM, and then SIGKILL.
const TERMINATE_AFTER: Duration = Duration::from_secs(1);
const KILL_AFTER: Duration = Duration::from_secs(3);

/// What to record.
#[derive(Clone, Debug)]
pub struct RecordConfig {
    /// The command and its arguments.
    pub command: Vec<OsString>,
    /// The events; empty means the default (cycles, or cpu-clock without a PMU).
    pub events: Vec<EventRequest>,
    /// The rate for every event without its own; `None`: [`DEFAULT_FREQUENCY`].
    pub sampling: Option<Sampling>,
    /// How to collect call stacks; `None`: program counters only.
    pub call_graph: Option<CallGraph>,
    /// Ring-buffer data bytes per CPU; `None`: [`DEFAULT_RING_BYTES`], or
    /// [`DEFAULT_STACK_RING_BYTES`] with stack copies.
    pub ring_bytes: Option<usize>,
}

/// One `-e` with the `-c`/`-F` that applies to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRequest {
    pub name: String,
    /// `None`: the config's rate.
    pub sampling: Option<Sampling>,
}

/// How a recording ended.
#[derive(Clone, Copy, Debug)]
pub struct RecordOutcome {
    pub exit: TargetExit,
    pub duration: Duration,
    /// The signal that interrupted the recording, if one did.
    pub interrupted_by: Option<i32>,
    /// Ring-buffer data bytes per CPU actually used.
    pub ring_bytes: usize,
}

/// A recording, checked and ready to run: events accepted by the kernel,
/// command found.
#[derive(Debug)]
pub struct Recorder {
    command: ResolvedCommand,
    events: Vec<ResolvedEvent>,
    notices: Vec<String>,
    call_graph: Option<CallGraph>,
    ring_bytes: usize,
}

impl Recorder {
    /// Checks everything that can be checked before launching: event names,
    /// rates against the kernel's limit, that the kernel accepts each event,
    /// and that the command exists and is executable.
    pub fn new(config: RecordConfig) -> Result<Recorder, SamplerError> {
        let max_rate = sysinfo::max_sample_rate();
        let mut notices = Vec::new();
        let events = if config.events.is_empty() {
            let sampling = resolve_sampling(CYCLES.name, config.sampling, max_rate, &mut notices)?;
            vec![default_event(sampling, &mut notices)]
        } else {
            config
                .events
                .iter()
                .map(|request| {
                    let spec = EventSpec::parse(&request.name)?;
                    let sampling = request.sampling.or(config.sampling);
                    let sampling = resolve_sampling(&spec.base, sampling, max_rate, &mut notices)?;
                    Ok(ResolvedEvent { spec, sampling })
                })
                .collect::<Result<Vec<_>, SamplerError>>()?
        };
        if let Some(CallGraph::Dwarf { stack_bytes }) = config.call_graph
            && (stack_bytes == 0 || stack_bytes % 8 != 0 || stack_bytes > MAX_STACK_BYTES)
        {
            return Err(SamplerError::StackSize { bytes: stack_bytes });
        }
        for event in &events {
            counters::probe(event, config.call_graph)?;
        }
        let command = resolve_command(&config.command)?;
        Ok(Recorder {
            command,
            events,
            notices,
            call_graph: config.call_graph,
            ring_bytes: config.ring_bytes.unwrap_or(match config.call_graph {
                Some(CallGraph::Dwarf { .. }) => DEFAULT_STACK_RING_BYTES,
                _ => DEFAULT_RING_BYTES,
            }),
        })
    }

    /// One-line notices for the user (e.g. the fallback to cpu-clock).
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The header of the recording this recorder will produce.
    pub fn header(&self) -> RecordingHeader {
        RecordingHeader {
            events: self.events.iter().map(describe).collect(),
            command: self
                .command
                .argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            program: self.command.canonical_path(),
            histogram: None,
            call_graph: self.call_graph,
            host: sysinfo::host_info(),
            start_unix_ns: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            profiler_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// Launches the command and records it until it and every descendant
    /// has exited, or until an interrupt (Ctrl-C, SIGTERM, SIGHUP), after
    /// which the command gets a moment to exit before it is terminated.
    pub fn run(self, sink: &mut dyn RecordSink) -> Result<RecordOutcome, SamplerError> {
        let _interrupts = signals::catch_interrupts();
        let started = Instant::now();
        let cpus = sysinfo::online_cpus().map_err(|error| SamplerError::System {
            what: "listing the online CPUs",
            error,
        })?;
        let suspended =
            launch::spawn_suspended(&self.command).map_err(|error| SamplerError::System {
                what: "fork",
                error,
            })?;
        let mut rings = counters::open_rings(&RingPlan {
            events: &self.events,
            call_graph: self.call_graph,
            tasks: &[suspended.pid()],
            cpus: &cpus,
            bytes: self.ring_bytes,
            enable_on_exec: true,
        })?;
        let mut child = suspended.resume().map_err(|error| SamplerError::Exec {
            command: self.command.display.clone(),
            error,
        })?;
        let followed = follow(&mut rings, &mut child, sink);
        let exit = child.wait().map_err(|error| SamplerError::System {
            what: "wait",
            error,
        })?;
        let interrupted_by = followed?;
        rings.drain(sink)?;
        Ok(RecordOutcome {
            exit,
            duration: started.elapsed(),
            interrupted_by,
            ring_bytes: rings.bytes_per_ring,
        })
    }
}

/// Drains the rings until every task has exited or an interrupt has been
/// dealt with; returns the interrupting signal.
fn follow(
    rings: &mut Rings,
    child: &mut RunningChild,
    sink: &mut dyn RecordSink,
) -> Result<Option<i32>, SamplerError> {
    let mut interrupt: Option<(i32, Instant)> = None;
    let mut escalated = 0;
    loop {
        rings.wait(POLL_INTERVAL)?;
        rings.drain(sink)?;
        if interrupt.is_none() {
            interrupt = signals::received().map(|signal| (signal, Instant::now()));
        }
        if rings.all_hung_up() {
            return Ok(interrupt.map(|(signal, _)| signal));
        }
        let Some((signal, since)) = interrupt else {
            continue;
        };
        let exited = child.try_wait().map_err(|error| SamplerError::System {
            what: "wait",
            error,
        })?;
        if exited.is_some() {
            return Ok(Some(signal));
        }
        let waited = since.elapsed();
        if escalated == 0 && waited >= TERMINATE_AFTER {
            child.signal(libc::SIGTERM);
            escalated = 1;
        } else if escalated == 1 && waited >= KILL_AFTER {
            child.signal(libc::SIGKILL);
            escalated = 2;
        }
    }
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

/// Hardware cycles where the kernel will sample them, cpu-clock otherwise.
fn default_event(sampling: Sampling, notices: &mut Vec<String>) -> ResolvedEvent {
    let cycles = ResolvedEvent {
        spec: EventSpec::user_only(CYCLES),
        sampling,
    };
    match counters::probe(&cycles, None) {
        Ok(()) => cycles,
        Err(error) => {
            let reason = match error {
                SamplerError::EventNotSupported { reason, .. } => reason,
                other => other.to_string(),
            };
            notices.push(format!(
                "hardware cycles cannot be sampled: {reason}; sampling cpu-clock instead"
            ));
            ResolvedEvent {
                spec: EventSpec::user_only(CPU_CLOCK),
                sampling,
            }
        }
    }
}

fn describe(event: &ResolvedEvent) -> EventDescription {
    EventDescription {
        name: event.spec.name(),
        perf_type: event.spec.perf_type,
        config: event.spec.config,
        sampling: event.sampling,
        unit: event.spec.unit.to_owned(),
        user: event.spec.user,
        kernel: event.spec.kernel,
    }
}
