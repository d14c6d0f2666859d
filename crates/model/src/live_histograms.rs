//! Histogram mode while recording: samples poured into buckets as they are
//! drained, so that memory stays the same however long the command runs.
//! Only the buckets that counted something, the module table and the totals
//! are written.
//!
//! The rings of different CPUs are drained in turn, so a sample can arrive
//! before the mapping record it depends on. Each drain cycle is therefore put
//! in time order before it is applied, and a sample that still falls in no
//! mapping gets one more cycle before it counts as outside.

use std::io::{self, Write};

use crate::address::FileOffset;
use crate::group_counts::MemberDeltas;
use crate::header::Trailer;
use crate::module_histograms::{HistogramOptions, ModuleHistograms};
use crate::process::{LiveMappings, Location, side_band_order};
use crate::record::{HistogramRecord, Record, Sample};
use crate::stats::RecordingStats;
use crate::writer::{RecordSink, RecordingWriter};

/// A record sink that keeps histograms instead of samples.
pub struct HistogramRecorder<W: Write> {
    writer: RecordingWriter<W>,
    mappings: LiveMappings,
    histograms: ModuleHistograms,
    /// The current drain cycle's records that matter here.
    batch: Vec<Record>,
    /// Samples that fell in no mapping in the last cycle.
    retry: Vec<Sample>,
    /// Group members' counts, turned into deltas as samples arrive (in
    /// each counter's own order).
    members: MemberDeltas,
}

impl<W: Write> HistogramRecorder<W> {
    /// `writer` has written the header (with its histogram settings);
    /// `events` is how many events it names.
    pub fn new(writer: RecordingWriter<W>, events: usize, options: HistogramOptions) -> Self {
        HistogramRecorder {
            writer,
            mappings: LiveMappings::new(),
            histograms: ModuleHistograms::new(events, options),
            batch: Vec::new(),
            retry: Vec::new(),
            members: MemberDeltas::default(),
        }
    }

    /// Totals of the records seen so far.
    pub fn stats(&self) -> RecordingStats {
        self.writer.stats()
    }

    /// Writes the histograms and the trailer (with the per-event totals).
    pub fn finish(mut self, mut trailer: Trailer) -> io::Result<W> {
        self.end_batch()?;
        for sample in std::mem::take(&mut self.retry) {
            self.histograms.pour(&sample, Location::Unmapped, &[]);
        }
        trailer.histogram_totals = self.histograms.totals();
        for region in self.histograms.regions() {
            let module = self.mappings.modules().get(region.module);
            self.writer.push(&Record::Histogram(HistogramRecord {
                event: region.event,
                path: module.path.clone(),
                build_id: module.build_id.clone(),
                start: FileOffset(region.region.offset),
                scale: region.region.scale.value(),
                buckets: region.buckets.clone(),
            }))?;
        }
        self.writer.finish(trailer)
    }

    fn apply(&mut self, record: &Record, retried: bool) -> io::Result<()> {
        match record {
            Record::Sample(sample) => match self.mappings.resolve(sample) {
                Location::Unmapped if !retried => self.retry.push(sample.clone()),
                // `read` holds deltas here (see `push`).
                location => self.histograms.pour(sample, location, &sample.read),
            },
            Record::Mmap(m) => {
                if let Some(module) = self.mappings.apply(record) {
                    self.histograms
                        .cover(module, &m.path, m.offset, m.len)
                        .map_err(io::Error::other)?;
                }
            }
            _ => {
                self.mappings.apply(record);
            }
        }
        Ok(())
    }
}

impl<W: Write> RecordSink for HistogramRecorder<W> {
    fn push(&mut self, record: &Record) -> io::Result<()> {
        self.writer.tally(record);
        match record {
            Record::Sample(sample) if !sample.read.is_empty() => {
                let mut sample = sample.clone();
                sample.read = self.members.of(&sample);
                self.batch.push(Record::Sample(sample));
            }
            Record::Sample(_) | Record::Mmap(_) | Record::Comm(_) | Record::Fork(_) => {
                self.batch.push(record.clone());
            }
            _ => {}
        }
        Ok(())
    }

    fn end_batch(&mut self) -> io::Result<()> {
        let mut cycle: Vec<(Record, bool)> = std::mem::take(&mut self.batch)
            .into_iter()
            .map(|r| (r, false))
            .chain(self.retry.drain(..).map(|s| (Record::Sample(s), true)))
            .collect();
        cycle.sort_by_key(|(record, _)| side_band_order(record));
        for (record, retried) in &cycle {
            self.apply(record, *retried)?;
        }
        Ok(())
    }
}
