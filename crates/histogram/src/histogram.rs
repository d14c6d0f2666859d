//! A histogram over several regions (`PAPI_sprofil`), with glibc's rule for
//! what lies outside them.
//!
//! A program counter belongs to the region with the highest start at or
//! below it (the first given, among regions that start together). If that
//! region's buckets do not reach it, or no region starts below it, it is
//! *outside*: it goes to the overflow bin (glibc's region with offset 0 and
//! scale 2) when there is one, and is counted either way. PAPI instead drops
//! such samples silently and never lets a region at offset 0 win; glibc's
//! rule is the well-defined one.

use crate::buckets::{BucketWidth, Buckets, OnFull};
use crate::error::HistogramError;
use crate::flags::{Flags, PapiRandom};
use crate::region::Region;

/// How a histogram counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HistogramConfig {
    pub width: BucketWidth,
    pub on_full: OnFull,
    pub flags: Flags,
    /// Keep a one-bucket overflow bin for samples outside every region.
    pub overflow_bin: bool,
}

/// What became of every sample offered to a histogram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HistogramStats {
    /// Samples counted in a region's bucket.
    pub in_region: u64,
    /// Samples outside every region (in the overflow bin, if there is one).
    pub outside: u64,
    /// Increments a full bucket could not hold (saturated, or wrapped).
    pub saturated: u64,
    /// Samples dropped by the RANDOM or COMPRESS flag.
    pub dropped: u64,
}

impl HistogramStats {
    pub fn add(&mut self, other: HistogramStats) {
        self.in_region += other.in_region;
        self.outside += other.outside;
        self.saturated += other.saturated;
        self.dropped += other.dropped;
    }
}

/// Where a sample went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Bucket { region: usize, index: usize },
    Outside,
    Dropped,
}

#[derive(Clone, Debug)]
pub struct Histogram {
    config: HistogramConfig,
    regions: Vec<Region>,
    buckets: Vec<Buckets>,
    /// Region indices by start address; equal starts keep their order.
    by_start: Vec<usize>,
    overflow_bin: Option<Buckets>,
    random: PapiRandom,
    stats: HistogramStats,
}

impl Histogram {
    /// A histogram without regions yet.
    pub fn new(config: HistogramConfig) -> Histogram {
        Histogram {
            config,
            regions: Vec::new(),
            buckets: Vec::new(),
            by_start: Vec::new(),
            overflow_bin: config.overflow_bin.then(|| Buckets::new(config.width, 1)),
            random: PapiRandom::default(),
            stats: HistogramStats::default(),
        }
    }

    /// Adds a region with zeroed buckets; returns its index.
    pub fn add_region(&mut self, region: Region) -> usize {
        let index = self.regions.len();
        self.regions.push(region);
        self.buckets
            .push(Buckets::new(self.config.width, region.bucket_count()));
        let at = self
            .by_start
            .partition_point(|&i| self.regions[i].offset <= region.offset);
        self.by_start.insert(at, index);
        index
    }

    /// Adds a region whose buckets start from `counts` rather than zero, as
    /// PAPI's and glibc's do from what the caller's buffer holds; returns
    /// its index. The counts must be as many as the region's buckets, and
    /// of the histogram's width.
    pub fn add_region_with(
        &mut self,
        region: Region,
        counts: Buckets,
    ) -> Result<usize, HistogramError> {
        if counts.len() != region.bucket_count() || counts.width() != self.config.width {
            return Err(HistogramError::CountsMismatch {
                offset: region.offset,
                buckets: region.bucket_count(),
                bits: self.config.width.bits(),
                given: counts.len(),
                given_bits: counts.width().bits(),
            });
        }
        let index = self.add_region(region);
        self.buckets[index] = counts;
        Ok(index)
    }

    /// Starts the overflow bin, if there is one, from `count` (at most the
    /// bucket's maximum) rather than zero.
    pub fn preset_overflow_bin(&mut self, count: u64) {
        if let Some(bin) = &mut self.overflow_bin {
            *bin = Buckets::new(self.config.width, 1);
            bin.add(0, count, OnFull::Saturate);
        }
    }

    /// The region and bucket that `address` belongs to.
    pub fn locate(&self, address: u64) -> Option<(usize, usize)> {
        let mut at = self
            .by_start
            .partition_point(|&i| self.regions[i].offset <= address);
        let start = self.regions[*self.by_start.get(at.checked_sub(1)?)?].offset;
        while at > 1 && self.regions[self.by_start[at - 2]].offset == start {
            at -= 1;
        }
        let region = self.by_start[at - 1];
        let index = self.regions[region].index_of(address)?;
        Some((region, index))
    }

    /// Counts one sample at `address` that stands for `period` events.
    pub fn record(&mut self, address: u64, period: u64) -> Placement {
        if self.config.flags.random && self.random.drops_quarter() {
            self.stats.dropped += 1;
            return Placement::Dropped;
        }
        let located = self.locate(address);
        let target = match located {
            Some((region, index)) => Some((&mut self.buckets[region], index)),
            None => self.overflow_bin.as_mut().map(|bin| (bin, 0)),
        };
        if let Some((buckets, index)) = target {
            if self.config.flags.compress && self.random.drops_for(buckets.get(index)) {
                self.stats.dropped += 1;
                return Placement::Dropped;
            }
            let amount = if self.config.flags.weighted {
                period.max(1)
            } else {
                1
            };
            if !buckets.add(index, amount, self.config.on_full) {
                self.stats.saturated += 1;
            }
        }
        self.placed(located)
    }

    /// Counts `amount` events at `address` at once, past the sampling flags:
    /// a group member's count, read with a sample of its leader.
    pub fn add(&mut self, address: u64, amount: u64) -> Placement {
        let located = self.locate(address);
        let target = match located {
            Some((region, index)) => Some((&mut self.buckets[region], index)),
            None => self.overflow_bin.as_mut().map(|bin| (bin, 0)),
        };
        if let Some((buckets, index)) = target
            && !buckets.add(index, amount, self.config.on_full)
        {
            self.stats.saturated += 1;
        }
        self.placed(located)
    }

    fn placed(&mut self, located: Option<(usize, usize)>) -> Placement {
        match located {
            Some((region, index)) => {
                self.stats.in_region += 1;
                Placement::Bucket { region, index }
            }
            None => {
                self.stats.outside += 1;
                Placement::Outside
            }
        }
    }

    pub fn config(&self) -> HistogramConfig {
        self.config
    }

    /// The regions with their buckets, in the order they were added.
    pub fn regions(&self) -> impl Iterator<Item = (&Region, &Buckets)> {
        self.regions.iter().zip(&self.buckets)
    }

    /// The overflow bin's count, if the histogram has one.
    pub fn overflow_bin(&self) -> Option<u64> {
        self.overflow_bin.as_ref().map(|bin| bin.get(0))
    }

    pub fn stats(&self) -> HistogramStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scale::Scale;

    fn histogram(regions: &[(u64, u64, u64)], overflow_bin: bool) -> Histogram {
        let mut histogram = Histogram::new(HistogramConfig {
            overflow_bin,
            ..HistogramConfig::default()
        });
        for &(offset, size, scale) in regions {
            histogram.add_region(Region::new(offset, size, Scale::new(scale).unwrap()).unwrap());
        }
        histogram
    }

    #[test]
    fn glibc_region_rules() {
        // Regions: A 0x1000..0x3000, B 0x2000..0x2100 (inside A), C 0x5000..0x5010,
        // D also at 0x5000 (given after C), E at 0 (the lowest, a region like any other).
        let h = histogram(
            &[
                (0x1000, 0x2000, 65536),
                (0x2000, 0x100, 65536),
                (0x5000, 0x10, 131072),
                (0x5000, 0x1000, 65536),
                (0, 0x10, 65536),
            ],
            false,
        );
        // (address, expected (region, bucket) or None for outside)
        let table: [(u64, Option<(usize, usize)>); 13] = [
            (0x0000, Some((4, 0))), // a region at offset 0 wins like any other
            (0x000f, Some((4, 7))),
            (0x0010, None), // past E's end, below A: outside
            (0x0fff, None),
            (0x1000, Some((0, 0))), // the first byte of a region is in it
            (0x1fff, Some((0, 0x7ff))),
            (0x2000, Some((1, 0))), // B starts higher: it keeps the overlap
            (0x20ff, Some((1, 0x7f))),
            (0x2100, None), // past B's end: outside, not back to A
            (0x2fff, None),
            (0x5000, Some((2, 0))), // equal starts: the first given wins
            (0x500f, Some((2, 0xf))),
            (0x5010, None), // past C's end, though D would reach it
        ];
        for (address, expected) in table {
            assert_eq!(h.locate(address), expected, "{address:#x}");
        }
    }

    #[test]
    fn the_overflow_bin_takes_what_lies_outside() {
        let mut with_bin = histogram(&[(0x1000, 0x100, 65536)], true);
        let mut without = histogram(&[(0x1000, 0x100, 65536)], false);
        for h in [&mut with_bin, &mut without] {
            assert_eq!(
                h.record(0x1010, 1),
                Placement::Bucket {
                    region: 0,
                    index: 8
                }
            );
            assert_eq!(h.record(0x10, 1), Placement::Outside);
            assert_eq!(h.record(0x1100, 1), Placement::Outside);
            assert_eq!(
                h.stats(),
                HistogramStats {
                    in_region: 1,
                    outside: 2,
                    saturated: 0,
                    dropped: 0
                }
            );
        }
        assert_eq!(with_bin.overflow_bin(), Some(2));
        assert_eq!(without.overflow_bin(), None);
        let (_, buckets) = with_bin.regions().next().unwrap();
        assert_eq!(buckets.get(8), 1);
        assert_eq!(buckets.counts().sum::<u64>(), 1);
    }

    #[test]
    fn counts_given_up_front_are_added_to() {
        let mut h = Histogram::new(HistogramConfig {
            overflow_bin: true,
            ..HistogramConfig::default()
        });
        let region = Region::new(0x1000, 8, Scale::FULL).unwrap();
        let start = Buckets::from_ne_bytes(
            BucketWidth::Bits16,
            &[5_u16, 0, 65_535, 1]
                .iter()
                .flat_map(|c| c.to_ne_bytes())
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(h.add_region_with(region, start), Ok(0));
        h.preset_overflow_bin(70_000);
        h.record(0x1000, 1);
        h.record(0x1004, 1);
        h.record(0x2000, 1);
        let (_, buckets) = h.regions().next().unwrap();
        assert_eq!(buckets.counts().collect::<Vec<_>>(), [6, 0, 65_535, 1]);
        assert_eq!(h.overflow_bin(), Some(65_535));
        assert_eq!(h.stats().saturated, 2);

        let error = h
            .add_region_with(region, Buckets::new(BucketWidth::Bits16, 3))
            .unwrap_err();
        assert!(error.to_string().contains("4 16-bit buckets"), "{error}");
        let error = h
            .add_region_with(region, Buckets::new(BucketWidth::Bits32, 4))
            .unwrap_err();
        assert!(error.to_string().contains("4 32-bit counts"), "{error}");
    }

    #[test]
    fn full_buckets_count_their_saturations() {
        for (on_full, final_value) in [(OnFull::Saturate, 65_535), (OnFull::Wrap, 4)] {
            let config = HistogramConfig {
                on_full,
                ..HistogramConfig::default()
            };
            let mut h = Histogram::new(config);
            h.add_region(Region::new(0, 2, Scale::FULL).unwrap());
            for _ in 0..65_540 {
                h.record(1, 1);
            }
            let stats = h.stats();
            assert_eq!(stats.in_region, 65_540);
            assert_eq!(
                stats.saturated,
                if on_full == OnFull::Saturate { 5 } else { 1 }
            );
            assert_eq!(
                h.regions().next().unwrap().1.get(0),
                final_value,
                "{on_full:?}"
            );
        }
    }

    #[test]
    fn each_flag_as_papi_defines_it() {
        let run = |flags: Flags, width: BucketWidth, samples: u64| {
            let mut h = Histogram::new(HistogramConfig {
                flags,
                width,
                ..HistogramConfig::default()
            });
            h.add_region(Region::new(0, 16, Scale::FULL).unwrap());
            for i in 0..samples {
                h.record(i % 16, 3);
            }
            h
        };
        // RANDOM: a quarter dropped.
        let h = run(
            Flags {
                random: true,
                ..Flags::default()
            },
            BucketWidth::Bits64,
            100_000,
        );
        let dropped = h.stats().dropped as f64 / 100_000.0;
        assert!((0.24..=0.26).contains(&dropped), "{dropped}");
        assert_eq!(h.stats().in_region + h.stats().dropped, 100_000);
        // WEIGHTED: each sample adds its period.
        let h = run(
            Flags {
                weighted: true,
                ..Flags::default()
            },
            BucketWidth::Bits64,
            160,
        );
        assert_eq!(
            h.regions().next().unwrap().1.counts().collect::<Vec<_>>(),
            vec![60; 8]
        );
        // COMPRESS: a bucket fills ever more slowly, and not past 65536.
        let h = run(
            Flags {
                compress: true,
                ..Flags::default()
            },
            BucketWidth::Bits64,
            8 * 400_000,
        );
        let counts: Vec<u64> = h.regions().next().unwrap().1.counts().collect();
        assert!(
            counts.iter().all(|&c| (20_000..=65_536).contains(&c)),
            "{counts:?}"
        );
        assert_eq!(h.stats().in_region + h.stats().dropped, 8 * 400_000);
        assert!(h.stats().dropped > 8 * 400_000 / 2, "{:?}", h.stats());
        // All three together, in PAPI's order.
        let all = Flags {
            random: true,
            compress: true,
            weighted: true,
        };
        let h = run(all, BucketWidth::Bits16, 10_000);
        let stats = h.stats();
        assert_eq!(stats.in_region + stats.dropped, 10_000);
        assert!(stats.dropped >= 2_400, "{stats:?}");
    }
}
