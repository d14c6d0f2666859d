//! Return codes and their messages: each call's outcome is remembered per
//! thread, so that `prof_strerror` of the code a call returned says what
//! the CLI would say (which event, which argument, what to change), and
//! the program's error handler (`prof_set_error_handler`) is told.
//!
//! The calls a signal handler may make fail with static messages, and a
//! message is remembered by copying it into a fixed buffer of the thread's:
//! recording an outcome allocates and frees nothing.

// The program's error handler is a C function pointer, kept as a word.
#![allow(unsafe_code)]

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::ffi::{CStr, c_char, c_int};
use std::io;
use std::ops::Deref;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use profiler_events::EventsError;
use profiler_sampler::{SamplerError, in_overflow_handler};

use crate::types::*;

/// A call's message: made for the call, or fixed (which a call made from a
/// signal handler can return without allocating).
#[derive(Debug)]
pub(crate) enum Message {
    Static(&'static str),
    Owned(String),
}

impl Deref for Message {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Message::Static(text) => text,
            Message::Owned(text) => text,
        }
    }
}

impl From<&'static str> for Message {
    fn from(text: &'static str) -> Message {
        Message::Static(text)
    }
}

impl From<String> for Message {
    fn from(text: String) -> Message {
        Message::Owned(text)
    }
}

/// A call that failed: its code, and the one-line message for it.
#[derive(Debug)]
pub(crate) struct CallError {
    pub(crate) code: c_int,
    pub(crate) message: Message,
}

impl CallError {
    pub(crate) fn invalid(message: impl Into<Message>) -> CallError {
        CallError {
            code: PROF_EINVAL,
            message: message.into(),
        }
    }

    pub(crate) fn state(message: impl Into<Message>) -> CallError {
        CallError {
            code: PROF_ESTATE,
            message: message.into(),
        }
    }

    /// The message with `more` after it.
    pub(crate) fn append(&mut self, more: &str) {
        self.message = Message::Owned(format!("{}{more}", &*self.message));
    }

    /// A sampler error as a call a signal handler may make returns it:
    /// with a fixed message, nothing allocated.
    pub(crate) fn signal_safe(error: SamplerError) -> CallError {
        use SamplerError as E;
        let (code, message) = match error {
            E::CountersMisuse { problem } => (PROF_EINVAL, problem),
            E::CountersState { problem } => (PROF_ESTATE, problem),
            E::System { what, .. } => (PROF_ESYS, what),
            _ => (PROF_ESYS, "a system call failed"),
        };
        CallError {
            code,
            message: Message::Static(message),
        }
    }

    /// A panic caught at the boundary: a bug, said as one.
    fn bug(payload: &(dyn Any + Send)) -> CallError {
        let what = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic");
        CallError {
            code: PROF_EBUG,
            message: Message::Owned(format!(
                "internal error in libprofiler ({what}); please report it"
            )),
        }
    }
}

impl From<SamplerError> for CallError {
    fn from(error: SamplerError) -> CallError {
        CallError {
            code: code_of(&error),
            message: Message::Owned(error.to_string()),
        }
    }
}

impl From<EventsError> for CallError {
    fn from(error: EventsError) -> CallError {
        CallError {
            code: code_of_event(&error),
            message: Message::Owned(error.to_string()),
        }
    }
}

/// The code for an event the parser refused: unknown, or malformed.
fn code_of_event(error: &EventsError) -> c_int {
    use EventsError as E;
    match error {
        E::UnknownEvent { .. } | E::UnknownPmu { .. } | E::UnknownPmuField { .. } => PROF_ENOEVNT,
        _ => PROF_EINVAL,
    }
}

/// The code for a sampler error: which of the header's classes it is in.
fn code_of(error: &SamplerError) -> c_int {
    use SamplerError as E;
    match error {
        E::Events(error) => code_of_event(error),
        E::InvalidSampling { .. }
        | E::FrequencyTooHigh { .. }
        | E::Histogram(_)
        | E::InvalidCounters { .. }
        | E::CountersMisuse { .. }
        | E::NoSuchProcess { .. }
        | E::NoSuchThread { .. }
        | E::ZombieProcess { .. }
        | E::CpuNotOnline { .. } => PROF_EINVAL,
        E::CountersState { .. } => PROF_ESTATE,
        E::EventNotSupported { .. } | E::EventNotCounted { .. } | E::PreciseNotSupported { .. } => {
            PROF_ENOSUPP
        }
        E::PermissionDenied { .. } | E::AttachDenied { .. } | E::SystemWideDenied { .. } => {
            PROF_EPERM
        }
        E::OpenFailed { error, .. } => code_of_errno(error),
        _ => PROF_ESYS,
    }
}

fn code_of_errno(error: &io::Error) -> c_int {
    match error.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => PROF_EPERM,
        Some(libc::ENOENT | libc::ENODEV | libc::EOPNOTSUPP) => PROF_ENOSUPP,
        _ => PROF_ESYS,
    }
}

/// Bytes of a remembered message, its NUL included; longer ones are cut.
const MESSAGE_BYTES: usize = 1024;

/// The calling thread's last call: its code, and what it had to say.
struct LastCall {
    code: c_int,
    /// A NUL-terminated message, if the call had one.
    has_message: bool,
    text: [u8; MESSAGE_BYTES],
}

thread_local! {
    static LAST_CALL: RefCell<LastCall> = const {
        RefCell::new(LastCall { code: PROF_OK, has_message: false, text: [0; MESSAGE_BYTES] })
    };
    /// Whether this thread is running the program's error handler now.
    static IN_ERROR_HANDLER: Cell<bool> = const { Cell::new(false) };
}

/// `prof_error_handler`, or 0 for none.
static ERROR_HANDLER: AtomicUsize = AtomicUsize::new(0);

/// `void (*)(const char *function, int code, const char *message)`.
pub type ErrorHandler = unsafe extern "C" fn(*const c_char, c_int, *const c_char);

/// `prof_set_error_handler`: `None` for none.
pub(crate) fn set_error_handler(handler: Option<ErrorHandler>) {
    ERROR_HANDLER.store(handler.map_or(0, |h| h as usize), Ordering::Release);
}

/// Runs the body of an exported function named `function`: a panic
/// becomes `PROF_EBUG` instead of crossing into C, the outcome (an error's
/// message, or a success's notice) is remembered for `prof_strerror`, and
/// an error goes to the program's error handler, unless this thread is in
/// an overflow handler (a signal handler) or in the error handler itself.
pub(crate) fn call(
    function: &'static CStr,
    body: impl FnOnce() -> Result<Option<String>, CallError>,
) -> c_int {
    let outcome = panic::catch_unwind(AssertUnwindSafe(body))
        .unwrap_or_else(|payload| Err(CallError::bug(payload.as_ref())));
    let (code, message) = match &outcome {
        Ok(notice) => (PROF_OK, notice.as_deref()),
        Err(error) => (error.code, Some(&*error.message)),
    };
    let remembered = remember(code, message);
    if code != PROF_OK
        && let Some(message) = remembered
    {
        tell_error_handler(function, code, message);
    }
    code
}

/// Keeps `message` as the thread's last, without allocating: where it is
/// kept, if it could be.
fn remember(code: c_int, message: Option<&str>) -> Option<*const c_char> {
    // During the thread's exit, or in a signal handler that interrupted
    // this very function, there is nowhere to keep it.
    LAST_CALL
        .try_with(|last| {
            let mut last = last.try_borrow_mut().ok()?;
            last.code = code;
            last.has_message = message.is_some();
            let text = message.unwrap_or("");
            // Cut at a character's start, leaving room for the NUL; a NUL
            // inside ends the message there.
            let mut len = text.len().min(MESSAGE_BYTES - 1);
            while !text.is_char_boundary(len) {
                len -= 1;
            }
            let bytes = &text.as_bytes()[..len];
            let len = bytes.iter().position(|&b| b == 0).unwrap_or(len);
            last.text[..len].copy_from_slice(&bytes[..len]);
            last.text[len] = 0;
            Some(last.text.as_ptr().cast::<c_char>())
        })
        .ok()
        .flatten()
}

fn tell_error_handler(function: &'static CStr, code: c_int, message: *const c_char) {
    let handler = ERROR_HANDLER.load(Ordering::Acquire);
    if handler == 0 || in_overflow_handler() {
        return;
    }
    let Ok(false) = IN_ERROR_HANDLER.try_with(|inside| inside.replace(true)) else {
        return;
    };
    // SAFETY: a non-zero value was stored from an `ErrorHandler`.
    let handler: ErrorHandler = unsafe { std::mem::transmute::<usize, ErrorHandler>(handler) };
    // SAFETY: the program's handler, called as its type says, with a
    // static name and the thread's message, valid during the call.
    unsafe { handler(function.as_ptr(), code, message) };
    let _ = IN_ERROR_HANDLER.try_with(|inside| inside.set(false));
}

/// `prof_strerror`: the calling thread's last message if `code` is what its
/// last call returned, otherwise the code's general meaning. Valid until
/// the thread's next call into the library (other than `prof_strerror`).
pub(crate) fn describe(code: c_int) -> *const c_char {
    with_description(code, CStr::as_ptr)
}

fn with_description<R>(code: c_int, read: impl Fn(&CStr) -> R) -> R {
    let last = LAST_CALL.try_with(|last| {
        let last = last.try_borrow().ok()?;
        match last.has_message && last.code == code {
            true => CStr::from_bytes_until_nul(&last.text).ok().map(&read),
            false => None,
        }
    });
    last.ok().flatten().unwrap_or_else(|| read(meaning(code)))
}

/// What each code means, without the details of a particular call.
fn meaning(code: c_int) -> &'static CStr {
    match code {
        PROF_OK => c"no error",
        PROF_EINVAL => c"invalid argument",
        PROF_ESYS => c"a system call failed",
        PROF_EBUG => c"internal error in libprofiler",
        PROF_ENOEVNT => c"no such event",
        PROF_ESTATE => c"the session is not in the state this call needs",
        PROF_EPERM => c"the kernel refused to sample (permission denied)",
        PROF_ENOSUPP => c"the event cannot be sampled on this machine",
        _ => c"not a libprofiler error code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(code: c_int) -> String {
        with_description(code, |message| message.to_string_lossy().into_owned())
    }

    #[test]
    fn the_last_calls_message_goes_with_its_code() {
        let code = call(c"test", || Err(CallError::invalid("scale 1 is not valid")));
        assert_eq!(code, PROF_EINVAL);
        assert_eq!(text(PROF_EINVAL), "scale 1 is not valid");
        // Another code: its general meaning.
        assert_eq!(text(PROF_ESTATE), meaning(PROF_ESTATE).to_str().unwrap());
        assert_eq!(text(12345), "not a libprofiler error code");
        // A success with a notice, then one without.
        assert_eq!(
            call(c"test", || Ok(Some("sampling cpu-clock instead".into()))),
            PROF_OK
        );
        assert_eq!(text(PROF_OK), "sampling cpu-clock instead");
        assert_eq!(call(c"test", || Ok(None)), PROF_OK);
        assert_eq!(text(PROF_OK), "no error");
        assert_eq!(text(PROF_EINVAL), "invalid argument");
    }

    #[test]
    fn messages_are_kept_per_thread() {
        call(c"test", || Err(CallError::state("not running")));
        std::thread::spawn(|| {
            call(c"test", || Err(CallError::state("already running")));
            assert_eq!(text(PROF_ESTATE), "already running");
        })
        .join()
        .unwrap();
        assert_eq!(text(PROF_ESTATE), "not running");
    }

    #[test]
    fn a_panic_is_a_bug_not_an_abort() {
        let code = call(c"test", || panic!("the index was out of range"));
        assert_eq!(code, PROF_EBUG);
        let message = text(PROF_EBUG);
        assert!(message.contains("the index was out of range"), "{message}");
        assert!(message.contains("please report it"), "{message}");
    }

    #[test]
    fn sampler_errors_fall_in_the_headers_classes() {
        let unknown = profiler_events::EventSpec::parse("cpu-clok").unwrap_err();
        let error = CallError::from(unknown);
        assert_eq!(error.code, PROF_ENOEVNT);
        assert!(
            error.message.contains("did you mean 'cpu-clock'"),
            "{error:?}"
        );
        let refused = |errno| SamplerError::OpenFailed {
            event: "cycles".into(),
            error: io::Error::from_raw_os_error(errno),
        };
        assert_eq!(CallError::from(refused(13)).code, PROF_EPERM);
        assert_eq!(CallError::from(refused(95)).code, PROF_ENOSUPP);
        assert_eq!(CallError::from(refused(24)).code, PROF_ESYS);
    }
}
