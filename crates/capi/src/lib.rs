//! libprofiler: the profiler's in-process sampling for C, C++ and Fortran,
//! with the shape PAPI_profil, PAPI_sprofil and libpfm users know.
//! `cargo build --release` leaves `target/release/libprofiler.so` and
//! `libprofiler.a`; `include/profiler.h` declares what they export and is
//! the reference for each function.
//!
//! ```c
//! #include <profiler.h>
//!
//! unsigned short buckets[8192];
//! prof_session *session;
//! int rc = prof_profil(&session, buckets, sizeof buckets, (uintptr_t)&work,
//!                      65536, "cpu-clock", 100000, PROF_BUCKET_16);
//! if (rc != 0) {
//!     fprintf(stderr, "%s\n", prof_strerror(rc));
//!     return 1;
//! }
//! prof_start(session);
//! work();
//! prof_stop(session);           /* buckets now hold the counts */
//! prof_free(session);
//! ```
//!
//! It owns no step of the data flow of its own: a session is the sampler's
//! [`Profil`](profiler_sampler::Profil) pouring samples into a
//! [`Histogram`](profiler_histogram::Histogram) that starts from, and is
//! copied back into, the caller's buffers. `unsafe` code is confined to
//! the boundary: the exported functions and the caller's buffers.

mod caller_buffer;
mod counters;
mod encoding;
mod errors;
mod exports;
mod flags;
mod gmon_save;
mod session;
mod types;

pub use counters::{
    OverflowHandler, ProfCounters, prof_counters_accum, prof_counters_attach, prof_counters_cpu,
    prof_counters_create, prof_counters_free, prof_counters_read, prof_counters_read_ext,
    prof_counters_reset, prof_counters_start, prof_counters_stop, prof_overflow,
    prof_set_error_handler,
};
pub use errors::ErrorHandler;
pub use exports::{
    ProfSession, prof_event_encode, prof_free, prof_get_stats, prof_profil, prof_read, prof_save,
    prof_sprofil, prof_start, prof_stop, prof_strerror,
};
pub use types::*;
