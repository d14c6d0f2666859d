//! A region of text and its buckets' address arithmetic.

use crate::error::HistogramError;
use crate::scale::Scale;

/// At most this many buckets in one region (2 GiB of 64-bit buckets).
pub const MAX_BUCKETS: u64 = 1 << 28;

/// `PAPI_sprofil_t` without the buffer: buckets over the `size` bytes of
/// text that start at `offset`, at `scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    /// The first address covered.
    pub offset: u64,
    pub scale: Scale,
    buckets: u64,
}

impl Region {
    /// A region covering `size` bytes from `offset`: as many buckets as the
    /// last byte needs.
    pub fn new(offset: u64, size: u64, scale: Scale) -> Result<Region, HistogramError> {
        if size == 0 {
            return Err(HistogramError::EmptyRegion { offset });
        }
        Region::with_buckets(offset, scale.index(size - 1) + 1, scale)
    }

    /// A region of exactly `buckets` buckets from `offset` (PAPI's
    /// `pr_size` divided by the bucket width).
    pub fn with_buckets(offset: u64, buckets: u64, scale: Scale) -> Result<Region, HistogramError> {
        if buckets == 0 {
            return Err(HistogramError::EmptyRegion { offset });
        }
        if buckets > MAX_BUCKETS {
            return Err(HistogramError::TooManyBuckets {
                offset,
                buckets,
                limit: MAX_BUCKETS,
            });
        }
        Ok(Region {
            offset,
            scale,
            buckets,
        })
    }

    pub fn bucket_count(&self) -> usize {
        self.buckets as usize
    }

    /// The bucket of `address`, if the region's buckets reach it.
    pub fn index_of(&self, address: u64) -> Option<usize> {
        let distance = address.checked_sub(self.offset)?;
        let index = self.scale.index(distance);
        (index < self.buckets).then_some(index as usize)
    }

    /// The first address of bucket `index`.
    pub fn first_address(&self, index: usize) -> u64 {
        self.offset
            .saturating_add(self.scale.first_distance(index as u64))
    }

    /// One past the last address the buckets reach.
    pub fn end(&self) -> u64 {
        self.offset
            .saturating_add(self.scale.first_distance(self.buckets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_has_the_buckets_its_last_byte_needs() {
        let full = Scale::FULL;
        assert_eq!(Region::new(0x1000, 1, full).unwrap().bucket_count(), 1);
        assert_eq!(Region::new(0x1000, 2, full).unwrap().bucket_count(), 1);
        assert_eq!(Region::new(0x1000, 3, full).unwrap().bucket_count(), 2);
        assert_eq!(
            Region::new(0x1000, 4096, full).unwrap().bucket_count(),
            2048
        );
        assert_eq!(
            Region::new(0x1000, 4096, Scale::BYTE)
                .unwrap()
                .bucket_count(),
            4096
        );
        let quarter = Scale::new(32768).unwrap();
        assert_eq!(
            Region::new(0x1000, 4096, quarter).unwrap().bucket_count(),
            1024
        );
        assert_eq!(
            Region::new(0, 65_536, Scale::SINGLE)
                .unwrap()
                .bucket_count(),
            1
        );
    }

    #[test]
    fn edges_of_a_region() {
        let region = Region::new(0x1000, 0x100, Scale::FULL).unwrap();
        assert_eq!(region.index_of(0xfff), None);
        assert_eq!(region.index_of(0x1000), Some(0));
        assert_eq!(region.index_of(0x1001), Some(0));
        assert_eq!(region.index_of(0x10ff), Some(0x7f));
        assert_eq!(region.index_of(0x1100), None);
        assert_eq!(region.first_address(0x7f), 0x10fe);
        assert_eq!(region.end(), 0x1100);
        // An odd size: the last bucket reaches one byte past it, as in PAPI.
        let odd = Region::new(0x1000, 3, Scale::FULL).unwrap();
        assert_eq!(odd.index_of(0x1003), Some(1));
        assert_eq!(odd.index_of(0x1004), None);
    }

    #[test]
    fn empty_and_oversized_regions_are_refused() {
        assert_eq!(
            Region::new(5, 0, Scale::FULL),
            Err(HistogramError::EmptyRegion { offset: 5 })
        );
        let error = Region::new(0, 1 << 40, Scale::FULL).unwrap_err();
        assert!(
            matches!(error, HistogramError::TooManyBuckets { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("smaller scale"), "{error}");
    }
}
