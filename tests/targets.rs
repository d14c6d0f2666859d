//! Targets other than a launched command: processes and threads that are
//! already running (`-p`, `-t`), attached and left running, and whole CPUs
//! (`-a`, `-C`), with the samples still named by process, thread and
//! function.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::*;

/// The `spinner` fixture, running: two named threads working until it is
/// killed, which happens when this is dropped, whatever the test's fate.
struct Spinner {
    child: Child,
}

impl Spinner {
    /// Starts it, and waits until both threads run under their names.
    fn start(args: &[&str]) -> Spinner {
        let mut child = Command::new(fixture("spinner"))
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "ready\n");
        Spinner { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The id of its thread named `name`.
    fn thread(&self, name: &str) -> u32 {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.pid())).unwrap();
        tasks
            .flatten()
            .find(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|comm| comm.trim_end() == name)
            })
            .and_then(|task| task.file_name().to_str()?.parse().ok())
            .unwrap_or_else(|| panic!("spinner has no thread {name}"))
    }

    /// Asserts that it still runs, and is not stopped.
    fn assert_running(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "the attached process ended"
        );
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let state = status.lines().find(|l| l.starts_with("State:")).unwrap();
        assert!(!state.contains("stopped"), "{state}");
    }

    /// Records the target that `options` name while this runs, asserts
    /// that it still runs, and returns the output and the JSON report.
    fn record(&mut self, dir: &Path, data: &str, options: &[&str]) -> (Output, Value) {
        let output = record_target(dir, data, options);
        self.assert_running();
        (output, report_json(dir, data))
    }

    /// Asserts that each of its threads has at least 100 samples in
    /// `report`.
    fn assert_threads_sampled(&self, report: &Value) {
        for name in ["spin-a", "spin-b"] {
            let count = thread_samples(report, self.pid(), name);
            assert!(
                count >= 100,
                "{name}: {count} samples; {}",
                report["threads"]
            );
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The report's thread rows of process `pid`, as (name, samples).
fn threads_of(report: &Value, pid: u32) -> Vec<(String, u64)> {
    report["threads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["pid"] == pid)
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["samples"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Samples of thread `name` of process `pid` (0 if it has no row).
fn thread_samples(report: &Value, pid: u32, name: &str) -> u64 {
    threads_of(report, pid)
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, samples)| samples)
        .sum()
}

/// Waits until process `pid` holds at least `count` perf event counters.
fn wait_for_counters(pid: u32, count: usize) {
    let started = Instant::now();
    loop {
        let counters = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|fds| {
                fds.flatten()
                    .filter(|fd| {
                        std::fs::read_link(fd.path())
                            .is_ok_and(|target| target.to_string_lossy().contains("perf_event"))
                    })
                    .count()
            })
            .unwrap_or(0);
        if counters >= count {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the profiler opened no counters"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Records cpu-clock samples of the target that `options` name (`-p`, `-t`,
/// `-a`, `-C`), without a command, into `dir/data`, asserting success.
fn record_target(dir: &Path, data: &str, options: &[&str]) -> Output {
    record(dir, data, &[&["-e", "cpu-clock"], options].concat(), &[])
}

live_test!(
    attaching_to_a_process_samples_every_thread_and_leaves_it_running,
    || {
        let dir = scratch("targets-pid");
        let mut spinner = Spinner::start(&[]);
        let pid = spinner.pid().to_string();
        let (output, report) = spinner.record(&dir, "p.data", &["-p", &pid, "--duration", "1"]);

        assert!(samples(&report) >= 400, "too few samples: {report}");
        let (a, b) = (percent(&report, "spin_a"), percent(&report, "spin_b"));
        assert!(a >= 20.0 && b >= 20.0 && a + b >= 90.0, "{report}");
        assert!(function(&report, "spin_a").unwrap()["module"] == "spinner");
        spinner.assert_threads_sampled(&report);
        let outcome = report["outcome"].as_str().unwrap();
        assert!(
            outcome.starts_with("was attached for ") && outcome.ends_with(" s and left running"),
            "{outcome}"
        );
        let command = report["command"].to_string();
        assert!(command.contains("spinner"), "{command}");
        let summary = stderr(&output);
        assert!(summary.contains("left running"), "{summary}");

        // Attached twice more: the recording names the same code each time.
        let output = record_target(&dir, "again.data", &["-p", &pid, "--duration", "0.3"]);
        assert!(stderr(&output).contains("samples"), "{}", stderr(&output));
        spinner.assert_running();
    }
);

live_test!(attaching_to_a_thread_records_only_that_thread, || {
    let dir = scratch("targets-tid");
    let mut spinner = Spinner::start(&[]);
    let tid = spinner.thread("spin-a");
    let (_, report) = spinner.record(&dir, "t.data", &["-t", &tid.to_string(), "--duration", "1"]);

    assert!(samples(&report) >= 200, "too few samples: {report}");
    let threads = report["threads"].as_array().unwrap();
    assert!(
        threads
            .iter()
            .all(|t| t["tid"] == tid && t["name"] == "spin-a"),
        "{threads:?}"
    );
    assert!(percent(&report, "spin_a") >= 95.0, "{report}");
    assert_eq!(percent(&report, "spin_b"), 0.0, "{report}");
});

// perf users give `-p` a thread's id too: the whole process is followed,
// and `record` says so.
live_test!(a_thread_given_to_p_stands_for_its_process, || {
    let dir = scratch("targets-pid-of-thread");
    let mut spinner = Spinner::start(&[]);
    let tid = spinner.thread("spin-b");
    let options = ["-p", &tid.to_string(), "--duration", "1"];
    let (output, report) = spinner.record(&dir, "p.data", &options);
    let notice = format!(
        "profiler: -p {tid} is a thread of process {}: following the whole process (-t {tid} \
         follows that thread alone)",
        spinner.pid()
    );
    assert!(stderr(&output).contains(&notice), "{}", stderr(&output));
    spinner.assert_threads_sampled(&report);
});

live_test!(a_recording_stops_when_the_attached_process_exits, || {
    let dir = scratch("targets-exit");
    let spinner = Spinner::start(&["3"]);
    let started = Instant::now();
    let pid = spinner.pid().to_string();
    // The spinner's parent (this test) reaps it only on drop: the recording
    // must see a zombie as ended.
    record_target(&dir, "exit.data", &["-p", &pid, "--duration", "60"]);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the recording outlived its target: {:?}",
        started.elapsed()
    );
    let report = report_json(&dir, "exit.data");
    let outcome = report["outcome"].as_str().unwrap();
    assert!(outcome.ends_with("until it exited"), "{outcome}");
    assert!(percent(&report, "spin_a") + percent(&report, "spin_b") >= 90.0);
});

live_test!(an_interrupt_detaches_and_leaves_the_process_running, || {
    let dir = scratch("targets-interrupt");
    let mut spinner = Spinner::start(&[]);
    let recorder = profiler()
        .current_dir(&dir)
        .args(["record", "-e", "cpu-clock", "-o", "int.data", "-p"])
        .arg(spinner.pid().to_string())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Attached once its counters are open (one per thread and CPU).
    wait_for_counters(recorder.id(), 2);
    std::thread::sleep(Duration::from_millis(300));
    let sent = Command::new("kill")
        .args(["-INT", &recorder.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let output = recorder.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    spinner.assert_running();
    let report = report_json(&dir, "int.data");
    assert!(samples(&report) >= 100, "{report}");
    assert!(
        report["outcome"]
            .as_str()
            .unwrap()
            .ends_with("left running"),
        "{report}"
    );
});

live_test!(
    system_wide_sampling_names_each_process_and_its_threads,
    || {
        let dir = scratch("targets-system-wide");
        let mut spinner = Spinner::start(&[]);
        let (_, report) = spinner.record(&dir, "a.data", &["-a", "--duration", "1"]);
        // Both threads run throughout, one on each CPU most of the time.
        spinner.assert_threads_sampled(&report);
        for function in ["spin_a", "spin_b"] {
            let row = crate::util::function(&report, function)
                .unwrap_or_else(|| panic!("no {function}: {}", report["functions"]));
            assert_eq!(row["module"], "spinner", "{row}");
        }
        let command = report["command"].to_string();
        assert!(command.contains("system-wide"), "{command}");
        assert!(
            report["outcome"]
                .as_str()
                .unwrap()
                .starts_with("was sampled system-wide for"),
            "{report}"
        );

        // One CPU: whichever thread runs there is named.
        let report = record_and_report(
            &dir,
            "c",
            &["-e", "cpu-clock", "-C", "0", "--duration", "1"],
            &[],
        );
        let ours = thread_samples(&report, spinner.pid(), "spin-a")
            + thread_samples(&report, spinner.pid(), "spin-b");
        assert!(ours >= 100, "{ours} samples; {}", report["threads"]);
        assert!(report["command"].to_string().contains("CPU 0"), "{report}");
    }
);

live_test!(system_wide_with_a_command_lasts_until_it_exits, || {
    let dir = scratch("targets-system-wide-command");
    let threads = fixture("threads");
    let report = record_and_report(
        &dir,
        "cmd",
        &["-e", "cpu-clock", "-a"],
        &[threads.to_str().unwrap(), "200"],
    );
    assert!(
        report["outcome"]
            .as_str()
            .unwrap()
            .starts_with("exited with status 0"),
        "{report}"
    );
    assert!(function(&report, "thread_a_work").is_some(), "{report}");
    assert!(function(&report, "thread_b_work").is_some(), "{report}");
    // The command's exit status passes through, as without -a.
    let output = run(
        &dir,
        &[
            "record",
            "-e",
            "cpu-clock",
            "-o",
            "exit.data",
            "-a",
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
    );
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
});

live_test!(
    kernel_sampling_applies_to_events_without_their_own_modifiers,
    || {
        let dir = scratch("targets-kernel");
        let output = run(
            &dir,
            &[
                "record",
                "--kernel",
                "-e",
                "cpu-clock",
                "-e",
                "task-clock:u",
                "-o",
                "k.data",
                "--",
                "true",
            ],
        );
        if !output.status.success() {
            // Kernel sampling needs privileges this run may lack.
            assert!(
                stderr(&output).contains("permission denied"),
                "{}",
                stderr(&output)
            );
            return;
        }
        let report = report_json(&dir, "k.data");
        let names: Vec<&str> = report["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        // Named as perf names them: plainly where they count what events
        // count by default, with their modifiers where they count less.
        assert_eq!(names, ["cpu-clock", "task-clock:u"]);
        let report = record_and_report(&dir, "u", &["-e", "cpu-clock", "--user-only"], &["true"]);
        assert_eq!(report["events"][0]["name"], "cpu-clock");
    }
);

/// Runs `record` with `args`, expecting the one-line refusal that contains
/// `expected`, with exit status 125.
fn assert_refused(dir: &Path, args: &[&str], expected: &str) {
    let mut all = vec!["record", "-e", "cpu-clock", "-o", "refused.data"];
    all.extend_from_slice(args);
    let output = run(dir, &all);
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(125), "{args:?}: {text}");
    assert_eq!(text.lines().count(), 1, "{args:?}: {text}");
    assert!(text.starts_with("profiler: "), "{args:?}: {text}");
    assert!(text.contains(expected), "{args:?}: {text}");
    assert!(!dir.join("refused.data").exists());
}

live_test!(impossible_targets_are_refused_in_one_line, || {
    let dir = scratch("targets-refused");
    // No process or thread has this id (pid_max is at most 2^22).
    let missing = "99999999";
    assert_refused(&dir, &["-p", missing], "there is no process 99999999");
    assert_refused(&dir, &["-t", missing], "there is no thread 99999999");
    // A process that has exited, not yet reaped by its parent (this test).
    let mut zombie = Command::new("true").spawn().unwrap();
    let pid = zombie.id().to_string();
    while !std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap()
        .contains(") Z ")
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let reaped_by = std::process::id();
    assert_refused(
        &dir,
        &["-p", &pid],
        &format!(
            "process {pid} has exited: it is a zombie, kept until its parent (process {reaped_by})"
        ),
    );
    assert_refused(
        &dir,
        &["-t", &pid],
        &format!("thread {pid} has exited: it is a zombie"),
    );
    zombie.wait().unwrap();
    assert_refused(
        &dir,
        &["--duration", "1", "--", "true"],
        "--duration applies to",
    );
    assert_refused(
        &dir,
        &["-a", "--duration", "1", "--", "true"],
        "--duration applies to",
    );
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    assert_refused(
        &dir,
        &["-C", "4095", "--duration", "1"],
        &format!(
            "CPU 4095 is not online; the online CPUs are {}",
            online.trim()
        ),
    );
});

live_test!(a_refused_attach_says_why, || {
    // As root: drop to an unprivileged user that may not attach to a
    // process of root's.
    let mut spinner = Spinner::start(&[]);
    let output_file = std::env::temp_dir().join(format!("targets-nobody-{}.data", spinner.pid()));
    let pid = spinner.pid().to_string();
    let args = [
        "record",
        "-e",
        "cpu-clock",
        // Without the one line that says kernel time is not shown.
        "--user-only",
        "--duration",
        "1",
        "-o",
        output_file.to_str().unwrap(),
        "-p",
        &pid,
    ];
    let Some(output) = run_as_nobody(&std::env::temp_dir(), &args) else {
        return;
    };
    let text = stderr(&output);
    assert_eq!(output.status.code(), Some(125), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("(permission denied)"), "{text}");
    if perf_event_paranoid().unwrap_or(2) <= 2 {
        assert!(
            text.contains(&format!("cannot attach to process {}", spinner.pid()))
                && text.contains("belongs to user 0"),
            "{text}"
        );
    }
    assert!(!output_file.exists());
    spinner.assert_running();
});
