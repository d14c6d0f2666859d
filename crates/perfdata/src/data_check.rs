//! One pass over the record headers of the data section before
//! linux-perf-data reads them, for what it would trust:
//!
//! - a `PERF_RECORD_AUXTRACE` record's payload follows it, of a u64 size
//!   that the reader allocates before reading: it must lie in the section;
//! - records are sorted a round at a time (between `FINISHED_ROUND`
//!   records), all of a round held in memory: a round must fit a budget,
//!   compressed records counted as what they decompress to (a few bytes of
//!   zstd can claim gigabytes).
//!
//! Every other record is at most 64 KiB, its size being a u16.

use zstd_safe::{DCtx, InBuffer, OutBuffer};

use crate::error::Refusal;
use crate::layout::{Reader, Section};

const HEADER_LEN: u64 = 8;
const FINISHED_ROUND: u32 = 68;
const AUXTRACE: u32 = 71;
const COMPRESSED: u32 = 81;
const COMPRESSED2: u32 = 83;

/// What the reader may hold of one round: its records' bytes and, for
/// each, this much of bookkeeping. It holds two rounds at most. perf
/// ends a round each time it has emptied every ring buffer, a few
/// megabytes per CPU.
pub(crate) const ROUND_BUDGET: u64 = 256 << 20;
/// Compressed records may inflate to this many times their bytes, and
/// 256 MiB more: perf's zstd makes records some 3 to 30 times smaller,
/// and a crafted stream of kilobytes can stand for gigabytes.
const MAX_INFLATION: u64 = 256;
const RECORD_OVERHEAD: u64 = 256;

/// Bytes read at a time.
const WINDOW: u64 = 1 << 20;

/// What the pass found.
#[derive(Debug, Default)]
pub(crate) struct DataSummary {
    /// AUX area records (`AUXTRACE`) and the bytes of trace they carry.
    pub auxtrace_records: u64,
    pub auxtrace_bytes: u64,
}

/// Walks the records of `data`; a round may cost `budget` bytes.
pub(crate) fn check_records(
    reader: &Reader<'_>,
    data: Section,
    budget: u64,
) -> Result<DataSummary, Refusal> {
    let end = data.offset + data.size;
    let mut walk = Walk {
        reader,
        window: Vec::new(),
        window_start: data.offset,
        round: Round::new(budget),
        decompressor: None,
        compressed: 0,
        inflated: 0,
    };
    let mut summary = DataSummary::default();
    let mut at = data.offset;
    while at < end {
        let header = walk.bytes(at, HEADER_LEN.min(end - at))?;
        if header.len() < HEADER_LEN as usize {
            return Err(past_end(at));
        }
        let kind = reader.u32(&header, 0);
        let size = u64::from(u16::from_le_bytes([header[6], header[7]]));
        let size = match reader.big_endian {
            true => size.swap_bytes() >> 48,
            false => size,
        };
        if size < HEADER_LEN {
            return Err(Refusal::Corrupt(format!(
                "its record at byte {at} claims a size of {size} bytes"
            )));
        }
        let body_end = at.checked_add(size).filter(|&e| e <= end);
        let body_end = body_end.ok_or_else(|| past_end(at))?;
        let mut next = body_end;
        match kind {
            FINISHED_ROUND => walk.round = Round::new(budget),
            AUXTRACE => {
                let body = walk.bytes(at + HEADER_LEN, 8.min(size - HEADER_LEN))?;
                let payload = match body.len() {
                    8 => reader.u64(&body, 0),
                    _ => 0,
                };
                next = body_end
                    .checked_add(payload)
                    .filter(|&e| e <= end)
                    .ok_or_else(|| {
                        Refusal::Corrupt(format!(
                            "its AUX trace record at byte {at} claims {payload} bytes of trace, \
                         beyond the end of its data"
                        ))
                    })?;
                summary.auxtrace_records += 1;
                summary.auxtrace_bytes += payload;
                walk.round.add(1, size, at)?;
            }
            COMPRESSED | COMPRESSED2 => {
                let body = walk.bytes(at + HEADER_LEN, size - HEADER_LEN)?;
                let compressed = match kind {
                    COMPRESSED2 if body.len() >= 8 => {
                        let len = reader.u64(&body, 0).min(body.len() as u64 - 8);
                        body[8..8 + len as usize].to_vec()
                    }
                    _ => body,
                };
                walk.decompress(&compressed, at)?;
            }
            _ => walk.round.add(1, size, at)?,
        }
        at = next;
    }
    Ok(summary)
}

fn past_end(at: u64) -> Refusal {
    Refusal::Truncated(format!(
        "its record at byte {at} runs past the end of its data section"
    ))
}

/// The records of the round being read, as the reader would hold them.
struct Round {
    records: u64,
    cost: u64,
    budget: u64,
}

impl Round {
    fn new(budget: u64) -> Round {
        Round {
            records: 0,
            cost: 0,
            budget,
        }
    }

    fn add(&mut self, records: u64, bytes: u64, at: u64) -> Result<(), Refusal> {
        self.records += records;
        self.cost = self
            .cost
            .saturating_add(bytes)
            .saturating_add(records * RECORD_OVERHEAD);
        if self.cost > self.budget {
            return Err(Refusal::Corrupt(format!(
                "the round of records that reaches byte {at} holds {} records, more than fit \
                 the {} MiB it may take to sort them",
                self.records,
                self.budget >> 20
            )));
        }
        Ok(())
    }
}

/// Reads the data section through a window, and follows the records
/// inside compressed ones.
struct Walk<'a> {
    reader: &'a Reader<'a>,
    window: Vec<u8>,
    window_start: u64,
    round: Round,
    /// The decompression stream, shared by every compressed record as in
    /// perf, and what it gave that is not yet a whole record.
    decompressor: Option<(DCtx<'static>, Vec<u8>)>,
    /// Bytes of compressed records so far, and what they inflated to.
    compressed: u64,
    inflated: u64,
}

impl Walk<'_> {
    /// `len` bytes at `at`, from the window, which moves to `at` when it
    /// does not hold them.
    fn bytes(&mut self, at: u64, len: u64) -> Result<Vec<u8>, Refusal> {
        let start = at - self.window_start.min(at);
        let held = at >= self.window_start && start + len <= self.window.len() as u64;
        if !held {
            let want = WINDOW.max(len).min(self.reader.size.saturating_sub(at));
            self.window = self.reader.bytes(at, want)?;
            self.window_start = at;
        }
        let start = (at - self.window_start) as usize;
        Ok(self.window[start..start + len as usize].to_vec())
    }

    /// Decompresses the payload of the compressed record at `at`, and
    /// counts each record it completes in the round.
    fn decompress(&mut self, compressed: &[u8], at: u64) -> Result<(), Refusal> {
        let (context, pending) = self
            .decompressor
            .get_or_insert_with(|| (DCtx::create(), Vec::new()));
        let mut input = InBuffer::around(compressed);
        let mut buffer = vec![0; WINDOW as usize];
        loop {
            let mut output = OutBuffer::around(&mut buffer[..]);
            context
                .decompress_stream(&mut output, &mut input)
                .map_err(|code| {
                    Refusal::Corrupt(format!(
                        "its compressed record at byte {at} does not decompress: {}",
                        zstd_safe::get_error_name(code)
                    ))
                })?;
            let produced = output.pos();
            self.inflated += produced as u64;
            let most = (self.compressed.saturating_add(compressed.len() as u64))
                .saturating_mul(MAX_INFLATION)
                .saturating_add(256 << 20);
            if self.inflated > most {
                return Err(Refusal::Corrupt(format!(
                    "its compressed records up to byte {at} inflate to more than {MAX_INFLATION} \
                     times their size, as no perf.data does"
                )));
            }
            pending.extend_from_slice(&buffer[..produced]);
            let mut consumed = 0;
            while let Some(header) = pending.get(consumed..consumed + HEADER_LEN as usize) {
                let size = u16::from_le_bytes([header[6], header[7]]);
                let size = match self.reader.big_endian {
                    true => size.swap_bytes(),
                    false => size,
                } as usize;
                if size < HEADER_LEN as usize {
                    return Err(Refusal::Corrupt(format!(
                        "its compressed record at byte {at} holds a record of {size} bytes"
                    )));
                }
                if pending.len() - consumed < size {
                    break;
                }
                self.round.add(1, size as u64, at)?;
                consumed += size;
            }
            pending.drain(..consumed);
            if produced < buffer.len() && input.pos() == compressed.len() {
                self.compressed += compressed.len() as u64;
                return Ok(());
            }
        }
    }
}
