//! Privileges and limits: `profiler doctor` tells the machine's facts as
//! /proc and /sys state them, refusals say what to change, and `record
//! --mmap-pages` sizes the ring buffers.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::*;

fn paranoid_level() -> i64 {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn has_pmu() -> bool {
    Path::new("/sys/bus/event_source/devices/cpu").exists()
}

#[test]
fn doctor_tells_the_machines_facts() {
    let dir = scratch("doctor-text");
    let output = run(&dir, &["doctor"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    let line = |start: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no '{start}' line: {text}"))
            .to_owned()
    };
    let paranoid = line("perf_event_paranoid");
    assert!(
        paranoid.contains(&format!(" {}: ", paranoid_level())),
        "{paranoid}"
    );
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert!(line("kernel").contains(release.trim()), "{text}");
    assert!(line("perf_event_mlock_kb").contains("KiB"), "{text}");
    assert!(line("privileges").contains("CAP_PERFMON"), "{text}");
    assert!(
        line("event sources").contains("software (type 1)"),
        "{text}"
    );
    if sampling_allowed() {
        assert!(line("cpu-clock").ends_with("works"), "{text}");
    }
    let cycles = line("cycles");
    if has_pmu() {
        assert!(!cycles.contains("no hardware"), "{cycles}");
    } else {
        assert!(cycles.contains("does not work"), "{cycles}");
        assert!(
            cycles.contains("no hardware performance-monitoring unit"),
            "{cycles}"
        );
        assert!(
            text.contains("advice:") && text.contains("no hardware PMU"),
            "{text}"
        );
    }
}

#[test]
fn doctor_writes_json() {
    let dir = scratch("doctor-json");
    let output = run(&dir, &["doctor", "--format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doctor: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doctor["perf_event_paranoid"], paranoid_level());
    assert_eq!(doctor["hardware_pmu"], has_pmu());
    let event = |name: &str| {
        doctor["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event"] == name)
            .unwrap_or_else(|| panic!("no '{name}': {doctor}"))
            .clone()
    };
    if sampling_allowed() {
        assert_eq!(event("cpu-clock")["works"], true, "{doctor}");
    }
    if !has_pmu() {
        let cycles = event("cycles");
        assert_eq!(cycles["works"], false, "{doctor}");
        assert!(
            cycles["reason"].as_str().unwrap().contains("no hardware"),
            "{doctor}"
        );
    }
    let cpus = doctor["online_cpus"].as_array().unwrap();
    assert!(!cpus.is_empty(), "{doctor}");
}

/// Runs the profiler as `nobody` without capabilities, where this test
/// runs as root with `setpriv`; `None` otherwise.
fn run_unprivileged(dir: &Path, args: &[&str]) -> Option<std::process::Output> {
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        == "0";
    let setpriv = Path::new("/usr/bin/setpriv");
    if !root || !setpriv.exists() {
        return None;
    }
    let output = Command::new(setpriv)
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(env!("CARGO_BIN_EXE_profiler"))
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    // The binary may live where nobody cannot reach it.
    let text = stderr(&output);
    (!text.contains("Permission denied") || text.starts_with("profiler: ")).then_some(output)
}

#[test]
fn refusals_say_what_to_change() {
    let level = paranoid_level();
    let dir = std::env::temp_dir();
    let whole_cpus = ["stat", "-a", "-e", "cpu-clock", "--duration", "0.1"];
    if level > 0
        && let Some(output) = run_unprivileged(&dir, &whole_cpus)
    {
        let message = stderr(&output);
        assert!(!output.status.success(), "{message}");
        assert!(
            message.contains("permission denied") && message.contains("paranoid is"),
            "{message}"
        );
        assert!(
            message.contains("perf_event_paranoid=0") && message.contains("CAP_PERFMON"),
            "{message}"
        );
    }
    if level > 1
        && let Some(output) = run_unprivileged(&dir, &["stat", "-e", "cs:k", "--", "true"])
    {
        let message = stderr(&output);
        assert!(!output.status.success(), "{message}");
        assert!(
            message.contains("perf_event_paranoid=1") && message.contains(":u"),
            "{message}"
        );
    }
    if level > 1
        && let Some(output) = run_unprivileged(&dir, &["doctor"])
    {
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            text.contains("advice:") && text.contains("perf_event_paranoid=1"),
            "{text}"
        );
    }
}

#[test]
fn mmap_pages_sizes_the_ring_buffers() {
    let dir = scratch("mmap-pages");
    let output = run(
        &dir,
        &[
            "record",
            "--mmap-pages",
            "3",
            "-e",
            "cpu-clock",
            "--",
            "true",
        ],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("power of two"),
        "{}",
        stderr(&output)
    );
    if !sampling_allowed() {
        return;
    }
    let split = fixture("split");
    record(
        &dir,
        "small.data",
        &["--mmap-pages", "4", "-e", "cpu-clock"],
        &[split.to_str().unwrap(), "1"],
    );
    let report = report_json(&dir, "small.data");
    assert!(samples(&report) > 0, "{report}");
}
