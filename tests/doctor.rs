//! Privileges and limits: `profiler doctor` tells the machine's facts as
//! /proc and /sys state them, refusals say what to change, and `record
//! --mmap-pages` sizes the ring buffers.

use crate::util::*;

fn paranoid_level() -> i64 {
    perf_event_paranoid().expect("kernel.perf_event_paranoid is readable")
}

#[test]
fn doctor_tells_the_machines_facts() {
    let dir = scratch("doctor-text");
    let output = run_ok(&dir, &["doctor"]);
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
    let works = profiler_testing::sampling_refusal().is_none();
    assert_eq!(line("cpu-clock").ends_with("works"), works, "{text}");
    let cycles = line("cycles");
    if has_pmu() {
        assert!(!cycles.contains("no hardware"), "{cycles}");
    } else {
        assert!(cycles.contains("does not work"), "{cycles}");
        // Where the kernel refuses every event, that is the reason given.
        assert!(
            !works || cycles.contains("no hardware performance-monitoring unit"),
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
    let doctor = run_json(&dir, &["doctor", "--format", "json"]);
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
    let works = profiler_testing::sampling_refusal().is_none();
    assert_eq!(event("cpu-clock")["works"], works, "{doctor}");
    if !has_pmu() {
        let cycles = event("cycles");
        assert_eq!(cycles["works"], false, "{doctor}");
        let reason = cycles["reason"].as_str().unwrap();
        assert!(!works || reason.contains("no hardware"), "{doctor}");
    }
    let cpus = doctor["online_cpus"].as_array().unwrap();
    assert!(!cpus.is_empty(), "{doctor}");
}

live_test!(refusals_say_what_to_change, || {
    let level = paranoid_level();
    let dir = std::env::temp_dir();
    let whole_cpus = ["stat", "-a", "-e", "cpu-clock", "--duration", "0.1"];
    if level > 0
        && let Some(output) = run_as_nobody(&dir, &whole_cpus)
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
        && let Some(output) = run_as_nobody(&dir, &["stat", "-e", "cs:k", "--", "true"])
    {
        let message = stderr(&output);
        assert!(!output.status.success(), "{message}");
        assert!(
            message.contains("perf_event_paranoid=1") && message.contains(":u"),
            "{message}"
        );
    }
    if level > 1
        && let Some(output) = run_as_nobody(&dir, &["doctor"])
    {
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            text.contains("advice:") && text.contains("perf_event_paranoid=1"),
            "{text}"
        );
    }
});

#[test]
fn mmap_pages_must_be_a_power_of_two() {
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
}

live_test!(mmap_pages_sizes_the_ring_buffers_it_samples_into, || {
    let dir = scratch("mmap-pages-record");
    let split = fixture("split");
    let report = record_and_report(
        &dir,
        "small",
        &["--mmap-pages", "4", "-e", "cpu-clock"],
        &[split.to_str().unwrap(), "1"],
    );
    assert!(samples(&report) > 0, "{report}");
});

// The kernel stops sampling a process whose exec makes it another user
// (`begin_new_exec` detaches the counters of a process no longer
// dumpable): `record` says so, rather than showing 0 samples without a word.
live_test!(a_set_user_id_command_is_said_to_go_unsampled, || {
    use std::os::unix::fs::PermissionsExt;
    if !profiler_testing::root("making a set-user-ID program owned by root") {
        return;
    }
    let dir = scratch("setuid-command");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let program = dir.join("split-setuid");
    std::fs::copy(fixture("split"), &program).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let Some(output) = run_as_nobody(
        &dir,
        &[
            "record",
            "-e",
            "cpu-clock",
            "-o",
            "/dev/null",
            "--",
            "./split-setuid",
            "1",
        ],
    ) else {
        return;
    };
    let message = stderr(&output);
    assert!(output.status.success(), "{message}");
    assert!(
        message.contains(
            "./split-setuid is set-user-ID (to uid 0): the kernel stops sampling a process that \
             takes on another identity when it starts, so it will have no samples"
        ),
        "{message}"
    );
    assert!(message.contains("profiler: 0 samples"), "{message}");
});
