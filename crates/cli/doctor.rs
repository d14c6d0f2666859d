//! `profiler doctor`: checkup -> what this machine lets the profiler do, as
//! text or JSON, ending with what to change where something blocks it.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_sampler::{
    CAP_IPC_LOCK, CAP_PERFMON, CAP_SYS_ADMIN, Checkup, checkup, format_cpu_list, paranoid_meaning,
};
use serde_json::json;

use crate::args::{DoctorArgs, Format};

pub fn run(args: DoctorArgs) -> Result<ExitCode> {
    let checkup = checkup();
    let mut out = BufWriter::new(io::stdout().lock());
    match args.format {
        Format::Text => write_text(&mut out, &checkup)?,
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &to_json(&checkup))?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn yes(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

fn or_unknown<T: ToString>(value: Option<T>) -> String {
    value.map_or("unknown".to_owned(), |v| v.to_string())
}

fn write_text(out: &mut dyn Write, checkup: &Checkup) -> io::Result<()> {
    let privileges = &checkup.privileges;
    let row = |out: &mut dyn Write, name: &str, value: &str| writeln!(out, "{name:<28}{value}");
    row(out, "kernel", &or_unknown(checkup.kernel.as_deref()))?;
    row(out, "cpu", &or_unknown(checkup.cpu_model.as_deref()))?;
    row(
        out,
        "online cpus",
        &format!(
            "{} ({})",
            checkup.online_cpus.len(),
            format_cpu_list(&checkup.online_cpus)
        ),
    )?;
    let sources: Vec<String> = checkup
        .event_sources
        .iter()
        .map(|s| format!("{} (type {})", s.name, or_unknown(s.perf_type)))
        .collect();
    row(out, "event sources (PMUs)", &sources.join(", "))?;
    row(
        out,
        "hardware PMU",
        if checkup.has_cpu_pmu {
            "yes"
        } else {
            "no (no cpu PMU in /sys/bus/event_source/devices: a virtual machine?)"
        },
    )?;
    let paranoid = match privileges.paranoid {
        Some(level) => format!("{level}: {}", paranoid_meaning(level)),
        None => "unreadable".to_owned(),
    };
    row(out, "perf_event_paranoid", &paranoid)?;
    row(
        out,
        "perf_event_max_sample_rate",
        &checkup
            .max_sample_rate
            .map_or("unknown".to_owned(), |r| format!("{r} Hz")),
    )?;
    row(
        out,
        "perf_cpu_time_max_percent",
        &checkup
            .cpu_time_max_percent
            .map_or("unknown".to_owned(), |p| format!("{p}%")),
    )?;
    row(
        out,
        "perf_event_mlock_kb",
        &privileges
            .mlock_kb
            .map_or("unknown".to_owned(), |k| format!("{k} KiB per CPU")),
    )?;
    row(
        out,
        "RLIMIT_MEMLOCK (ulimit -l)",
        &privileges
            .memlock_bytes
            .map_or("unlimited".to_owned(), |b| format!("{} KiB", b / 1024)),
    )?;
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
    row(out, "ring-buffer budget", &budget)?;
    row(
        out,
        "privileges",
        &format!(
            "root: {}, CAP_PERFMON: {}, CAP_SYS_ADMIN: {}, CAP_IPC_LOCK: {}",
            yes(privileges.is_root()),
            yes(privileges.has_capability(CAP_PERFMON)),
            yes(privileges.has_capability(CAP_SYS_ADMIN)),
            yes(privileges.has_capability(CAP_IPC_LOCK)),
        ),
    )?;
    row(
        out,
        "allowed",
        &format!(
            "own programs' user space: {}, the kernel: {}, whole CPUs: {}",
            yes(privileges.may_profile_user()),
            yes(privileges.may_count_kernel()),
            yes(privileges.may_count_cpus()),
        ),
    )?;
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

fn to_json(checkup: &Checkup) -> serde_json::Value {
    let privileges = &checkup.privileges;
    json!({
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
    })
}
