//! Bucket arrays of 16, 32 or 64 bits, and what happens when one is full.

use crate::error::HistogramError;

/// The width of each bucket. It changes how far a bucket can count, not
/// which addresses it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BucketWidth {
    Bits16,
    Bits32,
    Bits64,
}

impl BucketWidth {
    pub fn from_bits(bits: u64) -> Result<BucketWidth, HistogramError> {
        match bits {
            16 => Ok(BucketWidth::Bits16),
            32 => Ok(BucketWidth::Bits32),
            64 => Ok(BucketWidth::Bits64),
            _ => Err(HistogramError::InvalidWidth { bits }),
        }
    }

    pub fn bits(self) -> u32 {
        match self {
            BucketWidth::Bits16 => 16,
            BucketWidth::Bits32 => 32,
            BucketWidth::Bits64 => 64,
        }
    }

    pub fn bytes(self) -> usize {
        self.bits() as usize / 8
    }

    /// The largest count a bucket holds.
    pub fn max(self) -> u64 {
        u64::MAX >> (64 - self.bits())
    }
}

impl Default for BucketWidth {
    /// PAPI's default, `PAPI_PROFIL_BUCKET_16`.
    fn default() -> Self {
        BucketWidth::Bits16
    }
}

/// What a full bucket does with another increment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OnFull {
    /// Stay at the maximum, as glibc's `sprofil` does (the default).
    #[default]
    Saturate,
    /// Wrap around to zero, as PAPI does.
    Wrap,
}

/// A bucket array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Buckets {
    Bits16(Vec<u16>),
    Bits32(Vec<u32>),
    Bits64(Vec<u64>),
}

impl Buckets {
    pub fn new(width: BucketWidth, count: usize) -> Buckets {
        match width {
            BucketWidth::Bits16 => Buckets::Bits16(vec![0; count]),
            BucketWidth::Bits32 => Buckets::Bits32(vec![0; count]),
            BucketWidth::Bits64 => Buckets::Bits64(vec![0; count]),
        }
    }

    pub fn width(&self) -> BucketWidth {
        match self {
            Buckets::Bits16(_) => BucketWidth::Bits16,
            Buckets::Bits32(_) => BucketWidth::Bits32,
            Buckets::Bits64(_) => BucketWidth::Bits64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Buckets::Bits16(b) => b.len(),
            Buckets::Bits32(b) => b.len(),
            Buckets::Bits64(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, index: usize) -> u64 {
        match self {
            Buckets::Bits16(b) => u64::from(b[index]),
            Buckets::Bits32(b) => u64::from(b[index]),
            Buckets::Bits64(b) => b[index],
        }
    }

    /// Every count, widened to 64 bits.
    pub fn counts(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Adds `amount` to bucket `index`. Returns false when the bucket could
    /// not hold it (it saturated or wrapped).
    pub fn add(&mut self, index: usize, amount: u64, on_full: OnFull) -> bool {
        let max = self.width().max();
        let old = self.get(index);
        let (new, fits) = match old.checked_add(amount).filter(|&sum| sum <= max) {
            Some(sum) => (sum, true),
            None => match on_full {
                OnFull::Saturate => (max, false),
                OnFull::Wrap => (old.wrapping_add(amount) & max, false),
            },
        };
        match self {
            Buckets::Bits16(b) => b[index] = new as u16,
            Buckets::Bits32(b) => b[index] = new as u32,
            Buckets::Bits64(b) => b[index] = new,
        }
        fits
    }

    /// The buckets as little-endian bytes, for storage.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Buckets::Bits16(b) => b.iter().flat_map(|v| v.to_le_bytes()).collect(),
            Buckets::Bits32(b) => b.iter().flat_map(|v| v.to_le_bytes()).collect(),
            Buckets::Bits64(b) => b.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    /// Reads buckets written by [`Buckets::to_le_bytes`]; `None` if the
    /// length is not a whole number of buckets.
    pub fn from_le_bytes(width: BucketWidth, bytes: &[u8]) -> Option<Buckets> {
        if !bytes.len().is_multiple_of(width.bytes()) {
            return None;
        }
        Some(match width {
            BucketWidth::Bits16 => Buckets::Bits16(
                bytes
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect(),
            ),
            BucketWidth::Bits32 => Buckets::Bits32(
                bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            BucketWidth::Bits64 => Buckets::Bits64(
                bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect(),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_parse_and_bound_their_counts() {
        assert_eq!(BucketWidth::from_bits(16).unwrap().max(), 65_535);
        assert_eq!(BucketWidth::from_bits(32).unwrap().max(), u32::MAX as u64);
        assert_eq!(BucketWidth::from_bits(64).unwrap().max(), u64::MAX);
        let error = BucketWidth::from_bits(8).unwrap_err();
        assert!(error.to_string().contains("16, 32 or 64"), "{error}");
    }

    #[test]
    fn saturation_and_wrap_per_width() {
        // (width, start, amount, mode, result, fits)
        let table = [
            (16, 65_534, 1, OnFull::Saturate, 65_535, true),
            (16, 65_535, 1, OnFull::Saturate, 65_535, false),
            (16, 65_535, 1, OnFull::Wrap, 0, false),
            (16, 65_530, 10, OnFull::Wrap, 4, false),
            (16, 100, 255, OnFull::Saturate, 355, true),
            (
                32,
                u32::MAX as u64,
                1,
                OnFull::Saturate,
                u32::MAX as u64,
                false,
            ),
            (32, u32::MAX as u64, 2, OnFull::Wrap, 1, false),
            (32, 65_535, 1, OnFull::Saturate, 65_536, true),
            (64, u64::MAX, 1, OnFull::Saturate, u64::MAX, false),
            (64, u64::MAX, 1, OnFull::Wrap, 0, false),
            (64, u32::MAX as u64, 1, OnFull::Wrap, 1 << 32, true),
        ];
        for (bits, start, amount, mode, result, fits) in table {
            let width = BucketWidth::from_bits(bits).unwrap();
            let mut buckets = Buckets::new(width, 3);
            if start > 0 {
                assert!(buckets.add(1, start, OnFull::Saturate));
            }
            assert_eq!(
                buckets.add(1, amount, mode),
                fits,
                "{bits} bits, {start} + {amount}, {mode:?}"
            );
            assert_eq!(
                buckets.get(1),
                result,
                "{bits} bits, {start} + {amount}, {mode:?}"
            );
            assert_eq!((buckets.get(0), buckets.get(2)), (0, 0));
        }
    }

    #[test]
    fn buckets_round_trip_through_bytes() {
        for bits in [16, 32, 64] {
            let width = BucketWidth::from_bits(bits).unwrap();
            let mut buckets = Buckets::new(width, 5);
            buckets.add(0, 7, OnFull::Saturate);
            buckets.add(4, width.max(), OnFull::Saturate);
            let bytes = buckets.to_le_bytes();
            assert_eq!(bytes.len(), 5 * width.bytes());
            assert_eq!(Buckets::from_le_bytes(width, &bytes), Some(buckets));
            assert_eq!(Buckets::from_le_bytes(width, &bytes[1..]), None);
        }
    }
}
