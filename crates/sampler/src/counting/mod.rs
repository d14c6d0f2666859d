//! Counting in process, the libcpc and PAPI way: a set of events counted
//! together on the calling thread (and the threads it starts, or every
//! thread of the process, another process, a CPU), read at any moment as
//! 64-bit counts, and overflow handlers called every `threshold` events.
//!
//! ```
//! use profiler_sampler::{Counters, Scope};
//! # if std::env::var("PROFILER_TESTS").is_ok_and(|v| v.contains("no-sampling")) {
//! #     return Ok(());
//! # }
//!
//! let counters = Counters::new(&["task-clock", "page-faults"], Scope::Thread)?;
//! counters.start()?;
//! // 64 MiB of fresh zero pages, each faulted in by its first write: 16,384
//! // faults of 4 KiB pages, fewer where the kernel maps huge pages (2 MiB).
//! let mut memory = vec![0_u8; 64 << 20];
//! for page in memory.chunks_mut(4096) {
//!     page[0] = 1;
//! }
//! let [nanoseconds, faults] = counters.read()?[..] else { unreachable!() };
//! counters.stop()?;
//! assert!(nanoseconds > 0, "{nanoseconds} ns");
//! assert!((32..=20_000).contains(&faults), "{faults} faults for 64 MiB");
//! # Ok::<(), profiler_sampler::SamplerError>(())
//! ```
//!
//! An overflow handler runs in the counted thread, from a signal handler:
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use profiler_sampler::{Counters, Scope};
//! # if std::env::var("PROFILER_TESTS").is_ok_and(|v| v.contains("no-sampling")) {
//! #     return Ok(());
//! # }
//!
//! static CALLS: AtomicU64 = AtomicU64::new(0);
//! let counters = Counters::new(&["task-clock"], Scope::Thread)?;
//! // Every millisecond of the thread's CPU time.
//! counters.on_overflow(0, 1_000_000, |overflow| {
//!     // Only async-signal-safe work here: atomics, read_into, reset.
//!     if overflow.vector == 1 {
//!         CALLS.fetch_add(1, Ordering::Relaxed);
//!     }
//! })?;
//! counters.start()?;
//! // 50 ms of CPU time, as task-clock counts it.
//! let mut x = 1_u64;
//! while counters.read()?[0] < 50_000_000 {
//!     for _ in 0..10_000 {
//!         x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
//!     }
//! }
//! counters.stop()?;
//! assert!(CALLS.load(Ordering::Relaxed) >= 40);
//! # Ok::<(), profiler_sampler::SamplerError>(())
//! ```
//!
//! The overflow signal is `SIGRTMIN + 4`, or the real-time signal
//! `PROFILER_SIGNAL` names (`SIGRTMIN+6`, or a number) when the first
//! overflow handler is set; the kernel sends it to the counted thread
//! (`F_SETOWN_EX` with `F_OWNER_TID`, and `F_SETSIG`, on each event's fd).
//! The program's own handler for that signal is kept, and gets the signals
//! that are not the library's. A handler runs with the signal blocked, so
//! it is never interrupted by another overflow of its thread.
//!
//! The events of a set are opened as a group (scheduled together and read
//! with one system call) where the kernel allows, on each counted thread
//! or CPU. Reads subtract what the counters held at the last reset, in
//! user space, so that a reset and the read before it agree exactly. What
//! a signal handler may call: [`Counters::read_into`],
//! [`Counters::read_counts_into`] and [`Counters::reset`] (nothing they do
//! allocates or takes a lock).

mod armed;
mod group;
mod handler;
mod overflow;
mod ring;
mod shared;
mod signal;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use profiler_events::{Count, EventSpec, own_modifiers};

use self::group::{GroupControl, KernelGroup, MAX_EVENTS, OpenTarget, control_groups, open_groups};
use self::handler::Handler;
pub use self::handler::Overflow;
use self::overflow::Control;
pub use self::overflow::OverflowMode;
use self::shared::Shared;
pub use self::signal::in_overflow_handler;
use crate::error::SamplerError;
use crate::own_process::{current_tid, threads_except};
use crate::privileges;
use crate::refusal::OpenScope;
use crate::target::online_cpus;
use crate::tasks;
use crate::tid_lock::TidLock;

/// Which threads a set counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The thread that makes the set (libcpc's `cpc_bind_curlwp`, a PAPI
    /// EventSet). Its calls may come from any thread.
    Thread,
    /// That thread and the threads it creates after the set is made
    /// (`CPC_BIND_LWP_INHERIT`, `PAPI_INHERIT`): as with perf's inherit, a
    /// created thread's counts join the set's once it has exited.
    Inherit,
    /// Every thread of the process: those running when the set is made,
    /// counted live, and those created later, whose counts join once they
    /// have exited. The library's own threads are left out.
    Process,
    /// Every thread of another process (`cpc_bind_pctx`), likewise.
    OtherProcess(u32),
    /// Every task running on one CPU (`cpc_bind_cpu`): needs
    /// `perf_event_paranoid` 0 or CAP_PERFMON.
    Cpu(usize),
}

/// A set of events counted together. Dropping it stops it and closes its
/// counters.
pub struct Counters {
    /// Boxed: the signal handler holds its address while overflows run.
    shared: Box<Shared>,
    /// The overflow handlers asked for, and armed while the set runs;
    /// taken by each call that changes the set.
    control: TidLock<Control>,
}

impl Counters {
    /// Opens `events` (named as `profiler record -e` and `stat -e` name
    /// them) on `scope`, stopped. The kernel is asked now: an event it
    /// refuses is an error naming the event and what to change. Without
    /// modifiers an event counts the kernel's side too where the kernel
    /// allows it (context switches happen there), else user space.
    pub fn new(events: &[&str], scope: Scope) -> Result<Counters, SamplerError> {
        if events.is_empty() || events.len() > MAX_EVENTS {
            return Err(SamplerError::InvalidCounters {
                problem: format!(
                    "{} events: give 1 to {MAX_EVENTS} events per set",
                    events.len()
                ),
            });
        }
        let may_count_kernel = privileges::read().may_count_kernel();
        let mut specs = Vec::with_capacity(events.len());
        for &text in events {
            let mut spec = EventSpec::parse_with(text, crate::sysinfo::pmus())?;
            if own_modifiers(text).is_none() {
                spec.kernel = may_count_kernel;
            }
            specs.push(spec);
        }
        let (groups, thread) = open_scope(&specs, scope).map_err(|error| match error {
            SamplerError::EventNotSupported { event, reason } => {
                // Named as given: the kernel's side may have been added.
                let given = specs
                    .iter()
                    .zip(events)
                    .find(|(spec, _)| spec.name() == event)
                    .map_or(event, |(_, &text)| text.to_owned());
                SamplerError::EventNotCounted {
                    event: given,
                    reason,
                }
            }
            other => other,
        })?;
        Ok(Counters {
            shared: Box::new(Shared {
                names: specs.iter().map(EventSpec::name).collect(),
                baselines: (0..specs.len()).map(|_| Default::default()).collect(),
                groups,
                running: AtomicBool::new(false),
                thread,
            }),
            control: TidLock::new(Control::new(specs.len())),
        })
    }

    /// How many events the set counts.
    pub fn len(&self) -> usize {
        self.shared.len()
    }

    /// Never: a set counts one event at least.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The events, by their canonical names (`task-clock`, `cycles:u`).
    pub fn events(&self) -> &[String] {
        &self.shared.names
    }

    /// Starts counting, from the counts the set holds: a stopped set
    /// started again goes on from where it stopped (call
    /// [`reset`](Counters::reset) for 0). Overflow handlers given before
    /// are armed.
    pub fn start(&self) -> Result<(), SamplerError> {
        let shared = &*self.shared;
        let mut control = self.lock_control()?;
        if shared.running.load(Ordering::Acquire) {
            return Err(SamplerError::CountersState {
                problem: "the set is running already; stop it before starting it again",
            });
        }
        control.arm(shared)?;
        let enabled = control_groups(&shared.groups, GroupControl::Enable)
            .and_then(|()| control.ticker_fd().map_or(Ok(()), enable_alone));
        if let Err(error) = enabled {
            let _ = control_groups(&shared.groups, GroupControl::Disable);
            control.disarm();
            return Err(SamplerError::System {
                what: "enabling the counters",
                error,
            });
        }
        shared.running.store(true, Ordering::Release);
        Ok(())
    }

    /// Stops counting; the counts stay readable. No overflow handler runs
    /// after it returns.
    pub fn stop(&self) -> Result<(), SamplerError> {
        let shared = &*self.shared;
        let mut control = self.lock_control()?;
        if !shared.running.load(Ordering::Acquire) {
            return Err(SamplerError::CountersState {
                problem: "the set is not running; start it first",
            });
        }
        let disabled = control_groups(&shared.groups, GroupControl::Disable)
            .and_then(|()| control.ticker_fd().map_or(Ok(()), disable_alone));
        control.disarm();
        shared.running.store(false, Ordering::Release);
        disabled.map_err(|error| SamplerError::System {
            what: "disabling the counters",
            error,
        })
    }

    /// Whether the set is counting.
    pub fn is_running(&self) -> bool {
        self.shared.running.load(Ordering::Acquire)
    }

    /// Each event's count since the set was made or last reset, scaled
    /// for multiplexing, in the order given; running or stopped.
    pub fn read(&self) -> Result<Vec<u64>, SamplerError> {
        let mut values = vec![0; self.len()];
        self.read_into(&mut values)?;
        Ok(values)
    }

    /// As [`read`](Counters::read), into `values` (at least
    /// [`len`](Counters::len) long). Async-signal-safe.
    pub fn read_into(&self, values: &mut [u64]) -> Result<(), SamplerError> {
        self.shared.read_into(values)
    }

    /// Each event's count with its raw value and the times it was enabled
    /// and running since the last reset.
    pub fn read_counts(&self) -> Result<Vec<Count>, SamplerError> {
        let mut counts = vec![Count::default(); self.len()];
        self.read_counts_into(&mut counts)?;
        Ok(counts)
    }

    /// As [`read_counts`](Counters::read_counts), into `counts` (at least
    /// [`len`](Counters::len) long). Async-signal-safe.
    pub fn read_counts_into(&self, counts: &mut [Count]) -> Result<(), SamplerError> {
        self.shared.read_counts_into(counts)
    }

    /// Reads the counts into `values` and sets them to 0, at the same
    /// instant: what `PAPI_accum` adds.
    pub fn read_and_reset_into(&self, values: &mut [u64]) -> Result<(), SamplerError> {
        self.shared.read_and_reset_into(values)
    }

    /// Sets every count to 0, running or stopped. Async-signal-safe.
    pub fn reset(&self) -> Result<(), SamplerError> {
        self.shared.reset()
    }

    /// Calls `handler` every `threshold` occurrences of event `index`, in
    /// the counted thread, from the overflow signal's handler (see the
    /// module's page for the signal); 0 turns that event's overflow off.
    /// One handler per set: the last given. The set must be stopped and of
    /// [`Scope::Thread`]. The handler may only do what a signal handler
    /// may: atomics, [`Overflow::read_into`], [`Overflow::reset`].
    pub fn on_overflow(
        &self,
        index: usize,
        threshold: u64,
        handler: impl Fn(&Overflow<'_>) + Send + Sync + 'static,
    ) -> Result<(), SamplerError> {
        self.on_overflow_with(index, threshold, OverflowMode::Kernel, handler)
    }

    /// As [`on_overflow`](Counters::on_overflow), the overflow found as
    /// `mode` says.
    pub fn on_overflow_with(
        &self,
        index: usize,
        threshold: u64,
        mode: OverflowMode,
        handler: impl Fn(&Overflow<'_>) + Send + Sync + 'static,
    ) -> Result<(), SamplerError> {
        self.request_overflow(index, threshold, mode, Some(Arc::new(handler)))
    }

    /// Turns event `index`'s overflow off, keeping the set's handler for
    /// the others (`PAPI_overflow` with a threshold of 0).
    pub fn clear_overflow(&self, index: usize) -> Result<(), SamplerError> {
        self.request_overflow(index, 0, OverflowMode::Kernel, None)
    }

    fn lock_control(&self) -> Result<crate::tid_lock::TidGuard<'_, Control>, SamplerError> {
        self.control.lock().map_err(|_| SamplerError::CountersState {
            problem: "a signal handler interrupted a call on this set in its own thread and made \
                      another; only the read and reset calls may be made from a signal handler",
        })
    }

    fn request_overflow(
        &self,
        index: usize,
        threshold: u64,
        mode: OverflowMode,
        handler: Option<Handler>,
    ) -> Result<(), SamplerError> {
        let shared = &*self.shared;
        let mut control = self.lock_control()?;
        if shared.running.load(Ordering::Acquire) {
            return Err(SamplerError::CountersState {
                problem: "overflow handlers are set while the set is stopped; stop it first",
            });
        }
        if index >= shared.len() {
            return Err(SamplerError::InvalidCounters {
                problem: format!(
                    "index {index} is no event of the set; give 0 to {}",
                    shared.len() - 1
                ),
            });
        }
        control.request(shared, index, threshold, mode, handler)
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        if self.is_running() {
            let _ = self.stop();
        }
    }
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counters")
            .field("events", &self.shared.names)
            .field("running", &self.is_running())
            .finish()
    }
}

/// Opens the events on the threads or CPU of `scope`; for the thread scope,
/// the thread too.
fn open_scope(
    specs: &[EventSpec],
    scope: Scope,
) -> Result<(Vec<KernelGroup>, Option<libc::pid_t>), SamplerError> {
    let me = current_tid();
    let on_task = |task, inherit, sampling, process| OpenTarget {
        task,
        cpu: None,
        inherit,
        sampling,
        scope: OpenScope {
            cpu_wide: false,
            process,
        },
    };
    match scope {
        Scope::Thread => Ok((
            open_groups(specs, &on_task(me, false, true, None))?,
            Some(me),
        )),
        Scope::Inherit => Ok((open_groups(specs, &on_task(me, true, false, None))?, None)),
        Scope::Process => {
            let tids = threads_except(0)?;
            open_on_threads(specs, &tids, |tid| on_task(tid, true, false, None)).map(|g| (g, None))
        }
        Scope::OtherProcess(pid) => {
            let tids: Vec<libc::pid_t> = tasks::threads_of(pid)
                .map_err(|_| SamplerError::NoSuchProcess { pid })?
                .into_iter()
                .map(|tid| tid as libc::pid_t)
                .collect();
            open_on_threads(specs, &tids, |tid| on_task(tid, true, false, Some(pid)))
                .map(|g| (g, None))
        }
        Scope::Cpu(cpu) => {
            let online = online_cpus()?;
            if !online.contains(&cpu) {
                return Err(SamplerError::CpuNotOnline {
                    cpu,
                    online: profiler_events::format_cpu_list(&online),
                });
            }
            let target = OpenTarget {
                task: -1,
                cpu: Some(cpu),
                inherit: false,
                sampling: false,
                scope: OpenScope {
                    cpu_wide: true,
                    process: None,
                },
            };
            Ok((open_groups(specs, &target)?, None))
        }
    }
}

/// Opens the events on each of `tids`; a thread that has exited meanwhile
/// is left out.
fn open_on_threads(
    specs: &[EventSpec],
    tids: &[libc::pid_t],
    target: impl Fn(libc::pid_t) -> OpenTarget,
) -> Result<Vec<KernelGroup>, SamplerError> {
    let mut groups = Vec::new();
    let mut last_error = None;
    for &tid in tids {
        match open_groups(specs, &target(tid)) {
            Ok(opened) => groups.extend(opened),
            Err(SamplerError::OpenFailed { error, .. })
                if error.raw_os_error() == Some(libc::ESRCH) =>
            {
                last_error = Some(error);
            }
            Err(error) => return Err(error),
        }
    }
    match (groups.is_empty(), last_error) {
        (true, Some(error)) => Err(SamplerError::System {
            what: "opening the counters on the threads (they have all exited)",
            error,
        }),
        _ => Ok(groups),
    }
}

fn enable_alone(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    ioctl_alone(fd, GroupControl::Enable)
}

fn disable_alone(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    ioctl_alone(fd, GroupControl::Disable)
}

fn ioctl_alone(fd: std::os::fd::RawFd, what: GroupControl) -> std::io::Result<()> {
    // SAFETY: an open perf event fd of the set's.
    let done = unsafe {
        match what {
            GroupControl::Enable => perf_event_open_sys::ioctls::ENABLE(fd, 0),
            GroupControl::Disable => perf_event_open_sys::ioctls::DISABLE(fd, 0),
        }
    };
    match done {
        -1 => Err(std::io::Error::last_os_error()),
        _ => Ok(()),
    }
}
