//! The pass over a recording's samples: each resolved to where it lay (module
//! and file offset) and counted, per event and per thread. Two streaming
//! passes over the file: side-band records first, then samples.

use std::collections::HashMap;

use profiler_model::{Location, ProcessModel, ProcessModelBuilder, Record, Recording};

use crate::error::ReportError;

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
    pub model: ProcessModel,
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
        model,
        by_location,
        threads,
    })
}
