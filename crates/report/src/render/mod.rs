//! Renderers: each view as text, in the manner of the tool users know it
//! from, or as JSON (and CSV for the histogram table), written to any
//! `impl Write`; every sample as `perf script` lists it; and the outputs of
//! `stat`, `list`, `doctor` and `symbolize`.

pub(crate) mod annotate;
pub(crate) mod call_tree;
pub(crate) mod checkup;
pub(crate) mod diff;
pub(crate) mod event_list;
pub(crate) mod fit;
pub(crate) mod flat_json;
pub(crate) mod flat_table;
pub(crate) mod flat_text;
pub(crate) mod hist;
pub(crate) mod inline_sites;
pub(crate) mod ranks;
pub(crate) mod script;
pub(crate) mod stat;
pub(crate) mod symbols;
