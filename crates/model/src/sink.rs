//! Where a recording's records end while it is made: in the file writer,
//! which keeps every record (through the caller splicer, where samples
//! carry the top of the stack beside a frame-pointer chain), or in the
//! histogram recorder, which pours the samples into buckets and keeps those
//! (PAPI_profil's way, in constant space). Each is a [`RecordingSink`]:
//! records go in as the sampler drains them, and
//! [`finish`](RecordingSink::finish) writes what is left and the trailer.
//!
//! ```
//! use profiler_model::*;
//!
//! let header = RecordingHeader {
//!     events: vec![],
//!     command: vec!["./app".into()],
//!     program: None,
//!     user: None,
//!     histogram: None,
//!     call_graph: None,
//!     host: HostInfo::default(),
//!     job: None,
//!     start_unix_ns: 0,
//!     profiler_version: "0".into(),
//! };
//! let mut sink = open_sink(Vec::new(), header, None, None).unwrap();
//! sink.end_batch().unwrap();
//! let bytes = sink.finish(Trailer::default()).unwrap();
//! assert!(bytes.ends_with(b"PROFEND1"));
//! ```

use std::io::{self, Write};

use crate::header::{RecordingHeader, Trailer};
use crate::live_histograms::HistogramRecorder;
use crate::module_histograms::HistogramOptions;
use crate::splice::CallerSplicer;
use crate::stats::RecordingStats;
use crate::unwind::StackUnwinder;
use crate::writer::{RecordSink, RecordingWriter};

/// A sink a recording is made into, writing to `W`.
pub trait RecordingSink<W>: RecordSink {
    /// Totals of the records pushed so far.
    fn stats(&self) -> RecordingStats;

    /// Writes what is left, then the trailer (whose totals and module table
    /// are filled in here), and hands back the output.
    fn finish(self: Box<Self>, trailer: Trailer) -> io::Result<W>;
}

/// Writes `header` to `out` and returns the sink the records go to: the
/// histogram recorder when `histogram` is given (its settings noted in the
/// header), else the file writer, behind a [`CallerSplicer`] unwinding
/// with `splice` when that is given.
pub fn open_sink<'u, W: Write + 'static>(
    out: W,
    mut header: RecordingHeader,
    histogram: Option<HistogramOptions>,
    splice: Option<&'u dyn StackUnwinder>,
) -> io::Result<Box<dyn RecordingSink<W> + 'u>> {
    header.histogram = histogram.as_ref().map(HistogramOptions::settings);
    let writer = RecordingWriter::new(out, &header)?;
    Ok(match (histogram, splice) {
        (Some(options), _) => {
            Box::new(HistogramRecorder::new(writer, header.events.len(), options))
        }
        (None, Some(unwinder)) => Box::new(CallerSplicer::new(writer, unwinder)),
        (None, None) => Box::new(writer),
    })
}

impl<W: Write> RecordingSink<W> for RecordingWriter<W> {
    fn stats(&self) -> RecordingStats {
        RecordingWriter::stats(self)
    }

    fn finish(self: Box<Self>, trailer: Trailer) -> io::Result<W> {
        RecordingWriter::finish(*self, trailer)
    }
}

impl<W: Write> RecordingSink<W> for HistogramRecorder<W> {
    fn stats(&self) -> RecordingStats {
        HistogramRecorder::stats(self)
    }

    fn finish(self: Box<Self>, trailer: Trailer) -> io::Result<W> {
        HistogramRecorder::finish(*self, trailer)
    }
}

impl<W: Write> RecordingSink<W> for CallerSplicer<'_, RecordingWriter<W>> {
    fn stats(&self) -> RecordingStats {
        self.sink().stats()
    }

    fn finish(self: Box<Self>, trailer: Trailer) -> io::Result<W> {
        CallerSplicer::finish(*self)?.finish(trailer)
    }
}
