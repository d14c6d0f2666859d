//! The kernel side of a recording: one counter per event per CPU on the
//! target (inherited by its threads and children, enabled at its exec), and
//! per CPU one ring buffer that all that CPU's events write into.
//!
//! One counter per CPU rather than one per task: the kernel refuses to map
//! the ring buffer of an inherited counter opened for any CPU.

use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

use perf_event::{Builder, Counter, ReadFormat, SampleFlag, Sampler};
use profiler_events::EventSpec;
use profiler_model::{EventIndex, Record, RecordSink, Sample, Sampling};

use crate::builder::counter_builder;
use crate::call_stacks::CallStacks;
use crate::convert::{REG_BP, REG_IP, REG_SP, StreamEvent, convert};
use crate::error::SamplerError;
use crate::refusal::{self, OpenScope};
use crate::ring_size::MIN_RING_BYTES;
use crate::switch_pairing::{Pairing, SwitchOutSamples};
use crate::{signals, sysinfo};

/// An event with its sampling rate, as it will be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResolvedEvent {
    pub spec: EventSpec,
    pub sampling: Sampling,
    /// For a member of a group: the index of its leader among the events
    /// opened together. Members count and are read with each sample of the
    /// leader; they take no samples of their own.
    pub leader: Option<usize>,
    /// For the event sampled as each thread leaves the CPU (`--off-cpu`):
    /// how its samples keep the stack the thread waits in.
    pub switch_out: Option<SwitchOut>,
}

/// How the samples taken as threads leave the CPU keep their stacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SwitchOut {
    /// The kernel's frames too (`--kernel`); otherwise the event counts in
    /// the kernel, where switches happen, but keeps the user stack alone.
    pub kernel_stacks: bool,
}

/// The reader is woken when a ring is this fraction full, rather than at
/// the kernel's default of half, or by its poll timeout: it starts draining
/// with room to spare should it then be kept waiting for a CPU.
const WAKEUP_FRACTION: usize = 4;

/// How an event takes part in a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Alone,
    /// Samples, and reads its members' counts into each sample.
    Leader,
    /// Only counts, scheduled with its leader.
    Member,
}

impl Role {
    /// The role of `events[index]`.
    pub(crate) fn of(events: &[ResolvedEvent], index: usize) -> Role {
        if events[index].leader.is_some() {
            Role::Member
        } else if events.iter().any(|e| e.leader == Some(index)) {
            Role::Leader
        } else {
            Role::Alone
        }
    }
}

/// The builder for `event`; `side_band` adds the mapping, exec and task
/// records (and with `switches` the context switches), which one event
/// per CPU carries.
fn builder(
    event: &ResolvedEvent,
    role: Role,
    side_band: bool,
    switches: bool,
    call_graph: Option<CallStacks>,
) -> Builder<'static> {
    let mut builder = counter_builder(&event.spec);
    if role == Role::Member {
        return builder;
    }
    if role == Role::Leader {
        builder
            .sample(SampleFlag::READ)
            .read_format(ReadFormat::GROUP | ReadFormat::ID);
    }
    builder
        .sample(
            SampleFlag::IP
                | SampleFlag::TID
                | SampleFlag::TIME
                | SampleFlag::CPU
                | SampleFlag::IDENTIFIER,
        )
        .sample_id_all(true);
    // With a fixed period a sample's period is known; asking for it anyway
    // makes the kernel sample a software event at every occurrence (with
    // period 1) instead of every `period` occurrences.
    match event.sampling {
        Sampling::Period(period) => builder.sample_period(period),
        Sampling::Frequency(hz) => builder.sample_frequency(hz).sample(SampleFlag::PERIOD),
    };
    let copy_stack = |builder: &mut Builder<'static>, bytes: u32| {
        builder
            .sample(SampleFlag::REGS_USER | SampleFlag::STACK_USER)
            .sample_regs_user((1 << REG_BP) | (1 << REG_SP) | (1 << REG_IP))
            .sample_stack_user(bytes);
    };
    let kernel_stacks = match event.switch_out {
        Some(switch_out) => switch_out.kernel_stacks,
        None => event.spec.kernel,
    };
    match call_graph {
        // Without call stacks a switch-out sample keeps where the thread
        // left user space: its address heads the user chain, cut there.
        None if event.switch_out.is_some() => {
            builder
                .sample(SampleFlag::CALLCHAIN)
                .exclude_callchain_kernel(true)
                .sample_max_stack(1);
        }
        None => {}
        Some(CallStacks::FramePointer { copy_bytes }) => {
            builder
                .sample(SampleFlag::CALLCHAIN)
                .exclude_callchain_kernel(!kernel_stacks);
            if copy_bytes > 0 {
                copy_stack(&mut builder, copy_bytes);
            }
        }
        Some(CallStacks::Dwarf { stack_bytes }) => {
            copy_stack(&mut builder, stack_bytes);
            // The kernel's own frames still come from its call chain.
            if kernel_stacks {
                builder
                    .sample(SampleFlag::CALLCHAIN)
                    .exclude_callchain_user(true);
            }
        }
    }
    if side_band {
        builder
            .mmap(true)
            .mmap2(true)
            .build_id(true)
            .comm(true)
            .comm_exec(true)
            .task(true)
            .context_switch(switches);
    }
    builder
}

/// Opens `event` on the calling process, to learn before anything is
/// launched whether the kernel will accept it.
pub(crate) fn probe(
    event: &ResolvedEvent,
    role: Role,
    call_graph: Option<CallStacks>,
) -> Result<(), SamplerError> {
    refusal::probe(
        &mut builder(event, role, true, false, call_graph),
        &event.spec,
    )
}

/// Opens `event` on the calling process with the context-switch records
/// `record --off-cpu` reads, to learn whether the kernel gives them.
pub(crate) fn probe_switches(event: &ResolvedEvent) -> Result<(), SamplerError> {
    let role = Role::Alone;
    refusal::probe(&mut builder(event, role, true, true, None), &event.spec)
}

/// Explains a refused `perf_event_open`.
fn open_error(event: &ResolvedEvent, error: io::Error) -> SamplerError {
    refusal::explain(&event.spec, error, OpenScope::default())
}

/// The ring buffers of a recording, one per CPU.
pub(crate) struct Rings {
    rings: Vec<Ring>,
    events_by_id: FxHashMap<u64, StreamEvent>,
    /// Data bytes per ring, after any reduction to fit the mlock budget.
    pub bytes_per_ring: usize,
    /// The last stack copy's buffer, for the next one.
    spare: Vec<u8>,
    /// The event sampled as threads leave the CPU, if any.
    switch_out: Option<SwitchOutSamples>,
    /// The records of a ring to write, in order.
    passed: Vec<Record>,
}

struct Ring {
    sampler: Sampler,
    /// The CPU's other events, writing into `sampler`'s buffer. Kept open.
    _followers: Vec<Counter>,
    hung_up: bool,
    pairing: Pairing,
}

enum OpenFailure {
    Open(SamplerError),
    Map(io::Error),
}

/// What to open: which events on which tasks, on which CPUs, and when the
/// counters start.
pub(crate) struct RingPlan<'a> {
    pub events: &'a [ResolvedEvent],
    pub call_graph: Option<CallStacks>,
    /// Threads to follow (with their descendants, by inheritance), or
    /// `[-1]`: every task on each CPU (system-wide, nothing to inherit).
    pub tasks: &'a [libc::pid_t],
    pub cpus: &'a [usize],
    /// Data bytes per ring, to start with.
    pub bytes: usize,
    /// Enable the counters when the (suspended) task executes a program,
    /// rather than at once.
    pub enable_on_exec: bool,
    /// Ask for the mapping, exec and task records, which a recording needs
    /// to name its samples' code (a process profiling itself does not).
    pub side_band: bool,
    /// Record each task's switches off and onto the CPU (`--off-cpu`).
    pub switches: bool,
}

/// Opens every event for every task on every CPU, one ring per CPU, halving
/// the ring size while the locked-memory budget refuses it.
pub(crate) fn open_rings(plan: &RingPlan<'_>) -> Result<Rings, SamplerError> {
    let mut bytes = plan.bytes;
    loop {
        match try_open_rings(plan, bytes) {
            Ok(rings) => return Ok(rings),
            Err(OpenFailure::Open(error)) => return Err(error),
            Err(OpenFailure::Map(error)) => {
                let budget = matches!(error.raw_os_error(), Some(libc::EPERM | libc::ENOMEM));
                if !budget || bytes / 2 < MIN_RING_BYTES {
                    let mlock_kb = sysinfo::mlock_kb().map_or("unknown".into(), |k| k.to_string());
                    return Err(SamplerError::RingBuffer { error, mlock_kb });
                }
                bytes /= 2;
            }
        }
    }
}

fn try_open_rings(plan: &RingPlan<'_>, bytes: usize) -> Result<Rings, OpenFailure> {
    let mut rings = Vec::with_capacity(plan.cpus.len());
    let mut events_by_id = FxHashMap::default();
    let roles: Vec<Role> = (0..plan.events.len())
        .map(|index| Role::of(plan.events, index))
        .collect();
    for &cpu in plan.cpus {
        let mut ring: Option<Sampler> = None;
        let mut followers: Vec<Counter> = Vec::new();
        for &task in plan.tasks {
            // Where this task's group leaders are: the ring itself, or a
            // follower.
            let mut leaders: HashMap<usize, Option<usize>> = HashMap::new();
            for (index, event) in plan.events.iter().enumerate() {
                // The kernel reports a task's mappings, names and children
                // to the events on that task: each task's first carries them.
                let side_band = plan.side_band && index == 0;
                let mut builder = builder(
                    event,
                    roles[index],
                    side_band,
                    plan.switches,
                    plan.call_graph,
                );
                builder
                    .observe_pid(task)
                    .one_cpu(cpu)
                    .wakeup_watermark(bytes / WAKEUP_FRACTION)
                    .inherit(task != -1)
                    .enable_on_exec(plan.enable_on_exec)
                    .enabled(!plan.enable_on_exec);
                let open_error = |e| OpenFailure::Open(open_error(event, e));
                if let Some(leader) = event.leader {
                    let group: &mut Counter = match leaders.get(&leader) {
                        Some(Some(follower)) => &mut followers[*follower],
                        _ => ring.as_deref_mut().ok_or_else(|| {
                            OpenFailure::Open(SamplerError::System {
                                what: "opening a group",
                                error: io::Error::other("its leader is not open"),
                            })
                        })?,
                    };
                    let member = builder.build_with_group(group).map_err(open_error)?;
                    events_by_id
                        .insert(member.id(), StreamEvent::of(event.sampling, index, &member));
                    followers.push(member);
                    continue;
                }
                let counter = builder.build().map_err(open_error)?;
                events_by_id.insert(
                    counter.id(),
                    StreamEvent::of(event.sampling, index, &counter),
                );
                match &ring {
                    None => {
                        ring = Some(counter.sampled(bytes).map_err(OpenFailure::Map)?);
                        leaders.insert(index, None);
                    }
                    Some(ring) => {
                        redirect_output(&counter, ring).map_err(|error| {
                            OpenFailure::Open(SamplerError::System {
                                what: "sharing a ring buffer",
                                error,
                            })
                        })?;
                        leaders.insert(index, Some(followers.len()));
                        followers.push(counter);
                    }
                }
            }
        }
        if let Some(sampler) = ring {
            rings.push(Ring {
                sampler,
                _followers: followers,
                hung_up: false,
                pairing: Pairing::default(),
            });
        }
    }
    let switch_out =
        (plan.events.iter().position(|e| e.switch_out.is_some())).map(|index| SwitchOutSamples {
            event: index as EventIndex,
            leaf_only: plan.call_graph.is_none(),
        });
    Ok(Rings {
        rings,
        events_by_id,
        bytes_per_ring: bytes,
        spare: Vec::new(),
        switch_out,
        passed: Vec::new(),
    })
}

/// Makes `counter` write its records into `leader`'s ring buffer.
fn redirect_output(counter: &Counter, leader: &Sampler) -> io::Result<()> {
    // SAFETY: both are open perf event fds owned by live objects.
    let result =
        unsafe { perf_event_open_sys::ioctls::SET_OUTPUT(counter.as_raw_fd(), leader.as_raw_fd()) };
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl Rings {
    /// Waits until a buffer has data, every task has exited, a signal
    /// arrives, or `timeout` passes. Notes which rings have hung up.
    pub(crate) fn wait(&mut self, timeout: Duration) -> Result<(), SamplerError> {
        self.poll(timeout, None).map(drop)
    }

    /// Like [`Rings::wait`], and also returns when `stop` becomes readable or
    /// hangs up (its writer closed): whether it did. `stop` lets another
    /// thread wake the drainer at once instead of after `timeout`.
    pub(crate) fn wait_or_stop(
        &mut self,
        timeout: Duration,
        stop: BorrowedFd<'_>,
    ) -> Result<bool, SamplerError> {
        self.poll(timeout, Some(stop))
    }

    fn poll(
        &mut self,
        timeout: Duration,
        stop: Option<BorrowedFd<'_>>,
    ) -> Result<bool, SamplerError> {
        let mut open: Vec<usize> = Vec::new();
        let mut fds: Vec<libc::pollfd> = Vec::new();
        for (index, ring) in self.rings.iter().enumerate().filter(|(_, r)| !r.hung_up) {
            open.push(index);
            fds.push(libc::pollfd {
                fd: ring.sampler.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        // The stop fd goes last, so that `open` still pairs with the rings.
        if let Some(stop) = stop {
            fds.push(libc::pollfd {
                fd: stop.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        if fds.is_empty() {
            return Ok(false);
        }
        // An interrupt leaves every `revents` 0: nothing is noted.
        signals::poll(&mut fds, timeout)?;
        for (fd, &index) in fds.iter().zip(&open) {
            if fd.revents & (libc::POLLHUP | libc::POLLERR) != 0 {
                self.rings[index].hung_up = true;
            }
        }
        Ok(stop.is_some() && fds.last().is_some_and(|fd| fd.revents != 0))
    }

    /// The fds of the rings that have not hung up, with their indices, for
    /// a `poll` of the caller's own.
    pub(crate) fn open_fds(&self) -> impl Iterator<Item = (usize, std::os::fd::RawFd)> + '_ {
        self.rings
            .iter()
            .enumerate()
            .filter(|(_, ring)| !ring.hung_up)
            .map(|(index, ring)| (index, ring.sampler.as_raw_fd()))
    }

    /// Notes that ring `index` hung up (every task writing into it exited).
    pub(crate) fn hang_up(&mut self, index: usize) {
        if let Some(ring) = self.rings.get_mut(index) {
            ring.hung_up = true;
        }
    }

    /// Whether every task that could write into the rings has exited.
    pub(crate) fn all_hung_up(&self) -> bool {
        self.rings.iter().all(|r| r.hung_up)
    }

    /// Moves every record in every ring into `sink`, then tells it the
    /// batch is complete (records of different rings are not in time order
    /// until then). A switch-out sample last in its ring waits for the
    /// next drain, where its switch follows it.
    pub(crate) fn drain(&mut self, sink: &mut dyn RecordSink) -> Result<(), SamplerError> {
        for ring in &mut self.rings {
            let config = ring.sampler.config().clone();
            while let Some(raw) = ring.sampler.next_record() {
                // Copy out and release the ring space before writing.
                let record = convert(&raw, &config, &self.events_by_id, &mut self.spare);
                drop(raw);
                let Some(record) = record else {
                    continue;
                };
                match self.switch_out {
                    Some(samples) => ring.pairing.pass(record, samples, &mut self.passed),
                    None => self.passed.push(record),
                }
                for mut record in self.passed.drain(..) {
                    sink.push(&record)
                        .map_err(|error| SamplerError::Sink { error })?;
                    if let Record::Sample(Sample {
                        user_stack: Some(stack),
                        ..
                    }) = &mut record
                    {
                        self.spare = std::mem::take(&mut stack.bytes);
                    }
                }
            }
        }
        sink.end_batch()
            .map_err(|error| SamplerError::Sink { error })
    }

    /// The last drain: what every ring holds, and the switch-out samples
    /// still waiting for their switches.
    pub(crate) fn drain_last(&mut self, sink: &mut dyn RecordSink) -> Result<(), SamplerError> {
        self.drain(sink)?;
        let held: Vec<Record> = (self.rings.iter_mut())
            .filter_map(|ring| ring.pairing.flush())
            .collect();
        if held.is_empty() {
            return Ok(());
        }
        let sink_error = |error| SamplerError::Sink { error };
        for record in &held {
            sink.push(record).map_err(sink_error)?;
        }
        sink.end_batch().map_err(sink_error)
    }
}
