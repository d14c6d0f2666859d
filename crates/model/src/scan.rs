//! One pass over a recording's chunks when it is opened: which are good,
//! which failed their checksums, where the readable part ends, and the
//! trailer chunk when the end marker that points at it was lost.
//!
//! A chunk whose header holds but whose payload fails its checksum is
//! skipped by the length its header gives. After a damaged header the next
//! chunk is found by its magic and header checksum; each byte is searched
//! once, so a hostile file costs time in proportion to its size.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;

use crate::chunk::{CHUNK_HEADER_LEN, CHUNK_MAGIC, ChunkHeader, ChunkKind};
use crate::chunk_order::SeenChunk;
use crate::codec;
use crate::compression::declared_samples;

/// What the pass found between the header and the end of the records.
#[derive(Debug, Default)]
pub(crate) struct ChunkMap {
    /// Where the readable records end.
    pub records_end: u64,
    /// Damaged byte ranges before `records_end`, to be skipped, in order;
    /// neighbours are merged.
    pub skipped: Vec<Range<u64>>,
    /// Damaged chunks (or stretches between good ones) in `skipped`.
    pub skipped_chunks: u64,
    /// The unreadable end of a file without its end marker: from there on,
    /// nothing is a whole chunk.
    pub lost_tail: Option<Range<u64>>,
    /// A trailer chunk's payload met on the way (where the end marker
    /// was lost but the trailer was written).
    pub trailer: Option<Vec<u8>>,
    /// Where each good chunk starts, in order: where a reader may start
    /// reading part of the records.
    pub good_starts: Vec<u64>,
    /// The good chunks of records, in order, with their numbers and
    /// samples.
    pub records: Vec<SeenChunk>,
    /// A good chunk's records do not fill it: reading stops there with an
    /// error, and its samples cannot be counted.
    pub frames_broken: bool,
}

/// Walks the chunks in `start..end`. With `has_end_marker`, `end` is where
/// the trailer starts and damage before it is skipped; without, damage that
/// reaches `end` is the lost end of the file, and a trailer chunk ends the
/// records.
pub(crate) fn scan(
    file: &File,
    start: u64,
    end: u64,
    has_end_marker: bool,
) -> io::Result<ChunkMap> {
    let mut map = ChunkMap::default();
    let mut payload = Vec::new();
    let mut position = start;
    while position < end {
        let header = read_header(file, position, end)?;
        match header.filter(|h| h.total_len() <= end - position) {
            Some(header) => {
                let next = position + header.total_len();
                payload.resize(header.len as usize, 0);
                file.read_exact_at(&mut payload, position + CHUNK_HEADER_LEN as u64)?;
                if !header.verifies(&payload) {
                    map.skip(position..next, end, has_end_marker);
                } else if header.kind == ChunkKind::Trailer && !has_end_marker {
                    map.trailer = Some(std::mem::take(&mut payload));
                    map.records_end = position;
                    return Ok(map);
                } else {
                    map.good_starts.push(position);
                    if header.kind.holds_records() {
                        // A compressed chunk's samples are taken as it
                        // says: decompressing here would be done again by
                        // every pass over the records.
                        let samples = match header.kind {
                            ChunkKind::ZstdRecords => declared_samples(&payload),
                            _ => codec::count_samples(&payload),
                        };
                        map.frames_broken |= samples.is_none();
                        map.records.push(SeenChunk {
                            range: position..next,
                            number: header.number,
                            samples: samples.unwrap_or(0),
                        });
                    }
                }
                position = next;
            }
            None => {
                let next = find_chunk(file, position + 1, end)?.unwrap_or(end);
                map.skip(position..next, end, has_end_marker);
                position = next;
            }
        }
    }
    map.records_end = map.lost_tail.as_ref().map_or(end, |tail| tail.start);
    Ok(map)
}

impl ChunkMap {
    /// Notes a damaged range; without an end marker, damage that reaches
    /// the end is the lost end of the file.
    fn skip(&mut self, range: Range<u64>, end: u64, has_end_marker: bool) {
        if !has_end_marker && range.end == end {
            self.lost_tail = Some(range);
            return;
        }
        self.skipped_chunks += 1;
        match self.skipped.last_mut() {
            Some(last) if last.end == range.start => last.end = range.end,
            _ => self.skipped.push(range),
        }
    }
}

/// The valid chunk header at `position`, if one is there whole.
fn read_header(file: &File, position: u64, end: u64) -> io::Result<Option<ChunkHeader>> {
    if end - position < CHUNK_HEADER_LEN as u64 {
        return Ok(None);
    }
    let mut bytes = [0; CHUNK_HEADER_LEN];
    file.read_exact_at(&mut bytes, position)?;
    Ok(ChunkHeader::decode(&bytes))
}

/// Bytes searched at a time for the next chunk.
const WINDOW: usize = 64 << 10;

/// The offset of the first valid chunk header in `from..end`.
fn find_chunk(file: &File, from: u64, end: u64) -> io::Result<Option<u64>> {
    let mut window = vec![0; WINDOW + CHUNK_HEADER_LEN];
    let mut base = from;
    while base < end {
        let len = (end - base).min(window.len() as u64) as usize;
        file.read_exact_at(&mut window[..len], base)?;
        let searched = len.min(WINDOW);
        let found = (0..searched).find(|&i| {
            window[i..len].starts_with(CHUNK_MAGIC)
                && ChunkHeader::decode(&window[i..len]).is_some()
        });
        if let Some(i) = found {
            return Ok(Some(base + i as u64));
        }
        if len < window.len() {
            // The window reached `end`: a header starting in its last
            // bytes would not fit whole.
            return Ok(None);
        }
        base += WINDOW as u64;
    }
    Ok(None)
}
