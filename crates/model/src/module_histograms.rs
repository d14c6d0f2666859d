//! Histograms per event and per module, over each module's mapped text in
//! file offsets: the same whatever address the module was loaded at, and
//! shared by every process that maps it.
//!
//! Built live while recording (histogram mode) and at report time from the
//! samples of a full recording; both end as a [`HistogramSet`]. Every
//! sample reaches a histogram through [`pour`], theirs and those of a
//! program profiling itself.

use std::collections::BTreeMap;

use crate::address::FileOffset;
use crate::event::EventIndex;
use crate::header::{HistogramSettings, HistogramTotals};
use crate::module::{ModuleId, ModuleTable};
use crate::process::Location;
use crate::record::Sample;
use profiler_histogram::{
    BucketWidth, Buckets, Histogram, HistogramConfig, HistogramError, HistogramStats, OnFull,
    Region, Scale,
};

/// What histograms cover and how they count.
#[derive(Clone, Debug)]
pub struct HistogramOptions {
    /// Bucket width, what a full bucket does, PAPI's flags. (The overflow
    /// bin is not used: outside samples are counted per event.)
    pub config: HistogramConfig,
    /// The scale of regions over whole modules.
    pub scale: Scale,
    /// Regions of the program's own file to cover instead of every module's
    /// whole text (PAPI_sprofil's regions); empty for whole modules.
    pub program_regions: Vec<ProgramRegion>,
    /// The program's path as mappings name it, which `program_regions`
    /// apply to.
    pub program: Option<String>,
}

impl HistogramOptions {
    /// The settings a recording's header notes.
    pub fn settings(&self) -> HistogramSettings {
        let flags = self.config.flags;
        HistogramSettings {
            bucket_bits: self.config.width.bits() as u8,
            scale: self.scale.value(),
            wrap: self.config.on_full == OnFull::Wrap,
            random: flags.random,
            compress: flags.compress,
            weighted: flags.weighted,
            regions: (self.program_regions.iter())
                .map(|r| r.given.clone())
                .collect(),
        }
    }
}

/// A region of the program's file: `size` bytes from file offset `start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramRegion {
    pub start: FileOffset,
    pub size: u64,
    pub scale: Scale,
    /// As the user gave it (`START:END[:SCALE]`, stated addresses).
    pub given: String,
}

/// Pours `sample`, taken at `address` of the space `histogram` covers,
/// into it: the events the sample stands for (its period), through the
/// histogram's flags, as PAPI_profil counts an overflow.
pub fn pour(histogram: &mut Histogram, address: u64, sample: &Sample) {
    histogram.record(address, sample.period);
}

/// One event's buckets over one region of one module's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleRegion {
    pub event: EventIndex,
    pub module: ModuleId,
    /// In file offsets of the module.
    pub region: Region,
    pub buckets: Buckets,
}

/// Histograms of a recording, however they were made.
#[derive(Debug)]
pub struct HistogramSet {
    pub modules: ModuleTable,
    pub width: BucketWidth,
    pub scale: Scale,
    pub regions: Vec<ModuleRegion>,
    /// Per event, indexed like the recording's events.
    pub totals: Vec<HistogramTotals>,
}

/// Histograms being filled.
#[derive(Debug)]
pub struct ModuleHistograms {
    options: HistogramOptions,
    /// Per module: one histogram per event, all over the same regions.
    modules: BTreeMap<ModuleId, Covered>,
    /// Per event: samples in no module's histogram (kernel, no mapping,
    /// a module not covered).
    outside: Vec<u64>,
}

#[derive(Debug)]
struct Covered {
    histograms: Vec<Histogram>,
    /// The file ranges with buckets, `start..end`.
    ranges: Vec<(u64, u64)>,
}

impl ModuleHistograms {
    pub fn new(events: usize, options: HistogramOptions) -> ModuleHistograms {
        ModuleHistograms {
            options,
            modules: BTreeMap::new(),
            outside: vec![0; events],
        }
    }

    /// Gives `module` (at `path`) buckets over `len` bytes of its file from
    /// `start`, for every event, where it has none yet.
    pub fn cover(
        &mut self,
        module: ModuleId,
        path: &str,
        start: FileOffset,
        len: u64,
    ) -> Result<(), HistogramError> {
        let events = self.outside.len();
        let regions = if self.options.program_regions.is_empty() {
            let covered = self.modules.get(&module).map_or(&[][..], |c| &c.ranges[..]);
            uncovered(covered, start.0, start.0.saturating_add(len))
                .into_iter()
                .map(|(from, to)| Region::new(from, to - from, self.options.scale))
                .collect::<Result<Vec<_>, _>>()?
        } else if self.options.program.as_deref() == Some(path)
            && !self.modules.contains_key(&module)
        {
            let program = self.options.program_regions.iter();
            program
                .map(|r| Region::new(r.start.0, r.size, r.scale))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        if regions.is_empty() {
            return Ok(());
        }
        let config = self.options.config;
        let covered = self.modules.entry(module).or_insert_with(|| Covered {
            histograms: (0..events).map(|_| Histogram::new(config)).collect(),
            ranges: Vec::new(),
        });
        for region in regions {
            covered.histograms.iter_mut().for_each(|h| {
                h.add_region(region);
            });
            covered.ranges.push((region.offset, region.end()));
        }
        Ok(())
    }

    /// Pours `sample`, which lay at `location`, into its event's histogram,
    /// and what each member of its group counted meanwhile (`members`, from
    /// [`MemberDeltas`](crate::MemberDeltas)) into theirs, at the same
    /// place.
    pub fn pour(&mut self, sample: &Sample, location: Location, members: &[(EventIndex, u64)]) {
        self.count(sample.event, location, |histogram, address| {
            pour(histogram, address, sample);
        });
        for &(member, amount) in members {
            self.count(member, location, |histogram, address| {
                histogram.add(address, amount);
            });
        }
    }

    /// Applies `count` to the histogram of `event` over `location`'s module,
    /// or counts the location as outside them.
    fn count(
        &mut self,
        event: EventIndex,
        location: Location,
        count: impl FnOnce(&mut Histogram, u64),
    ) {
        let event = usize::from(event);
        if event >= self.outside.len() {
            return;
        }
        match location {
            Location::Module { module, offset } => match self.modules.get_mut(&module) {
                Some(covered) => count(&mut covered.histograms[event], offset.0),
                None => self.outside[event] += 1,
            },
            _ => self.outside[event] += 1,
        }
    }

    /// What became of each event's samples.
    pub fn totals(&self) -> Vec<HistogramTotals> {
        (0..self.outside.len())
            .map(|event| {
                let mut stats = HistogramStats {
                    outside: self.outside[event],
                    ..Default::default()
                };
                for covered in self.modules.values() {
                    stats.add(covered.histograms[event].stats());
                }
                HistogramTotals {
                    in_region: stats.in_region,
                    outside: stats.outside,
                    saturated: stats.saturated,
                    dropped: stats.dropped,
                }
            })
            .collect()
    }

    /// The buckets, by module, event and region.
    pub fn regions(&self) -> Vec<ModuleRegion> {
        let mut regions = Vec::new();
        for (&module, covered) in &self.modules {
            for (event, histogram) in covered.histograms.iter().enumerate() {
                for (region, buckets) in histogram.regions() {
                    let event = event as EventIndex;
                    regions.push(ModuleRegion {
                        event,
                        module,
                        region: *region,
                        buckets: buckets.clone(),
                    });
                }
            }
        }
        regions
    }

    pub fn into_set(self, modules: ModuleTable) -> HistogramSet {
        HistogramSet {
            totals: self.totals(),
            regions: self.regions(),
            width: self.options.config.width,
            scale: self.options.scale,
            modules,
        }
    }
}

/// The parts of `from..to` that no range in `covered` contains.
fn uncovered(covered: &[(u64, u64)], from: u64, to: u64) -> Vec<(u64, u64)> {
    let mut parts = vec![(from, to)];
    for &(start, end) in covered {
        parts = parts
            .into_iter()
            .flat_map(|(a, b)| {
                if end <= a || start >= b {
                    vec![(a, b)]
                } else {
                    [(a, start.max(a)), (end.min(b), b)]
                        .into_iter()
                        .filter(|(x, y)| x < y)
                        .collect()
                }
            })
            .collect();
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(program_regions: Vec<ProgramRegion>) -> HistogramOptions {
        HistogramOptions {
            config: HistogramConfig::default(),
            scale: Scale::FULL,
            program_regions,
            program: Some("/bin/app".into()),
        }
    }

    fn sample(event: EventIndex) -> Sample {
        Sample {
            time: 0,
            pid: 1,
            tid: 1,
            cpu: 0,
            event,
            mode: crate::record::CpuMode::User,
            ip: crate::address::Avma(0),
            period: 1,
            callchain: Vec::new(),
            user_stack: None,
            read: Vec::new(),
        }
    }

    fn at(module: ModuleId, offset: u64) -> Location {
        Location::Module {
            module,
            offset: FileOffset(offset),
        }
    }

    #[test]
    fn uncovered_parts_of_a_range() {
        assert_eq!(uncovered(&[], 10, 20), vec![(10, 20)]);
        assert_eq!(uncovered(&[(10, 20)], 10, 20), vec![]);
        assert_eq!(uncovered(&[(12, 15)], 10, 20), vec![(10, 12), (15, 20)]);
        assert_eq!(uncovered(&[(0, 12), (18, 30)], 10, 20), vec![(12, 18)]);
    }

    #[test]
    fn modules_are_covered_once_and_samples_land_by_file_offset() {
        let mut h = ModuleHistograms::new(2, options(vec![]));
        h.cover(0, "/bin/app", FileOffset(0x1000), 0x1000).unwrap();
        h.cover(0, "/bin/app", FileOffset(0x1000), 0x1000).unwrap();
        h.cover(0, "/bin/app", FileOffset(0x1800), 0x1000).unwrap();
        h.pour(&sample(0), at(0, 0x1010), &[]);
        h.pour(&sample(1), at(0, 0x2010), &[]);
        h.pour(&sample(0), at(1, 0x1010), &[]);
        let kernel = Location::Kernel {
            address: crate::address::Avma(0xffff_ffff_8100_0000),
        };
        h.pour(&sample(0), kernel, &[]);
        let regions = h.regions();
        // Two regions (0x1000.. and the uncovered 0x2000..0x2800) per event.
        assert_eq!(regions.len(), 4);
        let totals = h.totals();
        assert_eq!((totals[0].in_region, totals[0].outside), (1, 2));
        assert_eq!((totals[1].in_region, totals[1].outside), (1, 0));
        let event0: Vec<&ModuleRegion> = regions.iter().filter(|r| r.event == 0).collect();
        assert_eq!(event0[0].region.offset, 0x1000);
        assert_eq!(event0[0].buckets.get(8), 1);
        assert_eq!(event0[1].region.offset, 0x2000);
    }

    #[test]
    fn program_regions_replace_whole_modules() {
        let region = ProgramRegion {
            start: FileOffset(0x1100),
            size: 0x10,
            scale: Scale::BYTE,
            given: "0x1100:0x1110:131072".into(),
        };
        let mut h = ModuleHistograms::new(1, options(vec![region]));
        h.cover(0, "/bin/app", FileOffset(0x1000), 0x1000).unwrap();
        h.cover(1, "/lib/libc.so.6", FileOffset(0x1000), 0x1000)
            .unwrap();
        h.pour(&sample(0), at(0, 0x1105), &[]);
        h.pour(&sample(0), at(0, 0x1200), &[]);
        h.pour(&sample(0), at(1, 0x1105), &[]);
        let regions = h.regions();
        assert_eq!(regions.len(), 1);
        assert_eq!(regions[0].buckets.get(5), 1);
        let totals = h.totals();
        assert_eq!((totals[0].in_region, totals[0].outside), (1, 2));
    }
}
