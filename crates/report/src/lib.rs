//! Reports: a recording, resolved through the process model and named by a
//! symbolizer, aggregated into views (the flat profile, the histogram table),
//! each rendered to any `impl Write`.
//!
//! The modules follow the stages: `read` (a recording to counted, named
//! stacks), `views` (what those stacks say, as plain data), `render` (each
//! view as text or JSON) and `export` (the formats of other tools).
//!
//! ```no_run
//! use profiler_model::{NoSymbols, NoUnwinder, Recording};
//! use profiler_report::{
//!     ReportOptions, RowWidth, StackOptions, flat_profile, read_stacks, render_text,
//! };
//!
//! let recording = Recording::open("profiler.data".as_ref())?;
//! let stacks = read_stacks(&recording, &NoSymbols, &NoUnwinder, &StackOptions::default())?;
//! let profile = flat_profile(&recording, &stacks, &ReportOptions::default());
//! render_text(&profile, RowWidth::Columns(100), &mut std::io::stdout().lock())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod export;
mod read;
mod render;
mod views;
mod wording;

pub use error::ReportError;
pub use export::firefox::render_firefox;
pub use export::flamegraph::{FlameOptions, render_diff_flamegraph, render_flamegraph};
pub use export::gmon::{GmonSummary, write_gmon, write_job_gmon};
pub use export::pprof::render_pprof;
pub use export::speedscope::render_speedscope;
pub use read::completeness::{StackCompleteness, stack_completeness};
pub use read::histograms::recording_histograms;
pub use read::job::Job;
pub use read::job_stacks::read_job_stacks;
pub use read::naming::Places;
pub use read::samples::SampleFilter;
pub use read::samples::TaskDetail;
pub use read::stacks::{RankInfo, StackOptions, StackProfile, read_stacks};
pub use read::thread_stack::ThreadState;
pub use read::time_slices::TimeSlices;
pub use read::weight::Weight;
pub use render::annotate::{render_annotation_json, render_annotation_text};
pub use render::checkup::{render_checkup_json, render_checkup_text};
pub use render::diff::{render_diff_json, render_diff_text};
pub use render::event_list::{render_event_list_json, render_event_list_text};
pub use render::fit::RowWidth;
pub use render::flat_json::render_json;
pub use render::flat_text::{TextOptions, render_text, render_text_with};
pub use render::hist::{render_hist_csv, render_hist_json, render_hist_text};
pub use render::inline_sites::{render_inline_sites_json, render_inline_sites_text};
pub use render::ranks::{render_ranks_json, render_ranks_text};
pub use render::script::render_script;
pub use render::stat::{
    StatExit, StatSummary, render_stat_interval_json, render_stat_interval_text, render_stat_json,
    render_stat_text,
};
pub use render::symbols::{render_symbols_json, render_symbols_text};
pub use views::annotate::{
    AnnotateOptions, AnnotateView, AnnotatedInstruction, Annotation, LineCount, SampledCode,
    SourceBlock, SourceRow, annotate, annotate_sampled,
};
pub use views::annotate_target::AnnotateTarget;
pub use views::call_tree::{CallNode, CallTree, TreeDirection};
pub use views::diff::{DiffRow, ProfileDiff, Share, diff_profiles};
pub use views::flat::{
    EventProfile, FlatProfile, FunctionRow, InlinedRow, ModuleRow, ReportOptions, ThreadRow,
    ThreadTime, flat_profile,
};
pub use views::folded::{
    FoldedFrame, FoldedStacks, FrameKind, INLINED_SUFFIX, StackWeight, ThreadFrames,
};
pub use views::hist::{
    HistOptions, HistRow, HistTable, TableRegion, histogram_table, job_histogram_table,
};
pub use views::inline_sites::{InlineSite, InlineSites, inline_sites};
pub use views::module_pairs::{ModulePair, PairedBy, pair_modules};
pub use views::places::PlaceRow;
pub use views::ranks::{BalanceRow, EventBalance, RankBalance, rank_balance};
pub use views::row_filter::RowFilter;
pub use views::script::{Script, ScriptOptions, script};
pub use views::sort::{PlaceKind, SortKey};
pub use views::tasks::{Task, TaskRow};
pub use wording::{loss_advice, stack_advice, stack_phrase};
