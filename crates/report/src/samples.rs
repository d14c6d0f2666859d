//! Where a recording's samples lay (module and file offset), counted per
//! event and per thread: from the samples of a full recording (two streaming
//! passes: side-band records first, then samples), or from the buckets of a
//! histogram recording (each bucket's count at its first address).

use std::collections::HashMap;

use profiler_histogram::{BucketWidth, Scale};
use profiler_model::{FileOffset, Location, ModuleTable, ProcessModelBuilder, Record, Recording};

use crate::error::ReportError;
use crate::histograms::recording_histograms;

/// Samples and the events they stand for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Weight {
    pub samples: u64,
    pub period: u64,
}

impl Weight {
    pub fn add(&mut self, other: Weight) {
        self.samples += other.samples;
        self.period += other.period;
    }
}

/// What the samples of a recording add up to, before symbolization.
pub(crate) struct SampleCounts {
    pub modules: ModuleTable,
    /// Per event (indexed like the header's events): weight per location.
    pub by_location: Vec<HashMap<Location, Weight>>,
    /// Per thread: samples of every event, and the thread's name.
    pub threads: Vec<ThreadCount>,
}

pub(crate) struct ThreadCount {
    pub pid: u32,
    pub tid: u32,
    pub name: String,
    pub samples: u64,
}

/// Counts the samples of the events `wanted` (indices into the header's
/// events).
pub(crate) fn count_samples(
    recording: &Recording,
    wanted: &[bool],
) -> Result<SampleCounts, ReportError> {
    if recording.header.histogram.is_some() {
        count_buckets(recording, wanted)
    } else {
        count_sample_records(recording, wanted)
    }
}

/// A histogram recording's buckets as counts at their first addresses.
/// Samples outside the histograms have no address and are left out.
fn count_buckets(recording: &Recording, wanted: &[bool]) -> Result<SampleCounts, ReportError> {
    let set = recording_histograms(recording, BucketWidth::default(), Scale::FULL)?;
    let mut by_location = vec![HashMap::new(); wanted.len()];
    for r in &set.regions {
        let event = usize::from(r.event);
        if !wanted.get(event).copied().unwrap_or(false) {
            continue;
        }
        for (index, count) in r.buckets.counts().enumerate().filter(|(_, c)| *c > 0) {
            let offset = FileOffset(r.region.first_address(index));
            let location = Location::Module {
                module: r.module,
                offset,
            };
            let weight: &mut Weight = by_location[event].entry(location).or_default();
            weight.add(Weight {
                samples: count,
                period: count,
            });
        }
    }
    Ok(SampleCounts {
        modules: set.modules,
        by_location,
        threads: Vec::new(),
    })
}

fn count_sample_records(
    recording: &Recording,
    wanted: &[bool],
) -> Result<SampleCounts, ReportError> {
    let mut builder = ProcessModelBuilder::new();
    for record in recording.records()? {
        builder.add(&record?);
    }
    let model = builder.build();

    let mut by_location = vec![HashMap::new(); wanted.len()];
    let mut threads: HashMap<(u32, u32), (u64, u64)> = HashMap::new();
    for record in recording.records()? {
        let Record::Sample(sample) = record? else {
            continue;
        };
        let event = usize::from(sample.event);
        if !wanted.get(event).copied().unwrap_or(false) {
            continue;
        }
        let location = model.resolve(&sample);
        let weight: &mut Weight = by_location[event].entry(location).or_default();
        weight.add(Weight {
            samples: 1,
            period: sample.period,
        });
        let (count, last_time) = threads.entry((sample.pid, sample.tid)).or_default();
        *count += 1;
        *last_time = (*last_time).max(sample.time);
    }
    let mut threads: Vec<ThreadCount> = threads
        .into_iter()
        .map(|((pid, tid), (samples, time))| ThreadCount {
            pid,
            tid,
            name: model.thread_name(tid, time).unwrap_or("").to_owned(),
            samples,
        })
        .collect();
    threads.sort_by(|a, b| {
        b.samples
            .cmp(&a.samples)
            .then(a.pid.cmp(&b.pid))
            .then(a.tid.cmp(&b.tid))
    });
    Ok(SampleCounts {
        modules: model.into_modules(),
        by_location,
        threads,
    })
}
