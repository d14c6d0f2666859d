//! End-to-end tests: the real `profiler` binary on the fixture programs.

mod util;

mod annotate;
mod bad_input;
mod call_graphs;
mod exit_status;
mod gprof;
mod histogram;
mod record_report;
mod symbolization;
mod symbols;
