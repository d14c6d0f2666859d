//! PAPI's profiling flags, and the generator PAPI draws them with.

/// `PAPI_PROFIL_RANDOM`, `_COMPRESS` and `_WEIGHTED`. They apply in that
/// order and combine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags {
    /// Drop 25% of the samples at random.
    pub random: bool,
    /// Drop a sample with probability `bucket / 65536`: a full bucket (in
    /// 16-bit terms) takes no more.
    pub compress: bool,
    /// Add the sample's period (the events it stands for) instead of 1.
    pub weighted: bool,
}

/// PAPI's generator (`random_ushort` in `extras.c`): a 32-bit linear
/// congruential generator whose low 16 bits are drawn. Deterministic, so
/// that runs and tests repeat.
#[derive(Clone, Debug)]
pub(crate) struct PapiRandom(u32);

impl Default for PapiRandom {
    fn default() -> Self {
        PapiRandom(0xdead_beef)
    }
}

impl PapiRandom {
    pub(crate) fn next(&mut self) -> u16 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        self.0 as u16
    }

    /// RANDOM's draw: true one time in four.
    pub(crate) fn drops_quarter(&mut self) -> bool {
        self.next() <= u16::MAX / 4
    }

    /// COMPRESS's draw for a bucket holding `value`: true with probability
    /// `min(value, 65536) / 65536`.
    pub(crate) fn drops_for(&mut self, value: u64) -> bool {
        u64::from(self.next()) < value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_papis() {
        let mut random = PapiRandom::default();
        // 0xdeadbeef * 1664525 + 1013904223 (mod 2^32) = 0x6aabdf82
        assert_eq!(random.next(), 0xdf82);
        let mut again = PapiRandom::default();
        assert_eq!(again.next(), 0xdf82);
    }

    #[test]
    fn random_drops_a_quarter_and_compress_follows_the_bucket() {
        let mut random = PapiRandom::default();
        let drops = (0..100_000).filter(|_| random.drops_quarter()).count();
        assert!((24_000..=26_000).contains(&drops), "{drops}");
        let half = (0..100_000).filter(|_| random.drops_for(32_768)).count();
        assert!((48_500..=51_500).contains(&half), "{half}");
        assert_eq!((0..1000).filter(|_| random.drops_for(0)).count(), 0);
        assert_eq!((0..1000).filter(|_| random.drops_for(65_536)).count(), 1000);
    }
}
