//! Chunks of records compressed with zstd: what `record` writes unless told
//! not to (`--compression-level=0`). Each chunk is compressed on its own, so
//! a damaged chunk costs only itself and the chunks are still read side by
//! side.
//!
//! ```text
//! offset 0   records length D    u32 little-endian: the bytes the frame
//!                                decompresses to, at most 16 MiB
//!        4   samples             u32: the samples among the records
//!        8   others              u32: the records other than samples
//!       12   zstd frame          the rest of the payload
//! ```
//!
//! A reader trusts none of the numbers with memory: it refuses a length
//! over the limit before decompressing, decompresses into exactly D bytes,
//! and takes the chunk as corrupt if the frame holds more or less. The
//! counts spare decompressing: the sample count stands in for counting the
//! records when the file is opened, and a pass over the records other than
//! samples steps over a chunk that holds none without reading it.

use zstd_safe::{CCtx, DCtx};

use crate::chunk::{CHUNK_HEADER_LEN, ChunkHeader, ChunkKind};

/// The level `record` compresses at: perf's `-z`. On the recordings of the
/// split fixture at 10 kHz, level 3 was 1 to 12% smaller at about 1.6 times
/// the CPU, and level 1 already an eighth of perf.data's size or less.
pub const DEFAULT_COMPRESSION_LEVEL: u8 = 1;
/// zstd's highest level.
pub const MAX_COMPRESSION_LEVEL: u8 = 22;
/// The most bytes of records one compressed chunk may hold; a chunk of more
/// (one holding a histogram of a huge text segment) is written plain. The
/// writer cuts chunks at 4 MiB within a batch, so only such records pass it.
pub(crate) const MAX_RECORDS_LEN: usize = 16 << 20;
/// Bytes before the frame.
pub(crate) const PREFIX_LEN: usize = 12;

/// Compresses chunks, one context reused for all.
pub(crate) struct Packer {
    context: CCtx<'static>,
    level: i32,
    /// The compressed chunk being made, header first.
    packed: Vec<u8>,
}

impl Packer {
    /// A packer at `level` (1 to 22); `None` for level 0, plain chunks.
    pub(crate) fn new(level: u8) -> Option<Packer> {
        (level > 0).then(|| Packer {
            context: CCtx::create(),
            level: i32::from(level.min(MAX_COMPRESSION_LEVEL)),
            packed: Vec::new(),
        })
    }

    /// The compressed chunk numbered `number`, header and all, of
    /// `records`, which hold `counts.0` samples and `counts.1` other
    /// records; `None` where compressing does not pay or the records are
    /// too many, and the chunk is written plain.
    pub(crate) fn pack(
        &mut self,
        records: &[u8],
        counts: (u64, u64),
        number: u32,
    ) -> Option<&[u8]> {
        if records.len() > MAX_RECORDS_LEN {
            return None;
        }
        let samples = u32::try_from(counts.0).ok()?;
        let others = u32::try_from(counts.1).ok()?;
        let frame_start = CHUNK_HEADER_LEN + PREFIX_LEN;
        let bound = zstd_safe::compress_bound(records.len());
        self.packed.resize(frame_start + bound, 0);
        let len = (self.context)
            .compress(&mut self.packed[frame_start..], records, self.level)
            .ok()?;
        if PREFIX_LEN + len >= records.len() {
            return None;
        }
        let chunk = &mut self.packed[..frame_start + len];
        let (header, payload) = chunk.split_at_mut(CHUNK_HEADER_LEN);
        payload[..4].copy_from_slice(&(records.len() as u32).to_le_bytes());
        payload[4..8].copy_from_slice(&samples.to_le_bytes());
        payload[8..PREFIX_LEN].copy_from_slice(&others.to_le_bytes());
        header.copy_from_slice(&ChunkHeader::encode(
            ChunkKind::ZstdRecords,
            number,
            payload,
        ));
        Some(chunk)
    }
}

/// The samples a compressed chunk's payload says it holds; `None` if its
/// prefix is missing or claims more records than a chunk may hold.
pub(crate) fn declared_samples(payload: &[u8]) -> Option<u64> {
    let (len, samples, _) = prefix(payload)?;
    (len <= MAX_RECORDS_LEN).then_some(u64::from(samples))
}

/// Whether a compressed chunk whose payload starts with `prefix` says it
/// holds samples only.
pub(crate) fn holds_samples_only(prefix: &[u8]) -> bool {
    self::prefix(prefix).is_some_and(|(.., others)| others == 0)
}

/// The records' length, samples and other records a payload declares.
fn prefix(payload: &[u8]) -> Option<(usize, u32, u32)> {
    let prefix = payload.first_chunk::<PREFIX_LEN>()?;
    let word = |at: usize| {
        u32::from_le_bytes([prefix[at], prefix[at + 1], prefix[at + 2], prefix[at + 3]])
    };
    Some((word(0) as usize, word(4), word(8)))
}

/// Decompresses chunks, one context reused for all.
pub(crate) struct Unpacker {
    context: DCtx<'static>,
}

impl Unpacker {
    pub(crate) fn new() -> Unpacker {
        Unpacker {
            context: DCtx::create(),
        }
    }

    /// Decompresses the chunk `payload` into the first bytes of `out`
    /// (grown as needed, never past [`MAX_RECORDS_LEN`]) and returns how
    /// many; an error says what is wrong with the chunk.
    pub(crate) fn unpack(
        &mut self,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize, &'static str> {
        let (len, ..) = prefix(payload).ok_or("a compressed chunk is too short for its prefix")?;
        if len > MAX_RECORDS_LEN {
            return Err("a compressed chunk claims more than 16 MiB of records");
        }
        if out.len() < len {
            out.resize(len, 0);
        }
        match self
            .context
            .decompress(&mut out[..len], &payload[PREFIX_LEN..])
        {
            Ok(written) if written == len => Ok(len),
            Ok(_) => Err("a compressed chunk holds fewer bytes of records than it claims"),
            Err(_) => Err(
                "a compressed chunk does not decompress into the records it claims (a bad zstd \
                 frame, or more bytes than it claims)",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records() -> Vec<u8> {
        (0..20_000u32)
            .flat_map(|i| (i % 97).to_le_bytes())
            .collect()
    }

    #[test]
    fn a_packed_chunk_unpacks_to_its_records_and_says_its_samples() {
        let records = records();
        let mut packer = Packer::new(DEFAULT_COMPRESSION_LEVEL).unwrap();
        let chunk = packer.pack(&records, (123, 0), 9).unwrap().to_vec();
        let header = ChunkHeader::decode(&chunk).unwrap();
        assert_eq!((header.kind, header.number), (ChunkKind::ZstdRecords, 9));
        let packed = &chunk[CHUNK_HEADER_LEN..];
        assert!(header.verifies(packed));
        assert!(packed.len() * 10 < records.len(), "{} bytes", packed.len());
        assert_eq!(declared_samples(packed), Some(123));
        assert!(holds_samples_only(packed));
        let with_others = packer.pack(&records, (1, 2), 9).unwrap();
        assert!(!holds_samples_only(&with_others[CHUNK_HEADER_LEN..]));
        let mut out = vec![7; 3];
        let len = Unpacker::new().unpack(packed, &mut out).unwrap();
        assert_eq!(&out[..len], &records[..]);
        assert!(Packer::new(0).is_none());
    }

    #[test]
    fn what_does_not_shrink_or_is_too_long_is_left_plain() {
        let mut packer = Packer::new(3).unwrap();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        assert!(packer.pack(&noise, (1, 0), 1).is_none());
        assert!(
            packer
                .pack(&vec![0; MAX_RECORDS_LEN + 1], (1, 0), 1)
                .is_none()
        );
    }

    #[test]
    fn a_lying_prefix_or_a_bad_frame_is_refused_without_growing_past_the_limit() {
        let records = records();
        let mut packer = Packer::new(1).unwrap();
        let packed = packer.pack(&records, (1, 0), 1).unwrap()[CHUNK_HEADER_LEN..].to_vec();
        let mut unpacker = Unpacker::new();
        let mut out = Vec::new();
        let with_len = |len: u32| {
            let mut bytes = packed.clone();
            bytes[..4].copy_from_slice(&len.to_le_bytes());
            bytes
        };
        // Claims fewer bytes than the frame holds: the frame would write
        // past them, and is stopped.
        let short = with_len(records.len() as u32 - 1);
        assert!(unpacker.unpack(&short, &mut out).is_err());
        assert!(out.len() < records.len());
        let long = with_len(records.len() as u32 + 1);
        assert!(unpacker.unpack(&long, &mut out).is_err());
        let huge = with_len(u32::MAX);
        assert!(unpacker.unpack(&huge, &mut out).is_err());
        assert!(out.len() <= MAX_RECORDS_LEN);
        assert_eq!(declared_samples(&huge), None);
        let mut broken = packed.clone();
        let middle = broken.len() / 2;
        broken[middle] ^= 0xff;
        broken.truncate(broken.len() - 3);
        assert!(unpacker.unpack(&broken, &mut out).is_err());
        assert!(unpacker.unpack(&packed[..5], &mut out).is_err());
        // The context is still good after the errors.
        let len = unpacker.unpack(&packed, &mut out).unwrap();
        assert_eq!(&out[..len], &records[..]);
    }
}
