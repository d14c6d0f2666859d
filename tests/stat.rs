//! `profiler stat`: counts of a command, of running processes and threads,
//! and of whole CPUs; scaled totals, rates and running shares; intervals;
//! per-thread rows; the command's exit status; bad input refused in one line.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::*;

/// Runs `stat` with `args` writing JSON to `dir/name.json`; asserts success
/// and returns what it wrote.
fn stat_json_text(dir: &Path, name: &str, args: &[&str]) -> String {
    let file = format!("{name}.json");
    run_ok(
        dir,
        &[&["stat", "--format", "json", "-o", &file], args].concat(),
    );
    std::fs::read_to_string(dir.join(&file)).unwrap()
}

/// The totals of `stat_json_text`, parsed.
fn stat_json(dir: &Path, name: &str, args: &[&str]) -> Value {
    serde_json::from_str(&stat_json_text(dir, name, args)).unwrap()
}

/// Runs `stat` with `args`, asserts success, and returns the text it wrote
/// to the standard error.
fn stat_text(dir: &Path, args: &[&str]) -> String {
    stderr(&run_ok(dir, &[&["stat"], args].concat()))
}

/// The row of `event` among the totals (or a thread's events).
fn event<'a>(events: &'a Value, name: &str) -> &'a Value {
    events["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == name)
        .unwrap_or_else(|| panic!("no '{name}' in {events}"))
}

/// The scaled count of `name`.
fn value(totals: &Value, name: &str) -> u64 {
    event(totals, name)["value"]
        .as_u64()
        .unwrap_or_else(|| panic!("'{name}' has no value: {totals}"))
}

fn fixture_path(name: &str) -> String {
    fixture(name).to_str().unwrap().to_owned()
}

live_test!(page_faults_count_one_per_touched_page, || {
    let dir = scratch("stat-page-faults");
    let touchpages = fixture_path("touchpages");
    let baseline = stat_json(&dir, "zero", &["-e", "page-faults", "--", &touchpages, "0"]);
    let touched = stat_json(
        &dir,
        "many",
        &["-e", "page-faults", "--", &touchpages, "20000"],
    );
    let (base, total) = (
        value(&baseline, "page-faults"),
        value(&touched, "page-faults"),
    );
    assert!(base > 0 && base < 1000, "start-up faults: {base}");
    assert!(total >= 20000, "{total} faults for 20000 pages");
    let difference = total as f64 - base as f64;
    assert!(
        (difference - 20000.0).abs() <= 20000.0 * 0.02,
        "{total} faults with 20000 pages, {base} without"
    );
    assert_eq!(event(&touched, "page-faults")["running_percent"], 100.0);
    assert_eq!(touched["exit_status"], 0);

    let text = stat_text(&dir, &["-e", "page-faults", "--", &touchpages, "20000"]);
    assert!(text.contains("Performance counter stats for"), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains("page-faults"))
        .unwrap_or_else(|| panic!("no page-faults row: {text}"));
    // No clock counted beside it: no rate, as in perf stat.
    assert!(!row.contains("/sec") && row.contains("(100.00%)"), "{row}");
    assert_eq!(
        event(&touched, "page-faults")["rate_per_second"],
        Value::Null
    );
    assert!(text.contains("seconds time elapsed"), "{text}");
});

live_test!(task_clock_is_the_commands_cpu_time, || {
    let dir = scratch("stat-task-clock");
    let totals = stat_json(
        &dir,
        "split",
        &["-e", "task-clock", "--", &fixture_path("split"), "1"],
    );
    let clock = value(&totals, "task-clock") as f64 / 1e9;
    let elapsed = totals["elapsed_s"].as_f64().unwrap();
    let cpu = totals["user_s"].as_f64().unwrap() + totals["system_s"].as_f64().unwrap();
    assert!(clock > 0.01, "task-clock {clock} s: {totals}");
    // One thread cannot run longer than the wall clock.
    assert!(
        clock <= elapsed * 1.02 + 0.002,
        "{clock} s in {elapsed} s: {totals}"
    );
    assert!(
        (clock - cpu).abs() <= cpu * 0.1 + 0.01,
        "task-clock {clock} s, CPU time {cpu} s: {totals}"
    );
    let utilized = event(&totals, "task-clock")["cpus_utilized"]
        .as_f64()
        .unwrap();
    assert!(utilized > 0.0 && utilized <= 1.05, "{totals}");
});

/// The count, its rate per second, and the task-clock in seconds of a
/// `perf stat`-style text (ours or perf's): `(page-faults, rate, clock)`.
fn faults_rate_and_clock(text: &str) -> (f64, f64, f64) {
    let number = |field: &str| field.replace(',', "").parse::<f64>().unwrap();
    let line = |name: &str| {
        (text.lines())
            .find(|l| l.split_whitespace().nth(1) == Some(name) || l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    let clock = number(line("task-clock").split_whitespace().next().unwrap()) / 1e3;
    let faults = line("page-faults");
    let count = number(faults.split_whitespace().next().unwrap());
    let rate = faults
        .split('#')
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>();
    let scale = match rate[1] {
        "K/sec" => 1e3,
        "M/sec" => 1e6,
        "/sec" => 1.0,
        other => panic!("unit {other} in {faults}"),
    };
    (count, number(rate[0]) * scale, clock)
}

live_test!(
    rates_are_per_second_of_task_clock_as_perf_stat_gives_them,
    || {
        let dir = scratch("stat-rates");
        // split sleeps as much as it works: wall time and CPU time differ.
        let command = [fixture_path("split"), "1".into()];
        let args = [
            &["-e", "task-clock,page-faults", "--"][..],
            &[&command[0][..], &command[1][..]],
        ];
        let ours = stat_text(&dir, &args.concat());
        let (count, rate, clock) = faults_rate_and_clock(&ours);
        assert!(clock > 0.05 && count >= 10.0, "{ours}");
        let per_cpu_second = count / clock;
        assert!(
            (rate - per_cpu_second).abs() <= per_cpu_second * 0.002 + 0.001,
            "{ours}"
        );
        assert!(ours.contains("/sec: per second of task-clock"), "{ours}");
        // perf stat's own rates follow the same rule.
        if profiler_testing::tool("perf") {
            let perf = Command::new("perf")
                .args(["stat", "-e", "task-clock,page-faults", "--"])
                .args(&command)
                .output()
                .unwrap();
            let theirs = String::from_utf8_lossy(&perf.stderr);
            let (count, rate, clock) = faults_rate_and_clock(&theirs);
            let per_cpu_second = count / clock;
            assert!(
                (rate - per_cpu_second).abs() <= per_cpu_second * 0.002 + 0.001,
                "{theirs}"
            );
        }
        // Without a clock counted there is no rate, as in perf stat.
        let alone = stat_text(
            &dir,
            &[
                &["-e", "page-faults", "--"][..],
                &[&command[0][..], &command[1][..]],
            ]
            .concat(),
        );
        assert!(!alone.contains("/sec"), "{alone}");
    }
);

live_test!(several_events_are_counted_at_once, || {
    let dir = scratch("stat-several");
    let totals = stat_json(
        &dir,
        "three",
        &[
            "-e",
            "task-clock,page-faults",
            "-e",
            "context-switches",
            "--",
            &fixture_path("split"),
            "1",
        ],
    );
    let events = totals["events"].as_array().unwrap();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["task-clock", "page-faults", "context-switches"]);
    for row in events {
        assert_eq!(row["supported"], true, "{row}");
        assert_eq!(row["counted"], true, "{row}");
        assert_eq!(row["running_percent"], 100.0, "{row}");
    }
    assert!(value(&totals, "task-clock") > 10_000_000, "{totals}");
    assert!(value(&totals, "page-faults") > 10, "{totals}");
});

live_test!(
    the_default_events_show_what_the_machine_cannot_count,
    || {
        let dir = scratch("stat-defaults");
        let text = stat_text(&dir, &["--", &fixture_path("split"), "1"]);
        for name in [
            "task-clock",
            "context-switches",
            "cpu-migrations",
            "page-faults",
        ] {
            let row = text.lines().find(|l| l.contains(name));
            assert!(
                row.is_some_and(|r| r.contains("(100.00%)")),
                "{name}: {text}"
            );
        }
        let cycles = text
            .lines()
            .find(|l| l.trim_end().ends_with(" cycles"))
            .unwrap_or_else(|| panic!("no cycles row: {text}"));
        assert_eq!(cycles.contains("<not supported>"), !has_pmu(), "{text}");
        if !has_pmu() {
            assert!(
                text.contains(
                    "cycles, instructions not supported: this machine exposes no hardware"
                ),
                "{text}"
            );
        }
    }
);

live_test!(intervals_print_a_line_per_event_as_they_pass, || {
    let dir = scratch("stat-interval");
    let split = fixture_path("split");
    let text = stat_text(
        &dir,
        &[
            "-e",
            "task-clock,page-faults",
            "--interval-ms",
            "100",
            "--",
            &split,
            "6",
        ],
    );
    let stamped: Vec<(f64, &str)> = text
        .lines()
        .filter_map(|line| {
            let (time, rest) = line.trim_start().split_once(' ')?;
            Some((time.parse().ok()?, rest))
        })
        .collect();
    let clock_lines: Vec<f64> = stamped
        .iter()
        .filter(|(_, rest)| rest.contains("task-clock"))
        .map(|(time, _)| *time)
        .collect();
    assert!(clock_lines.len() >= 3, "{text}");
    assert_eq!(
        clock_lines.len(),
        stamped
            .iter()
            .filter(|(_, r)| r.contains("page-faults"))
            .count(),
        "{text}"
    );
    assert!(clock_lines.windows(2).all(|w| w[1] > w[0]), "{text}");
    assert!((clock_lines[0] - 0.1).abs() < 0.05, "{text}");
    assert!(text.contains("Performance counter stats for"), "{text}");

    // JSON: one object per interval and line, then the totals.
    let text = stat_json_text(
        &dir,
        "intervals",
        &["-e", "task-clock", "-I", "100", "--", &split, "6"],
    );
    let objects: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (totals, intervals) = objects.split_last().unwrap();
    assert!(intervals.len() >= 3, "{text}");
    let sum: u64 = intervals.iter().map(|i| value(i, "task-clock")).sum();
    assert!(sum <= value(totals, "task-clock"), "{text}");
    for interval in intervals {
        assert!(interval["interval_s"].as_f64().unwrap() > 0.0);
        let share = event(interval, "task-clock")["cpus_utilized"]
            .as_f64()
            .unwrap();
        assert!(share <= 1.1, "{interval}");
    }
});

/// A running fixture, killed and reaped when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the `threads` fixture on long work and waits until both workers
/// have named themselves.
fn start_threads() -> (Running, Vec<u32>) {
    let child = Running(
        Command::new(fixture("threads"))
            .arg("4000")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id();
    let started = Instant::now();
    loop {
        let tids: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        let names: Vec<String> = tids
            .iter()
            .filter_map(|t| std::fs::read_to_string(format!("/proc/{pid}/task/{t}/comm")).ok())
            .collect();
        if names.iter().any(|n| n.starts_with("worker-a"))
            && names.iter().any(|n| n.starts_with("worker-b"))
        {
            let mut tids = tids;
            tids.sort_unstable();
            return (child, tids);
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the threads never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

live_test!(per_thread_rows_name_every_thread_of_a_process, || {
    let dir = scratch("stat-per-thread");
    let (child, tids) = start_threads();
    let pid = child.0.id().to_string();
    let totals = stat_json(
        &dir,
        "threads",
        &[
            "--per-thread",
            "-p",
            &pid,
            "-e",
            "task-clock",
            "--duration",
            "0.3",
        ],
    );
    let threads = totals["threads"].as_array().unwrap();
    let mut listed: Vec<u32> = threads
        .iter()
        .map(|t| t["tid"].as_u64().unwrap() as u32)
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, tids, "{totals}");
    let by_name = |name: &str| {
        threads
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no thread '{name}': {totals}"))
    };
    assert_eq!(by_name("threads")["tid"].as_u64().unwrap().to_string(), pid);
    for worker in ["worker-a", "worker-b"] {
        assert!(value(by_name(worker), "task-clock") > 1_000_000, "{totals}");
    }
    let elapsed = totals["elapsed_s"].as_f64().unwrap();
    assert!((0.25..1.5).contains(&elapsed), "{totals}");

    let text = stat_text(
        &dir,
        &[
            "--per-thread",
            "-p",
            &pid,
            "-e",
            "task-clock",
            "--duration",
            "0.2",
        ],
    );
    for &tid in &tids {
        assert!(text.contains(&format!("-{tid} ")), "{tid}: {text}");
    }
    assert!(
        text.contains("worker-a-") && text.contains("worker-b-"),
        "{text}"
    );
    drop(child);
});

live_test!(counting_a_process_ends_when_it_exits, || {
    let dir = scratch("stat-process-exit");
    let child = Command::new(fixture("split"))
        .arg("3")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let started = Instant::now();
    let waiter = std::thread::spawn(move || {
        let mut child = child;
        child.wait().unwrap()
    });
    let totals = stat_json(&dir, "process", &["-p", &pid, "-e", "task-clock"]);
    waiter.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "{totals}");
    assert!(value(&totals, "task-clock") > 0, "{totals}");
    assert_eq!(totals["target"], format!("process {pid}"));
});

live_test!(whole_cpus_are_counted_where_the_kernel_allows, || {
    if !may_count_cpus() {
        profiler_testing::skip("counting whole CPUs needs CAP_PERFMON or perf_event_paranoid <= 0");
        return;
    }
    let dir = scratch("stat-all-cpus");
    let totals = stat_json(&dir, "all", &["-a", "-e", "cpu-clock", "--duration", "0.3"]);
    let cpus = std::fs::read_dir("/sys/devices/system/cpu")
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with("cpu") && name[3..].parse::<u32>().is_ok()
        })
        .count();
    let utilized = event(&totals, "cpu-clock")["cpus_utilized"]
        .as_f64()
        .unwrap();
    assert!(
        utilized > 0.5 && utilized <= cpus as f64 * 1.1,
        "{utilized} of {cpus}: {totals}"
    );
    let one = stat_json(
        &dir,
        "one",
        &["-C", "0", "-e", "cpu-clock", "--duration", "0.2"],
    );
    let utilized = event(&one, "cpu-clock")["cpus_utilized"].as_f64().unwrap();
    assert!((0.8..1.1).contains(&utilized), "{one}");
    assert_eq!(one["target"], "CPU 0");
});

/// Whether this process may count whole CPUs: paranoid ≤ 0, or
/// CAP_PERFMON / CAP_SYS_ADMIN.
fn may_count_cpus() -> bool {
    let paranoid = perf_event_paranoid().unwrap_or(2);
    let caps = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let hex = s
                .lines()
                .find_map(|l| l.strip_prefix("CapEff:"))?
                .trim()
                .to_owned();
            u64::from_str_radix(&hex, 16).ok()
        })
        .unwrap_or(0);
    paranoid <= 0 || caps & (1 << 38) != 0 || caps & (1 << 21) != 0
}

live_test!(the_commands_exit_status_passes_through, || {
    let dir = scratch("stat-exit-status");
    for (script, code) in [("exit 0", 0), ("exit 3", 3), ("kill -TERM $$", 143)] {
        let output = run(
            &dir,
            &["stat", "-e", "task-clock", "--", "sh", "-c", script],
        );
        assert_eq!(
            output.status.code(),
            Some(code),
            "{script}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("task-clock"),
            "{}",
            stderr(&output)
        );
    }
    let output = run(
        &dir,
        &["stat", "-e", "task-clock", "--", "no-such-command-xyz"],
    );
    assert_eq!(output.status.code(), Some(127), "{}", stderr(&output));
});

/// A one-line error, a non-zero exit, and the words that say what to do.
fn refused(dir: &Path, args: &[&str], needles: &[&str]) {
    let output = run(dir, args);
    let message = stderr(&output);
    assert!(!output.status.success(), "{args:?} succeeded: {message}");
    assert_eq!(message.lines().count(), 1, "not one line: {message}");
    assert!(
        message.starts_with("profiler: ") && !message.contains("panicked"),
        "{message}"
    );
    for needle in needles {
        assert!(
            message.contains(needle),
            "{args:?}: '{needle}' missing from: {message}"
        );
    }
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let dir = scratch("stat-bad-input");
    refused(
        &dir,
        &["stat", "-e", "task-clok", "--", "true"],
        &["unknown event 'task-clok'", "did you mean 'task-clock'"],
    );
    refused(
        &dir,
        &["stat", "--per-thread", "-e", "task-clock", "--", "true"],
        &["--per-thread", "-p PID"],
    );
    refused(
        &dir,
        &["stat", "-a", "--per-thread", "-e", "cpu-clock"],
        &["--per-thread"],
    );
    refused(
        &dir,
        &["stat", "-e", "task-clock,,page-faults", "--", "true"],
        &["empty event"],
    );
    refused(
        &dir,
        &["stat", "-p", "1", "--", "true"],
        &["-p takes no command", "leave out the command"],
    );
    refused(
        &dir,
        &["stat", "-I", "1", "-e", "task-clock", "--", "true"],
        &["at least 10"],
    );
    refused(
        &dir,
        &["stat", "--duration", "1", "-e", "task-clock", "--", "true"],
        &["--duration", "until it exits"],
    );
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(files.is_empty(), "{files:?}");
}

// What the kernel is asked before it is refused: the events are opened
// before the target is looked for.
live_test!(a_missing_process_or_an_uncountable_event_is_refused, || {
    let dir = scratch("stat-bad-target");
    refused(
        &dir,
        &["stat", "-p", "4000000000", "-e", "task-clock"],
        &["no process 4000000000"],
    );
    if !has_pmu() {
        refused(
            &dir,
            &["stat", "-e", "cycles", "--", "true"],
            &["no event can be counted", "no hardware", "-e task-clock"],
        );
    }
});

// JSON is for programs: it goes to the standard output, and notices (the
// events this machine cannot count) stay on the standard error.
live_test!(stat_json_goes_to_standard_output, || {
    let dir = scratch("stat-json-stdout");
    let output = run_ok(&dir, &["stat", "--format", "json", "--", "true"]);
    let totals: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(totals["exit_status"], 0, "{totals}");
    assert!(!stderr(&output).contains('{'), "{}", stderr(&output));
    let text = run_ok(&dir, &["stat", "-e", "task-clock", "--", "true"]);
    assert!(text.stdout.is_empty());
    assert!(stderr(&text).contains("task-clock"), "{}", stderr(&text));
});
