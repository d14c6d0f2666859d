//! The overflow signal: one real-time signal for the whole process, sent
//! by the kernel to the thread whose counter overflowed (each event fd is
//! set up with `F_SETOWN_EX`/`F_OWNER_TID` and `F_SETSIG`, perf's way), and
//! the table that tells the handler which set an fd belongs to.
//!
//! The signal is `SIGRTMIN + 4` unless `PROFILER_SIGNAL` names another
//! (`PROFILER_SIGNAL=40`, or `SIGRTMIN+6`), read when the first overflow is
//! armed. The handler the program had for it is kept: signals that are not
//! the library's go on to it.
//!
//! Nothing here allocates or locks in the handler. The table is a fixed
//! array of slots keyed by fd; a set's slots are emptied, and the handlers
//! still running on them waited for, before the set's state is freed.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use super::armed::{Armed, dispatch};
use crate::error::SamplerError;

/// Slots in the table: overflowing fds at once, process-wide.
const SLOTS: usize = 1024;
/// A slot no fd ever used: a lookup stops there.
const EMPTY: i32 = -1;
/// The default signal, as an offset from SIGRTMIN (PAPI uses +2).
const DEFAULT_OFFSET: i32 = 4;

struct Slot {
    fd: AtomicI32,
    /// The set armed on `fd`; null once disarmed (the fd stays, so that a
    /// late signal of the library's is still known as one and dropped).
    armed: AtomicPtr<Armed>,
    /// Handlers running on this slot now.
    active: AtomicU32,
}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        fd: AtomicI32::new(EMPTY),
        armed: AtomicPtr::new(std::ptr::null_mut()),
        active: AtomicU32::new(0),
    }
}; SLOTS];

/// Serializes changes to the table (never taken in the handler).
static WRITER: Mutex<()> = Mutex::new(());

/// The signal installed, and the action the program had for it.
struct Installed {
    signal: libc::c_int,
    previous: libc::sigaction,
}

static INSTALLED: OnceLock<Installed> = OnceLock::new();

// SAFETY: `previous` is plain data written once, before the handler can
// run, and only read afterwards.
unsafe impl Send for Installed {}
// SAFETY: as above.
unsafe impl Sync for Installed {}

thread_local! {
    /// Whether this thread is running an overflow handler now.
    static IN_HANDLER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread is inside an overflow handler the library
/// called.
pub fn in_overflow_handler() -> bool {
    IN_HANDLER.try_with(std::cell::Cell::get).unwrap_or(false)
}

/// The overflow signal, installing its handler the first time.
pub(crate) fn overflow_signal() -> Result<libc::c_int, SamplerError> {
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(installed) = INSTALLED.get() {
        return Ok(installed.signal);
    }
    let signal = chosen_signal()?;
    // SAFETY: sigaction structs are plain data; zeroed is a valid start.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_signal as extern "C" fn(_, _, _) as libc::sighandler_t;
    // Not SA_ONSTACK: the alternate stacks Rust (and others) give threads
    // for reporting a stack overflow are a few KiB, too small for the
    // handlers a program writes.
    action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: as above.
    let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; the mask is
    // initialised in place.
    let installed = unsafe {
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, &mut previous)
    };
    if installed == -1 {
        return Err(SamplerError::System {
            what: "installing the overflow signal's handler",
            error: io::Error::last_os_error(),
        });
    }
    // Kept before any fd is set to send the signal.
    let _ = INSTALLED.set(Installed { signal, previous });
    Ok(signal)
}

/// `PROFILER_SIGNAL`, or the default.
fn chosen_signal() -> Result<libc::c_int, SamplerError> {
    let (min, max) = (libc::SIGRTMIN(), libc::SIGRTMAX());
    let Ok(text) = std::env::var("PROFILER_SIGNAL") else {
        return Ok(min + DEFAULT_OFFSET);
    };
    let parsed = match text.trim().strip_prefix("SIGRTMIN") {
        Some("") => Some(min),
        Some(offset) => offset
            .strip_prefix('+')
            .and_then(|n| n.parse::<i32>().ok())
            .map(|n| min + n),
        None => text.trim().parse::<i32>().ok(),
    };
    parsed
        .filter(|signal| (min..=max).contains(signal))
        .ok_or(SamplerError::InvalidCounters {
            problem: format!(
                "PROFILER_SIGNAL={text} is no real-time signal; give one from {min} to {max}, \
                 or SIGRTMIN+N"
            ),
        })
}

/// The index where `fd`'s probe starts.
fn home(fd: RawFd) -> usize {
    fd.unsigned_abs() as usize % SLOTS
}

/// The slot of `fd`, if the table has one. Async-signal-safe.
fn find(fd: RawFd) -> Option<&'static Slot> {
    (0..SLOTS)
        .map(|step| &TABLE[(home(fd) + step) % SLOTS])
        .take_while(|slot| slot.fd.load(Ordering::Acquire) != EMPTY)
        .find(|slot| slot.fd.load(Ordering::Acquire) == fd)
}

/// Sends `fd`'s signals to `armed` until [`disarm`].
pub(crate) fn arm(fd: RawFd, armed: *const Armed) -> Result<(), SamplerError> {
    let _writer = WRITER.lock().unwrap_or_else(PoisonError::into_inner);
    let slot = match find(fd) {
        Some(slot) => slot,
        None => {
            // The first disarmed slot on the probe, or the empty one after.
            let free = (0..SLOTS)
                .map(|step| &TABLE[(home(fd) + step) % SLOTS])
                .find(|slot| slot.armed.load(Ordering::Acquire).is_null());
            let slot = free.ok_or(SamplerError::CountersMisuse {
                problem: "too many overflowing counters in this process at once (1024); \
                          stop some sets first",
            })?;
            slot.fd.store(fd, Ordering::Release);
            slot
        }
    };
    slot.armed.store(armed.cast_mut(), Ordering::SeqCst);
    Ok(())
}

/// Stops sending `fd`'s signals anywhere, and waits for the handlers
/// running on it to return. Not for a signal handler.
pub(crate) fn disarm(fd: RawFd) {
    let _writer = WRITER.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(slot) = find(fd) {
        slot.armed.store(std::ptr::null_mut(), Ordering::SeqCst);
        while slot.active.load(Ordering::SeqCst) != 0 {
            std::thread::yield_now();
        }
    }
}

// From the kernel's uapi (asm-generic/fcntl.h, asm-generic/siginfo.h),
// which the libc crate does not carry: the same on x86-64 and arm64.
const F_SETSIG: libc::c_int = 10;
const F_SETOWN_EX: libc::c_int = 15;
const F_OWNER_TID: libc::c_int = 0;
const POLL_IN: libc::c_int = 1;
const POLL_HUP: libc::c_int = 6;

/// `struct f_owner_ex`.
#[repr(C)]
struct OwnerEx {
    kind: libc::c_int,
    pid: libc::pid_t,
}

/// `siginfo_t` as the kernel fills it for `F_SETSIG`: si_band and si_fd
/// after the three ints (and padding on 64-bit machines).
#[repr(C)]
struct PollInfo {
    signo: libc::c_int,
    errno: libc::c_int,
    code: libc::c_int,
    band: libc::c_long,
    fd: libc::c_int,
}

/// The handler: a signal for an fd in the table goes to its set; any
/// other to the program's own handler.
extern "C" fn on_signal(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: errno is thread-local; the handler must leave it as found.
    let errno = unsafe { *libc::__errno_location() };
    // SAFETY: with SA_SIGINFO the kernel passes a valid siginfo_t, whose
    // first fields PollInfo lays out; si_fd is only read for SIGPOLL codes.
    let poll = unsafe { &*info.cast::<PollInfo>() };
    let ours = matches!(poll.code, POLL_IN | POLL_HUP)
        .then(|| find(poll.fd))
        .flatten();
    match ours {
        Some(slot) => run_on(slot, poll.fd, context),
        None => chain(signal, info, context),
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

fn run_on(slot: &Slot, fd: RawFd, context: *mut libc::c_void) {
    slot.active.fetch_add(1, Ordering::SeqCst);
    let armed = slot.armed.load(Ordering::SeqCst);
    // A slot taken over by another fd meanwhile: this signal was for a
    // disarmed fd of the library's.
    if !armed.is_null() && slot.fd.load(Ordering::SeqCst) == fd {
        let was = IN_HANDLER
            .try_with(|flag| flag.replace(true))
            .unwrap_or(false);
        // A panic must not unwind out of a signal handler.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: non-null, so armed, and `disarm` waits for `active`
            // to drop to 0 before the set frees it.
            dispatch(unsafe { &*armed }, fd, context)
        }));
        let _ = IN_HANDLER.try_with(|flag| flag.set(was));
    }
    slot.active.fetch_sub(1, Ordering::SeqCst);
}

/// Passes a signal that is not the library's to the program's handler.
fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let Some(installed) = INSTALLED.get() else {
        return;
    };
    let previous = &installed.previous;
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // The default would end the process for a signal it never asked
        // for; dropped instead.
        return;
    }
    if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the program installed this as an SA_SIGINFO handler.
        let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        handler(signal, info, context);
    } else {
        // SAFETY: the program installed this as a plain handler.
        let handler: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        handler(signal);
    }
}

/// Makes `fd` send the overflow signal to thread `tid` at each wakeup.
pub(crate) fn send_to_thread(fd: RawFd, signal: libc::c_int, tid: libc::pid_t) -> io::Result<()> {
    let owner = OwnerEx {
        kind: F_OWNER_TID,
        pid: tid,
    };
    // SAFETY: fcntl on an open fd with the documented argument types; the
    // owner struct lives for the call.
    let done = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags != -1
            && libc::fcntl(fd, F_SETOWN_EX, &owner as *const OwnerEx) != -1
            && libc::fcntl(fd, F_SETSIG, signal) != -1
            && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_ASYNC) != -1
    };
    match done {
        true => Ok(()),
        false => Err(io::Error::last_os_error()),
    }
}
