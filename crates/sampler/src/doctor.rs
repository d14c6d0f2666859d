//! `doctor`: the whole picture of what this machine lets the profiler do,
//! in one place: the kernel and CPU, the event sources (PMUs) the kernel
//! exposes, the perf_event limits and this process's privileges, and which
//! common events can be sampled now, each refusal with its reason; then
//! advice for whatever stands in the way.

use perf_event::SampleFlag;
use profiler_events::{EventSpec, EventsError, Pmus, is_core_pmu};

use crate::builder::counter_builder;
use crate::privileges;
use crate::recorder::{DEFAULT_FREQUENCY, DEFAULT_RING_BYTES};
use crate::refusal;
use crate::sysinfo;
pub(crate) use profiler_events::{Checkup, EventCheck};

/// The events `doctor` tries.
pub const CHECKED_EVENTS: &[&str] = &[
    "cycles",
    "instructions",
    "cache-misses",
    "branch-misses",
    "cpu-clock",
    "task-clock",
    "page-faults",
    "context-switches",
];

/// Looks at everything `doctor` reports, opening each checked event once
/// (disabled) on this process.
pub fn checkup() -> Checkup {
    let privileges = privileges::read();
    let online_cpus = sysinfo::online_cpus().unwrap_or_default();
    let pmus = Pmus::system();
    let specs: Vec<Result<EventSpec, EventsError>> = CHECKED_EVENTS
        .iter()
        .map(|name| EventSpec::parse_with(name, &pmus))
        .collect();
    let events = CHECKED_EVENTS
        .iter()
        .zip(&specs)
        .map(|(&name, spec)| EventCheck {
            event: name.to_owned(),
            refused: try_event(spec).err(),
        })
        .collect();
    let hardware: Vec<bool> = specs
        .iter()
        .map(|spec| spec.as_ref().is_ok_and(|s| s.hardware))
        .collect();
    let event_sources = sysinfo::event_sources();
    let mut checkup = Checkup {
        kernel: sysinfo::kernel_release(),
        cpu_model: sysinfo::cpu_model(),
        has_cpu_pmu: event_sources.iter().any(|s| is_core_pmu(&s.name)),
        event_sources,
        max_sample_rate: sysinfo::max_sample_rate(),
        cpu_time_max_percent: sysinfo::cpu_time_max_percent(),
        online_cpus,
        privileges,
        events,
        advice: Vec::new(),
    };
    checkup.advice = advice(&checkup, &hardware);
    checkup
}

/// Opens the event as `record` would sample it (user space, a period), on
/// this process, disabled; the reason when the kernel refuses, or when the
/// name did not parse.
fn try_event(spec: &Result<EventSpec, EventsError>) -> Result<(), String> {
    let spec = spec.as_ref().map_err(ToString::to_string)?;
    let mut builder = counter_builder(spec);
    builder
        .sample(SampleFlag::IP | SampleFlag::TID)
        .sample_period(1_000_000);
    refusal::probe(&mut builder, spec).map_err(refusal::reason)
}

/// What to change, given the checkup; `hardware` tells, for each of its
/// events, whether it needs a hardware PMU.
fn advice(checkup: &Checkup, hardware: &[bool]) -> Vec<String> {
    let privileges = &checkup.privileges;
    let grant = format!("run as root or {}", privileges::grant_perfmon());
    let mut advice = Vec::new();
    let level = privileges
        .paranoid
        .map_or("unreadable".to_owned(), |p| p.to_string());
    if !privileges.may_profile_user() {
        advice.push(format!(
            "kernel.perf_event_paranoid is {level}: this kernel refuses every perf event to \
             unprivileged users; allow your own programs with \
             `sysctl kernel.perf_event_paranoid=2`, or {grant}"
        ));
    } else {
        if !privileges.may_count_kernel() {
            advice.push(format!(
                "kernel.perf_event_paranoid is {level}: events count user space only (the \
                 kernel's side, :k, is refused, and stat's context switches read 0); \
                 `sysctl kernel.perf_event_paranoid=1` allows the kernel, or {grant}"
            ));
        }
        if !privileges.may_count_cpus() {
            advice.push(format!(
                "kernel.perf_event_paranoid is {level}: whole CPUs (stat -a, -C) are refused; \
                 `sysctl kernel.perf_event_paranoid=0` allows them, or {grant}"
            ));
        }
    }
    let hardware: Vec<&str> = checkup
        .events
        .iter()
        .zip(hardware)
        .filter(|&(e, &hardware)| hardware && !e.works())
        .map(|(e, _)| e.event.as_str())
        .collect();
    if !hardware.is_empty() && !checkup.has_cpu_pmu {
        advice.push(format!(
            "no hardware PMU (no cpu in /sys/bus/event_source/devices): {} cannot be counted; \
             record samples cpu-clock instead and stat shows them as <not supported>; on a \
             virtual machine, enable its virtual PMU (e.g. KVM's -cpu host, VMware's vPMC)",
            hardware.join(", ")
        ));
    }
    for event in &checkup.events {
        let hardware_gap = hardware.contains(&event.event.as_str()) && !checkup.has_cpu_pmu;
        if let Some(reason) = &event.refused
            && !hardware_gap
            && privileges.may_profile_user()
        {
            advice.push(format!("'{}' cannot be sampled: {reason}", event.event));
        }
    }
    let cpus = checkup.online_cpus.len().max(1);
    let needed = (DEFAULT_RING_BYTES + sysinfo::page_size()) as u64 * cpus as u64;
    if let Some(budget) = privileges.ring_budget_bytes(cpus)
        && budget < needed
    {
        advice.push(format!(
            "the locked-memory budget for ring buffers is {} KiB and record's default needs {} \
             KiB ({} KiB per CPU): record will use smaller buffers, which may lose samples; \
             raise kernel.perf_event_mlock_kb or `ulimit -l`, or pass a smaller --mmap-pages",
            budget / 1024,
            needed / 1024,
            needed / 1024 / cpus as u64
        ));
    }
    if let Some(max) = checkup.max_sample_rate
        && max < DEFAULT_FREQUENCY
    {
        advice.push(format!(
            "kernel.perf_event_max_sample_rate is {max} Hz, below record's default of \
             {DEFAULT_FREQUENCY} Hz (the kernel lowers it when sampling takes more than \
             perf_cpu_time_max_percent of the CPU); raise it with \
             `sysctl kernel.perf_event_max_sample_rate={DEFAULT_FREQUENCY}`"
        ));
    }
    advice
}

#[cfg(test)]
mod tests {
    use super::*;
    use profiler_testing::live_test;

    live_test!(the_checkup_matches_the_machine, || {
        let checkup = checkup();
        assert_eq!(checkup.events.len(), CHECKED_EVENTS.len());
        assert_eq!(checkup.privileges.paranoid, sysinfo::paranoid_level());
        assert!(!checkup.online_cpus.is_empty());
        let cycles = &checkup.events[0];
        if !checkup.has_cpu_pmu {
            let reason = cycles.refused.as_deref().unwrap_or_default();
            assert!(reason.contains("no hardware"), "{reason}");
            assert!(checkup.advice.iter().any(|a| a.contains("no hardware PMU")));
        }
    });
}
