//! Where a recording's records end while it is made: in the file writer,
//! which keeps every record (through the caller splicer, where samples
//! carry the top of the stack beside a frame-pointer chain), or in the
//! histogram recorder, which pours the samples into buckets and keeps those
//! (PAPI_profil's way, in constant space). A [`RecordingOutput`] is one of
//! the three: records go in through its [`RecordSink`] side as the
//! sampler drains them, and [`finish`](RecordingOutput::finish) writes what
//! is left and the trailer.
//!
//! [`RecordSink`] stays a trait, the open side: the sampler's own sinks
//! (the profil histograms, the filter of a job's descendants) and the live
//! view of `profiler top` take records too, and write no recording.
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
//! let mut output = RecordingOutput::open(Vec::new(), header, None, None, DEFAULT_COMPRESSION_LEVEL).unwrap();
//! output.end_batch().unwrap();
//! let bytes = output.finish(Trailer::default()).unwrap();
//! assert!(bytes.ends_with(b"PROFEND1"));
//! ```

use std::io::{self, Write};

use crate::header::{RecordingHeader, Trailer};
use crate::live_histograms::HistogramRecorder;
use crate::module_histograms::HistogramOptions;
use crate::record::Record;
use crate::splice::CallerSplicer;
use crate::stats::RecordingStats;
use crate::unwind::StackUnwinder;
use crate::writer::{ChunkLimits, RecordSink, RecordingWriter};

/// What a recording is made into, writing to `W`.
pub enum RecordingOutput<'u, W: Write> {
    /// Every record, as it comes.
    Records(RecordingWriter<W>),
    /// Every record, the callers a frame-pointer chain skips found in the
    /// copy of the stack's top.
    Spliced(CallerSplicer<'u, RecordingWriter<W>>),
    /// The samples poured into histograms, the other records kept.
    Histograms(HistogramRecorder<W>),
}

impl<'u, W: Write> RecordingOutput<'u, W> {
    /// Writes `header` to `out` and returns the output the records go to:
    /// the histogram recorder when `histogram` is given (its settings noted
    /// in the header), else the file writer, behind a [`CallerSplicer`]
    /// unwinding with `splice` when that is given. Chunks of records are
    /// compressed at zstd's `compression_level`, or written plain at 0.
    pub fn open(
        out: W,
        mut header: RecordingHeader,
        histogram: Option<HistogramOptions>,
        splice: Option<&'u dyn StackUnwinder>,
        compression_level: u8,
    ) -> io::Result<RecordingOutput<'u, W>> {
        header.histogram = histogram.as_ref().map(HistogramOptions::settings);
        let limits = ChunkLimits {
            compression_level,
            ..ChunkLimits::default()
        };
        let writer = RecordingWriter::with_limits(out, &header, limits)?;
        Ok(match (histogram, splice) {
            (Some(options), _) => RecordingOutput::Histograms(HistogramRecorder::new(
                writer,
                header.events.len(),
                options,
            )),
            (None, Some(unwinder)) => {
                RecordingOutput::Spliced(CallerSplicer::new(writer, unwinder))
            }
            (None, None) => RecordingOutput::Records(writer),
        })
    }

    /// Totals of the records pushed so far.
    pub fn stats(&self) -> RecordingStats {
        match self {
            RecordingOutput::Records(writer) => writer.stats(),
            RecordingOutput::Spliced(splicer) => splicer.sink().stats(),
            RecordingOutput::Histograms(recorder) => recorder.stats(),
        }
    }

    /// Writes what is left, then the trailer (whose totals and module table
    /// are filled in here), and hands back the output.
    pub fn finish(self, trailer: Trailer) -> io::Result<W> {
        match self {
            RecordingOutput::Records(writer) => writer.finish(trailer),
            RecordingOutput::Spliced(splicer) => splicer.finish()?.finish(trailer),
            RecordingOutput::Histograms(recorder) => recorder.finish(trailer),
        }
    }
}

impl<W: Write> RecordSink for RecordingOutput<'_, W> {
    fn push(&mut self, record: &Record) -> io::Result<()> {
        match self {
            RecordingOutput::Records(writer) => writer.push(record),
            RecordingOutput::Spliced(splicer) => splicer.push(record),
            RecordingOutput::Histograms(recorder) => recorder.push(record),
        }
    }

    fn end_batch(&mut self) -> io::Result<()> {
        match self {
            RecordingOutput::Records(writer) => writer.end_batch(),
            RecordingOutput::Spliced(splicer) => splicer.end_batch(),
            RecordingOutput::Histograms(recorder) => recorder.end_batch(),
        }
    }
}
