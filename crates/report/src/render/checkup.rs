//! `profiler doctor`'s output: what this machine lets the profiler do, as
//! aligned text or JSON, ending with what to change where something blocks
//! it.

use std::io::{self, Write};

use profiler_events::{
    CAP_IPC_LOCK, CAP_PERFMON, CAP_SYS_ADMIN, Checkup, format_cpu_list, paranoid_meaning,
};
use serde_json::json;

/// The checkup as rows of facts, the events that work, and advice.
pub fn render_checkup_text(checkup: &Checkup, out: &mut dyn Write) -> io::Result<()> {
    let rows = [
        machine_rows(checkup),
        limit_rows(checkup),
        privilege_rows(checkup),
    ]
    .concat();
    for (name, value) in rows {
        writeln!(out, "{name:<28}{value}")?;
    }
    writeln!(out)?;
    writeln!(out, "events (sampled in user space on this process):")?;
    for event in &checkup.events {
        match &event.refused {
            None => writeln!(out, "  {:<18}works", event.event)?,
            Some(reason) => writeln!(out, "  {:<18}does not work: {reason}", event.event)?,
        }
    }
    writeln!(out)?;
    if checkup.advice.is_empty() {
        writeln!(out, "nothing blocks profiling here")?;
    } else {
        writeln!(out, "advice:")?;
        for advice in &checkup.advice {
            writeln!(out, "  - {advice}")?;
        }
    }
    Ok(())
}

/// A row of the text: its name and what was found.
type Row = (&'static str, String);

fn yes(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

fn or_unknown<T: ToString>(value: Option<T>) -> String {
    value.map_or("unknown".to_owned(), |v| v.to_string())
}

/// The kernel, the CPUs and the event sources.
fn machine_rows(checkup: &Checkup) -> Vec<Row> {
    let cpus = &checkup.online_cpus;
    let sources: Vec<String> = (checkup.event_sources.iter())
        .map(|s| format!("{} (type {})", s.name, or_unknown(s.perf_type)))
        .collect();
    let pmu = match checkup.has_cpu_pmu {
        true => "yes".to_owned(),
        false => "no (no cpu PMU in /sys/bus/event_source/devices: a virtual machine?)".to_owned(),
    };
    vec![
        ("kernel", or_unknown(checkup.kernel.as_deref())),
        ("cpu", or_unknown(checkup.cpu_model.as_deref())),
        (
            "online cpus",
            format!("{} ({})", cpus.len(), format_cpu_list(cpus)),
        ),
        ("event sources (PMUs)", sources.join(", ")),
        ("hardware PMU", pmu),
    ]
}

/// The kernel's perf_event settings and the memory ring buffers may lock.
fn limit_rows(checkup: &Checkup) -> Vec<Row> {
    let privileges = &checkup.privileges;
    let paranoid = match privileges.paranoid {
        Some(level) => format!("{level}: {}", paranoid_meaning(level)),
        None => "unreadable".to_owned(),
    };
    let cpus = checkup.online_cpus.len().max(1);
    let budget = match privileges.ring_budget_bytes(cpus) {
        Some(bytes) => format!(
            "{} KiB (perf_event_mlock_kb x {cpus} CPUs, then ulimit -l)",
            bytes / 1024
        ),
        None if privileges.unlimited_ring_memory() => {
            "unlimited (CAP_IPC_LOCK, or perf_event_paranoid -1)".to_owned()
        }
        None => "unlimited (ulimit -l)".to_owned(),
    };
    vec![
        ("perf_event_paranoid", paranoid),
        (
            "perf_event_max_sample_rate",
            (checkup.max_sample_rate).map_or("unknown".to_owned(), |r| format!("{r} Hz")),
        ),
        (
            "perf_cpu_time_max_percent",
            (checkup.cpu_time_max_percent).map_or("unknown".to_owned(), |p| format!("{p}%")),
        ),
        (
            "perf_event_mlock_kb",
            (privileges.mlock_kb).map_or("unknown".to_owned(), |k| format!("{k} KiB per CPU")),
        ),
        (
            "RLIMIT_MEMLOCK (ulimit -l)",
            (privileges.memlock_bytes)
                .map_or("unlimited".to_owned(), |b| format!("{} KiB", b / 1024)),
        ),
        ("ring-buffer budget", budget),
    ]
}

/// This process's privileges and what they allow.
fn privilege_rows(checkup: &Checkup) -> Vec<Row> {
    let privileges = &checkup.privileges;
    vec![
        (
            "privileges",
            format!(
                "root: {}, CAP_PERFMON: {}, CAP_SYS_ADMIN: {}, CAP_IPC_LOCK: {}",
                yes(privileges.is_root()),
                yes(privileges.has_capability(CAP_PERFMON)),
                yes(privileges.has_capability(CAP_SYS_ADMIN)),
                yes(privileges.has_capability(CAP_IPC_LOCK)),
            ),
        ),
        (
            "allowed",
            format!(
                "own programs' user space: {}, the kernel: {}, whole CPUs: {}",
                yes(privileges.may_profile_user()),
                yes(privileges.may_count_kernel()),
                yes(privileges.may_count_cpus()),
            ),
        ),
    ]
}

/// The checkup as one JSON document.
pub fn render_checkup_json(checkup: &Checkup, out: &mut dyn Write) -> io::Result<()> {
    let privileges = &checkup.privileges;
    let document = json!({
        "kernel": checkup.kernel,
        "cpu_model": checkup.cpu_model,
        "online_cpus": checkup.online_cpus,
        "event_sources": checkup.event_sources.iter().map(|s| json!({
            "name": s.name,
            "type": s.perf_type,
        })).collect::<Vec<_>>(),
        "hardware_pmu": checkup.has_cpu_pmu,
        "perf_event_paranoid": privileges.paranoid,
        "paranoid_allows": privileges.paranoid.map(paranoid_meaning),
        "perf_event_max_sample_rate": checkup.max_sample_rate,
        "perf_cpu_time_max_percent": checkup.cpu_time_max_percent,
        "perf_event_mlock_kb": privileges.mlock_kb,
        "rlimit_memlock_bytes": privileges.memlock_bytes,
        "ring_budget_bytes": privileges.ring_budget_bytes(checkup.online_cpus.len().max(1)),
        "root": privileges.is_root(),
        "cap_perfmon": privileges.has_capability(CAP_PERFMON),
        "cap_sys_admin": privileges.has_capability(CAP_SYS_ADMIN),
        "cap_ipc_lock": privileges.has_capability(CAP_IPC_LOCK),
        "allowed": {
            "user": privileges.may_profile_user(),
            "kernel": privileges.may_count_kernel(),
            "cpus": privileges.may_count_cpus(),
        },
        "events": checkup.events.iter().map(|e| json!({
            "event": e.event,
            "works": e.works(),
            "reason": e.refused,
        })).collect::<Vec<_>>(),
        "advice": checkup.advice,
    });
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}
