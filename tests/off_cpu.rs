//! Off-CPU time, live: `record --off-cpu` of fixtures that wait in known
//! places for known stretches, and that measure those stretches themselves
//! (`fixtures/programs/offcpu.c`, `preempt.c`): the profile is compared
//! with what happened, not with the nominal durations, so that a machine
//! loaded by others does not fail it. Then each export, read back as its
//! consumer reads it, holds the same off-CPU time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::exports::{firefox_samples, read_json, speedscope_stacks};
use crate::util::*;

/// What a fixture printed: `name value` lines.
fn measured(output: &[u8]) -> HashMap<String, u64> {
    String::from_utf8_lossy(output)
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            Some((name.to_owned(), value.parse().ok()?))
        })
        .collect()
}

/// `offcpu` recorded with `--off-cpu -g` once for every test here: its
/// directory and what it measured.
fn offcpu() -> &'static (PathBuf, HashMap<String, u64>) {
    static RECORDED: OnceLock<(PathBuf, HashMap<String, u64>)> = OnceLock::new();
    RECORDED.get_or_init(|| {
        let dir = scratch("off-cpu");
        let program = fixture("offcpu");
        let output = record(
            &dir,
            "offcpu.data",
            // The clock in user space: an on-CPU sample in the kernel under
            // nap (entering its sleep) would carry nap's stack with CPU time.
            &["--off-cpu", "-g", "-e", "cpu-clock:u"],
            &[program.to_str().unwrap()],
        );
        (dir, measured(&output.stdout))
    })
}

/// Milliseconds, for messages.
fn ms(ns: f64) -> String {
    format!("{:.1} ms", ns / 1e6)
}

/// Asserts that `value` is within `share` of `expected` (both ns).
fn assert_within(what: &str, value: f64, expected: f64, share: f64, context: &dyn Fn() -> String) {
    assert!(
        (value - expected).abs() <= expected * share,
        "{what}: {} is not within {:.0}% of {}\n{}",
        ms(value),
        share * 100.0,
        ms(expected),
        context()
    );
}

/// Each function's total (with its callees) in nanoseconds of `event`,
/// from `report --children`, in the main thread's process.
fn totals(dir: &Path, event: &str) -> (HashMap<String, f64>, Value) {
    let report = report_json_with(dir, "offcpu.data", &["--event", event, "--children"]);
    let period = report["events"][0]["period"].as_f64().unwrap();
    let totals = (report["functions"].as_array().unwrap().iter())
        .map(|f| {
            let share = f["total_percent"].as_f64().unwrap() / 100.0;
            (f["name"].as_str().unwrap().to_owned(), share * period)
        })
        .collect();
    (totals, report)
}

// The fixture burns 200 ms of CPU, naps 300 ms, waits 200 ms on a pipe and
// about 100 ms for a mutex: each wait is where its function is in the
// off-CPU profile, burn's time is on the CPU, and with the time on it the
// wall profile adds up to the main thread's life.
live_test!(off_cpu_time_is_where_the_program_waited, || {
    let (dir, measured) = offcpu();
    let (off_cpu, report) = totals(dir, "off-cpu");
    let context = || format!("measured: {measured:?}\nreport: {}", report["functions"]);
    for phase in ["nap", "wait_pipe", "wait_lock"] {
        let total = off_cpu.get(phase).copied().unwrap_or(0.0);
        assert_within(phase, total, measured[phase] as f64, 0.15, &context);
    }
    // Nothing of the waiting is charged to burn, which only ran (or was
    // preempted while it ran).
    let burn_off = off_cpu.get("burn").copied().unwrap_or(0.0);
    let burn_wall = measured["burn"] as f64;
    let burn_cpu = measured["burn_cpu"] as f64;
    assert!(
        burn_off <= (burn_wall - burn_cpu) * 1.15 + 5e6,
        "burn off the CPU {} though it waited for nothing\n{}",
        ms(burn_off),
        context()
    );

    let (on_cpu, report) = totals(dir, "cpu-clock");
    let context = || format!("measured: {measured:?}\nreport: {}", report["functions"]);
    assert_within("burn on the CPU", on_cpu["burn"], burn_cpu, 0.15, &context);
    let (wall, report) = totals(dir, "wall");
    let context = || format!("measured: {measured:?}\nreport: {}", report["functions"]);
    assert_within("burn in wall time", wall["burn"], burn_wall, 0.15, &context);
    for phase in ["nap", "wait_pipe", "wait_lock"] {
        let total = wall.get(phase).copied().unwrap_or(0.0);
        assert_within(phase, total, measured[phase] as f64, 0.15, &context);
    }
});

// The main thread's wall time, its samples on the CPU and its stretches
// off it, adds up to its life as its switches tell it (within 3%), and
// the header's times add up exactly.
live_test!(wall_time_adds_up_to_the_main_threads_life, || {
    let (dir, measured) = offcpu();
    let args = ["--event", "wall", "--threads"];
    let report = report_json_with(dir, "offcpu.data", &args);
    let times = report["thread_times"].as_array().unwrap();
    let main = times.iter().find(|t| t["pid"] == t["tid"]).unwrap();
    let tid = main["tid"].as_u64().unwrap();
    let lifetime = main["lifetime_ns"].as_f64().unwrap();
    let field = |name: &str| main[name].as_u64().unwrap();
    assert_eq!(
        field("on_cpu_ns") + field("blocked_ns") + field("preempted_ns"),
        field("total_ns")
    );
    assert!(
        field("total_ns") as f64 >= lifetime * 0.99,
        "the switches leave part of the main thread's life untold: {main}"
    );
    // Its life holds what the program measured of itself.
    let own = measured["lifetime"] as f64;
    assert!(lifetime >= own && lifetime < own * 1.1, "{main}, own {own}");
    let wall: u64 = (report["functions"].as_array().unwrap().iter())
        .filter(|f| f["tid"] == tid)
        .map(|f| f["period"].as_u64().unwrap())
        .sum();
    let context = || format!("{main}\n{}", report["functions"]);
    assert_within(
        "the main thread's wall time",
        wall as f64,
        lifetime,
        0.03,
        &context,
    );
    assert!(
        field("blocked_ns") as f64 >= (measured["nap"] + measured["wait_pipe"]) as f64 * 0.9,
        "{main}"
    );
});

// Two threads spinning on one CPU: each is preempted while the other runs
// (and while others' work runs): its preempted time is its spinning
// stretch less its CPU time, as it measured them, and at least 40% of its
// life.
live_test!(
    threads_sharing_a_cpu_are_preempted_while_the_other_runs,
    || {
        let dir = scratch("off-cpu-preempt");
        let program = fixture("preempt");
        let output = record(
            &dir,
            "preempt.data",
            &["--off-cpu"],
            &[program.to_str().unwrap(), "600"],
        );
        let measured = measured(&output.stdout);
        let report = report_json_with(&dir, "preempt.data", &["--event", "off-cpu"]);
        let times = report["thread_times"].as_array().unwrap();
        let mut spinners_preempted = 0.0;
        for name in ["spin-a", "spin-b"] {
            let tid = measured[name];
            let thread = times.iter().find(|t| t["tid"] == tid).unwrap();
            let preempted = thread["preempted_ns"].as_f64().unwrap();
            spinners_preempted += preempted;
            let lifetime = thread["lifetime_ns"].as_f64().unwrap();
            let waited = measured[&format!("{name}_wall")] - measured[&format!("{name}_cpu")];
            let context = || format!("{thread}\nmeasured: {measured:?}");
            assert_within(name, preempted, waited as f64, 0.15, &context);
            assert!(preempted >= lifetime * 0.4, "{}", context());
            assert!(
                thread["blocked_ns"].as_f64().unwrap() < lifetime * 0.2,
                "{}",
                context()
            );
        }
        // --sort state: the preempted row is the spinners' preempted time
        // (the main thread, blocked joining them as long as they run,
        // weighs about as much as both, so shares would tell little).
        let by_state = report_json_with(
            &dir,
            "preempt.data",
            &["--event", "off-cpu", "--sort", "state"],
        );
        let period = |state: &str| -> f64 {
            (by_state["tasks"].as_array().unwrap().iter())
                .filter(|t| t["state"] == state)
                .map(|t| t["period"].as_f64().unwrap())
                .sum()
        };
        let context = || format!("{}", by_state["tasks"]);
        assert_within(
            "preempted",
            period("preempted"),
            spinners_preempted,
            0.15,
            &context,
        );
        assert!(period("blocked") > 0.0, "{}", context());
    }
);

// Attached with -p while it burns: its waits after that are told as
// they are when record starts it.
live_test!(attached_with_p_off_cpu_time_is_where_it_waited, || {
    use std::process::Stdio;
    let dir = scratch("off-cpu-attach");
    let child = Command::new(fixture("offcpu"))
        .arg("2")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // It burns 400 ms of CPU first: attach in the middle of that.
    std::thread::sleep(std::time::Duration::from_millis(100));
    let pid = child.id().to_string();
    let options = ["--off-cpu", "-g", "-e", "cpu-clock", "-p", &pid];
    record(&dir, "attach.data", &options, &[]);
    let output = child.wait_with_output().unwrap();
    let measured = measured(&output.stdout);
    let args = ["--event", "off-cpu", "--children"];
    let report = report_json_with(&dir, "attach.data", &args);
    let period = report["events"][0]["period"].as_f64().unwrap();
    let total = |name: &str| {
        (report["functions"].as_array().unwrap().iter())
            .find(|f| f["name"] == name)
            .map_or(0.0, |f| {
                f["total_percent"].as_f64().unwrap() / 100.0 * period
            })
    };
    let context = || format!("measured: {measured:?}\nreport: {}", report["functions"]);
    for phase in ["nap", "wait_pipe", "wait_lock"] {
        assert_within(phase, total(phase), measured[phase] as f64, 0.15, &context);
    }
});

/// `nap`'s off-CPU time as an export's reader sees it, against the
/// report's.
fn nap_in_report(dir: &Path) -> f64 {
    totals(dir, "off-cpu").0["nap"]
}

// go tool pprof reads the off-CPU time as a sample type of its own.
live_test!(pprof_holds_the_off_cpu_event, || {
    if !profiler_testing::tool("go") {
        return;
    }
    let (dir, _) = offcpu();
    let export = ["export", "--format", "pprof", "-i", "offcpu.data"];
    run_ok(dir, &[&export[..], &["-o", "offcpu.pb.gz"]].concat());
    let output = Command::new("go")
        .args([
            "tool",
            "pprof",
            "-sample_index=off-cpu",
            "-unit=ms",
            "-top",
            "-cum",
        ])
        .args(["-nodefraction=0", "offcpu.pb.gz"])
        .current_dir(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(text.contains("Type: off-cpu"), "{text}");
    // `cum` of nap, in ms: the fourth column of its row.
    let nap = text
        .lines()
        .find(|l| l.split_whitespace().last() == Some("nap"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|ms| ms.trim_end_matches("ms").parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no row of nap:\n{text}"));
    let context = || text.to_string();
    assert_within(
        "nap in pprof",
        nap * 1e6,
        nap_in_report(dir),
        0.01,
        &context,
    );
});

// Folded stacks weigh nanoseconds off the CPU, and the flame graph draws
// them in cool colours.
live_test!(
    folded_stacks_and_flame_graphs_hold_the_off_cpu_event,
    || {
        let (dir, _) = offcpu();
        let args = [
            "export",
            "--format",
            "folded",
            "--event",
            "off-cpu",
            "-i",
            "offcpu.data",
        ];
        let folded = String::from_utf8(run_ok(dir, &args).stdout).unwrap();
        let nap: u64 = (folded.lines())
            .filter(|l| l.split(';').any(|f| f == "nap"))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum();
        let context = || folded.clone();
        assert_within(
            "nap in folded stacks",
            nap as f64,
            nap_in_report(dir),
            0.001,
            &context,
        );

        let args = [
            "flamegraph",
            "--event",
            "off-cpu",
            "-i",
            "offcpu.data",
            "-o",
            "-",
        ];
        let svg = String::from_utf8(run_ok(dir, &args).stdout).unwrap();
        assert!(svg.contains("<title>nap ("), "no frame of nap");
        assert!(svg.contains(" ns, "), "not weighed in ns");
        // inferno's blue background gradient.
        assert!(svg.contains("#e0e0ff"), "not drawn cool");
    }
);

// Speedscope: each thread's off-CPU samples weigh nanoseconds.
live_test!(speedscope_holds_the_off_cpu_event, || {
    let (dir, measured) = offcpu();
    let args = [
        "export",
        "--format",
        "speedscope",
        "--event",
        "off-cpu",
        "-i",
        "offcpu.data",
        "-o",
        "offcpu.speedscope.json",
    ];
    run_ok(dir, &args);
    let file = read_json(&dir.join("offcpu.speedscope.json"));
    let profiles = file["profiles"].as_array().unwrap();
    let mut nap = 0;
    for profile in profiles {
        assert_eq!(profile["unit"], "nanoseconds");
        let stacks = speedscope_stacks(&file, profile);
        let weights = profile["weights"].as_array().unwrap();
        nap += (stacks.iter().zip(weights))
            .filter(|(stack, _)| stack.iter().any(|f| f == "nap"))
            .map(|(_, w)| w.as_u64().unwrap())
            .sum::<u64>();
    }
    let context = || format!("{measured:?}");
    assert_within(
        "nap in speedscope",
        nap as f64,
        nap_in_report(dir),
        0.001,
        &context,
    );
});

// The Firefox Profiler: off-CPU samples have no CPU delta and weigh
// sampling intervals, as samply writes them.
live_test!(firefox_holds_the_off_cpu_event, || {
    let (dir, measured) = offcpu();
    let args = [
        "export",
        "--format",
        "firefox",
        "--event",
        "wall",
        "-i",
        "offcpu.data",
        "-o",
        "offcpu.firefox.json",
    ];
    run_ok(dir, &args);
    let profile = read_json(&dir.join("offcpu.firefox.json"));
    let interval_ms = profile["meta"]["interval"].as_f64().unwrap();
    let threads = profile["threads"].as_array().unwrap();
    let main = threads.iter().find(|t| t["pid"] == t["tid"]).unwrap();
    let samples = firefox_samples(&profile, main);
    let deltas = main["samples"]["threadCPUDelta"].as_array().unwrap();
    let nap: Vec<usize> = (samples.iter().enumerate())
        .filter(|(_, s)| s.names.iter().any(|n| n == "nap"))
        .map(|(i, _)| i)
        .collect();
    // nap's time off the CPU, without CPU time; on it, a tick or two at
    // most, of its few microseconds of user code (libc's wrapper, the
    // first call's symbol binding).
    let (off, on): (Vec<usize>, Vec<usize>) = nap.iter().partition(|&&i| deltas[i] == 0);
    assert!(!off.is_empty(), "no sample of nap without CPU time");
    assert!(on.len() <= 2, "{} samples of nap with CPU time", on.len());
    let weight: i64 = off.iter().map(|&i| samples[i].weight).sum();
    // burn's samples on the CPU carry its CPU time (in µs); those of its
    // preemptions, none.
    let burn_us: u64 = (samples.iter().zip(deltas))
        .filter(|(s, _)| s.names.iter().any(|n| n == "burn"))
        .map(|(_, delta)| delta.as_u64().unwrap())
        .sum();
    let context = || format!("{measured:?}");
    assert_within(
        "burn's CPU time in Firefox",
        burn_us as f64 * 1e3,
        measured["burn_cpu"] as f64,
        0.15,
        &context,
    );
    let context = || format!("{} intervals of {interval_ms} ms", weight);
    let nap_ns = weight as f64 * interval_ms * 1e6;
    // Whole intervals, what is left over carried to the thread's next
    // sample: within one interval at each end of nap.
    let report = nap_in_report(dir);
    assert!(
        (nap_ns - report).abs() <= interval_ms * 1e6 * 2.0,
        "nap {} in Firefox, {} in the report: {}",
        ms(nap_ns),
        ms(report),
        context()
    );
});

// Where the kernel refuses the stacks (an unprivileged user at
// kernel.perf_event_paranoid 2), one line says why and what would allow
// it, and off-CPU time is still recorded, at unknown stacks.
live_test!(without_the_stacks_off_cpu_time_is_still_counted, || {
    use std::os::unix::fs::PermissionsExt;
    // Where nobody may run the fixture and write the recording.
    let dir = std::env::temp_dir().join(format!("profiler-off-cpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let program = dir.join("offcpu");
    std::fs::copy(fixture("offcpu"), &program).unwrap();
    let args = [
        "record",
        "--off-cpu",
        "-e",
        "cpu-clock",
        "-o",
        "nobody.data",
        "--",
        program.to_str().unwrap(),
        "0.5",
    ];
    let Some(output) = run_as_nobody(&dir, &args) else {
        return;
    };
    let text = stderr(&output);
    assert!(output.status.success(), "{text}");
    if perf_event_paranoid().is_some_and(|level| level >= 2) {
        let line = (text.lines())
            .find(|l| l.contains("context-switches"))
            .unwrap_or_else(|| panic!("no line about the stacks: {text}"));
        assert!(line.contains("kernel.perf_event_paranoid"), "{line}");
        assert!(line.contains("unknown stacks"), "{line}");
    }
    let measured = measured(&output.stdout);
    let report = report_json_with(&dir, "nobody.data", &["--event", "off-cpu"]);
    let times = report["thread_times"].as_array().unwrap();
    let main = times.iter().find(|t| t["pid"] == t["tid"]).unwrap();
    let waited = measured["nap"] + measured["wait_pipe"];
    assert!(
        main["blocked_ns"].as_u64().unwrap() as f64 >= waited as f64 * 0.9,
        "{main} {measured:?}"
    );
});
