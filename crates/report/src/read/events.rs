//! Choosing which of a recording's events to report, and what their
//! samples count.

use profiler_model::{EventDescription, EventRole, Recording, Sampling};

use crate::error::ReportError;
use crate::read::weight::Weight;

/// The events one sample of `event` stands for: its fixed period, or the
/// mean of its samples' when sampled by frequency.
pub(crate) fn sample_period(recording: &Recording, event: usize) -> u64 {
    match recording.header.events[event].sampling {
        Sampling::Period(period) => period,
        Sampling::Frequency(_) => {
            let stats = recording.trailer.stats.events.get(event);
            stats.map_or(0, |s| s.period / s.samples.max(1))
        }
    }
}

/// The events that `weight`, samples of `event`, stand for. A histogram's
/// buckets count samples (or, with the weighted flag, events): each
/// sample stands for the mean period.
pub(crate) fn events_of(recording: &Recording, event: usize, weight: Weight) -> u64 {
    match &recording.header.histogram {
        Some(histogram) if !histogram.weighted => {
            (weight.samples).saturating_mul(sample_period(recording, event))
        }
        _ => weight.period,
    }
}

/// Which of `events` to report: all, or the one named (or numbered) with
/// the rest of its group: members count with their leader's samples. The
/// samples taken as threads leave the CPU are read as the off-CPU event's,
/// never as their own; the wall event, which counts the others' samples
/// again, is reported when asked for.
pub(crate) fn select_events(
    events: &[EventDescription],
    wanted: Option<&str>,
) -> Result<Vec<bool>, ReportError> {
    let Some(wanted) = wanted else {
        return Ok((events.iter())
            .map(|e| !matches!(e.role, EventRole::SwitchOut | EventRole::Wall))
            .collect());
    };
    let matches = |i: usize, e: &EventDescription| {
        e.role != EventRole::SwitchOut
            && (e.name == wanted
                || e.name.split(':').next() == Some(wanted)
                || wanted.parse::<usize>() == Ok(i))
    };
    let mut selected: Vec<bool> = events
        .iter()
        .enumerate()
        .map(|(i, e)| matches(i, e))
        .collect();
    for (i, event) in events.iter().enumerate() {
        let Some(leader) = event.leader.map(usize::from).filter(|&l| l < events.len()) else {
            continue;
        };
        selected[leader] |= selected[i];
    }
    for (i, event) in events.iter().enumerate() {
        if let Some(leader) = event.leader.map(usize::from).filter(|&l| l < events.len()) {
            selected[i] |= selected[leader];
        }
    }
    if selected.contains(&true) {
        return Ok(selected);
    }
    Err(ReportError::UnknownEvent {
        requested: wanted.to_owned(),
        available: events
            .iter()
            .filter(|e| e.role != EventRole::SwitchOut)
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    })
}
