//! A recording made in one call: the header written through to the output
//! before the target runs, every record drained into the sink the options
//! ask for (the file writer, behind the caller splicer where samples copy
//! the stack's top, or the histogram recorder), the target followed to its
//! end, the trailer written.

use std::io::Write;

use profiler_model::{
    HistogramOptions, RecordingHeader, RecordingOutput, RecordingStats, StackUnwinder, Trailer,
};

use crate::error::SamplerError;
use crate::recorder::{RecordOutcome, Recorder};

/// A finished recording.
#[derive(Debug)]
pub struct Recorded<W> {
    /// The header written, with the histogram settings if any.
    pub header: RecordingHeader,
    pub outcome: RecordOutcome,
    /// Totals of the records: per event, samples, lost and throttled.
    pub stats: RecordingStats,
    /// The output, the trailer written and flushed.
    pub output: W,
}

impl Recorder {
    /// Records the target into `output`; with `histogram`, its samples are
    /// poured into buckets, which are kept instead of the samples (PAPI_profil's way).
    /// Where frame-pointer chains come with the top of the stack,
    /// `unwinder`'s tables find the callers they skip while recording (see
    /// [`CallerSplicer`](profiler_model::CallerSplicer)); without it, the
    /// recording keeps the stack copies for the report to do so.
    ///
    /// Chunks of records are compressed at zstd's `compression_level`
    /// ([`DEFAULT_COMPRESSION_LEVEL`](profiler_model::DEFAULT_COMPRESSION_LEVEL)
    /// unless told otherwise), or written plain at 0.
    ///
    /// The header is written and flushed before the target runs: an output
    /// that refuses it fails the recording before anything has run.
    pub fn record<W: Write + 'static>(
        self,
        output: W,
        histogram: Option<HistogramOptions>,
        unwinder: Option<&dyn StackUnwinder>,
        compression_level: u8,
    ) -> Result<Recorded<W>, SamplerError> {
        let mut header = self.header();
        header.histogram = histogram.as_ref().map(HistogramOptions::settings);
        let splice = unwinder.filter(|_| self.copies_stack_top());
        let mut sink =
            RecordingOutput::open(output, header.clone(), histogram, splice, compression_level)
                .map_err(|error| SamplerError::Output { error })?;
        let outcome = self.run(&mut sink)?;
        let stats = sink.stats();
        let trailer = Trailer {
            duration_ns: outcome.duration.as_nanos() as u64,
            outcome: outcome.describe(),
            ..Trailer::default()
        };
        let output = sink
            .finish(trailer)
            .map_err(|error| SamplerError::Sink { error })?;
        Ok(Recorded {
            header,
            outcome,
            stats,
            output,
        })
    }
}
