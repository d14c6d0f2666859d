//! perf.data's header as a recording header: its events, the command line,
//! the machine, how stacks were collected.

use linux_perf_data::linux_perf_event_reader::{
    AttrFlags, HardwareEventId, PerfEventAttr, PerfEventType, SampleFormat, SamplingPolicy,
    SoftwareCounterType,
};
use linux_perf_data::{AttributeDescription, Feature, PerfFile};
use profiler_model::{CallGraph, EventDescription, HostInfo, RecordingHeader, Sampling};

use crate::layout::{Layout, RawEvent, Reader, string_list};

/// The recording header of a perf.data file whose header is `perf_file`.
pub(crate) fn recording_header(
    perf_file: &PerfFile,
    layout: &Layout,
    reader: &Reader<'_>,
) -> RecordingHeader {
    let attributes = perf_file.event_attributes();
    // EVENT_DESC numbers the events as linux-perf-data does.
    let raw = |i: usize| {
        (layout.events.len() == attributes.len())
            .then(|| layout.events.get(i))
            .flatten()
    };
    let events = (attributes.iter().enumerate())
        .map(|(i, attribute)| event(attribute, raw(i)))
        .collect();
    let command = (perf_file.feature_section_data(Feature::CMDLINE))
        .and_then(|bytes| string_list(reader, bytes))
        .unwrap_or_default();
    let text = |value: Result<Option<&str>, _>| value.ok().flatten().unwrap_or("").to_owned();
    let cpus = perf_file.nr_cpus().ok().flatten();
    RecordingHeader {
        events,
        command,
        program: None,
        user: None,
        histogram: None,
        call_graph: call_graph(attributes),
        host: HostInfo {
            hostname: text(perf_file.hostname()),
            kernel: text(perf_file.os_release()),
            arch: text(perf_file.arch()),
            cpus: cpus.map_or(0, |c| c.nr_cpus_online),
        },
        job: None,
        start_unix_ns: 0,
        profiler_version: format!("perf {}", text(perf_file.perf_version())),
    }
}

fn event(attribute: &AttributeDescription, raw: Option<&RawEvent>) -> EventDescription {
    let attr = &attribute.attr;
    let name = (raw.and_then(|r| r.name.clone()))
        .or_else(|| attribute.name().map(str::to_owned))
        .unwrap_or_else(|| fallback_name(attr));
    let clock = matches!(
        attr.type_,
        PerfEventType::Software(SoftwareCounterType::CpuClock | SoftwareCounterType::TaskClock)
    );
    EventDescription {
        name,
        perf_type: raw.map_or(0, |r| r.perf_type),
        config: raw.map_or(0, |r| r.config),
        config1: raw.map_or(0, |r| r.config1),
        config2: raw.map_or(0, |r| r.config2),
        sampling: match attr.sampling_policy {
            SamplingPolicy::Frequency(hz) => Sampling::Frequency(hz),
            SamplingPolicy::Period(period) => Sampling::Period(period.get()),
            SamplingPolicy::NoSampling => Sampling::Period(0),
        },
        unit: if clock { "ns" } else { "events" }.into(),
        user: !attr.flags.contains(AttrFlags::EXCLUDE_USER),
        kernel: !attr.flags.contains(AttrFlags::EXCLUDE_KERNEL),
        leader: None,
        role: profiler_model::EventRole::Sampled,
    }
}

/// A name for an event of an old file without event descriptions.
fn fallback_name(attr: &PerfEventAttr) -> String {
    match attr.type_ {
        PerfEventType::Software(SoftwareCounterType::CpuClock) => "cpu-clock".into(),
        PerfEventType::Software(SoftwareCounterType::TaskClock) => "task-clock".into(),
        PerfEventType::Software(SoftwareCounterType::PageFaults) => "page-faults".into(),
        PerfEventType::Hardware(HardwareEventId::CpuCycles, _) => "cycles".into(),
        PerfEventType::Hardware(HardwareEventId::Instructions, _) => "instructions".into(),
        PerfEventType::DynamicPmu(kind, config, ..) => format!("r{config:x} (PMU type {kind})"),
        other => format!("{other:?}"),
    }
}

/// How stacks were collected: copies of the user stack (`--call-graph
/// dwarf`) or the kernel's call chains (`-g`).
fn call_graph(attributes: &[AttributeDescription]) -> Option<CallGraph> {
    let formats = || attributes.iter().map(|a| (a.attr.sample_format, a.attr));
    if let Some((_, attr)) = formats().find(|(f, _)| f.contains(SampleFormat::STACK_USER)) {
        return Some(CallGraph::Dwarf {
            stack_bytes: attr.sample_stack_user,
        });
    }
    formats()
        .any(|(f, _)| f.contains(SampleFormat::CALLCHAIN))
        .then_some(CallGraph::FramePointer)
}
