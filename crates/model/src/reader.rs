//! Reading a recording: its header and trailer checked when it is opened,
//! every chunk checked once, then the records, streamed, as many times as
//! needed.
//!
//! A file cut short or damaged is read as far as its chunks are good: what
//! was lost is described by [`Recording::damage`], and the trailer's totals
//! are recounted from the records that were read.

use std::collections::HashSet;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::chunk::{CHUNK_HEADER_LEN, ChunkHeader, ChunkKind};
use crate::chunk_order::{ChunkOrder, check_chunks};
use crate::codec::{self, FRAME_HEADER_LEN};
use crate::compression::{PREFIX_LEN, Unpacker, holds_samples_only};
use crate::damage::{Damage, Recount};
use crate::error::RecordingError;
use crate::header::{RecordingHeader, Trailer};
use crate::layout::{
    END_MAGIC, FOOTER_LEN, FORMAT_VERSION, MAGIC, MAX_METADATA_LEN, OLDEST_VERSION, PREAMBLE_LEN,
};
use crate::off_cpu::{OffCpu, OffCpuBuilder, OffCpuEvents, OffCpuStretch, ThreadTimes};
use crate::record::{Record, Sample, Switch};
use crate::regular_file::open_regular;
use crate::scan::{ChunkMap, scan};
use crate::source::{RecordSource, SourceRecords};

/// An opened, validated recording. Records are read on demand, as many times
/// as needed, with [`Recording::records`].
#[derive(Debug)]
pub struct Recording {
    path: PathBuf,
    pub header: RecordingHeader,
    pub trailer: Trailer,
    /// What could not be read, if anything: the records then hold only the
    /// good chunks, and the trailer's totals count those.
    pub damage: Option<Damage>,
    records_start: u64,
    records_end: u64,
    /// Damaged byte ranges among the records, skipped when reading.
    skipped: Vec<Range<u64>>,
    /// Where each good chunk starts.
    good_starts: Vec<u64>,
    /// The reader of a file in another format, which hands over the records
    /// instead of the chunks.
    source: Option<Box<dyn RecordSource>>,
    /// With `record --off-cpu`: the threads' stretches off the CPU, which
    /// its off-CPU and wall events are read from.
    pub(crate) off_cpu: Option<Arc<OffCpu>>,
}

impl Recording {
    /// Opens `path`, checks its signature, version, header and trailer, and
    /// every chunk's checksum.
    pub fn open(path: &Path) -> Result<Recording, RecordingError> {
        let open_error = |error| RecordingError::Open {
            path: path.to_owned(),
            error,
        };
        let file = open_regular(path).map_err(open_error)?;
        let metadata = file.metadata().map_err(open_error)?;
        let frame = Frame {
            path,
            file: &file,
            size: metadata.len(),
        };
        let (mut header, records_start) = frame.header()?;
        header.make_printable();
        let (end, trailer) = frame.trailer(records_start)?;
        let has_end_marker = end.is_some();
        let end = end.unwrap_or(frame.size);
        let map =
            scan(&file, records_start, end, has_end_marker).map_err(|e| frame.read_error(e))?;
        let trailer = match (&map.trailer, trailer) {
            (Some(bytes), _) => parse_trailer(bytes),
            (None, trailer) => trailer,
        };
        let ChunkMap {
            records_end,
            mut skipped,
            skipped_chunks,
            lost_tail,
            mut good_starts,
            records,
            frames_broken,
            ..
        } = map;
        let skipped_bytes = skipped.iter().map(|r| r.end - r.start).sum();
        // Samples in histogram mode are tallied, not written.
        let counted = trailer
            .as_ref()
            .filter(|_| header.histogram.is_none() && !frames_broken);
        let written = (trailer.as_ref().map_or(0, |t| t.record_chunks), counted);
        let (order, totals_differ) = check_chunks(&records, written, records_start..records_end);
        // A chunk's second copy is passed over, as a damaged chunk is.
        let repeated: HashSet<u64> = order.repeated.iter().map(|(.., r)| r.start).collect();
        good_starts.retain(|start| !repeated.contains(start));
        skipped.extend(order.repeated.iter().map(|(.., range)| range.clone()));
        skipped.sort_by_key(|range| range.start);
        let mut recording = Recording {
            path: path.to_owned(),
            header,
            trailer: Trailer::default(),
            damage: None,
            records_start,
            records_end,
            skipped,
            good_starts,
            source: None,
            off_cpu: None,
        };
        let ends_early = match (&trailer, has_end_marker) {
            (None, false) => Some(lost_tail.map_or(0, |tail| tail.end - tail.start)),
            _ => None,
        };
        let trailer_damaged = has_end_marker && trailer.is_none();
        match trailer {
            Some(trailer)
                if recording.skipped.is_empty()
                    && ends_early.is_none()
                    && order.is_empty()
                    && !totals_differ =>
            {
                recording.trailer = trailer;
            }
            trailer => {
                let lost = Lost {
                    ends_early,
                    skipped_chunks,
                    skipped_bytes,
                    trailer_damaged,
                    order,
                    totals_differ,
                };
                recording.salvage(trailer, lost)?;
            }
        }
        recording.read_off_cpu()?;
        Ok(recording)
    }

    /// With an off-CPU event, reads the threads' switches and counts the
    /// events read from them.
    fn read_off_cpu(&mut self) -> Result<(), RecordingError> {
        let Some(events) = OffCpuEvents::of(&self.header) else {
            return Ok(());
        };
        let mut builder = OffCpuBuilder::new(events);
        for record in self.side_band_records()? {
            builder.add(&record?);
        }
        let off_cpu = builder.build();
        off_cpu.fill_stats(&mut self.trailer.stats.events);
        self.off_cpu = Some(Arc::new(off_cpu));
        Ok(())
    }

    /// How each thread that switched spent its life (on the CPU, blocked,
    /// preempted), by process and thread: empty without `record --off-cpu`.
    pub fn thread_times(&self) -> &[ThreadTimes] {
        self.off_cpu.as_ref().map_or(&[], |o| o.threads())
    }

    /// The stretch thread `tid` spent off the CPU from `out` on: what a
    /// sample of the off-CPU event at that time stands for.
    pub fn off_cpu_stretch(&self, tid: u32, out: u64) -> Option<OffCpuStretch> {
        self.off_cpu.as_ref()?.stretch(tid, out)
    }

    /// The clock event whose samples the wall event takes, if it has one.
    pub fn wall_clock(&self) -> Option<usize> {
        let (_, clock) = self.off_cpu.as_ref()?.events.wall?;
        Some(usize::from(clock))
    }

    /// Switches whose other half is missing: the time around each is not
    /// counted.
    pub fn unpaired_switches(&self) -> u64 {
        self.off_cpu.as_ref().map_or(0, |o| o.unpaired)
    }

    /// A recording in another format, whose reader checked `path` and
    /// made its header and trailer.
    pub fn from_source(
        path: &Path,
        mut header: RecordingHeader,
        mut trailer: Trailer,
        source: Box<dyn RecordSource>,
    ) -> Recording {
        header.make_printable();
        trailer.make_printable();
        Recording {
            path: path.to_owned(),
            header,
            trailer,
            damage: None,
            records_start: 0,
            records_end: 0,
            skipped: Vec::new(),
            good_starts: Vec::new(),
            source: Some(source),
            off_cpu: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the chunks end and the trailer starts, in a profiler
    /// recording; `None` for other formats.
    pub(crate) fn chunks_end(&self) -> Option<u64> {
        self.source.is_none().then_some(self.records_end)
    }

    /// Fills `buf` from the file at `offset`.
    pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<(), RecordingError> {
        let read = |error| RecordingError::Read {
            path: self.path.clone(),
            error,
        };
        open_regular(&self.path)
            .and_then(|file| file.read_exact_at(buf, offset))
            .map_err(read)
    }

    /// Iterates over the records in file order (not time order), leaving
    /// out the damaged chunks.
    pub fn records(&self) -> Result<RecordStream, RecordingError> {
        if let Some(source) = &self.source {
            return Ok(RecordStream::Source(source.records()?));
        }
        Ok(RecordStream::Chunks(self.chunk_records(false)?))
    }

    /// Iterates over the records other than samples, in file order: the
    /// samples of a profiler recording are stepped over undecoded.
    pub fn side_band_records(&self) -> Result<RecordStream, RecordingError> {
        if let Some(source) = &self.source {
            return Ok(RecordStream::Source(source.records()?));
        }
        Ok(RecordStream::Chunks(self.chunk_records(true)?))
    }

    /// The records in up to `parts` stretches of whole chunks, of about
    /// equal size, in file order: to be read side by side. `None` for
    /// other formats, whose readers go through their files in one pass.
    pub fn records_in_parts(&self, parts: usize) -> Result<Option<Vec<Records>>, RecordingError> {
        if self.source.is_some() {
            return Ok(None);
        }
        let (start, end) = (self.records_start, self.records_end);
        let size = end.saturating_sub(start);
        let mut bounds = vec![start];
        for part in 1..parts.max(1) as u64 {
            let wanted = start + size / parts as u64 * part;
            let at = self.good_starts.partition_point(|&s| s < wanted);
            if let Some(&bound) = self.good_starts.get(at)
                && bound > *bounds.last().unwrap_or(&start)
            {
                bounds.push(bound);
            }
        }
        bounds.push(end);
        let mut records = Vec::new();
        for pair in bounds.windows(2) {
            let mut part = self.chunk_records(false)?;
            part.position = pair[0];
            part.end = pair[1];
            part.next_skipped = self.skipped.partition_point(|r| r.start < pair[0]);
            records.push(part);
        }
        Ok(Some(records))
    }

    fn chunk_records(&self, skip_samples: bool) -> Result<Records, RecordingError> {
        let file = open_regular(&self.path).map_err(|error| RecordingError::Open {
            path: self.path.clone(),
            error,
        })?;
        Ok(Records {
            path: self.path.clone(),
            file,
            position: self.records_start,
            end: self.records_end,
            skipped: self.skipped.clone(),
            next_skipped: 0,
            payload: Vec::new(),
            payload_len: 0,
            payload_offset: 0,
            compressed: None,
            cursor: 0,
            skip_samples,
        })
    }

    /// Counts what the good chunks hold and says what was lost.
    fn salvage(&mut self, written: Option<Trailer>, lost: Lost) -> Result<(), RecordingError> {
        let mut recount = Recount::new(self.header.events.len());
        recount.add_all(self.records()?)?;
        let histogram = self.header.histogram.is_some();
        let order = lost.order;
        self.damage = Some(Damage {
            ends_early: lost.ends_early,
            skipped_chunks: lost.skipped_chunks,
            skipped_bytes: lost.skipped_bytes,
            trailer_damaged: lost.trailer_damaged,
            samples_read: recount.samples(),
            samples_written: written.as_ref().map(|t| t.stats.total().samples),
            histogram,
            missing_chunks: order.missing,
            repeated_chunks: (order.repeated.into_iter())
                .map(|(number, samples, _)| (number, samples))
                .collect(),
            reordered_chunks: order.reordered,
            totals_differ: lost.totals_differ,
        });
        self.trailer = match written {
            // Samples in histogram mode are tallied, not written: the
            // trailer's totals are the only ones.
            Some(trailer) if histogram => trailer,
            written => recount.trailer(written),
        };
        Ok(())
    }
}

/// What the pass over the chunks found missing, to be counted.
struct Lost {
    ends_early: Option<u64>,
    skipped_chunks: u64,
    skipped_bytes: u64,
    trailer_damaged: bool,
    order: ChunkOrder,
    /// The trailer counts other samples than the chunks hold.
    totals_differ: bool,
}

/// The records of a [`Recording`], whatever its format.
pub enum RecordStream {
    /// A profiler recording's chunks.
    Chunks(Records),
    /// Another format's reader.
    Source(SourceRecords),
}

impl Iterator for RecordStream {
    type Item = Result<Record, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            RecordStream::Chunks(records) => records.next(),
            // Another format's strings, made printable as the codec makes
            // a profiler recording's.
            RecordStream::Source(records) => records.next().map(|record| {
                record.map(|mut record| {
                    record.make_printable();
                    record
                })
            }),
        }
    }
}

/// The records of a recording, in file order.
pub struct Records {
    path: PathBuf,
    file: File,
    /// The next chunk.
    position: u64,
    end: u64,
    skipped: Vec<Range<u64>>,
    /// The first of `skipped` not yet passed.
    next_skipped: usize,
    /// The current chunk's records (the first `payload_len` bytes: the
    /// buffer keeps its length from chunk to chunk, so that only its growth
    /// is zeroed before a read overwrites it), where they start in the
    /// file, and the next one's offset in them.
    payload: Vec<u8>,
    payload_len: usize,
    payload_offset: u64,
    /// For compressed chunks: the bytes read from the file, and the
    /// context that decompresses them into `payload`.
    compressed: Option<(Vec<u8>, Unpacker)>,
    cursor: usize,
    /// Step over samples without decoding them.
    skip_samples: bool,
}

impl Iterator for Records {
    type Item = Result<Record, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (tag, body) = match self.next_frame()? {
                Ok(frame) => frame,
                Err(e) => return Some(Err(e)),
            };
            if self.skip_samples && codec::is_sample(tag) {
                continue;
            }
            match codec::decode(tag, &self.payload[body.clone()]) {
                Ok(Some(record)) => return Some(Ok(record)),
                Ok(None) => continue,
                Err(what) => return Some(Err(self.corrupt(body.start - FRAME_HEADER_LEN, what))),
            }
        }
    }
}

impl Records {
    /// The next sample, decoded into `sample` (whose lists' memory is
    /// reused); other records are passed over.
    pub fn next_sample(&mut self, sample: &mut Sample) -> Option<Result<(), RecordingError>> {
        let next = self.next_sample_or_switch(sample, false)?;
        Some(next.map(drop))
    }

    /// The next sample, decoded into `sample` (then `Ok(None)`), or, with
    /// `switches`, the next switch, whichever comes first; other records
    /// are passed over.
    pub(crate) fn next_sample_or_switch(
        &mut self,
        sample: &mut Sample,
        switches: bool,
    ) -> Option<Result<Option<Switch>, RecordingError>> {
        loop {
            let (tag, body) = match self.next_frame()? {
                Ok(frame) => frame,
                Err(e) => return Some(Err(e)),
            };
            let payload = &self.payload[body.clone()];
            let decoded = if codec::is_sample(tag) {
                codec::decode_sample(payload, sample).map(|()| None)
            } else if switches && codec::is_switch(tag) {
                codec::decode_switch(payload).map(Some)
            } else {
                continue;
            };
            return Some(decoded.map_err(|what| self.corrupt(body.start - FRAME_HEADER_LEN, what)));
        }
    }

    /// The next record's tag, and where its body lies in the chunk.
    fn next_frame(&mut self) -> Option<Result<(u8, Range<usize>), RecordingError>> {
        while self.cursor >= self.payload_len {
            if self.position >= self.end {
                return None;
            }
            if let Err(e) = self.next_chunk() {
                return Some(Err(self.stop(e)));
            }
        }
        let start = self.cursor;
        let rest = &self.payload[start..self.payload_len];
        let Some(frame) = rest.first_chunk::<FRAME_HEADER_LEN>() else {
            let e = self.corrupt(start, "a record frame runs past the end of its chunk");
            return Some(Err(e));
        };
        let (tag, len) = codec::frame_header(*frame);
        let body = start + FRAME_HEADER_LEN..start + FRAME_HEADER_LEN + len as usize;
        if body.end > self.payload_len {
            let e = self.corrupt(start, "a record runs past the end of its chunk");
            return Some(Err(e));
        }
        self.cursor = body.end;
        Some(Ok((tag, body)))
    }

    /// The error of the damaged record whose frame is at `start`, which
    /// ends the iteration.
    fn corrupt(&mut self, start: usize, what: &str) -> RecordingError {
        // In a compressed chunk, the offset is the chunk's payload's, and
        // the record's place is in the decompressed records.
        let (offset, what) = match self.compressed {
            Some(_) => (
                self.payload_offset,
                format!("{what} (byte {start} of the chunk's decompressed records)"),
            ),
            None => (self.payload_offset + start as u64, what.to_owned()),
        };
        let error = RecordingError::Corrupt {
            path: self.path.clone(),
            offset,
            what,
        };
        self.stop(error)
    }

    /// Loads the next good chunk of records, stepping over damaged ranges
    /// and chunks of other kinds.
    fn next_chunk(&mut self) -> Result<(), RecordingError> {
        self.payload_len = 0;
        self.cursor = 0;
        if let Some(range) = self.skipped.get(self.next_skipped)
            && range.start == self.position
        {
            self.position = range.end;
            self.next_skipped += 1;
            return Ok(());
        }
        let changed = |path: &Path, offset| RecordingError::Corrupt {
            path: path.to_owned(),
            offset,
            what: "a chunk that was good when the file was opened is not: the file changed while \
                   being read"
                .to_owned(),
        };
        let mut bytes = [0; CHUNK_HEADER_LEN];
        self.read_at(&mut bytes, self.position)?;
        let header = ChunkHeader::decode(&bytes)
            .filter(|h| h.total_len() <= self.end - self.position)
            .ok_or_else(|| changed(&self.path, self.position))?;
        let payload_offset = self.position + CHUNK_HEADER_LEN as u64;
        let len = header.len as usize;
        if header.kind == ChunkKind::ZstdRecords && self.skip_samples {
            // A chunk of samples alone holds nothing for this pass: it is
            // not read, let alone decompressed.
            let mut prefix = [0; PREFIX_LEN];
            if len >= PREFIX_LEN {
                self.read_at(&mut prefix, payload_offset)?;
            }
            if holds_samples_only(&prefix[..len.min(PREFIX_LEN)]) {
                self.position += header.total_len();
                return Ok(());
            }
        }
        if header.kind == ChunkKind::ZstdRecords {
            let (mut raw, mut unpacker) =
                (self.compressed.take()).unwrap_or_else(|| (Vec::new(), Unpacker::new()));
            raw.resize(len, 0);
            let read = self.read_at(&mut raw, payload_offset);
            let unpacked = match read {
                Ok(()) if header.verifies(&raw) => unpacker
                    .unpack(&raw, &mut self.payload)
                    .map_err(|what| RecordingError::Corrupt {
                        path: self.path.clone(),
                        offset: payload_offset,
                        what: what.to_owned(),
                    }),
                Ok(()) => Err(changed(&self.path, self.position)),
                Err(e) => Err(e),
            };
            self.compressed = Some((raw, unpacker));
            self.payload_offset = payload_offset;
            self.position += header.total_len();
            self.payload_len = unpacked?;
            return Ok(());
        }
        if self.payload.len() < len {
            self.payload.resize(len, 0);
        }
        let mut payload = std::mem::take(&mut self.payload);
        self.read_at(&mut payload[..len], payload_offset)?;
        let verified = header.verifies(&payload[..len]);
        self.payload = payload;
        if !verified {
            return Err(changed(&self.path, self.position));
        }
        self.position += header.total_len();
        if header.kind == ChunkKind::Records {
            self.payload_len = len;
            self.payload_offset = payload_offset;
            self.compressed = None;
        }
        Ok(())
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<(), RecordingError> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|error| RecordingError::Read {
                path: self.path.clone(),
                error,
            })
    }

    /// Ends the iteration after an error.
    fn stop(&mut self, error: RecordingError) -> RecordingError {
        self.position = self.end;
        self.payload_len = 0;
        self.cursor = 0;
        error
    }
}

/// Positioned reads of the parts of the file that frame the records.
struct Frame<'a> {
    path: &'a Path,
    file: &'a File,
    size: u64,
}

impl Frame<'_> {
    /// The header, checked, and where the records start.
    fn header(&self) -> Result<(RecordingHeader, u64), RecordingError> {
        let truncated = || RecordingError::Truncated {
            path: self.path.to_owned(),
        };
        let preamble = self.read_at(0, PREAMBLE_LEN.min(self.size) as usize)?;
        if preamble.len() < 8 || &preamble[..8] != MAGIC {
            return Err(RecordingError::NotARecording {
                path: self.path.to_owned(),
            });
        }
        if preamble.len() < 12 {
            return Err(truncated());
        }
        let version = u32::from_le_bytes(le(&preamble[8..12]));
        if !(OLDEST_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(RecordingError::Version {
                path: self.path.to_owned(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if preamble.len() < PREAMBLE_LEN as usize {
            return Err(truncated());
        }
        let len = u64::from(u32::from_le_bytes(le(&preamble[12..16])));
        let checksum = u32::from_le_bytes(le(&preamble[16..20]));
        if len > MAX_METADATA_LEN {
            return Err(self.corrupt(12, &format!("the header claims {len} bytes")));
        }
        if self.size < PREAMBLE_LEN + len {
            return Err(truncated());
        }
        let bytes = self.read_at(PREAMBLE_LEN, len as usize)?;
        if crc32fast::hash(&bytes) != checksum {
            return Err(self.corrupt(PREAMBLE_LEN, "the header fails its checksum"));
        }
        let header = serde_json::from_slice(&bytes)
            .map_err(|e| self.corrupt(PREAMBLE_LEN, &format!("unreadable header: {e}")))?;
        Ok((header, PREAMBLE_LEN + len))
    }

    /// Where the end marker says the trailer starts, if it is there, and
    /// the trailer if it is good.
    fn trailer(
        &self,
        records_start: u64,
    ) -> Result<(Option<u64>, Option<Trailer>), RecordingError> {
        if self.size < records_start + FOOTER_LEN {
            return Ok((None, None));
        }
        let footer = self.read_at(self.size - FOOTER_LEN, FOOTER_LEN as usize)?;
        let start = u64::from_le_bytes(le(&footer[0..8]));
        let len = u64::from_le_bytes(le(&footer[8..16]));
        let fits = start >= records_start
            && (CHUNK_HEADER_LEN as u64..=MAX_METADATA_LEN).contains(&len)
            && start.checked_add(len) == Some(self.size - FOOTER_LEN);
        if &footer[16..24] != END_MAGIC || !fits {
            return Ok((None, None));
        }
        let chunk = self.read_at(start, len as usize)?;
        let trailer = ChunkHeader::decode(&chunk)
            .filter(|h| h.kind == ChunkKind::Trailer && h.verifies(&chunk[CHUNK_HEADER_LEN..]))
            .and_then(|_| parse_trailer(&chunk[CHUNK_HEADER_LEN..]));
        Ok((Some(start), trailer))
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>, RecordingError> {
        let mut buf = vec![0; len];
        self.file
            .read_exact_at(&mut buf, offset)
            .map_err(|e| self.read_error(e))?;
        Ok(buf)
    }

    fn read_error(&self, error: io::Error) -> RecordingError {
        RecordingError::Read {
            path: self.path.to_owned(),
            error,
        }
    }

    fn corrupt(&self, offset: u64, what: &str) -> RecordingError {
        RecordingError::Corrupt {
            path: self.path.to_owned(),
            offset,
            what: what.to_owned(),
        }
    }
}

/// A trailer whose checksum held but whose JSON does not parse is as lost
/// as a damaged one: its totals are recounted.
fn parse_trailer(bytes: &[u8]) -> Option<Trailer> {
    let mut trailer: Trailer = serde_json::from_slice(bytes).ok()?;
    trailer.make_printable();
    Some(trailer)
}

fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::address::{Avma, FileOffset};
    use crate::header::HostInfo;
    use crate::record::{CpuMode, Mmap, Sample};
    use crate::writer::{ChunkLimits, RecordSink, RecordingWriter};

    fn header() -> RecordingHeader {
        RecordingHeader {
            events: vec![],
            command: vec!["./app".into(), "arg".into()],
            program: None,
            user: None,
            histogram: None,
            call_graph: None,
            host: HostInfo::default(),
            job: None,
            start_unix_ns: 42,
            profiler_version: "test".into(),
        }
    }

    fn sample(i: u64) -> Record {
        Record::Sample(Sample {
            time: i + 1,
            pid: 1,
            tid: 1,
            cpu: 0,
            event: 0,
            mode: CpuMode::User,
            ip: Avma(0x1000 + i),
            period: 10,
            callchain: Vec::new(),
            user_stack: None,
            read: Vec::new(),
        })
    }

    fn path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("reader-{name}-{}.data", std::process::id()))
    }

    /// A mapping, then `count` samples, `per_batch` to a batch and each
    /// batch its own chunk.
    /// The records' chunks at compression `level`, 0 for plain.
    fn recording_bytes(count: u64, per_batch: u64, level: u8) -> Vec<u8> {
        let limits = ChunkLimits {
            bytes: 1,
            age: Duration::MAX,
            most_bytes: usize::MAX,
            compression_level: level,
        };
        let mut writer = RecordingWriter::with_limits(Vec::new(), &header(), limits).unwrap();
        writer
            .push(&Record::Mmap(Mmap {
                time: 1,
                pid: 1,
                tid: 1,
                start: Avma(0x1000),
                len: 0x1000,
                offset: FileOffset(0),
                path: "/bin/app".into(),
                build_id: None,
            }))
            .unwrap();
        for i in 0..count {
            writer.push(&sample(i)).unwrap();
            if (i + 1) % per_batch == 0 {
                writer.end_batch().unwrap();
            }
        }
        let trailer = Trailer {
            outcome: "exited with status 0".into(),
            ..Trailer::default()
        };
        writer.finish(trailer).unwrap()
    }

    /// Plain chunks, as format 2 has them, and compressed ones.
    const LEVELS: [u8; 2] = [0, 1];

    fn write_recording(name: &str, count: u64, level: u8) -> PathBuf {
        let path = path(name);
        std::fs::write(&path, recording_bytes(count, 1000, level)).unwrap();
        path
    }

    fn samples(recording: &Recording) -> Vec<Record> {
        (recording.records().unwrap())
            .map(Result::unwrap)
            .filter(|r| matches!(r, Record::Sample(_)))
            .collect()
    }

    /// The offsets at which the chunks after the header start, and where
    /// the records end (the trailer chunk's offset).
    fn chunk_starts(bytes: &[u8]) -> Vec<usize> {
        let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        let mut at = PREAMBLE_LEN as usize + header_len;
        let mut starts = vec![];
        while let Some(header) = ChunkHeader::decode(&bytes[at..]) {
            starts.push(at);
            if header.kind == ChunkKind::Trailer {
                break;
            }
            at += header.total_len() as usize;
        }
        starts
    }

    #[test]
    fn a_written_recording_reads_back_whole_and_twice() {
        for level in LEVELS {
            let path = write_recording("whole", 10_000, level);
            let recording = Recording::open(&path).unwrap();
            assert_eq!(recording.header, header());
            assert_eq!(recording.damage, None);
            assert_eq!(recording.trailer.stats.events[0].samples, 10_000);
            assert_eq!(recording.trailer.stats.events[0].period, 100_000);
            assert_eq!(recording.trailer.outcome, "exited with status 0");
            for _ in 0..2 {
                let samples = samples(&recording);
                assert_eq!(samples.len(), 10_000);
                assert_eq!(samples[9_999], sample(9_999));
            }
        }
    }

    #[test]
    fn every_cut_keeps_every_whole_chunk_before_it() {
        for level in LEVELS {
            let bytes = recording_bytes(12, 3, level);
            let starts = chunk_starts(&bytes);
            // The mapping and three samples, three chunks of three samples,
            // the trailer.
            assert_eq!(starts.len(), 5);
            let trailer_end = bytes.len() - FOOTER_LEN as usize;
            let path = path("cut");
            for len in 0..bytes.len() {
                std::fs::write(&path, &bytes[..len]).unwrap();
                let result = Recording::open(&path);
                if len < starts[0] {
                    let error = result.unwrap_err();
                    assert!(
                        matches!(
                            error,
                            RecordingError::Truncated { .. } | RecordingError::NotARecording { .. }
                        ),
                        "cut at {len}: {error}"
                    );
                    continue;
                }
                let recording = result.unwrap();
                let read = samples(&recording);
                if len >= trailer_end {
                    // Only the end marker is missing: nothing was lost.
                    assert_eq!(recording.damage, None, "cut at {len}");
                    assert_eq!(read.len(), 12, "cut at {len}");
                    assert_eq!(recording.trailer.outcome, "exited with status 0");
                    continue;
                }
                let whole = starts[1..].iter().filter(|&&end| end <= len).count();
                let good_end = if whole == 0 { starts[0] } else { starts[whole] };
                let expected: Vec<Record> = (0..3 * whole as u64).map(sample).collect();
                assert_eq!(read, expected, "cut at {len}");
                assert_eq!(recording.trailer.stats.total().samples, 3 * whole as u64);
                let damage = recording.damage.as_ref().unwrap();
                assert_eq!(damage.samples_read, 3 * whole as u64, "cut at {len}");
                assert_eq!(
                    damage.ends_early,
                    Some((len - good_end) as u64),
                    "cut at {len}"
                );
                assert_eq!(damage.skipped_chunks, 0, "cut at {len}");
                assert!(damage.to_string().starts_with("recording ends early"));
            }
        }
    }

    #[test]
    fn every_flipped_byte_is_caught_and_never_read_as_a_record() {
        for level in LEVELS {
            let bytes = recording_bytes(12, 3, level);
            let starts = chunk_starts(&bytes);
            let originals: Vec<Record> = (0..12).map(sample).collect();
            let path = path("flip");
            for at in 0..bytes.len() {
                let mut flipped = bytes.clone();
                flipped[at] ^= 0x5a;
                std::fs::write(&path, &flipped).unwrap();
                let Ok(recording) = Recording::open(&path) else {
                    assert!(at < starts[0], "byte {at} made the file unreadable");
                    continue;
                };
                let read = samples(&recording);
                assert!(
                    read.iter().all(|r| originals.contains(r)),
                    "byte {at}: a record that was never written"
                );
                let damage = recording.damage.clone().unwrap_or_default();
                if (starts[1]..starts[4]).contains(&at) {
                    // In a chunk of samples: that chunk alone is skipped.
                    assert_eq!(read.len(), 9, "byte {at}");
                    assert_eq!(damage.skipped_chunks, 1, "byte {at}");
                    assert_eq!(damage.samples_written, Some(12), "byte {at}");
                    assert!(
                        damage.to_string().contains("3 of 12 samples lost"),
                        "{damage}"
                    );
                } else if (starts[4]..bytes.len() - 24).contains(&at) {
                    assert!(damage.trailer_damaged, "byte {at}");
                    assert_eq!(read.len(), 12);
                    assert_eq!(recording.trailer.stats.events[0].samples, 12);
                } else if at >= starts[0] {
                    // The first chunk holds the mapping and three samples; a
                    // damaged end marker costs nothing.
                    assert!(read.len() >= 9, "byte {at}");
                }
            }
        }
    }

    #[test]
    fn records_read_in_parts_are_the_records_read_whole() {
        for level in LEVELS {
            let mut bytes = recording_bytes(30, 3, level);
            let starts = chunk_starts(&bytes);
            // A damaged chunk is skipped by whichever part holds it.
            bytes[starts[4] + 30] ^= 1;
            let path = path("parts");
            std::fs::write(&path, &bytes).unwrap();
            let recording = Recording::open(&path).unwrap();
            let whole = samples(&recording);
            assert_eq!(whole.len(), 27);
            for parts in 1..14 {
                let split = recording.records_in_parts(parts).unwrap().unwrap();
                assert!(split.len() <= parts);
                let read: Vec<Record> = (split.into_iter().flatten())
                    .map(Result::unwrap)
                    .filter(|r| matches!(r, Record::Sample(_)))
                    .collect();
                assert_eq!(read, whole, "{parts} parts");
            }
        }
    }

    #[test]
    fn neighbouring_damaged_chunks_are_each_counted_and_skipped() {
        for level in LEVELS {
            let mut bytes = recording_bytes(12, 3, level);
            let starts = chunk_starts(&bytes);
            bytes[starts[1] + 30] ^= 1;
            bytes[starts[2] + 2] ^= 1;
            let path = path("neighbours");
            std::fs::write(&path, &bytes).unwrap();
            let recording = Recording::open(&path).unwrap();
            let damage = recording.damage.clone().unwrap();
            assert_eq!(damage.skipped_chunks, 2);
            assert_eq!(damage.skipped_bytes, (starts[3] - starts[1]) as u64);
            let expected: Vec<Record> = [0, 1, 2, 9, 10, 11].into_iter().map(sample).collect();
            assert_eq!(samples(&recording), expected);
            assert!(
                damage.to_string().contains("6 of 12 samples lost"),
                "{damage}"
            );
        }
    }

    #[test]
    fn foreign_files_and_other_versions_are_named_as_such() {
        let path = write_recording("foreign", 1, 0);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[8] = 1;
        std::fs::write(&path, &bytes).unwrap();
        let error = Recording::open(&path).unwrap_err();
        assert!(
            matches!(
                error,
                RecordingError::Version {
                    found: 1,
                    supported: 3,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("record it again"), "{error}");

        std::fs::write(
            &path,
            b"\x7fELF not a recording at all, but long enough to look",
        )
        .unwrap();
        let error = Recording::open(&path).unwrap_err();
        assert!(
            matches!(error, RecordingError::NotARecording { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("profiler record"), "{error}");

        let missing = path.with_extension("missing");
        let error = Recording::open(&missing).unwrap_err();
        assert!(error.to_string().contains("No such file"), "{error}");
        assert!(error.to_string().contains("-i FILE"), "{error}");
    }

    #[test]
    fn a_good_chunk_with_a_bad_record_is_reported_with_its_offset() {
        let mut bytes = recording_bytes(3, 3, 0);
        let at = chunk_starts(&bytes)[0];
        let payload = at + CHUNK_HEADER_LEN;
        // Claim a record far longer than its chunk, and make the checksums
        // agree, as a crafted file would.
        bytes[payload + 1..payload + 5].copy_from_slice(&u32::MAX.to_le_bytes());
        let len = ChunkHeader::decode(&bytes[at..]).unwrap().len as usize;
        let header = ChunkHeader::encode(ChunkKind::Records, 1, &bytes[payload..payload + len]);
        bytes[at..payload].copy_from_slice(&header);
        let path = path("crafted");
        std::fs::write(&path, &bytes).unwrap();
        let recording = Recording::open(&path).unwrap();
        let results: Vec<_> = recording.records().unwrap().collect();
        assert_eq!(results.len(), 1);
        let error = results[0].as_ref().unwrap_err();
        assert!(
            error.to_string().contains(&format!("byte {payload}")),
            "{error}"
        );
    }

    #[test]
    fn a_compressed_chunk_whose_checksums_hold_but_whose_size_lies_is_refused() {
        let bytes = recording_bytes(300, 300, 1);
        let at = chunk_starts(&bytes)[0];
        let header = ChunkHeader::decode(&bytes[at..]).unwrap();
        assert_eq!(header.kind, ChunkKind::ZstdRecords);
        let payload = at + CHUNK_HEADER_LEN;
        let declared = u32::from_le_bytes(bytes[payload..payload + 4].try_into().unwrap());
        let path = path("lying");
        // Fewer bytes than the frame holds, more, and far more than any
        // chunk may hold; the checksums made to agree, as a crafted file
        // would.
        for claim in [declared - 1, declared + 1, u32::MAX] {
            let mut crafted = bytes.clone();
            crafted[payload..payload + 4].copy_from_slice(&claim.to_le_bytes());
            let len = header.len as usize;
            let new = ChunkHeader::encode(
                ChunkKind::ZstdRecords,
                header.number,
                &crafted[payload..payload + len],
            );
            crafted[at..payload].copy_from_slice(&new);
            std::fs::write(&path, &crafted).unwrap();
            let recording = Recording::open(&path).unwrap();
            let results: Vec<_> = recording.records().unwrap().collect();
            assert_eq!(results.len(), 1, "claim {claim}");
            let error = results[0].as_ref().unwrap_err().to_string();
            assert!(error.contains(&format!("byte {payload}")), "{error}");
            assert!(error.contains("compressed chunk"), "{error}");
        }
    }

    #[test]
    fn a_pass_over_side_band_records_finds_them_whether_or_not_it_reads_every_chunk() {
        for level in LEVELS {
            // The mapping in the first chunk, then chunks of samples alone,
            // which compressed are stepped over unread.
            let path = path("side-band");
            std::fs::write(&path, recording_bytes(30, 3, level)).unwrap();
            let recording = Recording::open(&path).unwrap();
            let side_band: Vec<Record> = (recording.side_band_records().unwrap())
                .map(Result::unwrap)
                .collect();
            assert_eq!(side_band.len(), 1, "level {level}");
            assert!(matches!(side_band[0], Record::Mmap(_)), "level {level}");
            assert_eq!(samples(&recording).len(), 30, "level {level}");
        }
    }
}
