//! End-to-end tests: the real `profiler` binary on the fixture programs.

// `live_test!` declares the tests that sample with the kernel.
#[macro_use]
extern crate profiler_testing;

mod golden;
mod pprof_text;
mod synthetic;
mod util;

mod annotate;
mod archive;
mod bad_input;
mod browser;
mod call_graphs;
mod capi;
mod doctor;
mod events;
mod exit_status;
mod exports;
mod fact_renderers;
mod gprof;
mod groups;
mod histogram;
mod hostile;
mod modules;
mod outputs;
mod perfdata;
mod pprof;
mod record_report;
mod renderers;
mod salvage;
mod shell;
mod stat;
mod symbolization;
mod symbols;
mod targets;
mod top;
mod views;
