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
mod tests;
