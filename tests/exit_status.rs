//! The target's exit status passes through, and an interrupted recording is
//! still a whole, readable recording.

use std::process::Stdio;
use std::time::Duration;

use crate::util::*;

live_test!(the_commands_exit_status_passes_through, || {
    let dir = scratch("exit-status");
    for (script, code) in [
        ("exit 0", 0),
        ("exit 3", 3),
        ("kill -TERM $$", 143),
        ("kill -KILL $$", 137),
    ] {
        let output = run(
            &dir,
            &["record", "-e", "cpu-clock", "--", "sh", "-c", script],
        );
        assert_eq!(
            output.status.code(),
            Some(code),
            "{script}: {}",
            stderr(&output)
        );
        let report = report_json(&dir, "profiler.data");
        let expected = if code < 128 {
            "exited with status"
        } else {
            "killed by signal"
        };
        assert!(
            report["outcome"].as_str().unwrap().starts_with(expected),
            "{report}"
        );
    }
});

/// Starts `record` in its own process group on a long-running command.
fn start_long_recording(dir: &std::path::Path) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let split = fixture("split");
    let child = profiler()
        .current_dir(dir)
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-o",
            "long.data",
            "--",
            split.to_str().unwrap(),
            "1000",
        ])
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    child
}

live_test!(
    ctrl_c_leaves_a_valid_recording_and_reports_the_signal,
    || {
        let dir = scratch("ctrl-c");
        let child = start_long_recording(&dir);
        // A terminal's Ctrl-C goes to the whole foreground process group.
        kill("-INT", -(child.id() as i64));
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
        let report = report_json(&dir, "long.data");
        assert!(samples(&report) >= 100, "{report}");
        assert!(percent(&report, "burn_60") > 40.0, "{report}");
        // Said once: the command was killed by the Ctrl-C's signal.
        let summary = stderr(&output);
        assert!(
            summary.contains("killed by signal 2 (Interrupt)"),
            "{summary}"
        );
        assert_eq!(summary.matches("signal 2").count(), 1, "{summary}");
    }
);

live_test!(
    a_signal_to_the_profiler_alone_stops_the_command_and_keeps_the_recording,
    || {
        let dir = scratch("sigterm");
        let child = start_long_recording(&dir);
        kill("-TERM", child.id() as i64);
        let output = child.wait_with_output().unwrap();
        // The command is asked to terminate in turn.
        assert_eq!(output.status.code(), Some(143), "{}", stderr(&output));
        let report = report_json(&dir, "long.data");
        assert!(samples(&report) >= 100, "{report}");
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, ["long.data"]);
    }
);

live_test!(the_command_starts_with_default_signal_handling, || {
    let dir = scratch("signal-dispositions");
    // The profiler, like every Rust program, ignores SIGPIPE; the command
    // must not inherit that (`yes | head` relies on dying of SIGPIPE).
    let output = record(
        &dir,
        "profiler.data",
        &["-e", "cpu-clock"],
        &["cat", "/proc/self/status"],
    );
    let status = String::from_utf8(output.stdout).unwrap();
    let mask = |field: &str| {
        let line = status.lines().find(|l| l.starts_with(field)).unwrap();
        u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
    };
    let sigpipe = 1 << (13 - 1);
    assert_eq!(
        mask("SigIgn:") & sigpipe,
        0,
        "SIGPIPE ignored in the command:\n{status}"
    );
    assert_eq!(
        mask("SigBlk:"),
        0,
        "signals blocked in the command:\n{status}"
    );
});

/// Kills a process when dropped, whatever the test's fate.
struct KillOnDrop(Option<i64>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

// A command that leaves a daemon behind ends the recording when it exits
// itself, as with perf, and says what it left running; with
// `--wait-descendants` the recording waits for the daemon too.
live_test!(
    the_recording_ends_with_the_command_unless_told_to_wait_for_its_descendants,
    || {
        let dir = scratch("exit-status-daemon");
        let started = std::time::Instant::now();
        let output = run(
            &dir,
            &[
                "record",
                "-e",
                "cpu-clock",
                "--",
                "sh",
                "-c",
                // The daemon lets go of the output, which the test reads to
                // its end.
                "(setsid sleep 30 >/dev/null 2>&1 & echo $! > daemon.pid); exit 3",
            ],
        );
        let elapsed = started.elapsed();
        let pid = std::fs::read_to_string(dir.join("daemon.pid")).unwrap();
        let _daemon = KillOnDrop(pid.trim().parse().ok());
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{text}");
        assert!(
            elapsed < Duration::from_secs(20),
            "took {elapsed:?}: {text}"
        );
        let notice = format!("left 1 process it started running (pid {})", pid.trim());
        assert!(text.contains(&notice), "{text}");
        assert!(text.contains("--wait-descendants"), "{text}");
        let report = report_json(&dir, "profiler.data");
        assert_eq!(report["outcome"], "exited with status 3", "{report}");

        let started = std::time::Instant::now();
        let output = run(
            &dir,
            &[
                "record",
                "-e",
                "cpu-clock",
                "--wait-descendants",
                "--",
                "sh",
                "-c",
                "(setsid sleep 1 >/dev/null 2>&1 &); exit 4",
            ],
        );
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(4), "{text}");
        assert!(started.elapsed() >= Duration::from_secs(1), "{text}");
        assert!(!text.contains("left"), "{text}");
        report_json(&dir, "profiler.data");
    }
);
