//! `profiler list`'s probe: each listed event with an encoding opened for a
//! moment as a counter on this process, user space only, then closed, and
//! said usable or not and why.

use profiler_events::{EventSpec, ListedEvent, Usability};

use crate::builder::counter_builder;
use crate::refusal;

/// Probes every event of `events` that has an encoding and has not been
/// tried yet; syntax lines and events without an encoding stay as they are.
pub fn probe_events(events: &mut [ListedEvent]) {
    for event in events {
        if let (Some(spec), Usability::NotProbed) = (&event.spec, &event.usability) {
            event.usability = probe(spec, event.system_wide);
        }
    }
}

/// Opens `spec` as a counter on this process, user space only, and closes
/// it again.
fn probe(spec: &EventSpec, system_wide: bool) -> Usability {
    let mut builder = counter_builder(spec);
    builder
        .exclude_user(false)
        .exclude_kernel(true)
        .exclude_hv(true);
    match refusal::probe(&mut builder, spec) {
        Ok(()) => Usability::Usable,
        Err(_) if system_wide => Usability::Unusable(
            "its PMU counts whole CPUs for the whole system, not one process".to_owned(),
        ),
        Err(error) => Usability::Unusable(refusal::reason(error)),
    }
}

#[cfg(test)]
mod tests {
    use profiler_events::{Pmus, list_events};
    use profiler_testing::live_test;

    use super::*;

    live_test!(software_events_can_be_counted_here, || {
        let mut events = list_events(&Pmus::default());
        probe_events(&mut events);
        let usability = |name: &str| {
            let event = events.iter().find(|e| e.name == name);
            event.map(|e| e.usability.clone())
        };
        assert_eq!(usability("cpu-clock"), Some(Usability::Usable));
        assert_eq!(usability("page-faults"), Some(Usability::Usable));
        assert_eq!(usability("rNNNN"), Some(Usability::NotProbed));
    });
}
