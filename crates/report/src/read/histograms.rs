//! The histograms of a recording: those a histogram-mode recording kept, or
//! ones built now from a full recording's samples, at any scale.

use profiler_histogram::{BucketWidth, HistogramConfig, Region, Scale};
use rustc_hash::FxHashSet;

use profiler_model::{
    HistogramOptions, HistogramSet, Location, MemberDeltas, ModuleHistograms, ModuleRegion,
    ModuleTable, Record, Recording,
};

use crate::error::ReportError;

/// The histograms of `recording`. A histogram-mode recording gives back what
/// it kept; a full recording's samples are poured into histograms over every
/// mapped module at `scale` with buckets of `width` (saturating).
pub fn recording_histograms(
    recording: &Recording,
    width: BucketWidth,
    scale: Scale,
) -> Result<HistogramSet, ReportError> {
    match &recording.header.histogram {
        Some(_) => stored_histograms(recording),
        None => histograms_from_samples(recording, width, scale),
    }
}

fn stored_histograms(recording: &Recording) -> Result<HistogramSet, ReportError> {
    let corrupt = |what: String| ReportError::Histogram {
        path: recording.path().to_owned(),
        what,
    };
    let mut modules = ModuleTable::default();
    let mut regions = Vec::new();
    let mut shape: Option<(BucketWidth, Scale)> = None;
    let mut bucket_bytes = 0u64;
    for record in recording.records()? {
        let Record::Histogram(h) = record? else {
            continue;
        };
        // Only the buckets held cost memory: those that counted.
        let width = h.buckets.width();
        let held = (h.buckets.held() as u64).saturating_mul(width.bytes() as u64);
        bucket_bytes = bucket_bytes.saturating_add(held);
        if bucket_bytes > MAX_BUCKET_BYTES {
            return Err(corrupt(format!(
                "its histograms hold more than {} MiB of buckets",
                MAX_BUCKET_BYTES >> 20
            )));
        }
        let scale = Scale::new(u64::from(h.scale)).map_err(|e| corrupt(e.to_string()))?;
        let buckets = h.buckets;
        let region = Region::with_buckets(h.start.0, buckets.len() as u64, scale)
            .map_err(|e| corrupt(e.to_string()))?;
        let module = modules.intern(&h.path, h.build_id.as_ref(), None);
        // The first region's scale is the recording's (program regions may differ).
        shape.get_or_insert((width, scale));
        regions.push(ModuleRegion {
            event: h.event,
            module,
            region,
            buckets,
        });
    }
    let settings = recording.header.histogram.clone().unwrap_or_default();
    let (width, scale) = shape.unwrap_or((
        BucketWidth::from_bits(u64::from(settings.bucket_bits)).unwrap_or_default(),
        Scale::new(u64::from(settings.scale)).unwrap_or(Scale::FULL),
    ));
    Ok(HistogramSet {
        modules,
        width,
        scale,
        regions,
        totals: recording.trailer.histogram_totals.clone(),
    })
}

/// At most this many bytes of buckets for a recording's histograms, kept
/// or built from its samples.
const MAX_BUCKET_BYTES: u64 = 1 << 30;

/// Only the modules with samples get buckets, once their first sample is
/// seen: a recording may map many more (300,000 mappings of text cost
/// nothing until a sample lands in one).
fn histograms_from_samples(
    recording: &Recording,
    width: BucketWidth,
    scale: Scale,
) -> Result<HistogramSet, ReportError> {
    let error = |what: String| ReportError::Histogram {
        path: recording.path().to_owned(),
        what,
    };
    let (model, samples) = recording.replay()?;
    let options = HistogramOptions {
        config: HistogramConfig {
            width,
            ..HistogramConfig::default()
        },
        scale,
        program_regions: Vec::new(),
        program: None,
    };
    let events = recording.header.events.len() as u64;
    let mut histograms = ModuleHistograms::new(recording.header.events.len(), options);
    let mut covered = FxHashSet::default();
    let mut bucket_bytes = 0u64;
    let mut members = MemberDeltas::default();
    for sample in samples {
        let sample = sample?;
        let location = model.resolve(&sample);
        if let Location::Module { module: id, .. } = location
            && covered.insert(id)
        {
            let path = &model.modules().get(id).path;
            for &(start, len) in model.module_ranges(id) {
                let region =
                    Region::new(start.0, len.max(1), scale).map_err(|e| error(e.to_string()))?;
                let bytes = (region.bucket_count() as u64)
                    .saturating_mul(width.bytes() as u64)
                    .saturating_mul(events);
                bucket_bytes = bucket_bytes.saturating_add(bytes);
                if bucket_bytes > MAX_BUCKET_BYTES {
                    return Err(error(format!(
                        "the text of the sampled modules needs more than {} MiB of buckets at \
                         scale {}; give a smaller --scale",
                        MAX_BUCKET_BYTES >> 20,
                        scale.value()
                    )));
                }
                histograms
                    .cover(id, path, start, len)
                    .map_err(|e| error(e.to_string()))?;
            }
        }
        let deltas = members.of(&sample);
        histograms.pour(&sample, location, &deltas);
    }
    Ok(histograms.into_set(model.into_modules()))
}
