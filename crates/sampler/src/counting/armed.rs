//! A running set's overflow handling, as the signal handler sees it: the
//! events that overflow in the kernel, whose samples wait in their rings,
//! and the emulated events, checked at each tick of the emulation's
//! ticker. [`dispatch`] turns a signal into the program's handler's calls.

use std::ffi::c_void;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use profiler_events::Count;

use super::group::MAX_EVENTS;
use super::handler::{Handler, Overflow};
use super::ring::SampleRing;
use super::shared::Shared;
use crate::own_process::current_tid;

/// At most this many calls per check of an emulated event: a threshold far
/// below what a millisecond counts would otherwise call without end.
const MAX_CALLS_PER_TICK: usize = 10_000;

/// An event the kernel samples: its samples wait in its ring.
pub(super) struct KernelWatch {
    pub(super) event: usize,
    pub(super) fd: RawFd,
    pub(super) ring: *const SampleRing,
}

/// An emulated event: its count is checked at each tick.
pub(super) struct EmulatedWatch {
    pub(super) event: usize,
    pub(super) threshold: u64,
    /// The raw count at which the next call is due.
    pub(super) deadline: AtomicU64,
}

/// A running set's overflow handling, as the signal handler sees it. It
/// lives from `arm` to `disarm`, while the set and its rings live.
pub(crate) struct Armed {
    pub(super) set: *const Shared,
    pub(super) tid: libc::pid_t,
    pub(super) handler: Handler,
    pub(super) kernel: Vec<KernelWatch>,
    pub(super) emulated: Vec<EmulatedWatch>,
    /// The emulation's ticker: its fd and ring.
    pub(super) ticker: Option<(RawFd, *const SampleRing)>,
}

// SAFETY: the pointers are to the set and to rings its control owns, which
// outlive the armed state; the handler only reads them, and the deadlines
// are atomics.
unsafe impl Send for Armed {}
// SAFETY: as above.
unsafe impl Sync for Armed {}

impl Armed {
    pub(super) fn fds(&self) -> Vec<RawFd> {
        self.kernel
            .iter()
            .map(|watch| watch.fd)
            .chain(self.ticker.map(|(fd, _)| fd))
            .collect()
    }
}

/// A signal for one of `armed`'s fds, in the thread it was sent to: every
/// sample waiting in the set's rings becomes a call, and a tick checks the
/// emulated events. Async-signal-safe but for what the handler does.
pub(crate) fn dispatch(armed: &Armed, fd: RawFd, context: *mut c_void) {
    if current_tid() != armed.tid {
        return;
    }
    // SAFETY: the set outlives its armed state (`disarm` comes first).
    let set = unsafe { &*armed.set };
    for watch in &armed.kernel {
        // SAFETY: the ring belongs to the set's control, which keeps it
        // mapped for as long as the set lives.
        let ring = unsafe { &*watch.ring };
        ring.drain(|sample| {
            if sample.tid as libc::pid_t == armed.tid {
                (armed.handler)(&Overflow {
                    address: sample.ip as usize,
                    vector: 1 << watch.event,
                    context,
                    set,
                });
            }
        });
    }
    if let Some((ticker, ring)) = armed.ticker
        && ticker == fd
    {
        // SAFETY: as for the rings above.
        unsafe { &*ring }.skip_all();
        check_emulated(armed, set, context);
    }
}

/// Calls the handler once per threshold each emulated event has crossed
/// since the last check, the events crossing together in one call.
fn check_emulated(armed: &Armed, set: &Shared, context: *mut c_void) {
    let mut totals = [Count::default(); MAX_EVENTS];
    if set.totals(&mut totals[..set.len()]).is_err() {
        return;
    }
    let address = context_pc(context);
    for _ in 0..MAX_CALLS_PER_TICK {
        let mut vector = 0_u64;
        for watch in &armed.emulated {
            let deadline = watch.deadline.load(Ordering::Relaxed);
            if totals[watch.event].raw >= deadline {
                vector |= 1 << watch.event;
                watch
                    .deadline
                    .store(deadline.saturating_add(watch.threshold), Ordering::Relaxed);
            }
        }
        if vector == 0 {
            return;
        }
        (armed.handler)(&Overflow {
            address,
            vector,
            context,
            set,
        });
    }
    // Far behind: the next check starts from the count now.
    for watch in &armed.emulated {
        let next = totals[watch.event].raw.saturating_add(watch.threshold);
        watch.deadline.store(next, Ordering::Relaxed);
    }
}

/// The program counter a signal interrupted, from its `ucontext_t`.
fn context_pc(context: *mut c_void) -> usize {
    if context.is_null() {
        return 0;
    }
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        // SAFETY: a non-null context of a signal handler is a ucontext_t.
        let context = unsafe { &*context.cast::<libc::ucontext_t>() };
        context.uc_mcontext.gregs[libc::REG_RIP as usize] as usize
    }
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    {
        // SAFETY: a non-null context of a signal handler is a ucontext_t.
        let context = unsafe { &*context.cast::<libc::ucontext_t>() };
        context.uc_mcontext.pc as usize
    }
    #[cfg(not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )))]
    {
        0
    }
}
