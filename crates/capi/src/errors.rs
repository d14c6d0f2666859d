//! Return codes and their messages: each call's outcome is remembered per
//! thread, so that `prof_strerror` of the code a call returned says what
//! the CLI would say (which event, which argument, what to change).

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::io;
use std::panic::{self, AssertUnwindSafe};

use profiler_events::EventsError;
use profiler_sampler::SamplerError;

use crate::types::*;

/// A call that failed: its code, and the one-line message for it.
#[derive(Debug)]
pub struct CallError {
    pub code: c_int,
    pub message: String,
}

impl CallError {
    pub fn invalid(message: impl Into<String>) -> CallError {
        CallError {
            code: PROF_EINVAL,
            message: message.into(),
        }
    }

    pub fn state(message: impl Into<String>) -> CallError {
        CallError {
            code: PROF_ESTATE,
            message: message.into(),
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
            message: format!("internal error in libprofiler ({what}); please report it"),
        }
    }
}

impl From<SamplerError> for CallError {
    fn from(error: SamplerError) -> CallError {
        CallError {
            code: code_of(&error),
            message: error.to_string(),
        }
    }
}

impl From<EventsError> for CallError {
    fn from(error: EventsError) -> CallError {
        CallError {
            code: code_of_event(&error),
            message: error.to_string(),
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
        E::InvalidSampling { .. } | E::FrequencyTooHigh { .. } | E::Histogram(_) => PROF_EINVAL,
        E::EventNotSupported { .. } | E::PreciseNotSupported { .. } => PROF_ENOSUPP,
        E::PermissionDenied { .. } => PROF_EPERM,
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

/// The calling thread's last call: its code, and what it had to say.
struct LastCall {
    code: c_int,
    message: Option<CString>,
}

thread_local! {
    static LAST_CALL: RefCell<LastCall> = const {
        RefCell::new(LastCall { code: PROF_OK, message: None })
    };
}

/// Runs the body of an exported function: a panic becomes `PROF_EBUG`
/// instead of crossing into C, and the outcome (an error's message, or a
/// success's notice) is remembered for `prof_strerror`.
pub fn call(body: impl FnOnce() -> Result<Option<String>, CallError>) -> c_int {
    let outcome = panic::catch_unwind(AssertUnwindSafe(body))
        .unwrap_or_else(|payload| Err(CallError::bug(payload.as_ref())));
    let (code, message) = match outcome {
        Ok(notice) => (PROF_OK, notice),
        Err(error) => (error.code, Some(error.message)),
    };
    remember(code, message);
    code
}

fn remember(code: c_int, message: Option<String>) {
    let message = message.map(|text| {
        // A message is text made from C strings and numbers: no NUL inside.
        CString::new(text.replace('\0', " ")).unwrap_or_default()
    });
    // During the thread's exit there is nobody left to ask.
    let _ = LAST_CALL.try_with(|last| *last.borrow_mut() = LastCall { code, message });
}

/// `prof_strerror`: the calling thread's last message if `code` is what its
/// last call returned, otherwise the code's general meaning. Valid until
/// the thread's next call into the library (other than `prof_strerror`).
pub fn describe(code: c_int) -> *const c_char {
    with_description(code, CStr::as_ptr)
}

fn with_description<R>(code: c_int, read: impl Fn(&CStr) -> R) -> R {
    let last = LAST_CALL.try_with(|last| {
        let last = last.borrow();
        match &last.message {
            Some(message) if last.code == code => Some(read(message)),
            _ => None,
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
        let code = call(|| Err(CallError::invalid("scale 1 is not valid")));
        assert_eq!(code, PROF_EINVAL);
        assert_eq!(text(PROF_EINVAL), "scale 1 is not valid");
        // Another code: its general meaning.
        assert_eq!(text(PROF_ESTATE), meaning(PROF_ESTATE).to_str().unwrap());
        assert_eq!(text(12345), "not a libprofiler error code");
        // A success with a notice, then one without.
        assert_eq!(
            call(|| Ok(Some("sampling cpu-clock instead".into()))),
            PROF_OK
        );
        assert_eq!(text(PROF_OK), "sampling cpu-clock instead");
        assert_eq!(call(|| Ok(None)), PROF_OK);
        assert_eq!(text(PROF_OK), "no error");
        assert_eq!(text(PROF_EINVAL), "invalid argument");
    }

    #[test]
    fn messages_are_kept_per_thread() {
        call(|| Err(CallError::state("not running")));
        std::thread::spawn(|| {
            call(|| Err(CallError::state("already running")));
            assert_eq!(text(PROF_ESTATE), "already running");
        })
        .join()
        .unwrap();
        assert_eq!(text(PROF_ESTATE), "not running");
    }

    #[test]
    fn a_panic_is_a_bug_not_an_abort() {
        let code = call(|| panic!("the index was out of range"));
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
