//! What of a perf.data file the views will not show, said once, one line
//! each: AUX area traces, branch stacks, group reads, BPF and JIT symbols;
//! and records read otherwise than they are marked.

use linux_perf_data::linux_perf_event_reader::{PerfEventType, SampleFormat};
use linux_perf_data::{Feature, PerfFile};
use profiler_model::{CallGraph, RecordingHeader};

use crate::data_check::DataSummary;
use crate::layout::{Layout, Reader, feature, pmu_names};
use crate::records::Skipped;

/// PMUs that trace into an AUX area rather than take samples.
const AUX_PMUS: [&str; 4] = ["intel_pt", "intel_bts", "cs_etm", "arm_spe"];

pub(crate) fn notes(
    perf_file: &PerfFile,
    layout: &Layout,
    reader: &Reader<'_>,
    summary: &DataSummary,
    skipped: &Skipped,
    header: &RecordingHeader,
) -> Vec<String> {
    let mut notes = Vec::new();
    let formats = || {
        perf_file
            .event_attributes()
            .iter()
            .map(|a| a.attr.sample_format)
    };
    let aux = skipped.aux.max(summary.auxtrace_records);
    if aux > 0 || layout.has(feature::AUXTRACE) {
        let pmus = aux_pmus(perf_file, reader);
        let traced = match pmus.is_empty() {
            true => String::new(),
            false => format!(" ({})", pmus.join(", ")),
        };
        notes.push(format!(
            "{aux} AUX area tracing records{traced}, {} bytes of trace, skipped: profiler reads \
             samples only",
            summary.auxtrace_bytes
        ));
    }
    if formats().any(|f| f.contains(SampleFormat::BRANCH_STACK))
        || layout.has(feature::BRANCH_STACK)
    {
        notes.push(
            "the samples' branch stacks (perf record -b, --call-graph lbr) are skipped".into(),
        );
    }
    if formats().any(|f| f.contains(SampleFormat::READ)) {
        notes.push(
            "the counts of each sample's event group (perf record -e '{...}:S') are skipped".into(),
        );
    }
    if skipped.jit_symbols > 0 {
        notes.push(format!(
            "{} BPF and kernel JIT symbol records skipped: samples in that code stay unnamed",
            skipped.jit_symbols
        ));
    }
    if skipped.unknown > 0 {
        notes.push(format!(
            "{} records of kinds profiler does not know skipped",
            skipped.unknown
        ));
    }
    if skipped.inode_mappings > 0 {
        notes.push(format!(
            "{} mapping records are marked as carrying a build-id but hold the file's device \
             and inode (a build-id length of 0 or over 20 bytes): read as device and inode",
            skipped.inode_mappings
        ));
    }
    let x86_64 = header.host.arch == "x86_64";
    if matches!(header.call_graph, Some(CallGraph::Dwarf { .. })) && !x86_64 {
        notes.push(format!(
            "its stack copies ({} code) are not unwound: profiler unwinds x86-64 stacks only",
            header.host.arch
        ));
    }
    notes
}

/// The AUX tracing PMUs among the file's events, by name.
fn aux_pmus(perf_file: &PerfFile, reader: &Reader<'_>) -> Vec<String> {
    let names = (perf_file.feature_section_data(Feature::PMU_MAPPINGS))
        .and_then(|bytes| pmu_names(reader, bytes))
        .unwrap_or_default();
    let mut pmus: Vec<String> = (perf_file.event_attributes().iter())
        .filter_map(|a| match a.attr.type_ {
            PerfEventType::DynamicPmu(kind, ..) => names.iter().find(|(t, _)| *t == kind),
            _ => None,
        })
        .map(|(_, name)| name.clone())
        .filter(|name| AUX_PMUS.iter().any(|pmu| name.starts_with(pmu)))
        .collect();
    pmus.sort();
    pmus.dedup();
    pmus
}
