//! The sampler: `perf_event_open` on Linux, from launching the profiled
//! command to draining the kernel's ring buffers into profiler records.
//!
//! It owns the first step of the data flow: a [`Recorder`] is checked once
//! (events, rates, target), then [records](Recorder::record): every record
//! it drains (samples, mappings, exec, fork, exit, lost, throttle) goes to
//! the recording's sink, the file writer or the live histograms, or to any
//! other [`RecordSink`](profiler_model::RecordSink) given to
//! [`Recorder::run`].
//!
//! ```no_run
//! use profiler_model::DEFAULT_COMPRESSION_LEVEL;
//! use profiler_sampler::{EventRequest, RecordConfig, Recorder, Target};
//!
//! let recorder = Recorder::new(RecordConfig {
//!     target: Target::Command(vec!["./app".into()]),
//!     events: vec![EventRequest { name: "cpu-clock".into(), sampling: None }],
//!     sampling: None,
//!     call_graph: None,
//!     fp_stack_bytes: None,
//!     ring_bytes: None,
//!     kernel: None,
//!     duration: None,
//!     wait_descendants: false,
//!     off_cpu: false,
//! })?;
//! let recorded = recorder.record(Vec::new(), None, None, DEFAULT_COMPRESSION_LEVEL)?;
//! println!("the command {}", recorded.outcome.describe());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A program can also profile itself, the `PAPI_profil` way: [`Profil`]
//! samples every thread of the calling process into a histogram over its
//! own text until it is stopped.
//!
//! [`Stat`] counts instead of sampling, the `perf stat` / cputrack way: a
//! command, running processes or threads, or whole CPUs, with totals scaled
//! for multiplexing. [`checkup`] tells what this machine allows and why.
//!
//! The events themselves come parsed and encoded from `profiler_events`;
//! this crate opens them.
//!
//! [`Counters`] count events in process, the libcpc / PAPI way: a set of
//! events on the calling thread (its future threads, the process, another
//! process, a CPU) read at any moment, even from a signal handler, and
//! overflow handlers called in the counted thread every `threshold` events.
//!
//! `unsafe` is allowed only in the modules marked below, for what `libc`
//! and the kernel offer no safe interface to: `fork`/`exec`, signal
//! handlers, `poll`, `gettid`, `pidfd_open`, resource limits and usage,
//! `sysconf`, `futex`, scheduling policies, `mmap` of ring buffers, `fcntl`
//! and ioctls on event fds, and requests handed to the profiles' drain
//! thread by address. Each block says why it is sound.

#[allow(unsafe_code)]
mod attach;
mod build_id;
mod builder;
mod call_stacks;
#[allow(unsafe_code)]
mod command;
mod convert;
#[allow(unsafe_code)]
mod counters;
#[allow(unsafe_code)]
mod counting;
mod descendants;
mod doctor;
#[allow(unsafe_code)]
mod drain_priority;
mod error;
#[allow(unsafe_code)]
mod launch;
mod list;
#[allow(unsafe_code)]
mod own_process;
#[allow(unsafe_code)]
mod privileges;
mod proc_maps;
mod profil;
mod recorder;
mod recording;
mod refusal;
mod ring_size;
#[allow(unsafe_code)]
mod signals;
mod snapshot;
mod stat;
mod switch_out;
mod switch_pairing;
#[allow(unsafe_code)]
mod sysinfo;
mod target;
mod tasks;
#[allow(unsafe_code)]
mod tid_lock;

pub use counting::{Counters, Overflow, OverflowMode, Scope, in_overflow_handler};
pub use doctor::{CHECKED_EVENTS, checkup};
pub use error::SamplerError;
pub use launch::TargetExit;
pub use list::probe_events;
pub use privileges::read as read_privileges;
pub use profil::{Profil, ProfilConfig, ProfilEvent, ProfilOutcome, ProfilRegion};
pub use recorder::{
    DEFAULT_FP_STACK_BYTES, DEFAULT_FREQUENCY, DEFAULT_RING_BYTES, DEFAULT_STACK_BYTES,
    DEFAULT_STACK_RING_BYTES, DrainPriority, EventRequest, MAX_STACK_BYTES, RecordConfig,
    RecordOutcome, Recorder,
};
pub use recording::Recorded;
pub use signals::{
    InterruptGuard, catch_interrupts, clear_interrupt, interrupt, interrupted,
    survive_file_size_limit,
};
pub use stat::{
    Count, DEFAULT_STAT_EVENTS, EventCount, EventValue, MIN_INTERVAL, Stat, StatConfig, StatCounts,
    StatOutcome, ThreadCount,
};
pub use sysinfo::{host_info, max_sample_rate, page_size, release_freed_memory};
pub use target::{Target, TargetEnd};
pub use tid_lock::{HeldByThisThread, TidGuard, TidLock};
