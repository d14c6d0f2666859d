//! PAPI_profil and PAPI_sprofil, exact: program-counter samples poured into
//! 16-, 32- or 64-bit buckets over regions of text, with PAPI's scale, the
//! exact inverse mapping, saturation (or PAPI's wrap-around) counted, glibc's
//! rule for what lies outside the regions, and PAPI's flags.
//!
//! Pure arithmetic: no I/O, no dependency on the rest of the profiler.
//!
//! ```
//! use profiler_histogram::{Histogram, HistogramConfig, Region, Scale};
//!
//! // One bucket per 2 bytes over 4 KiB of text at 0x1000.
//! let mut histogram = Histogram::new(HistogramConfig::default());
//! histogram.add_region(Region::new(0x1000, 4096, Scale::FULL).unwrap());
//! histogram.record(0x1136, 1);
//! let (region, buckets) = histogram.regions().next().unwrap();
//! assert_eq!(buckets.get(0x9b), 1);
//! assert_eq!(region.first_address(0x9b), 0x1136);
//! ```

mod buckets;
mod error;
mod flags;
mod histogram;
mod region;
mod scale;

pub use buckets::{BucketWidth, Buckets, OnFull, SparseBuckets};
pub use error::HistogramError;
pub use flags::Flags;
pub use histogram::{Histogram, HistogramConfig, HistogramStats, Placement};
pub use region::{MAX_BUCKETS, Region};
pub use scale::Scale;
