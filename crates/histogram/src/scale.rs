//! PAPI's scale: how many buckets a byte of text gets, in units of 1/65536
//! bucket per 2 bytes. The mapping and its exact inverse.

use crate::error::HistogramError;

/// A valid PAPI scale: 131072, or 2 to 65536.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scale(u32);

/// `2^17`: a bucket index is `(distance * scale) >> 17`.
const SHIFT: u32 = 17;
const ONE_PER_BYTE: u64 = 1 << SHIFT;

impl Scale {
    /// One bucket per byte of text.
    pub const BYTE: Scale = Scale(131_072);
    /// One bucket per 2 bytes: PAPI's `FULL_SCALE`, profil's 1:1.
    pub const FULL: Scale = Scale(65_536);
    /// One bucket for the whole address space: the scale of an overflow bin.
    pub const SINGLE: Scale = Scale(2);

    /// Accepts what `PAPI_sprofil` accepts: 131072, or 2 to 65536.
    pub fn new(scale: u64) -> Result<Scale, HistogramError> {
        if scale == ONE_PER_BYTE || (2..=65_536).contains(&scale) {
            Ok(Scale(scale as u32))
        } else {
            Err(HistogramError::InvalidScale { scale })
        }
    }

    pub fn value(self) -> u32 {
        self.0
    }

    /// The bucket of the byte `distance` bytes past a region's start:
    /// `(distance * scale) >> 17`, without overflow.
    pub fn index(self, distance: u64) -> u64 {
        ((u128::from(distance) * u128::from(self.0)) >> SHIFT) as u64
    }

    /// The first distance that falls in bucket `index`: `ceil(index * 2^17 /
    /// scale)`. (PAPI's test printer uses `(index * scale) >> 15`, right only
    /// at scale 65536.)
    pub fn first_distance(self, index: u64) -> u64 {
        let scale = u128::from(self.0);
        ((u128::from(index) * u128::from(ONE_PER_BYTE)).div_ceil(scale)) as u64
    }

    /// Bytes of text per bucket; not a whole number for scales that do not
    /// divide 131072.
    pub fn bytes_per_bucket(self) -> f64 {
        ONE_PER_BYTE as f64 / f64::from(self.0)
    }

    /// Whether every bucket spans the same whole number of bytes (the scale
    /// is a power of two), as gprof's histograms require.
    pub fn is_uniform(self) -> bool {
        self.0.is_power_of_two()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_scales_are_131072_or_2_to_65536() {
        for scale in [2, 3, 16384, 32768, 65535, 65536, 131_072] {
            assert_eq!(Scale::new(scale).unwrap().value() as u64, scale);
        }
        for scale in [0, 1, 65_537, 100_000, 131_071, 131_073, 1 << 20, u64::MAX] {
            let error = Scale::new(scale).unwrap_err();
            assert_eq!(error, HistogramError::InvalidScale { scale });
            assert!(error.to_string().contains("131072"), "{error}");
            assert!(error.to_string().contains("2 to 65536"), "{error}");
        }
    }

    #[test]
    fn bucket_index_for_every_documented_scale() {
        // (scale, distance, bucket)
        let table = [
            (131_072, 0, 0),
            (131_072, 1, 1),
            (131_072, 4095, 4095),
            (65_536, 0, 0),
            (65_536, 1, 0),
            (65_536, 2, 1),
            (65_536, 3, 1),
            (65_536, 4097, 2048),
            (32_768, 3, 0),
            (32_768, 4, 1),
            (32_768, 7, 1),
            (32_768, 8, 2),
            (16_384, 7, 0),
            (16_384, 8, 1),
            (65_535, 2, 0),
            (65_535, 3, 1),
            (2, 0, 0),
            (2, 65_535, 0),
            (2, 65_536, 1),
            (2, u64::MAX, u64::MAX >> 16),
        ];
        for (scale, distance, bucket) in table {
            assert_eq!(
                Scale::new(scale).unwrap().index(distance),
                bucket,
                "scale {scale}, distance {distance}"
            );
        }
    }

    #[test]
    fn no_overflow_at_the_top_of_the_address_space() {
        assert_eq!(Scale::BYTE.index(u64::MAX), u64::MAX);
        assert_eq!(Scale::FULL.index(u64::MAX), u64::MAX >> 1);
        assert_eq!(Scale::FULL.first_distance(u64::MAX >> 1), u64::MAX - 1);
    }

    #[test]
    fn the_inverse_is_exact_where_papis_printer_is_not() {
        // (scale, bucket, first distance)
        let table = [
            (131_072, 5, 5), // PAPI's printer: 20
            (65_536, 5, 10), // PAPI's printer: 10 (its one right case)
            (32_768, 5, 20), // PAPI's printer: 5
            (65_535, 1, 3),  // ceil(131072 / 65535)
            (65_535, 32_767, 65_535),
            (3, 1, 43_691), // ceil(131072 / 3)
        ];
        for (scale, bucket, distance) in table {
            assert_eq!(
                Scale::new(scale).unwrap().first_distance(bucket),
                distance,
                "scale {scale}, bucket {bucket}"
            );
        }
    }

    /// A small deterministic generator for the property test.
    fn numbers(mut state: u64) -> impl Iterator<Item = u64> {
        std::iter::repeat_with(move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
    }

    #[test]
    fn property_mapping_and_inverse_agree() {
        let mut random = numbers(0x9e37_79b9_7f4a_7c15);
        let mut scales: Vec<u64> = vec![2, 3, 7, 16_384, 32_767, 32_768, 65_535, 65_536, 131_072];
        scales.extend((0..200).map(|_| 2 + random.next().unwrap() % 65_535));
        for scale in scales {
            let scale = Scale::new(scale).unwrap();
            for _ in 0..2_000 {
                let bucket = random.next().unwrap() % (1 << 40);
                let first = scale.first_distance(bucket);
                // The first distance of a bucket maps to it, the one before
                // it to an earlier bucket.
                assert_eq!(scale.index(first), bucket, "{scale:?} bucket {bucket}");
                if first > 0 {
                    assert!(scale.index(first - 1) < bucket, "{scale:?} bucket {bucket}");
                }
                let distance = random.next().unwrap() % (1 << 48);
                let index = scale.index(distance);
                assert!(scale.first_distance(index) <= distance);
                assert!(scale.first_distance(index + 1) > distance);
            }
        }
    }

    #[test]
    fn uniform_scales_are_powers_of_two() {
        assert!(Scale::FULL.is_uniform() && Scale::BYTE.is_uniform() && Scale::SINGLE.is_uniform());
        assert!(!Scale::new(65_535).unwrap().is_uniform());
        assert_eq!(Scale::new(32_768).unwrap().bytes_per_bucket(), 4.0);
    }
}
