//! Choosing which of a recording's events to report.

use profiler_model::EventDescription;

use crate::error::ReportError;

/// Which of `events` to report: all, or the one named (or numbered) with
/// the rest of its group: members count with their leader's samples.
pub(crate) fn select_events(
    events: &[EventDescription],
    wanted: Option<&str>,
) -> Result<Vec<bool>, ReportError> {
    let Some(wanted) = wanted else {
        return Ok(vec![true; events.len()]);
    };
    let matches = |i: usize, e: &EventDescription| {
        e.name == wanted
            || e.name.split(':').next() == Some(wanted)
            || wanted.parse::<usize>() == Ok(i)
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
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    })
}
