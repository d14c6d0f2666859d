//! The profiler's terminal screens: `profiler top`, the hottest functions
//! of a running system, process or command, live; and `profiler report
//! --tui`, the same screen over a recording.
//!
//! It sits above the sampler and the reports: the sampler records on a
//! thread of its own into a live feed (a [`RecordSink`]), which resolves
//! each sample against the processes' mappings and counts it by process,
//! command and place; every interval the screen takes those counts, names
//! the new places once (cached by place, through the model's
//! [`Symbolizer`]), and adds them to counts per function that have a
//! ceiling, so memory does not grow with the samples. A recording is put
//! through the same counts. The annotated listing is report's
//! ([`annotate_sampled`]) over the counts by place.
//!
//! Screens are drawn with ratatui from plain state, so they are tested on
//! ratatui's test backend without a terminal; the terminal itself is
//! crossterm's (raw mode on the alternate screen, given back as it was).
//! When the output is not a terminal, `top` prints a table every interval
//! instead, as `perf top --stdio` does.
//!
//! ```no_run
//! use profiler_model::{AsmSyntax, NoSymbols};
//! use profiler_sampler::{RecordConfig, Recorder, Target};
//! use profiler_symbols::{ElfSymbolizer, SourceFiles};
//! use profiler_tui::{Code, TopOptions, top_snapshots};
//!
//! let recorder = Recorder::new(RecordConfig {
//!     target: Target::Command(vec!["./app".into()]),
//!     events: vec![],
//!     sampling: None,
//!     call_graph: None,
//!     fp_stack_bytes: None,
//!     ring_bytes: None,
//!     kernel: None,
//!     duration: None,
//!     wait_descendants: false,
//!     off_cpu: false,
//! })?;
//! let elf = ElfSymbolizer::default();
//! let code = Code {
//!     symbolizer: &elf,
//!     disassembler: &elf,
//!     sources: &SourceFiles::new(vec![]),
//!     syntax: AsmSyntax::Att,
//! };
//! let options = TopOptions {
//!     interval: std::time::Duration::from_secs(1),
//!     target: "command ./app".into(),
//!     color: false,
//!     rows: 20,
//! };
//! top_snapshots(recorder, None, code, &options, &mut std::io::stdout())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`RecordSink`]: profiler_model::RecordSink
//! [`Symbolizer`]: profiler_model::Symbolizer
//! [`annotate_sampled`]: profiler_report::annotate_sampled

mod annotate_view;
mod app;
mod browse;
mod code;
mod draw;
mod error;
mod feed;
mod intake;
mod live;
mod measure;
mod names;
mod numbers;
mod printable;
mod screen;
mod snapshot;
mod table;
mod tally;
mod terminal;

#[cfg(test)]
mod tests;

pub use browse::{BrowseOptions, browse};
pub use code::Code;
pub use error::TuiError;
pub use live::{TopOptions, TopOutcome, top_screen, top_snapshots};
#[doc(hidden)]
pub use measure::refresh_times;
pub use printable::printable;
pub use table::SortKey;
pub use terminal::colors_allowed;
