//! Reports: a recording, resolved through the process model and named by a
//! symbolizer, aggregated into views, each rendered to any `impl Write`.
//!
//! ```no_run
//! use profiler_model::{NoSymbols, Recording};
//! use profiler_report::{ReportOptions, flat_profile, render_text};
//!
//! let recording = Recording::open("profiler.data".as_ref())?;
//! let profile = flat_profile(&recording, &NoSymbols, &ReportOptions::default())?;
//! render_text(&profile, &mut std::io::stdout().lock())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod json;
mod naming;
mod profile;
mod samples;
mod text;

pub use error::ReportError;
pub use json::render_json;
pub use profile::{
    EventProfile, FlatProfile, FunctionRow, ModuleRow, ReportOptions, SortKey, ThreadRow,
    flat_profile,
};
pub use samples::Weight;
pub use text::render_text;
