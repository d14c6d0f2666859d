//! End-to-end tests: the real `profiler` binary on the fixture programs.

// A test fails by panicking: its helpers unwrap as its #[test]s do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// `live_test!` declares the tests that sample with the kernel.
#[macro_use]
extern crate profiler_testing;

mod golden;
mod pprof_text;
mod stranger;
mod synthetic;
mod util;

mod annotate;
mod archive;
mod bad_input;
mod bombs;
mod browser;
mod call_graphs;
mod capi;
mod capi_counters;
mod chunks;
mod concurrent_outputs;
mod docs;
mod doctor;
mod events;
mod exit_status;
mod exports;
mod fact_renderers;
mod failed_writes;
mod gprof;
mod groups;
mod histogram;
mod hostile;
mod jitdump;
mod jobs;
mod kernel_time;
mod modules;
mod mpi;
mod names;
mod off_cpu;
mod off_cpu_views;
mod outputs;
mod perf_spellings;
mod perfdata;
mod pprof;
mod reading;
mod record_report;
mod renderers;
mod salvage;
mod scheduling;
mod script;
mod shared_dirs;
mod shell;
mod signals;
mod stat;
mod suite;
mod symbol_cache;
mod symbolization;
mod symbols;
mod targets;
mod top;
mod views;
mod widths;
