//! The layout of a recording file.
//!
//! ```text
//! offset 0   "PROFILER"                       magic, 8 bytes
//!        8   format version                   u32 little-endian
//!       12   header length H                  u32
//!       16   header                           H bytes of JSON (RecordingHeader)
//!   16 + H   event stream                     framed records (see codec.rs)
//!        T   trailer                          JSON (Trailer)
//!  end - 24  trailer offset T, trailer length u64, u64
//!  end - 8   "PROFEND1"                       end marker
//! ```
//!
//! A file without the end marker was never finished (or was cut short) and
//! is refused as truncated rather than read as a partial profile.

pub(crate) const MAGIC: &[u8; 8] = b"PROFILER";
pub(crate) const END_MAGIC: &[u8; 8] = b"PROFEND1";
/// The version this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;
pub(crate) const PREAMBLE_LEN: u64 = 16;
pub(crate) const FOOTER_LEN: u64 = 24;
/// Headers and trailers larger than this are treated as corruption.
pub(crate) const MAX_METADATA_LEN: u64 = 256 << 20;
