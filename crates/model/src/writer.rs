//! Writing a recording: header, records in checksummed chunks, trailer.

use std::collections::BTreeSet;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use crate::chunk::{CHUNK_HEADER_LEN, ChunkHeader, ChunkKind, chunk_number};
use crate::codec;
use crate::compression::{DEFAULT_COMPRESSION_LEVEL, Packer};
use crate::header::{ModuleEntry, RecordingHeader, Trailer};
use crate::layout::{END_MAGIC, FORMAT_VERSION, MAGIC, OLDEST_VERSION, PREAMBLE_LEN};
use crate::record::Record;
use crate::stats::{RecordingStats, StatsCollector};

/// Something that takes the records of a recording as they are produced:
/// the [`RecordingOutput`](crate::RecordingOutput) a recording is made
/// into, or anything else that reads records as they come (a live view, a
/// filter in front of another sink).
pub trait RecordSink {
    fn push(&mut self, record: &Record) -> io::Result<()>;

    /// The records pushed since the last call are all the kernel had: the
    /// sampler drains several ring buffers in turn, so only now can records
    /// of different CPUs be put in time order.
    fn end_batch(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// When the writer hands a chunk of records to its output, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkLimits {
    /// At the end of a batch, write the chunk once it holds this many
    /// bytes [default: 64 KiB].
    pub bytes: usize,
    /// At the end of a batch, write the chunk once its first record is this
    /// old [default: 1 s]: what a killed profiler loses at most.
    pub age: Duration,
    /// Within a batch, write the chunk once it holds this many bytes
    /// [default: 4 MiB], so that a sink that never ends a batch still
    /// writes as it goes.
    pub most_bytes: usize,
    /// The zstd level each chunk of records is compressed at, 1 to 22; 0
    /// writes them plain, in format version 2, which older versions read
    /// [default: 1].
    pub compression_level: u8,
}

impl Default for ChunkLimits {
    fn default() -> Self {
        ChunkLimits {
            bytes: 64 << 10,
            age: Duration::from_secs(1),
            most_bytes: 4 << 20,
            compression_level: DEFAULT_COMPRESSION_LEVEL,
        }
    }
}

/// Streams records into a recording. Records are written in the order they
/// arrive; readers order them by time.
///
/// A chunk ends only where a batch does (unless it outgrows
/// [`ChunkLimits::most_bytes`]): within a batch the sampler may hand over a
/// sample before the mapping it falls in, and a chunk cut between the two
/// could keep the sample and lose its mapping.
pub struct RecordingWriter<W: Write> {
    out: W,
    limits: ChunkLimits,
    /// The chunk being filled: room for its header, then framed records.
    chunk: Vec<u8>,
    /// When the chunk's first record arrived.
    chunk_started: Option<Instant>,
    /// Bytes handed to `out` so far.
    position: u64,
    stats: StatsCollector,
    modules: BTreeSet<ModuleEntry>,
    /// Records chunks written so far.
    chunks: u64,
    /// Samples and other records in the chunk being filled.
    chunk_counts: (u64, u64),
    /// Compresses the chunks; `None` writes them plain.
    packer: Option<Packer>,
}

impl<W: Write> RecordingWriter<W> {
    /// Writes the preamble and header.
    pub fn new(out: W, header: &RecordingHeader) -> io::Result<RecordingWriter<W>> {
        RecordingWriter::with_limits(out, header, ChunkLimits::default())
    }

    /// Writes the preamble and header; chunks are cut as `limits` say.
    pub fn with_limits(
        mut out: W,
        header: &RecordingHeader,
        limits: ChunkLimits,
    ) -> io::Result<RecordingWriter<W>> {
        let json = serde_json::to_vec(header).map_err(io::Error::other)?;
        let packer = Packer::new(limits.compression_level);
        let version = match packer {
            Some(_) => FORMAT_VERSION,
            None => OLDEST_VERSION,
        };
        let mut preamble = Vec::with_capacity(PREAMBLE_LEN as usize + json.len());
        preamble.extend_from_slice(MAGIC);
        preamble.extend_from_slice(&version.to_le_bytes());
        preamble.extend_from_slice(&(json.len() as u32).to_le_bytes());
        preamble.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
        preamble.extend_from_slice(&json);
        // Written through at once: an output that cannot take the header
        // fails here, before the records start.
        out.write_all(&preamble)?;
        out.flush()?;
        let mut chunk = Vec::with_capacity(limits.bytes.saturating_mul(2).min(16 << 20));
        chunk.resize(CHUNK_HEADER_LEN, 0);
        Ok(RecordingWriter {
            out,
            limits,
            chunk,
            chunk_started: None,
            position: preamble.len() as u64,
            stats: StatsCollector::new(header.events.len()),
            modules: BTreeSet::new(),
            chunks: 0,
            chunk_counts: (0, 0),
            packer,
        })
    }

    /// Counts `record` in the totals without writing it: in histogram mode
    /// samples are poured into buckets, not kept.
    pub fn tally(&mut self, record: &Record) {
        self.stats.add(record);
    }

    /// Totals of the records pushed so far.
    pub fn stats(&self) -> RecordingStats {
        self.stats.snapshot()
    }

    /// The output.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The output, to be changed. Writing to it directly would break the
    /// recording.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Bytes handed to the output so far.
    pub fn bytes_written(&self) -> u64 {
        self.position
    }

    /// Writes the last chunk, the trailer and end marker, and hands back the
    /// output. `trailer.stats` and `trailer.modules` are filled in from the
    /// records.
    pub fn finish(mut self, mut trailer: Trailer) -> io::Result<W> {
        self.write_chunk()?;
        trailer.stats = self.stats.snapshot();
        trailer.modules = std::mem::take(&mut self.modules).into_iter().collect();
        trailer.record_chunks = self.chunks;
        self.out.write_all(&ending(&trailer, self.position)?)?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// Hands the chunk being filled, if it holds any record, to the output
    /// in one write, compressed where that pays.
    fn write_chunk(&mut self) -> io::Result<()> {
        if self.chunk.len() == CHUNK_HEADER_LEN {
            return Ok(());
        }
        self.chunks += 1;
        let number = chunk_number(self.chunks);
        let records = &self.chunk[CHUNK_HEADER_LEN..];
        let packed =
            (self.packer.as_mut()).and_then(|p| p.pack(records, self.chunk_counts, number));
        let written = match packed {
            Some(chunk) => chunk,
            None => {
                let header = ChunkHeader::encode(ChunkKind::Records, number, records);
                self.chunk[..CHUNK_HEADER_LEN].copy_from_slice(&header);
                &self.chunk
            }
        };
        self.out.write_all(written)?;
        self.out.flush()?;
        self.position += written.len() as u64;
        self.chunk.truncate(CHUNK_HEADER_LEN);
        self.chunk_started = None;
        self.chunk_counts = (0, 0);
        Ok(())
    }
}

/// The trailer chunk, written at `offset`, and the end marker that points
/// at it.
pub(crate) fn ending(trailer: &Trailer, offset: u64) -> io::Result<Vec<u8>> {
    let json = serde_json::to_vec(trailer).map_err(io::Error::other)?;
    let mut end = Vec::with_capacity(CHUNK_HEADER_LEN + json.len() + 24);
    end.extend_from_slice(&ChunkHeader::encode(ChunkKind::Trailer, 0, &json));
    end.extend_from_slice(&json);
    end.extend_from_slice(&offset.to_le_bytes());
    end.extend_from_slice(&((CHUNK_HEADER_LEN + json.len()) as u64).to_le_bytes());
    end.extend_from_slice(END_MAGIC);
    Ok(end)
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
        self.chunk_started.get_or_insert_with(Instant::now);
        match record {
            Record::Sample(_) => self.chunk_counts.0 += 1,
            _ => self.chunk_counts.1 += 1,
        }
        codec::encode(record, &mut self.chunk);
        if self.chunk.len() >= self.limits.most_bytes {
            self.write_chunk()?;
        }
        Ok(())
    }

    fn end_batch(&mut self) -> io::Result<()> {
        let full = self.chunk.len() - CHUNK_HEADER_LEN >= self.limits.bytes;
        let old = self
            .chunk_started
            .is_some_and(|started| started.elapsed() >= self.limits.age);
        if full || old {
            self.write_chunk()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::Avma;
    use crate::header::HostInfo;
    use crate::record::{CpuMode, Sample};

    fn writer(limits: ChunkLimits) -> RecordingWriter<Vec<u8>> {
        let header = RecordingHeader {
            events: vec![],
            command: vec![],
            program: None,
            user: None,
            histogram: None,
            call_graph: None,
            host: HostInfo::default(),
            job: None,
            start_unix_ns: 0,
            profiler_version: "test".into(),
        };
        RecordingWriter::with_limits(Vec::new(), &header, limits).unwrap()
    }

    fn sample() -> Record {
        Record::Sample(Sample {
            time: 1,
            pid: 1,
            tid: 1,
            cpu: 0,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(0x1000),
            period: 1,
            callchain: Vec::new(),
            user_stack: None,
            read: Vec::new(),
        })
    }

    #[test]
    fn chunks_are_written_at_batch_ends_when_full_or_old_and_mid_batch_only_when_huge() {
        let mut full = writer(ChunkLimits {
            bytes: 100,
            age: Duration::MAX,
            most_bytes: usize::MAX,
            compression_level: 0,
        });
        let start = full.bytes_written();
        for _ in 0..10 {
            full.push(&sample()).unwrap();
        }
        assert_eq!(
            full.bytes_written(),
            start,
            "a chunk was cut inside a batch"
        );
        full.end_batch().unwrap();
        assert!(full.bytes_written() > start + 100);
        assert_eq!(full.bytes_written() as usize, full.out.len());

        let mut old = writer(ChunkLimits {
            bytes: usize::MAX,
            age: Duration::ZERO,
            most_bytes: usize::MAX,
            compression_level: 0,
        });
        let start = old.bytes_written();
        old.end_batch().unwrap();
        assert_eq!(old.bytes_written(), start, "an empty chunk was written");
        old.push(&sample()).unwrap();
        old.end_batch().unwrap();
        assert!(old.bytes_written() > start);

        let mut huge = writer(ChunkLimits {
            bytes: usize::MAX,
            age: Duration::MAX,
            most_bytes: 1,
            compression_level: 0,
        });
        let start = huge.bytes_written();
        huge.push(&sample()).unwrap();
        assert!(huge.bytes_written() > start);
    }

    #[test]
    fn compressed_chunks_are_format_3_and_plain_ones_format_2_which_older_versions_read() {
        let mut sizes = Vec::new();
        for (level, version) in [(0, 2), (1, 3), (19, 3)] {
            let mut writer = writer(ChunkLimits {
                compression_level: level,
                ..ChunkLimits::default()
            });
            for _ in 0..1000 {
                writer.push(&sample()).unwrap();
            }
            let bytes = writer.finish(Trailer::default()).unwrap();
            assert_eq!(bytes[8..12], u32::to_le_bytes(version), "level {level}");
            sizes.push(bytes.len());
        }
        // 1000 samples of 44 bytes, all alike.
        assert!(sizes[0] > 44_000, "{sizes:?}");
        assert!(sizes[1] * 10 < sizes[0], "{sizes:?}");
        assert!(sizes[2] <= sizes[1], "{sizes:?}");
    }
}
