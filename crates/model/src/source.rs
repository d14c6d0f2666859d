//! Recordings in other formats: a reader of another profiler's files (such
//! as perf.data) hands its records over as a [`RecordSource`], and
//! [`Recording::from_source`](crate::Recording::from_source) makes of it a
//! recording that every view reads as it reads the profiler's own.
//!
//! ```
//! use profiler_model::*;
//!
//! #[derive(Debug)]
//! struct Empty;
//!
//! impl RecordSource for Empty {
//!     fn records(&self) -> Result<SourceRecords, RecordingError> {
//!         Ok(Box::new(std::iter::empty()))
//!     }
//! }
//!
//! let header = RecordingHeader {
//!     events: vec![],
//!     command: vec!["perf".into(), "record".into()],
//!     program: None,
//!     user: None,
//!     histogram: None,
//!     call_graph: None,
//!     host: HostInfo::default(),
//!     job: None,
//!     start_unix_ns: 0,
//!     profiler_version: "perf 6.1".into(),
//! };
//! let trailer = count_records(0, Empty.records().unwrap()).unwrap();
//! let recording = Recording::from_source("perf.data".as_ref(), header, trailer, Box::new(Empty));
//! assert_eq!(recording.records().unwrap().count(), 0);
//! ```

use std::fmt;

use crate::damage::Recount;
use crate::error::RecordingError;
use crate::header::Trailer;
use crate::record::Record;

/// The records of a [`RecordSource`], in the order a profiler's own
/// recording would hold them (side-band records before the samples that
/// need them, or in time order).
pub type SourceRecords = Box<dyn Iterator<Item = Result<Record, RecordingError>> + Send>;

/// A file of another format, read as records on demand, as many times as
/// a view needs.
pub trait RecordSource: fmt::Debug + Send + Sync {
    fn records(&self) -> Result<SourceRecords, RecordingError>;
}

/// The totals a trailer states, counted from `records` of a recording
/// with `events` events, for formats whose files keep none; how the
/// command ended is left for the caller to say.
pub fn count_records(
    events: usize,
    records: impl Iterator<Item = Result<Record, RecordingError>>,
) -> Result<Trailer, RecordingError> {
    let mut recount = Recount::new(events);
    recount.add_all(records)?;
    Ok(Trailer {
        outcome: String::new(),
        ..recount.trailer(None)
    })
}
