//! Choosing which of a recording's events to report.

use profiler_model::EventDescription;

use crate::error::ReportError;

/// Which of `events` to report: all, or the one named (or numbered).
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
    let selected: Vec<bool> = events
        .iter()
        .enumerate()
        .map(|(i, e)| matches(i, e))
        .collect();
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
