//! Views: what the counted, named stacks say, each as plain data that the
//! renderers and exports write out (the flat profile, the call tree, the
//! folded stacks, a diff, an annotated function, the histogram table, the
//! sites of an inlined function, every sample on its own, the balance of a
//! job's ranks).

pub(crate) mod annotate;
pub(crate) mod annotate_target;
pub(crate) mod attribution;
pub(crate) mod call_tree;
pub(crate) mod diff;
pub(crate) mod flat;
pub(crate) mod folded;
pub(crate) mod hist;
pub(crate) mod inline_sites;
pub(crate) mod module_pairs;
pub(crate) mod places;
pub(crate) mod ranks;
pub(crate) mod row_filter;
pub(crate) mod script;
pub(crate) mod sort;
pub(crate) mod tasks;
