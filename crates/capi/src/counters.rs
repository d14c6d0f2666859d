//! The counting and overflow functions of `include/profiler.h`: PAPI's
//! start/read/accum/stop and `PAPI_overflow`, libcpc's bindings, on the
//! sampler's [`Counters`], which a Rust program uses the same way.
//!
//! `prof_counters_read`, `_read_ext` and `_reset` may be called from a
//! signal handler: their paths allocate nothing and take no lock, and fail
//! with fixed messages.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int, c_longlong, c_void};
use std::panic::{self, AssertUnwindSafe};

use profiler_events::Count;
use profiler_sampler::{Counters, Overflow, OverflowMode, Scope};

use crate::errors::{CallError, ErrorHandler, call, set_error_handler};
use crate::exports::event_name;
use crate::types::*;

/// Events a set holds at most (the sampler's limit).
const MAX_EVENTS: usize = 32;

/// `prof_counters`: opaque to C.
pub struct ProfCounters(Counters);

/// `prof_overflow_handler`.
pub type OverflowHandler = unsafe extern "C" fn(*mut ProfCounters, *mut c_void, u64, *mut c_void);

/// `prof_counters_create`: `count` events on the calling thread, its
/// future threads, or the whole process, as `scope` says.
///
/// # Safety
///
/// `out` is NULL or points to a writable `prof_counters *`; `events` is
/// NULL or points to `count` pointers, each NULL or a NUL-terminated
/// string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_create(
    out: *mut *mut ProfCounters,
    events: *const *const c_char,
    count: c_int,
    scope: c_int,
) -> c_int {
    call(c"prof_counters_create", || {
        let scope = match scope {
            PROF_SCOPE_THREAD => Scope::Thread,
            PROF_SCOPE_INHERIT => Scope::Inherit,
            PROF_SCOPE_PROCESS => Scope::Process,
            _ => {
                // SAFETY: the caller's promise for `out`.
                unsafe { clear(out) };
                return Err(CallError::invalid(format!(
                    "scope {scope}: give PROF_SCOPE_THREAD (0), PROF_SCOPE_INHERIT (1) or \
                     PROF_SCOPE_PROCESS (2)"
                )));
            }
        };
        // SAFETY: the caller's promises.
        unsafe { make(out, events, count, scope) }
    })
}

/// `prof_counters_attach`: every thread of process `pid`.
///
/// # Safety
///
/// As [`prof_counters_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_attach(
    out: *mut *mut ProfCounters,
    events: *const *const c_char,
    count: c_int,
    pid: c_int,
) -> c_int {
    call(c"prof_counters_attach", || {
        let Some(pid) = u32::try_from(pid).ok().filter(|&pid| pid > 0) else {
            // SAFETY: the caller's promise for `out`.
            unsafe { clear(out) };
            return Err(CallError::invalid(format!(
                "pid {pid}: give the id of a running process, above 0"
            )));
        };
        // SAFETY: the caller's promises.
        unsafe { make(out, events, count, Scope::OtherProcess(pid)) }
    })
}

/// `prof_counters_cpu`: every task on CPU `cpu`.
///
/// # Safety
///
/// As [`prof_counters_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_cpu(
    out: *mut *mut ProfCounters,
    events: *const *const c_char,
    count: c_int,
    cpu: c_int,
) -> c_int {
    call(c"prof_counters_cpu", || {
        let Ok(cpu) = usize::try_from(cpu) else {
            // SAFETY: the caller's promise for `out`.
            unsafe { clear(out) };
            return Err(CallError::invalid(format!(
                "cpu {cpu}: give the number of an online CPU, from 0"
            )));
        };
        // SAFETY: the caller's promises.
        unsafe { make(out, events, count, Scope::Cpu(cpu)) }
    })
}

/// Sets `*out` to NULL, if `out` is not NULL.
///
/// # Safety
///
/// `out` is NULL or writable.
unsafe fn clear(out: *mut *mut ProfCounters) {
    if !out.is_null() {
        // SAFETY: writable, the caller's promise.
        unsafe { out.write(std::ptr::null_mut()) };
    }
}

/// Checks the arguments, opens the set and hands it to the caller.
///
/// # Safety
///
/// As [`prof_counters_create`].
unsafe fn make(
    out: *mut *mut ProfCounters,
    events: *const *const c_char,
    count: c_int,
    scope: Scope,
) -> Result<Option<String>, CallError> {
    if out.is_null() {
        return Err(CallError::invalid(
            "out is NULL; give the address of a prof_counters pointer",
        ));
    }
    // SAFETY: `out` is writable; a failed call leaves NULL there.
    unsafe { clear(out) };
    let count = usize::try_from(count)
        .ok()
        .filter(|&count| (1..=MAX_EVENTS).contains(&count))
        .ok_or_else(|| {
            CallError::invalid(format!(
                "count {count}: give 1 to {MAX_EVENTS} events per set"
            ))
        })?;
    if events.is_null() {
        return Err(CallError::invalid(
            "events is NULL; give an array of count event names, e.g. \"task-clock\"",
        ));
    }
    // SAFETY: the caller promised `count` pointers at `events`.
    let pointers = unsafe { std::slice::from_raw_parts(events, count) };
    let mut names = Vec::with_capacity(count);
    for (index, &pointer) in pointers.iter().enumerate() {
        if pointer.is_null() {
            return Err(CallError::invalid(format!(
                "events[{index}] is NULL; give an event name as profiler stat -e takes it"
            )));
        }
        // SAFETY: non-null, so a NUL-terminated string: the caller's promise.
        names.push(unsafe { event_name(pointer) }?);
    }
    let counters = Counters::new(&names, scope)?;
    let counters = Box::into_raw(Box::new(ProfCounters(counters)));
    // SAFETY: as above.
    unsafe { out.write(counters) };
    Ok(None)
}

/// Runs `body` on the set behind `counters`, through [`call`], as the
/// function `name`.
///
/// # Safety
///
/// `counters` is NULL or a set not yet freed.
unsafe fn with_counters(
    name: &'static CStr,
    counters: *mut ProfCounters,
    body: impl FnOnce(&Counters) -> Result<(), CallError>,
) -> c_int {
    call(name, || {
        // SAFETY: NULL or a live set: the caller's promise. Only shared
        // references are made: the set orders its callers itself.
        let counters = unsafe { counters.as_ref() }.ok_or(CallError::invalid(
            "the set is NULL; make one with prof_counters_create, _attach or _cpu",
        ))?;
        body(&counters.0).map(|()| None)
    })
}

/// The caller's array of one value per event, or an error naming it.
///
/// # Safety
///
/// `values` is NULL or points to `len` writable elements.
unsafe fn values_of<'a, T>(values: *mut T, len: usize) -> Result<&'a mut [T], CallError> {
    if values.is_null() {
        return Err(CallError::invalid(
            "values is NULL; give an array of one element per event of the set",
        ));
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { std::slice::from_raw_parts_mut(values, len) })
}

fn as_long_long(value: u64) -> c_longlong {
    c_longlong::try_from(value).unwrap_or(c_longlong::MAX)
}

/// `prof_counters_start`.
///
/// # Safety
///
/// `counters` is NULL or a set not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_start(counters: *mut ProfCounters) -> c_int {
    // SAFETY: the caller's promise.
    unsafe {
        with_counters(c"prof_counters_start", counters, |set| {
            set.start().map_err(CallError::from)
        })
    }
}

/// `prof_counters_stop`: stops, then reads into `values` if not NULL.
///
/// # Safety
///
/// As [`prof_counters_start`]; `values` is NULL or points to one writable
/// `long long` per event.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_stop(
    counters: *mut ProfCounters,
    values: *mut c_longlong,
) -> c_int {
    let stop = |set: &Counters| {
        set.stop()?;
        if !values.is_null() {
            // SAFETY: the caller's promise: one element per event.
            let values = unsafe { values_of(values, set.len()) }?;
            read_values(set, values)?;
        }
        Ok(())
    };
    // SAFETY: the caller's promise.
    unsafe { with_counters(c"prof_counters_stop", counters, stop) }
}

fn read_values(set: &Counters, values: &mut [c_longlong]) -> Result<(), CallError> {
    let mut read = [0_u64; MAX_EVENTS];
    set.read_into(&mut read[..set.len()])
        .map_err(CallError::signal_safe)?;
    for (value, &read) in values.iter_mut().zip(&read) {
        *value = as_long_long(read);
    }
    Ok(())
}

/// `prof_counters_read`. Async-signal-safe.
///
/// # Safety
///
/// As [`prof_counters_stop`], `values` not NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_read(
    counters: *mut ProfCounters,
    values: *mut c_longlong,
) -> c_int {
    let read = |set: &Counters| {
        // SAFETY: the caller's promise: one element per event.
        read_values(set, unsafe { values_of(values, set.len()) }?)
    };
    // SAFETY: the caller's promise.
    unsafe { with_counters(c"prof_counters_read", counters, read) }
}

/// `prof_counters_read_ext`. Async-signal-safe.
///
/// # Safety
///
/// As [`prof_counters_start`]; `values` points to one writable
/// `prof_count` per event.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_read_ext(
    counters: *mut ProfCounters,
    values: *mut ProfCount,
) -> c_int {
    let read = |set: &Counters| {
        // SAFETY: the caller's promise: one element per event.
        let values = unsafe { values_of(values, set.len()) }?;
        let mut counts = [Count::default(); MAX_EVENTS];
        set.read_counts_into(&mut counts[..set.len()])
            .map_err(CallError::signal_safe)?;
        for (value, count) in values.iter_mut().zip(&counts) {
            *value = ProfCount {
                value: as_long_long(count.scaled),
                raw: as_long_long(count.raw),
                time_enabled: count.enabled_ns,
                time_running: count.running_ns,
            };
        }
        Ok(())
    };
    // SAFETY: the caller's promise.
    unsafe { with_counters(c"prof_counters_read_ext", counters, read) }
}

/// `prof_counters_accum`: `values[i] +=` each count, then the counts are 0.
///
/// # Safety
///
/// As [`prof_counters_read`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_accum(
    counters: *mut ProfCounters,
    values: *mut c_longlong,
) -> c_int {
    let accumulate = |set: &Counters| {
        // SAFETY: the caller's promise: one element per event.
        let values = unsafe { values_of(values, set.len()) }?;
        let mut taken = [0_u64; MAX_EVENTS];
        set.read_and_reset_into(&mut taken[..set.len()])?;
        for (value, &taken) in values.iter_mut().zip(&taken) {
            *value = value.saturating_add(as_long_long(taken));
        }
        Ok(())
    };
    // SAFETY: the caller's promise.
    unsafe { with_counters(c"prof_counters_accum", counters, accumulate) }
}

/// `prof_counters_reset`. Async-signal-safe.
///
/// # Safety
///
/// As [`prof_counters_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_reset(counters: *mut ProfCounters) -> c_int {
    // SAFETY: the caller's promise.
    unsafe {
        with_counters(c"prof_counters_reset", counters, |set| {
            set.reset().map_err(CallError::signal_safe)
        })
    }
}

/// `prof_counters_free`: stops the set if it runs, and frees it. NULL is
/// fine.
///
/// # Safety
///
/// `counters` is NULL or a set not yet freed, which no other thread, and
/// no overflow handler, is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_counters_free(counters: *mut ProfCounters) {
    if counters.is_null() {
        return;
    }
    // A panic while stopping leaves the memory to leak, not the process to
    // abort.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: made by `Box::into_raw` in `make`, not yet freed, and no
        // longer used by anyone else: the caller's promise.
        drop(unsafe { Box::from_raw(counters) });
    }));
}

/// `prof_overflow`: `handler` every `threshold` events of event `index`.
///
/// # Safety
///
/// As [`prof_counters_start`]; `handler` is NULL or a function of the
/// `prof_overflow_handler` type, safe to call from a signal handler with
/// the arguments the header describes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prof_overflow(
    counters: *mut ProfCounters,
    index: c_int,
    threshold: c_longlong,
    flags: c_int,
    handler: Option<OverflowHandler>,
) -> c_int {
    let set_up = |set: &Counters| {
        let index = usize::try_from(index)
            .ok()
            .filter(|&index| index < set.len())
            .ok_or_else(|| {
                CallError::invalid(format!(
                    "index {index} is no event of the set; give 0 to {}",
                    set.len() - 1
                ))
            })?;
        let threshold = u64::try_from(threshold).map_err(|_| {
            CallError::invalid(format!(
                "threshold {threshold}: give the events between calls, or 0 to stop them"
            ))
        })?;
        if flags & !PROF_OVERFLOW_FORCE_SW != 0 {
            return Err(CallError::invalid(format!(
                "flags {flags:#x}: give 0, or PROF_OVERFLOW_FORCE_SW to check the count every \
                 millisecond of CPU time"
            )));
        }
        let mode = match flags & PROF_OVERFLOW_FORCE_SW {
            0 => OverflowMode::Kernel,
            _ => OverflowMode::Emulated,
        };
        let handle = counters as usize;
        match (handler, threshold) {
            (None, 0) => set.clear_overflow(index)?,
            (None, _) => {
                return Err(CallError::invalid(
                    "handler is NULL; give the function to call at each overflow",
                ));
            }
            (Some(handler), _) => {
                let call_c = move |overflow: &Overflow<'_>| {
                    // SAFETY: the program's handler, called as the header
                    // says, with the set it was given for.
                    unsafe {
                        handler(
                            handle as *mut ProfCounters,
                            overflow.address as *mut c_void,
                            overflow.vector,
                            overflow.context,
                        )
                    }
                };
                set.on_overflow_with(index, threshold, mode, call_c)?
            }
        }
        Ok(())
    };
    // SAFETY: the caller's promise.
    unsafe { with_counters(c"prof_overflow", counters, set_up) }
}

/// `prof_set_error_handler`: NULL for none.
#[unsafe(no_mangle)]
pub extern "C" fn prof_set_error_handler(handler: Option<ErrorHandler>) {
    set_error_handler(handler);
}
