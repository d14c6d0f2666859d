//! Overflow handlers: what `on_overflow` asked for each event, and, while
//! the set runs, the armed state the signal handler reads ([`Armed`]).
//!
//! An event the kernel samples overflows in the kernel: its period is the
//! threshold, each overflow writes a sample (the program counter, the
//! thread) into the event's small ring buffer and sends the overflow signal
//! to the counted thread, whose handler reads the samples and calls the
//! program's handler once per sample. An emulated event (`PAPI_OVERFLOW_
//! FORCE_SW`) is checked instead by a ticker, a task-clock event of the
//! same thread overflowing every millisecond of its CPU time: each tick
//! reads the counts and calls the handler once per threshold crossed, with
//! the interrupted program counter.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use perf_event::SampleFlag;
use profiler_events::{Count, EventSpec};

use super::armed::{Armed, EmulatedWatch, KernelWatch};
use super::group::{MAX_EVENTS, PERIOD_OFF, set_period};
use super::handler::Handler;
use super::ring::SampleRing;
use super::shared::Shared;
use super::signal::{self, send_to_thread};
use crate::builder::counter_builder;
use crate::error::SamplerError;
use crate::privileges;

/// How often, in nanoseconds of the thread's CPU time, emulated overflows
/// are checked.
const TICK_NS: u64 = 1_000_000;

/// How an event's overflow is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverflowMode {
    /// By the kernel, at the event that overflowed: the handler gets the
    /// sample's program counter.
    Kernel,
    /// By checking the count at least every millisecond of the thread's
    /// CPU time (PAPI's `PAPI_OVERFLOW_FORCE_SW`), for an event the kernel
    /// counts but does not sample, or on request: the handler gets the
    /// program counter where the check interrupted the thread.
    Emulated,
}

#[derive(Clone, Copy, Debug)]
struct Request {
    threshold: u64,
    mode: OverflowMode,
}

/// The emulation's clock: a task-clock event overflowing every
/// millisecond on the counted thread.
struct Ticker {
    fd: OwnedFd,
    ring: Box<SampleRing>,
}

/// What the set's overflow handling holds while stopped and running.
#[derive(Default)]
pub(crate) struct Control {
    /// Per event; `None` is off.
    requests: Vec<Option<Request>>,
    handler: Option<Handler>,
    /// Per event, mapped at its first kernel overflow request.
    rings: Vec<Option<Box<SampleRing>>>,
    ticker: Option<Ticker>,
    armed: Option<Box<Armed>>,
}

impl Control {
    pub(crate) fn new(events: usize) -> Control {
        Control {
            requests: vec![None; events],
            rings: (0..events).map(|_| None).collect(),
            ..Control::default()
        }
    }

    /// Asks for the handler every `threshold` events of event `index` (0:
    /// none), and makes `handler` the set's, if given; the set is stopped,
    /// and counts one thread. The kernel is set up now, so that what it
    /// refuses is said here.
    pub(crate) fn request(
        &mut self,
        set: &Shared,
        index: usize,
        threshold: u64,
        mode: OverflowMode,
        handler: Option<Handler>,
    ) -> Result<(), SamplerError> {
        let tid = set.thread().ok_or(SamplerError::CountersMisuse {
            problem: "overflow handlers run in the counted thread: make the set with the thread \
                      scope (PROF_SCOPE_THREAD); the kernel sends an inherited counter's \
                      overflow to the thread that opened it, not to the one that overflowed",
        })?;
        let (fd, sampling) = set.event_fd(index);
        let was_kernel = matches!(
            self.requests[index],
            Some(Request {
                mode: OverflowMode::Kernel,
                ..
            })
        );
        if threshold == 0 {
            if was_kernel {
                set_period(fd, PERIOD_OFF).map_err(period_error)?;
            }
            self.requests[index] = None;
            self.handler = handler.or(self.handler.take());
            return Ok(());
        }
        let signal = signal::overflow_signal()?;
        match mode {
            OverflowMode::Kernel => {
                if !sampling {
                    return Err(SamplerError::EventNotSupported {
                        event: set.name(index).to_owned(),
                        reason: "the kernel counts it but does not sample it, so it cannot \
                                 signal its overflow; emulate the overflow instead \
                                 (PROF_OVERFLOW_FORCE_SW)"
                            .to_owned(),
                    });
                }
                if self.rings[index].is_none() {
                    let ring = SampleRing::map(fd).map_err(|error| SamplerError::System {
                        what: "mapping an overflowing counter's ring buffer",
                        error,
                    })?;
                    send_to_thread(fd, signal, tid).map_err(fcntl_error)?;
                    self.rings[index] = Some(Box::new(ring));
                }
                set_period(fd, threshold).map_err(period_error)?;
            }
            OverflowMode::Emulated => {
                if was_kernel {
                    set_period(fd, PERIOD_OFF).map_err(period_error)?;
                }
                if self.ticker.is_none() {
                    self.ticker = Some(open_ticker(tid, signal)?);
                }
            }
        }
        self.requests[index] = Some(Request { threshold, mode });
        self.handler = handler.or(self.handler.take());
        Ok(())
    }

    /// Whether any event overflows.
    fn any(&self) -> bool {
        self.requests.iter().any(Option::is_some)
    }

    /// Before the set starts: what the rings hold from an earlier run is
    /// dropped, the emulated events' first thresholds are set from their
    /// counts now, and the fds' signals go to the handler.
    pub(crate) fn arm(&mut self, set: &Shared) -> Result<(), SamplerError> {
        let (Some(handler), true) = (&self.handler, self.any()) else {
            return Ok(());
        };
        let Some(tid) = set.thread() else {
            return Ok(());
        };
        let mut kernel = Vec::new();
        let mut emulated = Vec::new();
        let mut totals = [Count::default(); MAX_EVENTS];
        let any_emulated = self
            .requests
            .iter()
            .flatten()
            .any(|r| r.mode == OverflowMode::Emulated);
        if any_emulated {
            set.totals(&mut totals[..set.len()])?;
        }
        for (index, request) in self.requests.iter().enumerate() {
            match (request, &self.rings[index]) {
                (Some(r), Some(ring)) if r.mode == OverflowMode::Kernel => {
                    ring.skip_all();
                    kernel.push(KernelWatch {
                        event: index,
                        fd: set.event_fd(index).0,
                        ring: &**ring,
                    });
                }
                (Some(r), _) if r.mode == OverflowMode::Emulated => emulated.push(EmulatedWatch {
                    event: index,
                    threshold: r.threshold,
                    deadline: AtomicU64::new(totals[index].raw.saturating_add(r.threshold)),
                }),
                _ => {}
            }
        }
        let ticker = match (&self.ticker, emulated.is_empty()) {
            (Some(ticker), false) => {
                ticker.ring.skip_all();
                Some((ticker.fd.as_raw_fd(), &*ticker.ring as *const SampleRing))
            }
            _ => None,
        };
        let armed = Box::new(Armed {
            set: set as *const Shared,
            tid,
            handler: Arc::clone(handler),
            kernel,
            emulated,
            ticker,
        });
        let fds = armed.fds();
        for (done, &fd) in fds.iter().enumerate() {
            if let Err(error) = signal::arm(fd, &*armed) {
                fds[..done].iter().for_each(|&fd| signal::disarm(fd));
                return Err(error);
            }
        }
        self.armed = Some(armed);
        Ok(())
    }

    /// After the set stops: no signal reaches the handler any more, and
    /// none is running it.
    pub(crate) fn disarm(&mut self) {
        if let Some(armed) = self.armed.take() {
            armed.fds().into_iter().for_each(signal::disarm);
        }
    }

    /// The ticker's fd, while it ticks for an armed set.
    pub(crate) fn ticker_fd(&self) -> Option<RawFd> {
        self.armed.as_ref()?.ticker.map(|(fd, _)| fd)
    }
}

fn period_error(error: io::Error) -> SamplerError {
    SamplerError::System {
        what: "setting an overflow threshold (PERF_EVENT_IOC_PERIOD)",
        error,
    }
}

fn fcntl_error(error: io::Error) -> SamplerError {
    SamplerError::System {
        what: "directing a counter's overflow signal to its thread (fcntl)",
        error,
    }
}

/// A task-clock event on `tid` overflowing every [`TICK_NS`], signalling
/// `tid`. It counts the kernel's time too where the kernel allows, so
/// that time in system calls ticks as well.
fn open_ticker(tid: libc::pid_t, signal: libc::c_int) -> Result<Ticker, SamplerError> {
    let mut spec = EventSpec::parse_with("task-clock", crate::sysinfo::pmus())?;
    spec.kernel = privileges::read().may_count_kernel();
    let counter = counter_builder(&spec)
        .observe_pid(tid)
        .any_cpu()
        .sample(SampleFlag::IP | SampleFlag::TID)
        .sample_period(TICK_NS)
        .wakeup_events(1)
        .build()
        .map_err(|error| crate::refusal::explain(&spec, error, Default::default()))?;
    // SAFETY: `into_raw_fd` gives up the counter's descriptor, owned by
    // nothing else from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(counter.into_raw_fd()) };
    let ring = SampleRing::map(fd.as_raw_fd()).map_err(|error| SamplerError::System {
        what: "mapping the overflow emulation's ring buffer",
        error,
    })?;
    send_to_thread(fd.as_raw_fd(), signal, tid).map_err(fcntl_error)?;
    Ok(Ticker {
        fd,
        ring: Box::new(ring),
    })
}
