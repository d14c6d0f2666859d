//! Chunks: the units in which a recording's records and trailer are written.
//! Each says how long it is and carries checksums, so that a reader trusts
//! what it reads, skips what was damaged, and finds the next chunk after a
//! damaged header by its magic.
//!
//! ```text
//! offset 0   "CHNK"              magic, 4 bytes
//!        4   kind                u8: 1 records, 2 trailer, 3 archive, 4
//!                                records compressed with zstd (see
//!                                compression.rs); others are skipped
//!        5   number              u24 little-endian: records chunks are
//!                                numbered from 1 (after 2^24-1, 1 again), so
//!                                that one missing, repeated or out of place
//!                                is seen; 0 in other chunks, and in every
//!                                chunk of recordings made before
//!        8   payload length L    u32 little-endian
//!       12   payload checksum    u32, CRC-32 of the L payload bytes
//!       16   header checksum     u32, CRC-32 of bytes 0..16
//!       20   payload             L bytes
//! ```
//!
//! A records chunk holds whole records (see codec.rs), never part of one;
//! a compressed one holds them in a zstd frame, and its checksum is that of
//! the compressed bytes, so that damage is found before decompressing.

pub(crate) const CHUNK_MAGIC: &[u8; 4] = b"CHNK";
pub(crate) const CHUNK_HEADER_LEN: usize = 20;
/// The numbers of records chunks run from 1 to this, then again from 1.
pub(crate) const CHUNK_NUMBERS: u64 = (1 << 24) - 1;

/// The number the `count`th records chunk (from 1) carries.
pub(crate) fn chunk_number(count: u64) -> u32 {
    ((count.max(1) - 1) % CHUNK_NUMBERS + 1) as u32
}

/// What a chunk's payload holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChunkKind {
    Records,
    /// Records in a zstd frame (see compression.rs).
    ZstdRecords,
    Trailer,
    /// A part of the recording's archive (see archive.rs), found through
    /// the trailer: the chunk walk steps over it.
    Archive,
    /// A kind this version does not know: skipped.
    Other,
}

impl ChunkKind {
    fn byte(self) -> u8 {
        match self {
            ChunkKind::Records => 1,
            ChunkKind::Trailer => 2,
            ChunkKind::Archive => 3,
            ChunkKind::ZstdRecords => 4,
            ChunkKind::Other => 0,
        }
    }

    fn from_byte(byte: u8) -> ChunkKind {
        match byte {
            1 => ChunkKind::Records,
            2 => ChunkKind::Trailer,
            3 => ChunkKind::Archive,
            4 => ChunkKind::ZstdRecords,
            _ => ChunkKind::Other,
        }
    }

    /// Whether the chunk holds records, plain or compressed: these are
    /// numbered.
    pub(crate) fn holds_records(self) -> bool {
        matches!(self, ChunkKind::Records | ChunkKind::ZstdRecords)
    }
}

/// A chunk's header, read back with its own checksum verified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChunkHeader {
    pub kind: ChunkKind,
    pub len: u32,
    /// For records, from 1; else 0.
    pub number: u32,
    checksum: u32,
}

impl ChunkHeader {
    /// The header for `payload`, the chunk numbered `number` (0 for
    /// chunks other than records).
    pub(crate) fn encode(kind: ChunkKind, number: u32, payload: &[u8]) -> [u8; CHUNK_HEADER_LEN] {
        let mut header = [0; CHUNK_HEADER_LEN];
        header[..4].copy_from_slice(CHUNK_MAGIC);
        header[4] = kind.byte();
        header[5..8].copy_from_slice(&number.to_le_bytes()[..3]);
        header[8..12].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        header[12..16].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
        let own = crc32fast::hash(&header[..16]);
        header[16..20].copy_from_slice(&own.to_le_bytes());
        header
    }

    /// The header in `bytes`, if its magic and checksum hold.
    pub(crate) fn decode(bytes: &[u8]) -> Option<ChunkHeader> {
        let bytes = bytes.get(..CHUNK_HEADER_LEN)?;
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        if &bytes[..4] != CHUNK_MAGIC || crc32fast::hash(&bytes[..16]) != word(16) {
            return None;
        }
        Some(ChunkHeader {
            kind: ChunkKind::from_byte(bytes[4]),
            len: word(8),
            number: u32::from_le_bytes([bytes[5], bytes[6], bytes[7], 0]),
            checksum: word(12),
        })
    }

    /// Bytes of the whole chunk, header included.
    pub(crate) fn total_len(&self) -> u64 {
        CHUNK_HEADER_LEN as u64 + u64::from(self.len)
    }

    /// Whether `payload` is the one this header was written for.
    pub(crate) fn verifies(&self, payload: &[u8]) -> bool {
        payload.len() == self.len as usize && crc32fast::hash(payload) == self.checksum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_any_flipped_bit_is_caught() {
        let payload = b"some records";
        let header = ChunkHeader::encode(ChunkKind::Records, 0x12_3456, payload);
        let decoded = ChunkHeader::decode(&header).unwrap();
        assert_eq!(decoded.kind, ChunkKind::Records);
        assert_eq!(decoded.number, 0x12_3456);
        assert_eq!(decoded.total_len(), 20 + 12);
        assert!(decoded.verifies(payload));
        assert!(!decoded.verifies(b"some recordz"));
        for byte in 0..CHUNK_HEADER_LEN {
            for bit in 0..8 {
                let mut flipped = header;
                flipped[byte] ^= 1 << bit;
                assert_eq!(ChunkHeader::decode(&flipped), None, "byte {byte} bit {bit}");
            }
        }
        assert_eq!(ChunkHeader::decode(&header[..19]), None);
    }

    #[test]
    fn chunk_numbers_run_from_1_and_wrap_to_1() {
        assert_eq!(chunk_number(1), 1);
        assert_eq!(chunk_number(CHUNK_NUMBERS), (1 << 24) - 1);
        assert_eq!(chunk_number(CHUNK_NUMBERS + 1), 1);
    }
}
