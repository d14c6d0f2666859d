//! gprof interop: a recording's histogram of one module as a `gmon.out`,
//! whose time-histogram records GNU `gprof -p` reads.
//!
//! Layout (glibc's `gmon/gmon.c`, binutils' `gprof/hist.c`): the header
//! `"gmon"`, version 1 and 12 spare bytes; then per region a tag byte 0
//! (`GMON_TAG_TIME_HIST`), `low_pc` and `high_pc` (pointer-sized), the
//! number of bins and the sampling rate (4 bytes each), the dimension (15
//! bytes) and its abbreviation (1 byte), then the bins, 16 bits each, all in
//! the machine's byte order. Addresses are the module's stated addresses,
//! which for a PIE are relative to its load address, as glibc writes them.
//!
//! gprof gives a bin to the function whose symbol lies before it, skipping
//! symbols it does not accept: GCC's copies of a function with a `.` suffix
//! other than `.constprop.N`, `.clone.N` and `.N` (`.isra.0`, `.part.0`,
//! `.cold`). Left where they are, their samples would swell the function
//! before them (a make_key at 9% for 1%); they are moved to a histogram of
//! their own below every symbol, where gprof counts them in its total but
//! in no function's row, so that every row it shows is as `report` has it,
//! and the summary names the functions it will not show.

use rustc_hash::FxHashMap;
use std::io::Write;

use profiler_histogram::{BucketWidth, Buckets, OnFull, Scale};
use profiler_model::{
    Detail, EventDescription, FileOffset, HistogramSet, ModuleRegion, ModuleSymbols, Recording,
    Sampling, Symbolizer,
};

use crate::error::ReportError;
use crate::read::events::select_events;
use crate::read::histograms::recording_histograms;
use crate::read::job::Job;
use crate::read::job_histograms::job_histograms;
use crate::views::hist::HistOptions;

/// What went into a `gmon.out`.
#[derive(Clone, Debug, PartialEq)]
pub struct GmonSummary {
    pub module: String,
    /// The module's file, which gprof needs beside the `gmon.out`.
    pub path: String,
    pub event: String,
    pub bins: usize,
    /// Samples in the bins.
    pub samples: u64,
    /// Bins that held more than 16 bits can and were capped at 65535.
    pub capped: usize,
    /// Samples of the event in every module's histograms.
    pub event_samples: u64,
    /// The module was chosen as the one with the most samples, not named.
    pub picked: bool,
    /// The functions gprof will not show (copies whose names it does not
    /// accept), with their samples: counted in its total, in no row.
    pub unshown: Vec<(String, u64)>,
}

/// Writes the histogram of one module (`options.module`, or the one with
/// the most samples) for one event (`options.event`, or the first) as a `gmon.out`.
/// The scale must give every bin the same whole number of bytes (a power of
/// two: 65536 by default).
pub fn write_gmon(
    recording: &Recording,
    symbolizer: &dyn Symbolizer,
    options: &HistOptions,
    out: &mut impl Write,
) -> Result<GmonSummary, ReportError> {
    let histograms = |width, scale| recording_histograms(recording, width, scale);
    gmon_of(recording, histograms, symbolizer, options, out)
}

/// [`write_gmon`] of every rank of `job`, their histograms summed: gprof
/// reads it as it reads `gprof -s`'s sum of gmon.out files.
pub fn write_job_gmon(
    job: &Job,
    symbolizer: &dyn Symbolizer,
    options: &HistOptions,
    out: &mut impl Write,
) -> Result<GmonSummary, ReportError> {
    let histograms = |width, scale| job_histograms(job, width, scale);
    gmon_of(job.recording(), histograms, symbolizer, options, out)
}

fn gmon_of(
    recording: &Recording,
    histograms: impl FnOnce(BucketWidth, Scale) -> Result<HistogramSet, ReportError>,
    symbolizer: &dyn Symbolizer,
    options: &HistOptions,
    out: &mut impl Write,
) -> Result<GmonSummary, ReportError> {
    let events = &recording.header.events;
    let wanted = select_events(events, options.event.as_deref())?;
    let event = wanted.iter().position(|&w| w).unwrap_or(0);
    let description = events
        .get(event)
        .ok_or_else(|| ReportError::Options("the recording has no events".into()))?;
    let scale = options.scale.unwrap_or(Scale::FULL);
    if recording.header.histogram.is_some() && options.scale.is_some() {
        return Err(ReportError::Options(
            "a histogram recording is exported at the scale it was recorded at; leave out --scale"
                .into(),
        ));
    }
    let set = histograms(BucketWidth::Bits16, scale)?;
    let module = pick_module(&set, event, options.module.as_deref())?;
    let info = set.modules.get(module);

    let regions: Vec<_> = set
        .regions
        .iter()
        .filter(|r| r.module == module && usize::from(r.event) == event)
        .collect();
    let starts: Vec<FileOffset> = regions
        .iter()
        .map(|r| FileOffset(r.region.offset))
        .collect();
    let symbols = symbolizer.symbolize(info, &starts, Detail::Functions);
    if let Some(problem) = symbols.problem {
        return Err(ReportError::Options(format!(
            "cannot place {} in gprof's addresses: {problem}",
            info.name()
        )));
    }
    for region in &regions {
        if !region.region.scale.is_uniform() {
            return Err(ReportError::Options(format!(
                "gprof needs bins of a whole number of bytes, and scale {} does not give them; use \
                 a power of two such as 65536",
                region.region.scale.value()
            )));
        }
    }
    let lows: Vec<u64> = (regions.iter().zip(&symbols.addresses))
        .map(|(region, symbol)| symbol.svma.map_or(region.region.offset, |s| s.0))
        .collect();
    let (kept, unshown) = set_apart_unshown(&regions, symbolizer, info);

    out.write_all(b"gmon")?;
    out.write_all(&1u32.to_ne_bytes())?;
    out.write_all(&[0; 12])?;
    let mut summary = GmonSummary {
        module: info.name().to_owned(),
        path: info.path.clone(),
        event: description.name.clone(),
        bins: 0,
        samples: 0,
        capped: 0,
        event_samples: (set.regions.iter())
            .filter(|r| usize::from(r.event) == event)
            .map(|r| r.buckets.total())
            .fold(0, u64::saturating_add),
        picked: options.module.is_none(),
        unshown: Vec::new(),
    };
    let hist = HistRecord::of(description);
    // The functions gprof does not show, in bins of their own below its
    // lowest symbol (a module's code never starts at 0: its headers do).
    let moved: u64 = unshown
        .iter()
        .map(|(_, n)| n)
        .fold(0, |a, &n| a.saturating_add(n));
    let lowest = lows.iter().copied().min().unwrap_or(0);
    if moved > 0 {
        let bins = moved.div_ceil(u64::from(u16::MAX));
        if bins.saturating_mul(2) <= lowest {
            let mut buckets = Buckets::new(BucketWidth::Bits16, bins as usize);
            let mut left = moved;
            for bin in 0..bins as usize {
                let count = left.min(u64::from(u16::MAX));
                buckets.add(bin, count, OnFull::Saturate);
                left -= count;
            }
            hist.write(0, bins * 2, &buckets, &mut summary, out)?;
            summary.unshown = unshown;
        }
    }
    for ((region, buckets), low) in regions.iter().zip(&kept).zip(&lows) {
        let span = region.region.end() - region.region.offset;
        // Code stated at the end of the address space ends there.
        hist.write(*low, low.saturating_add(span), buckets, &mut summary, out)?;
    }
    Ok(summary)
}

/// The bins of `regions` with those of functions gprof does not show
/// emptied, and those functions with their samples, the most first.
fn set_apart_unshown(
    regions: &[&ModuleRegion],
    symbolizer: &dyn Symbolizer,
    module: &profiler_model::Module,
) -> (Vec<Buckets>, Vec<(String, u64)>) {
    let mut offsets: Vec<FileOffset> = (regions.iter())
        .flat_map(|r| {
            (r.buckets.nonzero().into_iter()).map(|(i, _)| FileOffset(r.region.first_address(i)))
        })
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    let ModuleSymbols { addresses, .. } = symbolizer.symbolize(module, &offsets, Detail::Functions);
    let unshown_at: FxHashMap<FileOffset, String> = (offsets.iter().zip(addresses))
        .filter_map(|(offset, symbol)| {
            let function = symbol.function?;
            let name = function.name?;
            let symbol_name = function.linkage_name.unwrap_or_else(|| name.clone());
            (!gprof_shows(&symbol_name)).then(|| (*offset, name.to_string()))
        })
        .collect();
    let mut unshown: FxHashMap<String, u64> = FxHashMap::default();
    let kept = (regions.iter())
        .map(|region| {
            let mut kept = Buckets::new(region.buckets.width(), region.buckets.len());
            for (index, count) in region.buckets.nonzero() {
                let offset = FileOffset(region.region.first_address(index));
                match unshown_at.get(&offset) {
                    Some(name) => {
                        let moved = unshown.entry(name.clone()).or_default();
                        *moved = moved.saturating_add(count);
                    }
                    None => {
                        kept.add(index, count, OnFull::Saturate);
                    }
                }
            }
            kept
        })
        .collect();
    let mut unshown: Vec<(String, u64)> = unshown.into_iter().collect();
    unshown.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    (kept, unshown)
}

/// Whether gprof shows the function of symbol `name`, by the rule of its
/// `core_sym_class`: no `$`, and after a `.` only digits (`.1`), which
/// `.clone.` and `.constprop.` may precede, repeatedly.
fn gprof_shows(name: &str) -> bool {
    let bytes = name.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'$' => return false,
            b'.' => {
                let rest = &name[at..];
                for accepted in [".clone.", ".constprop."] {
                    if rest.len() > accepted.len() && rest.starts_with(accepted) {
                        at += accepted.len() - 1;
                    }
                }
                at += 1;
                let mut digits = false;
                while at < bytes.len() && !(digits && bytes[at] == b'.') {
                    if !bytes[at].is_ascii_digit() {
                        return false;
                    }
                    digits = true;
                    at += 1;
                }
            }
            _ => at += 1,
        }
    }
    true
}

/// What each histogram record of one event states besides its range and
/// bins.
struct HistRecord {
    rate: u32,
    dimension: [u8; 15],
    abbreviation: u8,
}

impl HistRecord {
    fn of(event: &EventDescription) -> HistRecord {
        let (rate, dimension, abbreviation) = rate_and_dimension(event);
        HistRecord {
            rate,
            dimension,
            abbreviation,
        }
    }

    /// Writes a histogram record of `buckets` over `low..high`, adding its
    /// bins and samples to `summary`.
    fn write(
        &self,
        low: u64,
        high: u64,
        buckets: &Buckets,
        summary: &mut GmonSummary,
        out: &mut impl Write,
    ) -> Result<(), ReportError> {
        let bins = buckets.len();
        out.write_all(&[0])?;
        out.write_all(&low.to_ne_bytes())?;
        out.write_all(&high.to_ne_bytes())?;
        out.write_all(&(bins as u32).to_ne_bytes())?;
        out.write_all(&self.rate.to_ne_bytes())?;
        out.write_all(&self.dimension)?;
        out.write_all(&[self.abbreviation])?;
        // The bins in one write: a large module has millions.
        let mut bins_bytes = Vec::new();
        let (samples, capped) = buckets.write_u16_ne(&mut bins_bytes);
        summary.samples = summary.samples.saturating_add(samples);
        summary.capped += capped;
        summary.bins += bins;
        out.write_all(&bins_bytes)?;
        Ok(())
    }
}

/// gprof divides a bin's count by the rate to get its time: for a clock,
/// samples per second of it (`seconds`); for another event, 1 (`samples`).
fn rate_and_dimension(event: &EventDescription) -> (u32, [u8; 15], u8) {
    let per_second = match (event.unit.as_str(), event.sampling) {
        ("ns", Sampling::Frequency(hz)) => Some(hz),
        ("ns", Sampling::Period(ns)) => Some((1_000_000_000 / ns.max(1)).max(1)),
        _ => None,
    };
    let (rate, name) = match per_second {
        Some(rate) => (rate.min(u64::from(u32::MAX)) as u32, "seconds"),
        None => (1, "samples"),
    };
    let mut dimension = [0u8; 15];
    dimension[..name.len()].copy_from_slice(name.as_bytes());
    (rate, dimension, name.as_bytes()[0])
}

/// The module named, or the one with the most samples of `event` (a
/// program that is a script shim, or that spends its time in a library,
/// has few or none).
fn pick_module(set: &HistogramSet, event: usize, wanted: Option<&str>) -> Result<u32, ReportError> {
    let with_regions = || set.regions.iter().map(|r| r.module);
    let found = match wanted {
        Some(wanted) => with_regions().find(|&id| {
            let module = set.modules.get(id);
            module.name() == wanted || module.path == wanted
        }),
        None => {
            let mut samples: FxHashMap<u32, u64> = FxHashMap::default();
            for r in set.regions.iter().filter(|r| usize::from(r.event) == event) {
                let count = samples.entry(r.module).or_default();
                *count = count.saturating_add(r.buckets.total());
            }
            (samples.into_iter())
                .filter(|&(_, n)| n > 0)
                .max_by_key(|&(id, n)| (n, std::cmp::Reverse(id)))
                .map(|(id, _)| id)
        }
    };
    found.ok_or_else(|| {
        if wanted.is_none() {
            return ReportError::Options(
                "the recording has no samples of the event to write as a gmon.out; \
                 record longer or more often"
                    .to_owned(),
            );
        }
        let mut names: Vec<&str> = with_regions()
            .map(|id| set.modules.get(id).name())
            .collect();
        names.sort();
        names.dedup();
        ReportError::UnknownModule {
            requested: wanted.unwrap_or_default().to_owned(),
            available: names.join(", "),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gprof_shows_constprop_clone_and_numbered_copies_only() {
        for shown in [
            "make_key",
            "f.constprop.0",
            "f.clone.3",
            "f.7",
            "f.constprop.0.5",
            "_Z3fooi",
        ] {
            assert!(gprof_shows(shown), "{shown}");
        }
        for hidden in [
            "f.isra.0",
            "f.part.0",
            "f.cold",
            "f.constprop.0.isra.0",
            "_Z3fooi.isra.0",
            "a$b",
        ] {
            assert!(!gprof_shows(hidden), "{hidden}");
        }
    }
}
