//! Ctrl-C and friends during a recording: note the signal, let the recorder
//! finish cleanly, never die with a half-written file; the `poll` that such
//! a signal cuts short; and keeping signals off a helper thread.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use crate::error::SamplerError;

static RECEIVED: AtomicI32 = AtomicI32::new(0);

const CAUGHT: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn note_signal(signal: libc::c_int) {
    RECEIVED.store(signal, Ordering::Relaxed);
}

/// While alive, SIGINT, SIGTERM and SIGHUP are noted instead of killing the
/// profiler; dropping it restores the previous handlers.
pub(crate) struct InterruptGuard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

/// Starts noting interruptions. Handlers are installed without `SA_RESTART`,
/// so a blocking `poll` returns at once. A handler (unlike `SIG_IGN`) is reset
/// by `exec`, so the profiled command still gets the default behaviour.
pub(crate) fn catch_interrupts() -> InterruptGuard {
    RECEIVED.store(0, Ordering::Relaxed);
    let mut previous = Vec::new();
    for signal in CAUGHT {
        // SAFETY: sigaction structs are plain data; zeroed is a valid start.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = note_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: zeroed is valid; sigemptyset initialises the mask in place.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are valid for the call; the handler only
        // stores to an atomic, which is async-signal-safe.
        let installed = unsafe {
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, &mut old)
        };
        if installed == 0 {
            previous.push((signal, old));
        }
    }
    InterruptGuard { previous }
}

/// Ends the recording under way as Ctrl-C would (a launched command gets a
/// moment to exit, then SIGTERM): for a caller whose user asked to stop
/// some other way, such as a key in a terminal screen.
pub fn interrupt() {
    RECEIVED.store(libc::SIGINT, Ordering::Relaxed);
}

/// The last interrupting signal received since `catch_interrupts`, if any.
pub(crate) fn received() -> Option<libc::c_int> {
    match RECEIVED.load(Ordering::Relaxed) {
        0 => None,
        signal => Some(signal),
    }
}

/// Waits up to `timeout` for one of `fds` to be ready (with none, sleeps);
/// an interrupt ends the wait early, which is no error.
pub(crate) fn poll(fds: &mut [libc::pollfd], timeout: Duration) -> Result<(), SamplerError> {
    let timeout_ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs (an empty
    // one makes poll a sleep that a signal cuts short).
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if ready == -1 {
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(SamplerError::System {
                what: "poll",
                error,
            });
        }
    }
    Ok(())
}

/// Blocks every signal in the calling thread, so that those sent to the
/// process go to its other threads: a library's helper thread keeps out of
/// the way of the program's own handlers.
pub(crate) fn block_all_in_this_thread() {
    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigfillset initialises the set it is given; pthread_sigmask
    // reads it and changes only this thread's mask (no old mask wanted).
    unsafe {
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), std::ptr::null_mut());
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        for (signal, old) in &self.previous {
            // SAFETY: restores an action previously returned by sigaction.
            unsafe { libc::sigaction(*signal, old, std::ptr::null_mut()) };
        }
    }
}
