//! The layout of a recording file.
//!
//! ```text
//! offset 0   "PROFILER"                       magic, 8 bytes
//!        8   format version                   u32 little-endian
//!       12   header length H                  u32
//!       16   header checksum                  u32, CRC-32 of the H header bytes
//!       20   header                           H bytes of JSON (RecordingHeader)
//!   20 + H   records chunks                   see chunk.rs
//!        T   trailer chunk                    its payload is JSON (Trailer)
//!  end - 24  trailer chunk offset T, its length, u64, u64
//!  end - 8   "PROFEND1"                       end marker
//! ```
//!
//! Everything is written front to back, never seeking, so a recording can
//! be streamed into a pipe. Chunks are written whole as recording goes on,
//! so a file whose end is missing (the profiler was killed, the disk filled
//! up) still holds every chunk written before: a reader finds the chunks by
//! walking from the header, reads the good ones and says what was lost.

pub(crate) const MAGIC: &[u8; 8] = b"PROFILER";
pub(crate) const END_MAGIC: &[u8; 8] = b"PROFEND1";
/// The version this code writes. Version 1 had no chunks; version 2 has
/// no compressed chunks, and is read as well.
pub const FORMAT_VERSION: u32 = 3;
/// The oldest version this code reads.
pub(crate) const OLDEST_VERSION: u32 = 2;
pub(crate) const PREAMBLE_LEN: u64 = 20;
pub(crate) const FOOTER_LEN: u64 = 24;
/// Headers and trailers larger than this are treated as corruption.
pub(crate) const MAX_METADATA_LEN: u64 = 256 << 20;
