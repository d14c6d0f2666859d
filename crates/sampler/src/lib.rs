//! The sampler: `perf_event_open` on Linux, from launching the profiled
//! command to draining the kernel's ring buffers into profiler records.
//!
//! It owns the first step of the data flow: a [`Recorder`] is checked once
//! (events, rates, command), then run; every record it drains (samples,
//! mappings, exec, fork, exit, lost, throttle) goes to a
//! [`RecordSink`](profiler_model::RecordSink), such as the recording writer.
//!
//! ```no_run
//! use profiler_sampler::{EventRequest, RecordConfig, Recorder};
//! use profiler_model::RecordingWriter;
//!
//! let recorder = Recorder::new(RecordConfig {
//!     command: vec!["./app".into()],
//!     events: vec![EventRequest { name: "cpu-clock".into(), sampling: None }],
//!     sampling: None,
//!     call_graph: None,
//!     ring_bytes: None,
//! })?;
//! let mut writer = RecordingWriter::new(Vec::new(), &recorder.header())?;
//! let outcome = recorder.run(&mut writer)?;
//! println!("{}", outcome.exit);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A program can also profile itself, the `PAPI_profil` way: [`Profil`]
//! samples every thread of the calling process into a histogram over its
//! own text until it is stopped.
//!
//! This is the one crate with `unsafe` code: `fork`/`exec`, signal handlers,
//! `poll`, `gettid` and one ioctl. Each block says why it is sound.

#![allow(unsafe_code)]

mod command;
mod convert;
mod counters;
mod error;
mod event;
mod launch;
mod own_process;
mod profil;
mod recorder;
mod signals;
mod sysinfo;
mod tasks;

pub use error::SamplerError;
pub use launch::TargetExit;
pub use profil::{Profil, ProfilConfig, ProfilOutcome, ProfilRegion};
pub use recorder::{
    DEFAULT_FREQUENCY, DEFAULT_RING_BYTES, DEFAULT_STACK_BYTES, DEFAULT_STACK_RING_BYTES,
    EventRequest, MAX_STACK_BYTES, RecordConfig, RecordOutcome, Recorder,
};
