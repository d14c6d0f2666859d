//! Writing a recording: header, streamed records, trailer.

use std::collections::BTreeSet;
use std::io::{self, Write};

use crate::codec;
use crate::header::{ModuleEntry, RecordingHeader, Trailer};
use crate::layout::{END_MAGIC, FORMAT_VERSION, MAGIC, PREAMBLE_LEN};
use crate::record::Record;
use crate::stats::{RecordingStats, StatsCollector};

/// Something that takes the records of a recording as they are produced: the
/// recording writer, or a live histogram.
pub trait RecordSink {
    fn push(&mut self, record: &Record) -> io::Result<()>;

    /// The records pushed since the last call are all the kernel had: the
    /// sampler drains several ring buffers in turn, so only now can records
    /// of different CPUs be put in time order.
    fn end_batch(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Streams records into a recording. Records are written in the order they
/// arrive; readers order them by time.
pub struct RecordingWriter<W: Write> {
    out: W,
    position: u64,
    buffer: Vec<u8>,
    stats: StatsCollector,
    modules: BTreeSet<ModuleEntry>,
}

/// Flush the encoding buffer once it holds this many bytes.
const FLUSH_THRESHOLD: usize = 64 << 10;

impl<W: Write> RecordingWriter<W> {
    /// Writes the preamble and header.
    pub fn new(mut out: W, header: &RecordingHeader) -> io::Result<RecordingWriter<W>> {
        let json = serde_json::to_vec(header).map_err(io::Error::other)?;
        out.write_all(MAGIC)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes())?;
        out.write_all(&(json.len() as u32).to_le_bytes())?;
        out.write_all(&json)?;
        Ok(RecordingWriter {
            out,
            position: PREAMBLE_LEN + json.len() as u64,
            buffer: Vec::with_capacity(FLUSH_THRESHOLD * 2),
            stats: StatsCollector::new(header.events.len()),
            modules: BTreeSet::new(),
        })
    }

    /// Counts `record` in the totals without writing it: in histogram mode
    /// samples are poured into buckets, not kept.
    pub fn tally(&mut self, record: &Record) {
        self.stats.add(record);
    }

    /// Totals of the records written so far.
    pub fn stats(&self) -> RecordingStats {
        self.stats.snapshot()
    }

    /// Writes the trailer and end marker and hands back the output.
    /// `trailer.stats` and `trailer.modules` are filled in from the records.
    pub fn finish(mut self, mut trailer: Trailer) -> io::Result<W> {
        self.flush_buffer()?;
        trailer.stats = self.stats.snapshot();
        trailer.modules = std::mem::take(&mut self.modules).into_iter().collect();
        let json = serde_json::to_vec(&trailer).map_err(io::Error::other)?;
        self.out.write_all(&json)?;
        self.out.write_all(&self.position.to_le_bytes())?;
        self.out.write_all(&(json.len() as u64).to_le_bytes())?;
        self.out.write_all(END_MAGIC)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn flush_buffer(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer)?;
        self.position += self.buffer.len() as u64;
        self.buffer.clear();
        Ok(())
    }
}

impl<W: Write> RecordSink for RecordingWriter<W> {
    fn push(&mut self, record: &Record) -> io::Result<()> {
        self.stats.add(record);
        let module = match record {
            Record::Mmap(m) => Some((&m.path, &m.build_id)),
            Record::Histogram(h) => Some((&h.path, &h.build_id)),
            _ => None,
        };
        if let Some((path, build_id)) = module {
            self.modules.insert(ModuleEntry {
                path: path.clone(),
                build_id: build_id.clone(),
            });
        }
        codec::encode(record, &mut self.buffer);
        if self.buffer.len() >= FLUSH_THRESHOLD {
            self.flush_buffer()?;
        }
        Ok(())
    }
}
