//! What `record --off-cpu` opens as threads leave the CPU: the switch
//! records on the first event, the event sampled at each switch out (where
//! the kernel allows it), and the events a recording reads from them.
//! Their samples are paired with the switches in `switch_pairing`.

use profiler_events::{EventSpec, PERF_TYPE_SOFTWARE};
use profiler_model::{EventDescription, EventRole, Sampling};

use crate::call_stacks::CallStacks;
use crate::counters::{self, ResolvedEvent, Role, SwitchOut};
use crate::error::SamplerError;
use crate::privileges;
use crate::refusal;

/// `PERF_COUNT_SW_CONTEXT_SWITCHES`.
const CONTEXT_SWITCHES: u64 = 3;

/// Checks that the kernel reports the context switches of `first` (the
/// event that carries the side-band records), and resolves the event
/// that samples each thread as it leaves the CPU: counted in the kernel,
/// where switches happen, keeping the kernel's frames only with
/// `kernel_stacks`. Where the kernel refuses that event, a notice says
/// why and what would allow it, and off-CPU time is recorded without
/// stacks (`None`).
pub(crate) fn resolve(
    first: &ResolvedEvent,
    kernel_stacks: bool,
    call_graph: Option<CallStacks>,
    notices: &mut Vec<String>,
) -> Result<Option<ResolvedEvent>, SamplerError> {
    counters::probe_switches(first).map_err(|error| SamplerError::NoSwitches {
        reason: refusal::reason(error),
    })?;
    let event = ResolvedEvent {
        spec: EventSpec {
            base: "context-switches".into(),
            perf_type: PERF_TYPE_SOFTWARE,
            config: CONTEXT_SWITCHES,
            config1: 0,
            config2: 0,
            unit: "events",
            hardware: false,
            user: true,
            kernel: true,
            hypervisor: false,
            precise: 0,
        },
        sampling: Sampling::Period(1),
        leader: None,
        switch_out: Some(SwitchOut { kernel_stacks }),
    };
    match counters::probe(&event, Role::Alone, call_graph) {
        Ok(()) => Ok(Some(event)),
        Err(SamplerError::PermissionDenied { reason, .. }) => {
            notices.push(format!(
                "the stacks threads wait in come from the context-switches event, which counts \
                 in the kernel, and {reason}: allow it with `sysctl \
                 kernel.perf_event_paranoid=1`, run as root, or {}; recording off-CPU time at \
                 unknown stacks",
                privileges::grant_perfmon()
            ));
            Ok(None)
        }
        Err(error) => {
            notices.push(format!(
                "the context-switches event cannot be sampled ({}): recording off-CPU time at \
                 unknown stacks",
                refusal::reason(error)
            ));
            Ok(None)
        }
    }
}

/// The events a recording with `events` (described) reads from its
/// switches: off-CPU time, and wall time where a clock event is sampled
/// (else a notice says there is none).
pub(crate) fn derived_events(
    events: &[EventDescription],
    notices: &mut Vec<String>,
) -> Vec<EventDescription> {
    let off_cpu = EventDescription {
        name: "off-cpu".into(),
        perf_type: PERF_TYPE_SOFTWARE,
        config: CONTEXT_SWITCHES,
        config1: 0,
        config2: 0,
        sampling: Sampling::Period(1),
        unit: "ns".into(),
        user: true,
        kernel: false,
        leader: None,
        role: EventRole::OffCpu,
    };
    let clock = (events.iter())
        .find(|e| e.role == EventRole::Sampled && e.leader.is_none() && e.unit == "ns");
    let Some(clock) = clock else {
        notices.push(
            "no clock event (cpu-clock, task-clock) is sampled, so the recording has no wall \
             event: add -e cpu-clock for one"
                .into(),
        );
        return vec![off_cpu];
    };
    let wall = EventDescription {
        name: "wall".into(),
        role: EventRole::Wall,
        ..clock.clone()
    };
    vec![off_cpu, wall]
}
