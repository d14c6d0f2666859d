//! A job's histograms as one set: each rank's (kept by a histogram
//! recording, or built from its samples) read side by side, their modules
//! made one table as the stacks' are (one module per build-id), and the
//! buckets of the same region of the same module summed, saturating.

use rustc_hash::FxHashMap;

use profiler_histogram::{BucketWidth, OnFull, Scale};
use profiler_model::{
    BuildId, HistogramSet, HistogramTotals, ModuleId, ModuleRegion, ModuleTable, Recording,
};

use crate::error::ReportError;
use crate::read::histograms::recording_histograms;
use crate::read::job::{Job, add_totals, in_parallel};

/// The histograms of every rank of `job`, summed, at `width` and `scale`
/// where they are built from samples.
pub(crate) fn job_histograms(
    job: &Job,
    width: BucketWidth,
    scale: Scale,
) -> Result<HistogramSet, ReportError> {
    let recordings: Vec<&Recording> = job.ranks().map(|(_, recording)| recording).collect();
    let sets = in_parallel(&recordings, |recording| {
        recording_histograms(recording, width, scale)
    });
    let mut merged: Option<HistogramSet> = None;
    let mut by_build: FxHashMap<BuildId, ModuleId> = FxHashMap::default();
    let mut by_place: FxHashMap<(u16, ModuleId, u64, usize), usize> = FxHashMap::default();
    for set in sets {
        let set = set?;
        let total = merged.get_or_insert_with(|| HistogramSet {
            modules: ModuleTable::default(),
            width: set.width,
            scale: set.scale,
            regions: Vec::new(),
            totals: Vec::new(),
        });
        let ids: Vec<ModuleId> = (set.modules.iter())
            .map(|(_, module)| match module.build_id.as_ref() {
                Some(build) => *by_build.entry(build.clone()).or_insert_with(|| {
                    (total.modules).intern(&module.path, Some(build), module.pid)
                }),
                None => total.modules.intern(&module.path, None, module.pid),
            })
            .collect();
        for region in set.regions {
            let module = ids[region.module as usize];
            let place = (
                region.event,
                module,
                region.region.offset,
                region.buckets.len(),
            );
            match by_place.get(&place) {
                Some(&at) => add_buckets(&mut total.regions[at], &region, &mut total.totals),
                None => {
                    by_place.insert(place, total.regions.len());
                    total.regions.push(ModuleRegion { module, ..region });
                }
            }
        }
        add_totals(&mut total.totals, &set.totals);
    }
    merged.ok_or_else(|| ReportError::Job("no recording to read".into()))
}

/// Adds the counts of `more` to `sum`'s buckets, saturating; what a full
/// bucket could not hold is counted in the event's totals.
fn add_buckets(sum: &mut ModuleRegion, more: &ModuleRegion, totals: &mut Vec<HistogramTotals>) {
    let event = usize::from(sum.event);
    let mut saturated = 0u64;
    for (index, count) in more.buckets.nonzero() {
        let before = sum.buckets.get(index);
        if !sum.buckets.add(index, count, OnFull::Saturate) {
            let held = sum.buckets.get(index).saturating_sub(before);
            saturated = saturated.saturating_add(count.saturating_sub(held));
        }
    }
    if saturated > 0 {
        if totals.len() <= event {
            totals.resize(event + 1, HistogramTotals::default());
        }
        totals[event].saturated = totals[event].saturated.saturating_add(saturated);
    }
}
