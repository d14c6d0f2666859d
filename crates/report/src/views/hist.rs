//! The histogram table: one row per nonzero bucket, with its first address
//! (the exact inverse of PAPI's mapping), its symbol and offset, and one
//! count per event.

use std::collections::{BTreeMap, BTreeSet};

use profiler_histogram::{BucketWidth, Buckets, OnFull, Region, Scale};
use profiler_model::{
    Detail, EventDescription, FileOffset, HistogramSet, HistogramTotals, ModuleId, Recording,
    Symbolizer,
};

use crate::error::ReportError;
use crate::read::events::select_events;
use crate::read::histograms::recording_histograms;
use crate::read::job::Job;
use crate::read::job_histograms::job_histograms;

/// Choices for [`histogram_table`].
#[derive(Clone, Debug, Default)]
pub struct HistOptions {
    /// Only this event (name or index); `None`: every event, side by side.
    pub event: Option<String>,
    /// Only this module (its file name or path).
    pub module: Option<String>,
    /// Bucket width; `None`: the recording's, or 16 bits.
    pub width: Option<BucketWidth>,
    /// Scale; `None`: the recording's, or 65536.
    pub scale: Option<Scale>,
}

#[derive(Clone, Debug)]
pub struct HistTable {
    pub width: BucketWidth,
    pub scale: Scale,
    pub events: Vec<EventDescription>,
    /// Per event (like `events`): what became of its samples.
    pub totals: Vec<HistogramTotals>,
    pub regions: Vec<TableRegion>,
    pub rows: Vec<HistRow>,
    /// Why some modules' addresses are unnamed.
    pub problems: Vec<String>,
}

/// A region of buckets, as the header describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableRegion {
    pub module: String,
    pub path: String,
    /// The stated address of its first byte (the file offset if unknown).
    pub address: u64,
    pub scale: Scale,
    pub buckets: usize,
    /// Bytes of bucket buffer: buckets times the width.
    pub bytes: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistRow {
    /// The stated address of the bucket's first byte (the file offset when
    /// the file cannot be read).
    pub address: u64,
    pub module: String,
    /// `function+0xOFFSET`, or `module+0xADDRESS` for code without a name.
    pub symbol: String,
    /// One count per event.
    pub counts: Vec<u64>,
}

/// The histogram table of `recording`.
pub fn histogram_table(
    recording: &Recording,
    symbolizer: &dyn Symbolizer,
    options: &HistOptions,
) -> Result<HistTable, ReportError> {
    let histograms = |width, scale| recording_histograms(recording, width, scale);
    table_of(recording, histograms, symbolizer, options)
}

/// The histogram table of every rank of `job`, their buckets summed.
pub fn job_histogram_table(
    job: &Job,
    symbolizer: &dyn Symbolizer,
    options: &HistOptions,
) -> Result<HistTable, ReportError> {
    let histograms = |width, scale| job_histograms(job, width, scale);
    table_of(job.recording(), histograms, symbolizer, options)
}

/// The table of the histograms `histograms` gives (at a width and scale
/// for those built from samples), of a recording with `recording`'s header.
fn table_of(
    recording: &Recording,
    histograms: impl FnOnce(BucketWidth, Scale) -> Result<HistogramSet, ReportError>,
    symbolizer: &dyn Symbolizer,
    options: &HistOptions,
) -> Result<HistTable, ReportError> {
    let events = &recording.header.events;
    let wanted = select_events(events, options.event.as_deref())?;
    let width = options.width.unwrap_or_default();
    let scale = options.scale.unwrap_or(Scale::FULL);
    let mut set = histograms(width, scale)?;
    if recording.header.histogram.is_some() && (options.width.is_some() || options.scale.is_some())
    {
        let (width, scale) = (
            options.width.unwrap_or(set.width),
            options.scale.unwrap_or(set.scale),
        );
        rebucket(&mut set, width, scale)?;
    }
    let modules = select_modules(&set, options.module.as_deref())?;

    // Per (module, region start): the region and one bucket array per event.
    let selected: Vec<usize> = (0..events.len()).filter(|&i| wanted[i]).collect();
    let mut grouped: BTreeMap<(ModuleId, u64), RegionColumns<'_>> = BTreeMap::new();
    for r in set.regions.iter().filter(|r| modules.contains(&r.module)) {
        let Some(column) = selected.iter().position(|&e| e == usize::from(r.event)) else {
            continue;
        };
        let entry = grouped
            .entry((r.module, r.region.offset))
            .or_insert_with(|| (r.region, vec![None; selected.len()]));
        entry.1[column] = Some(&r.buckets);
    }

    // The nonzero buckets, and the offsets the symbolizer must name.
    let mut wanted_offsets: BTreeMap<ModuleId, BTreeSet<FileOffset>> = BTreeMap::new();
    let mut raw_rows = Vec::new();
    for (&(module, _), (region, columns)) in &grouped {
        wanted_offsets
            .entry(module)
            .or_default()
            .insert(FileOffset(region.offset));
        // Regions of one place but of different lengths (a crafted
        // recording) count nothing past their own end.
        let count = |b: &Option<&Buckets>, index: usize| {
            b.filter(|b| index < b.len()).map_or(0, |b| b.get(index))
        };
        // Most buckets of a large module are empty: only the others are
        // worth a row.
        let used: BTreeSet<usize> = (columns.iter().flatten())
            .flat_map(|b| b.nonzero())
            .map(|(index, _)| index)
            .filter(|&index| index < region.bucket_count())
            .collect();
        for index in used {
            let counts: Vec<u64> = columns.iter().map(|b| count(b, index)).collect();
            let offset = FileOffset(region.first_address(index));
            wanted_offsets.entry(module).or_default().insert(offset);
            raw_rows.push((module, offset, counts));
        }
    }
    let names = Naming::new(&set, &wanted_offsets, symbolizer);

    let mut rows: Vec<HistRow> = raw_rows
        .into_iter()
        .map(|(module, offset, counts)| {
            let (address, symbol) = names.describe(module, offset);
            HistRow {
                address,
                module: names.module_name(module).to_owned(),
                symbol,
                counts,
            }
        })
        .collect();
    rows.sort_by(|a, b| (&a.module, a.address).cmp(&(&b.module, b.address)));
    let regions = grouped
        .iter()
        .filter(|(_, (region, columns))| {
            (columns.iter().flatten())
                .any(|b| b.nonzero().iter().any(|&(i, _)| i < region.bucket_count()))
        })
        .map(|(&(module, _), (region, _))| TableRegion {
            module: names.module_name(module).to_owned(),
            path: set.modules.get(module).path.clone(),
            address: names.describe(module, FileOffset(region.offset)).0,
            scale: region.scale,
            buckets: region.bucket_count(),
            bytes: region.bucket_count() * set.width.bytes(),
        })
        .collect();
    let totals = selected
        .iter()
        .map(|&e| set.totals.get(e).copied().unwrap_or_default())
        .collect();
    Ok(HistTable {
        width: set.width,
        scale: set.scale,
        events: selected.iter().map(|&e| events[e].clone()).collect(),
        totals,
        regions,
        rows,
        problems: names.problems,
    })
}

/// A region of a module, with one bucket array per selected event (none
/// where that event has no buckets there).
type RegionColumns<'a> = (Region, Vec<Option<&'a Buckets>>);

/// The modules `wanted` names (by file name or path), or all of them.
fn select_modules(
    set: &HistogramSet,
    wanted: Option<&str>,
) -> Result<BTreeSet<ModuleId>, ReportError> {
    let all: BTreeSet<ModuleId> = set.regions.iter().map(|r| r.module).collect();
    let Some(wanted) = wanted else { return Ok(all) };
    let chosen: BTreeSet<ModuleId> = all
        .iter()
        .copied()
        .filter(|&id| {
            let module = set.modules.get(id);
            module.name() == wanted || module.path == wanted
        })
        .collect();
    if chosen.is_empty() {
        let mut names: Vec<&str> = all.iter().map(|&id| set.modules.get(id).name()).collect();
        names.sort();
        names.dedup();
        return Err(ReportError::UnknownModule {
            requested: wanted.to_owned(),
            available: names.join(", "),
        });
    }
    Ok(chosen)
}

/// Re-buckets a stored histogram at a coarser scale or another width. Each
/// old bucket's count goes to the new bucket holding its first address;
/// counts a narrower bucket cannot hold saturate and are counted.
fn rebucket(set: &mut HistogramSet, width: BucketWidth, scale: Scale) -> Result<(), ReportError> {
    for r in &mut set.regions {
        if scale > r.region.scale {
            return Err(ReportError::Options(format!(
                "this recording's histograms were made at scale {}; they can be shown at that \
                 scale or a smaller (coarser) one, not at {}; record again with --scale {}",
                r.region.scale.value(),
                scale.value(),
                scale.value()
            )));
        }
        let end = r.region.end();
        let region = Region::new(r.region.offset, end - r.region.offset, scale)
            .map_err(|e| ReportError::Options(e.to_string()))?;
        // Sparse buckets stay sparse: a region may be any size.
        let mut buckets = match r.buckets {
            Buckets::Sparse(_) => Buckets::sparse(width, region.bucket_count()),
            _ => Buckets::new(width, region.bucket_count()),
        };
        for (index, count) in r.buckets.nonzero() {
            let new_index = region.index_of(r.region.first_address(index));
            if let Some(new_index) = new_index
                && !buckets.add(new_index, count, OnFull::Saturate)
                && let Some(totals) = set.totals.get_mut(usize::from(r.event))
            {
                totals.saturated += 1;
            }
        }
        r.region = region;
        r.buckets = buckets;
    }
    set.width = width;
    set.scale = scale;
    Ok(())
}

/// Names for bucket addresses, from one symbolizer call per module.
struct Naming<'a> {
    set: &'a HistogramSet,
    names: BTreeMap<(ModuleId, FileOffset), (u64, String)>,
    problems: Vec<String>,
}

impl<'a> Naming<'a> {
    fn new(
        set: &'a HistogramSet,
        offsets: &BTreeMap<ModuleId, BTreeSet<FileOffset>>,
        symbolizer: &dyn Symbolizer,
    ) -> Naming<'a> {
        let mut names = BTreeMap::new();
        let mut problems = Vec::new();
        for (&module, offsets) in offsets {
            let offsets: Vec<FileOffset> = offsets.iter().copied().collect();
            let info = set.modules.get(module);
            let symbols = symbolizer.symbolize(info, &offsets, Detail::Functions);
            problems.extend(symbols.problem);
            problems.extend(symbols.notes);
            for (offset, symbol) in offsets.iter().zip(&symbols.addresses) {
                let address = symbol.svma.map_or(offset.0, |s| s.0);
                let text = match (&symbol.function, symbol.relative) {
                    (Some(f), Some(relative)) if f.name.is_some() => {
                        let name = f.name.as_deref().unwrap_or_default();
                        match relative.0 - f.start.0 {
                            0 => name.to_owned(),
                            within => format!("{name}+{within:#x}"),
                        }
                    }
                    (_, Some(relative)) => format!("{}+{:#x}", info.name(), relative.0),
                    _ => format!("{}+{:#x}", info.name(), offset.0),
                };
                names.insert((module, *offset), (address, text));
            }
        }
        Naming {
            set,
            names,
            problems,
        }
    }

    fn describe(&self, module: ModuleId, offset: FileOffset) -> (u64, String) {
        self.names
            .get(&(module, offset))
            .cloned()
            .unwrap_or_else(|| {
                (
                    offset.0,
                    format!("{}+{:#x}", self.module_name(module), offset.0),
                )
            })
    }

    fn module_name(&self, module: ModuleId) -> &str {
        self.set.modules.get(module).name()
    }
}
