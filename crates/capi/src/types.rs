//! The C types and constants of `include/profiler.h`, with the same layout
//! and values.

use std::ffi::{c_int, c_longlong, c_uint, c_void};

use libc::{size_t, uintptr_t};

/// Flags: PAPI's values and meanings.
pub const PROF_POSIX: c_int = 0x00;
pub const PROF_RANDOM: c_int = 0x01;
pub const PROF_WEIGHTED: c_int = 0x02;
pub const PROF_COMPRESS: c_int = 0x04;
pub const PROF_BUCKET_16: c_int = 0x08;
pub const PROF_BUCKET_32: c_int = 0x10;
pub const PROF_BUCKET_64: c_int = 0x20;
pub const PROF_FORCE_SW: c_int = 0x40;

/// `prof_overflow`'s flag: PAPI's `PAPI_OVERFLOW_FORCE_SW`.
pub const PROF_OVERFLOW_FORCE_SW: c_int = 0x40;

/// Scopes of `prof_counters_create`.
pub const PROF_SCOPE_THREAD: c_int = 0;
pub const PROF_SCOPE_INHERIT: c_int = 1;
pub const PROF_SCOPE_PROCESS: c_int = 2;

/// Return codes: PAPI's values where PAPI has the code.
pub const PROF_OK: c_int = 0;
pub const PROF_EINVAL: c_int = -1;
pub const PROF_ESYS: c_int = -3;
pub const PROF_EBUG: c_int = -6;
pub const PROF_ENOEVNT: c_int = -7;
pub const PROF_ESTATE: c_int = -10;
pub const PROF_EPERM: c_int = -15;
pub const PROF_ENOSUPP: c_int = -18;

/// `prof_region`: glibc's `struct prof`, the caller's buckets over a range
/// of text.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ProfRegion {
    /// The caller's buckets, 16, 32 or 64 bits wide as the flags say.
    pub buf: *mut c_void,
    /// Bytes at `buf`.
    pub bufsiz: size_t,
    /// The lowest address of the region, in the running process.
    pub offset: uintptr_t,
    /// PAPI's scale: 65536 is one bucket per 2 bytes, 131072 one per byte.
    pub scale: c_uint,
}

/// `prof_stats`: what became of the samples.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfStats {
    /// Samples taken of this process.
    pub samples: u64,
    /// Samples in no region (in the overflow bin, if there is one).
    pub outside: u64,
    /// Increments lost to a full bucket.
    pub saturated: u64,
    /// Samples the kernel lost (a ring buffer was full).
    pub lost: u64,
}

impl ProfStats {
    pub fn add(&mut self, other: ProfStats) {
        self.samples += other.samples;
        self.outside += other.outside;
        self.saturated += other.saturated;
        self.lost += other.lost;
    }
}

/// `prof_encoding`: an event as `perf_event_open` takes it, as libpfm's
/// `pfm_get_os_event_encoding` gives it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfEncoding {
    pub type_: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    pub exclude_user: c_int,
    pub exclude_kernel: c_int,
    pub exclude_hv: c_int,
    pub precise_ip: c_int,
}

/// `prof_count`: one event's count, as `prof_counters_read_ext` gives it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfCount {
    /// `raw` scaled by `time_enabled / time_running` when the kernel
    /// multiplexed the counter.
    pub value: c_longlong,
    pub raw: c_longlong,
    /// Nanoseconds the counter was enabled, and running, since the last
    /// reset.
    pub time_enabled: u64,
    pub time_running: u64,
}
