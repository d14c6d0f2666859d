//! Exports: the stacks in the formats of other tools (flame graphs, pprof,
//! the Firefox Profiler, speedscope) and histograms as gprof's `gmon.out`.

pub(crate) mod firefox;
pub(crate) mod flamegraph;
pub(crate) mod folded;
pub(crate) mod gmon;
pub(crate) mod pprof;
pub(crate) mod speedscope;
pub(crate) mod thread_timelines;
