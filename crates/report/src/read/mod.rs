//! Reading a recording: its samples placed in modules, walked into call
//! stacks, counted per event and thread, and named by the symbolizer; or
//! its histograms. Every view starts from what this stage hands on.

pub(crate) mod completeness;
pub(crate) mod events;
pub(crate) mod histograms;
pub(crate) mod job;
pub(crate) mod job_histograms;
pub(crate) mod job_stacks;
pub(crate) mod located;
pub(crate) mod naming;
pub(crate) mod samples;
pub(crate) mod stack_ids;
pub(crate) mod stacks;
pub(crate) mod thread_stack;
pub(crate) mod time_slices;
pub(crate) mod timeline;
pub(crate) mod walk;
pub(crate) mod weight;
