//! Ctrl-C and friends during a recording: note the signal, let the recorder
//! finish cleanly, never die with a half-written file; the `poll` that such
//! a signal cuts short; and keeping signals off a helper thread.
//!
//! Every signal whose default is to end the process quietly is noted
//! (SIGINT, SIGTERM, SIGHUP, SIGQUIT, the user and timer signals, SIGXCPU,
//! SIGIO, SIGPWR and the real-time ones): whatever ends a recording ends
//! it the same way, with a whole recording. A signal that comes before the
//! command started is kept for the recorder, which then starts nothing.
//!
//! SIGXFSZ, which a file-size limit sends, can be set aside for good: the
//! write that crossed the limit then fails with `EFBIG`, a failure the
//! profiler says it had, rather than a death that says nothing.

use std::io;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::Duration;

use crate::error::SamplerError;

static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// Guards alive: the outermost resets the note, those inside keep it.
static GUARDS: AtomicUsize = AtomicUsize::new(0);

/// The signals noted as interrupts, besides the real-time ones.
const CAUGHT: [libc::c_int; 13] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGXCPU,
    libc::SIGIO,
    libc::SIGPWR,
    libc::SIGSTKFLT,
];

extern "C" fn note_signal(signal: libc::c_int) {
    RECEIVED.store(signal, Ordering::Relaxed);
}

extern "C" fn set_aside(_signal: libc::c_int) {}

/// From now on, a write past the file-size limit (`ulimit -f`) fails with
/// `EFBIG` instead of killing the process. A handler, unlike `SIG_IGN`, is
/// reset by `exec`: a command run later gets the default.
pub fn survive_file_size_limit() {
    install(libc::SIGXFSZ, set_aside);
}

/// Installs `handler` for `signal`; returns the action it replaces, if it
/// could.
fn install(signal: libc::c_int, handler: extern "C" fn(libc::c_int)) -> Option<libc::sigaction> {
    // SAFETY: sigaction structs are plain data; zeroed is a valid start.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = handler as libc::sighandler_t;
    // SAFETY: zeroed is valid; sigemptyset initialises the mask in place.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; the handlers only
    // store to an atomic, or do nothing, which is async-signal-safe.
    let installed = unsafe {
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, &mut old)
    };
    (installed == 0).then_some(old)
}

/// While alive, the interrupting signals are noted instead of killing the
/// profiler; dropping it restores the previous handlers.
pub struct InterruptGuard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

/// Starts noting interruptions. Handlers are installed without `SA_RESTART`,
/// so a blocking `poll` returns at once. A handler (unlike `SIG_IGN`) is reset
/// by `exec`, so the profiled command still gets the default behaviour.
///
/// Guards nest: one taken while another is alive keeps what the outer one
/// has noted, so that a caller can start noting before it creates its
/// output, and the recorder still sees a signal that came meanwhile.
pub fn catch_interrupts() -> InterruptGuard {
    if GUARDS.fetch_add(1, Ordering::SeqCst) == 0 {
        RECEIVED.store(0, Ordering::Relaxed);
    }
    let realtime = libc::SIGRTMIN()..=libc::SIGRTMAX();
    let previous = (CAUGHT.into_iter().chain(realtime))
        .filter_map(|signal| Some((signal, install(signal, note_signal)?)))
        .collect();
    InterruptGuard { previous }
}

/// Ends the recording under way as Ctrl-C would (a launched command gets a
/// moment to exit, then SIGTERM): for a caller whose user asked to stop
/// some other way, such as a key in a terminal screen.
pub fn interrupt() {
    RECEIVED.store(libc::SIGINT, Ordering::Relaxed);
}

/// The last interrupting signal received since the outermost
/// [`catch_interrupts`], if any.
pub fn interrupted() -> Option<i32> {
    match RECEIVED.load(Ordering::Relaxed) {
        0 => None,
        signal => Some(signal),
    }
}

/// Forgets the signals noted so far: what comes next is a new interrupt.
pub fn clear_interrupt() {
    RECEIVED.store(0, Ordering::Relaxed);
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
        GUARDS.fetch_sub(1, Ordering::SeqCst);
    }
}
