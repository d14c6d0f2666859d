//! Reports: a recording, resolved through the process model and named by a
//! symbolizer, aggregated into views (the flat profile, the histogram table),
//! each rendered to any `impl Write`.
//!
//! ```no_run
//! use profiler_model::{NoSymbols, NoUnwinder, Recording};
//! use profiler_report::{ReportOptions, StackOptions, flat_profile, read_stacks, render_text};
//!
//! let recording = Recording::open("profiler.data".as_ref())?;
//! let stacks = read_stacks(&recording, &NoSymbols, &NoUnwinder, &StackOptions::default())?;
//! let profile = flat_profile(&recording, &stacks, &ReportOptions::default());
//! render_text(&profile, &mut std::io::stdout().lock())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod annotate;
mod annotate_render;
mod annotate_target;
mod attribution;
mod calltree;
mod completeness;
mod diff;
mod doctor_render;
mod error;
mod events;
mod firefox;
mod flamegraph;
mod folded;
mod gmon;
mod hist_render;
mod hist_table;
mod histograms;
mod inline_sites;
mod json;
mod list_render;
mod located;
mod naming;
mod places;
mod pprof;
mod profile;
mod replay;
mod samples;
mod sort;
mod speedscope;
mod stack_ids;
mod stacks;
mod stat_render;
mod symbols_render;
mod table;
mod tasks;
mod text;
mod timeline;
mod walk;

pub use annotate::{
    AnnotateOptions, AnnotateView, AnnotatedInstruction, Annotation, LineCount, SourceBlock,
    SourceRow, annotate,
};
pub use annotate_render::{render_annotation_json, render_annotation_text};
pub use annotate_target::AnnotateTarget;
pub use calltree::{CallNode, CallTree, TreeDirection};
pub use completeness::{StackCompleteness, stack_completeness};
pub use diff::{DiffRow, ProfileDiff, Share, diff_profiles, render_diff_json, render_diff_text};
pub use doctor_render::{render_checkup_json, render_checkup_text};
pub use error::ReportError;
pub use firefox::render_firefox;
pub use flamegraph::{FlameOptions, render_diff_flamegraph, render_flamegraph};
pub use folded::{FoldedFrame, FoldedStacks, FrameKind, INLINED_SUFFIX};
pub use gmon::{GmonSummary, write_gmon};
pub use hist_render::{render_hist_csv, render_hist_json, render_hist_text};
pub use hist_table::{HistOptions, HistRow, HistTable, TableRegion, histogram_table};
pub use histograms::recording_histograms;
pub use inline_sites::{
    InlineSite, InlineSites, inline_sites, render_inline_sites_json, render_inline_sites_text,
};
pub use json::render_json;
pub use list_render::{render_event_list_json, render_event_list_text};
pub use naming::Places;
pub use places::PlaceRow;
pub use pprof::render_pprof;
pub use profile::{
    EventProfile, FlatProfile, FunctionRow, InlinedRow, ModuleRow, ReportOptions, ThreadRow,
    flat_profile,
};
pub use samples::TaskDetail;
pub use samples::{SampleFilter, Weight};
pub use sort::{PlaceKind, SortKey};
pub use speedscope::render_speedscope;
pub use stacks::{StackOptions, StackProfile, ThreadFrames, read_stacks};
pub use stat_render::{
    StatExit, StatSummary, render_stat_interval_json, render_stat_interval_text, render_stat_json,
    render_stat_text,
};
pub use symbols_render::{render_symbols_json, render_symbols_text};
pub use tasks::{Task, TaskRow};
pub use text::{loss_advice, render_text, stack_advice, stack_phrase};
