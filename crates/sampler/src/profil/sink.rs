//! Where a profile's samples go: the samples of this process, poured into
//! the profile's histogram, and what it has counted so far.

use std::io;

use profiler_histogram::Histogram;
use profiler_model::{Record, RecordSink, pour};

/// What a profile counted, until it stopped or was read.
#[derive(Clone, Debug)]
pub struct ProfilOutcome {
    /// The histogram the profile started from, with the samples added;
    /// its stats say how many fell outside the regions, saturated a bucket
    /// or were dropped by a flag.
    pub histogram: Histogram,
    /// Samples of this process. (Counters are inherited by child processes
    /// too; their samples are left out.)
    pub samples: u64,
    /// Samples the kernel dropped because a ring buffer was full.
    pub lost: u64,
}

/// Samples of this process, into buckets.
pub(crate) struct HistogramSink {
    outcome: ProfilOutcome,
    pid: u32,
}

impl HistogramSink {
    pub(crate) fn new(histogram: Histogram) -> HistogramSink {
        HistogramSink {
            outcome: ProfilOutcome {
                histogram,
                samples: 0,
                lost: 0,
            },
            pid: std::process::id(),
        }
    }

    /// What has been counted so far.
    pub(crate) fn outcome(&self) -> &ProfilOutcome {
        &self.outcome
    }

    pub(crate) fn into_outcome(self) -> ProfilOutcome {
        self.outcome
    }
}

impl RecordSink for HistogramSink {
    fn push(&mut self, record: &Record) -> io::Result<()> {
        match record {
            Record::Sample(sample) if sample.pid == self.pid => {
                self.outcome.samples += 1;
                pour(&mut self.outcome.histogram, sample.ip.0, sample);
            }
            Record::Lost(lost) => self.outcome.lost += lost.count,
            _ => {}
        }
        Ok(())
    }
}
