//! The functions `include/profiler.h` declares: the boundary with C. Each
//! checks its pointers, runs its body through [`call`] (no panic crosses
//! into C; the outcome is kept for `prof_strerror`), and leaves the work to
//! [`Session`] and [`encode`].

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int, c_longlong, c_uint, c_void};
use std::panic::{self, AssertUnwindSafe};

use libc::{size_t, uintptr_t};
use profiler_model::JobInfo;

use crate::caller_buffer::CallerBuffer;
use crate::encoding::{encode, system_pmus};
use crate::errors::{CallError, call, describe};
use crate::gmon_save::{GmonEvent, gmon_bytes, saved_name, write_whole};
use crate::session::{RegionRequest, Session, SessionRequest};
use crate::types::{PROF_ENOEVNT, ProfEncoding, ProfRegion, ProfStats};
use profiler_sampler::TidLock;

/// `prof_session`: opaque to C. Calls on one session from several threads
/// take turns; one from a signal handler that interrupted a call on the
/// same session in its own thread is refused, not deadlocked.
pub struct ProfSession(TidLock<Session>);

/// `prof_profil`: one region, `bufsiz` bytes of buckets at `buf` over the
/// text from `offset`.
///
/// # Safety
///
/// `out` is NULL or points to a writable `prof_session *`; `buf` is NULL or
/// points to `bufsiz` bytes that stay valid, and that only the library
/// writes, until `prof_free`; `event` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn prof_profil(
    out: *mut *mut ProfSession,
    buf: *mut c_void,
    bufsiz: size_t,
    offset: uintptr_t,
    scale: c_uint,
    event: *const c_char,
    threshold: c_longlong,
    flags: c_int,
) -> c_int {
    call(c"prof_profil", || {
        // SAFETY: the caller's promise for `buf` is the one `CallerBuffer`
        // asks for.
        let buffer = unsafe { CallerBuffer::new(buf, bufsiz) };
        let region = RegionRequest {
            name: String::new(),
            buffer,
            offset: offset as u64,
            scale,
        };
        // SAFETY: the caller's promises for `out` and `event`.
        unsafe { make_session(out, event, threshold, flags, vec![region]) }
    })
}

/// `prof_sprofil`: `count` regions, each with its own buffer and scale,
/// and glibc's overflow bin among them if one has offset 0 and scale 2.
///
/// # Safety
///
/// As [`prof_profil`], with `regions` NULL or pointing to `count`
/// `prof_region`s whose buffers are as `prof_profil`'s `buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_sprofil(
    out: *mut *mut ProfSession,
    regions: *mut ProfRegion,
    count: c_int,
    event: *const c_char,
    threshold: c_longlong,
    flags: c_int,
) -> c_int {
    call(c"prof_sprofil", || {
        let count = usize::try_from(count)
            .ok()
            .filter(|&count| count > 0)
            .ok_or_else(|| {
                CallError::invalid(format!("count {count}: give at least one region"))
            })?;
        if regions.is_null() {
            return Err(CallError::invalid(
                "regions is NULL; give an array of count prof_region",
            ));
        }
        // SAFETY: the caller promised `count` regions at `regions`; they
        // are copied out before anything else runs.
        let given = unsafe { std::slice::from_raw_parts(regions, count) };
        let requests = given
            .iter()
            .enumerate()
            .map(|(index, region)| RegionRequest {
                name: format!("regions[{index}]: "),
                // SAFETY: the caller's promise for each region's buffer.
                buffer: unsafe { CallerBuffer::new(region.buf, region.bufsiz) },
                offset: region.offset as u64,
                scale: region.scale,
            })
            .collect();
        // SAFETY: the caller's promises for `out` and `event`.
        unsafe { make_session(out, event, threshold, flags, requests) }
    })
}

/// Checks the request and hands the new session to the caller.
///
/// # Safety
///
/// `out` is NULL or writable; `event` is NULL or a NUL-terminated string.
unsafe fn make_session(
    out: *mut *mut ProfSession,
    event: *const c_char,
    threshold: c_longlong,
    flags: c_int,
    regions: Vec<RegionRequest>,
) -> Result<Option<String>, CallError> {
    if out.is_null() {
        return Err(CallError::invalid(
            "out is NULL; give the address of a prof_session pointer",
        ));
    }
    // SAFETY: `out` is writable; a failed call leaves NULL there.
    unsafe { out.write(std::ptr::null_mut()) };
    // SAFETY: the caller's promise for `event`.
    let event = unsafe { event_name(event) }?;
    let session = Session::new(SessionRequest {
        event,
        threshold,
        flags,
        regions,
    })?;
    let notice = session.notice();
    let session = Box::into_raw(Box::new(ProfSession(TidLock::new(session))));
    // SAFETY: as above.
    unsafe { out.write(session) };
    Ok(notice)
}

/// `prof_start`: counting starts on every thread of the process.
///
/// # Safety
///
/// `session` is NULL or a session not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_start(session: *mut ProfSession) -> c_int {
    // SAFETY: the caller's promise for `session`.
    unsafe { with_session(c"prof_start", session, Session::start) }
}

/// `prof_read`: the buffers brought up to date.
///
/// # Safety
///
/// As [`prof_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_read(session: *mut ProfSession) -> c_int {
    // SAFETY: the caller's promise for `session`.
    unsafe { with_session(c"prof_read", session, Session::read) }
}

/// `prof_stop`: counting stops, and the buffers are brought up to date.
///
/// # Safety
///
/// As [`prof_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_stop(session: *mut ProfSession) -> c_int {
    // SAFETY: the caller's promise for `session`.
    unsafe { with_session(c"prof_stop", session, Session::stop) }
}

/// `prof_get_stats`: the counts as of the last read or stop.
///
/// # Safety
///
/// As [`prof_start`]; `out` is NULL or points to a writable `prof_stats`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_get_stats(session: *mut ProfSession, out: *mut ProfStats) -> c_int {
    let get = |session: &mut Session| {
        if out.is_null() {
            return Err(CallError::invalid(
                "out is NULL; give the address of a prof_stats",
            ));
        }
        // SAFETY: the caller promised `out` is writable.
        unsafe { out.write(session.stats()) };
        Ok(())
    };
    // SAFETY: the caller's promise for `session`.
    unsafe { with_session(c"prof_get_stats", session, get) }
}

/// `prof_save`: the buffers brought up to date and written as a
/// `gmon.out` named `name` (`gmon.out` where NULL), with `.RANK` added in a
/// rank of an MPI job.
///
/// # Safety
///
/// As [`prof_start`]; `name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_save(session: *mut ProfSession, name: *const c_char) -> c_int {
    let save = |session: &mut Session| {
        let given = match name.is_null() {
            true => None,
            // SAFETY: a NUL-terminated string, the caller's promise.
            false => Some(unsafe { CStr::from_ptr(name) }.to_str().map_err(|_| {
                CallError::invalid("name is not UTF-8 text; give a file name as text")
            })?),
        };
        session.read()?;
        let job = JobInfo::from_env(|name| std::env::var(name).ok());
        let path = saved_name(given, job.as_ref());
        let event = session.event();
        let name = event.name();
        let event = GmonEvent {
            name: &name,
            threshold: event.threshold(),
        };
        write_whole(&path, &gmon_bytes(&session.counts(), &event)?)
    };
    // SAFETY: the caller's promise for `session`.
    unsafe { with_session(c"prof_save", session, save) }
}

/// `prof_free`: stops the session if it runs, without touching the
/// buffers, and frees it. NULL is fine.
///
/// # Safety
///
/// `session` is NULL or a session not yet freed, which no other thread is
/// using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_free(session: *mut ProfSession) {
    if session.is_null() {
        return;
    }
    // A panic while stopping leaves the memory to leak, not the process to
    // abort.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: made by `Box::into_raw` in `make_session`, not yet freed,
        // and no longer used by anyone else: the caller's promise.
        drop(unsafe { Box::from_raw(session) });
    }));
}

/// `prof_strerror`: never NULL.
#[unsafe(no_mangle)]
pub extern "C" fn prof_strerror(code: c_int) -> *const c_char {
    panic::catch_unwind(|| describe(code)).unwrap_or(c"internal error in libprofiler".as_ptr())
}

/// `prof_event_encode`: `event` as `perf_event_open` takes it.
///
/// # Safety
///
/// `event` is NULL or a NUL-terminated string; `out` is NULL or points to
/// a writable `prof_encoding`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_event_encode(event: *const c_char, out: *mut ProfEncoding) -> c_int {
    call(c"prof_event_encode", || {
        if out.is_null() {
            return Err(CallError::invalid(
                "out is NULL; give the address of a prof_encoding",
            ));
        }
        // SAFETY: the caller's promise for `event`.
        let event = unsafe { event_name(event) }?;
        let encoding = encode(event, system_pmus())?;
        // SAFETY: the caller promised `out` is writable.
        unsafe { out.write(encoding) };
        Ok(None)
    })
}

/// Runs `body` on the session behind `session`, through [`call`], as the
/// function `name`.
///
/// # Safety
///
/// `session` is NULL or a session not yet freed.
unsafe fn with_session(
    name: &'static CStr,
    session: *mut ProfSession,
    body: impl FnOnce(&mut Session) -> Result<(), CallError>,
) -> c_int {
    call(name, || {
        // SAFETY: NULL or a live session: the caller's promise. Only
        // shared references are made; the lock orders the threads.
        let session = unsafe { session.as_ref() }.ok_or(CallError::invalid(
            "the session is NULL; make one with prof_profil or prof_sprofil",
        ))?;
        let mut session = session.0.lock().map_err(|_| {
            CallError::state(
                "a signal handler interrupted a call on this session in its own thread and \
                 made another; only prof_read and prof_get_stats may be called so, and not \
                 while another call of the thread's own is under way",
            )
        })?;
        body(&mut session).map(|()| None)
    })
}

/// The event argument as text.
///
/// # Safety
///
/// `event` is NULL or a NUL-terminated string.
pub(crate) unsafe fn event_name<'a>(event: *const c_char) -> Result<&'a str, CallError> {
    if event.is_null() {
        return Err(CallError::invalid(
            "event is NULL; give an event as profiler record -e takes it, e.g. \"cpu-clock\"",
        ));
    }
    // SAFETY: a NUL-terminated string, the caller's promise.
    let event = unsafe { CStr::from_ptr(event) };
    event.to_str().map_err(|_| CallError {
        code: PROF_ENOEVNT,
        message: format!(
            "event '{}' is not UTF-8 text; event names are ASCII",
            event.to_string_lossy()
        )
        .into(),
    })
}
