//! End-to-end tests: the real `profiler` binary on the fixture programs.

mod synthetic;
mod util;

mod annotate;
mod bad_input;
mod browser;
mod call_graphs;
mod capi;
mod doctor;
mod events;
mod exit_status;
mod exports;
mod gprof;
mod groups;
mod histogram;
mod pprof;
mod record_report;
mod shell;
mod stat;
mod symbolization;
mod symbols;
mod targets;
mod views;
