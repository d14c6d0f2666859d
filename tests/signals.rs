//! What ends `record` from outside, and what it writes to: every signal it
//! can receive ends with a whole recording, or none and nothing advertised;
//! the command never outlives it; a broken standard error, or a terminal
//! that hangs up, costs messages, never the exit status.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::util::*;

/// Starts `record -o x.data` of a short command in `dir`.
fn start(dir: &Path) -> Child {
    let args = [
        "record",
        "-e",
        "cpu-clock",
        "-o",
        "x.data",
        "--",
        "sh",
        "-c",
        "exit 3",
    ];
    spawn(dir, &args)
}

/// Polls `dir` until a temporary file appears or `child` ends.
fn until_temporary(dir: &Path, child: &mut Child) {
    let started = Instant::now();
    while temporaries(dir).is_empty() && child.try_wait().unwrap().is_none() {
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

/// Asserts what a run ended by a signal left in `dir`: a whole recording
/// at x.data (the command's status), or nothing; and that the next run
/// names no leftover that does not read.
fn whole_or_nothing(dir: &Path, signal: &str, output: &std::process::Output) {
    let message = stderr(output);
    if dir.join("x.data").exists() {
        // SIGKILL cannot be noted: it may end the profiler once the
        // recording is in place, before it passes the status on.
        if signal != "-KILL" {
            assert_eq!(output.status.code(), Some(3), "{signal}: {message}");
        }
        let report = run(dir, &["report", "-i", "x.data"]);
        assert!(
            report.status.success() && stderr(&report).is_empty(),
            "{signal}: {message}"
        );
    }
    if signal != "-KILL" {
        assert_eq!(
            temporaries(dir),
            Vec::<PathBuf>::new(),
            "{signal}: {message}"
        );
    }
    let next = run_ok(
        dir,
        &["record", "-e", "cpu-clock", "-o", "x.data", "--", "true"],
    );
    for line in stderr(&next).lines() {
        if let Some(name) = line
            .strip_prefix("profiler: ")
            .and_then(|l| l.split(" was left").next())
            && line.contains(" was left by an earlier recording")
        {
            let report = run(dir, &["report", "-i", name]);
            assert!(
                report.status.success(),
                "{signal}: {name} is named, and unreadable"
            );
        }
    }
    for leftover in temporaries(dir) {
        std::fs::remove_file(leftover).unwrap();
    }
    std::fs::remove_file(dir.join("x.data")).unwrap();
}

live_test!(
    a_signal_in_the_first_milliseconds_leaves_a_whole_recording_or_nothing,
    || {
        let dir = scratch("signals-early");
        for signal in ["-INT", "-TERM", "-HUP", "-QUIT", "-USR1", "-KILL"] {
            // The moment the temporary file appears, before the command has
            // started.
            let mut child = start(&dir);
            until_temporary(&dir, &mut child);
            kill(signal, child.id().into());
            let output = child.wait_with_output().unwrap();
            if signal != "-KILL" {
                let message = stderr(&output);
                let code = output.status.code();
                assert!(
                    code == Some(3)
                        || message.contains("before the command started; nothing was recorded"),
                    "{signal}: {code:?} {message}"
                );
            }
            whole_or_nothing(&dir, signal, &output);
            // And at moments spread over the first 20 ms.
            for delay in 0..10 {
                let child = start(&dir);
                std::thread::sleep(Duration::from_millis(2 * delay));
                kill(signal, child.id().into());
                let output = child.wait_with_output().unwrap();
                whole_or_nothing(&dir, signal, &output);
            }
        }
    }
);

/// Starts `record` of a command that runs until stopped; returns it and
/// the command's pid.
fn start_long(dir: &Path, extra: &[&str]) -> (Child, u32) {
    let split = fixture("split");
    let mut child = profiler()
        .current_dir(dir)
        .args(["record", "-e", "cpu-clock", "-o", "long.data"])
        .args(extra)
        .arg("--")
        .arg(&split)
        .arg("1000")
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let children = format!("/proc/{0}/task/{0}/children", child.id());
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(&children).unwrap_or_default();
        if let Some(pid) = text.split_whitespace().next() {
            // Past its exec, and sampled for a moment.
            std::thread::sleep(Duration::from_millis(500));
            return (child, pid.parse().unwrap());
        }
        assert!(child.try_wait().unwrap().is_none(), "record ended early");
        assert!(started.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether process `pid` is gone, or a zombie no one has reaped yet,
/// within 5 s.
fn ends(pid: u32) -> bool {
    let status = format!("/proc/{pid}/status");
    for _ in 0..100 {
        match std::fs::read_to_string(&status) {
            Err(_) => return true,
            Ok(text) if text.contains("State:\tZ") => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    false
}

live_test!(
    the_command_never_outlives_the_profiler_whatever_signal_ends_it,
    || {
        let dir = scratch("signals-orphans");
        for signal in ["-QUIT", "-USR2", "-ALRM"] {
            let (child, command) = start_long(&dir, &[]);
            kill(signal, child.id().into());
            let output = child.wait_with_output().unwrap();
            let message = stderr(&output);
            // The command is asked to end in turn; its status is record's.
            assert_eq!(output.status.code(), Some(143), "{signal}: {message}");
            assert!(ends(command), "{signal}: the command runs on");
            let report = report_json(&dir, "long.data");
            assert!(samples(&report) > 100, "{report}");
            assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());
        }
        // Killed outright, the profiler takes the command with it.
        let (mut child, command) = start_long(&dir, &[]);
        kill("-KILL", child.id().into());
        child.wait().unwrap();
        let gone = ends(command);
        if !gone {
            kill("-KILL", command.into());
        }
        assert!(gone, "the command outlived a killed profiler");
    }
);

live_test!(
    an_interrupt_while_archiving_finishes_the_archive_and_says_so,
    || {
        let dir = scratch("signals-archive");
        let cppwork = fixture("cppwork");
        let mut child = profiler()
            .current_dir(&dir)
            .args([
                "record",
                "-e",
                "cpu-clock",
                "--call-graph",
                "dwarf",
                "--archive",
            ])
            .args(["-o", "a.data", "--"])
            .arg(&cppwork)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut said = Vec::new();
        // The summary comes once the recording is written; the archive is
        // made after it.
        for line in lines.by_ref() {
            let line = line.unwrap();
            let written = line.contains("; wrote ");
            said.push(line);
            if written {
                kill("-INT", child.id().into());
                break;
            }
        }
        said.extend(lines.map(Result::unwrap));
        let status = child.wait().unwrap();
        let said = said.join("\n");
        assert_eq!(status.code(), Some(0), "{said}");
        assert!(
            said.contains("interrupted (signal 2) while archiving: the archive was finished first"),
            "{said}"
        );
        let output = run_ok(&dir, &["archive", "-i", "a.data"]);
        assert!(
            stderr(&output).contains("is archived already"),
            "{}",
            stderr(&output)
        );
    }
);

live_test!(
    a_broken_standard_error_never_changes_the_exit_status,
    || {
        let dir = scratch("signals-broken-stderr");
        // A pipe whose reader is gone: every write to it fails.
        let broken = || {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            writer
        };
        let status = |args: &[&str]| {
            profiler()
                .current_dir(&dir)
                .args(args)
                .stderr(broken())
                .status()
                .unwrap()
                .code()
        };
        // Without -e the default event is said to fall back, before the
        // command runs.
        assert_eq!(
            status(&["record", "-o", "x.data", "--", "sh", "-c", "exit 3"]),
            Some(3)
        );
        assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());
        run_ok(&dir, &["report", "-i", "x.data"]);
        assert_eq!(
            status(&["flamegraph", "-i", "x.data", "-o", "x.svg"]),
            Some(0)
        );
        assert_eq!(
            status(&["export", "--format", "pprof", "-i", "x.data"]),
            Some(0)
        );
        assert_eq!(status(&["report", "-i", "no-such.data"]), Some(1));
        // And a standard output that breaks at once.
        let output = profiler()
            .current_dir(&dir)
            .args(["report", "-i", "x.data"])
            .stdout(broken())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
);

live_test!(a_terminal_that_hangs_up_leaves_the_commands_status, || {
    if !profiler_testing::tool("setsid") {
        return;
    }
    let dir = scratch("signals-hangup");
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = || {
        File::options()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap()
    };
    // `record` leads a session whose terminal this is, as a login
    // shell's job would.
    let mut child = std::process::Command::new("setsid")
        .arg("--ctty")
        .arg(env!("CARGO_BIN_EXE_profiler"))
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-o",
            "x.data",
            "--",
            "sh",
            "-c",
        ])
        .arg("touch started; exec sleep 30")
        .current_dir(&dir)
        .stdin(terminal())
        .stdout(terminal())
        .stderr(terminal())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !dir.join("started").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the command did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The terminal goes away.
    drop(master);
    let status = child.wait().unwrap();
    let report = report_json(&dir, "x.data");
    // The command was asked to end after the hangup: its status is
    // record's, as the recording says.
    assert_eq!(
        report["outcome"], "killed by signal 15 (Terminated)",
        "{report}"
    );
    assert_eq!(status.code(), Some(143));
});
