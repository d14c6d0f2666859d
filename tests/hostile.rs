//! Readers against what a hostile or unlucky file system gives them: a
//! recording or a module path that is a FIFO or a device, stacks deeper
//! than any program's, and recordings whose counts ask for more than the
//! machine has. Every case must end, in bounded memory, with a view or a
//! one-line refusal.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::synthetic::*;
use crate::util::*;

/// Runs the profiler with `args` in `dir` within `memory_mib` of address
/// space; panics if it runs for more than 60 s (a hang).
fn run_bounded(dir: &Path, args: &[&str], memory_mib: u64) -> Output {
    let mut command = Command::new("sh");
    command
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            "ulimit -v {}; exec \"$0\" \"$@\"",
            memory_mib * 1024
        ))
        .arg(env!("CARGO_BIN_EXE_profiler"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("profiler {args:?} still runs after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn inputs_that_are_not_files_are_refused_at_once() {
    let dir = scratch("hostile-inputs");
    mkfifo(&dir.join("fifo"));
    for input in ["fifo", "/dev/null"] {
        for view in [&["report"][..], &["hist"], &["annotate", "main"]] {
            let mut args = view.to_vec();
            args.extend(["-i", input]);
            let output = run_bounded(&dir, &args, 1024);
            assert_eq!(output.status.code(), Some(1), "{args:?}");
            let message = stderr(&output);
            assert!(message.contains("not a regular file"), "{message}");
            assert!(message.contains("save it to a file first"), "{message}");
            assert_eq!(message.lines().count(), 1, "{message}");
        }
    }
}

#[test]
fn a_module_that_became_a_fifo_is_named_without_symbols() {
    let dir = scratch("hostile-module-fifo");
    let binary = dir.join("split");
    std::fs::copy(fixture("split"), &binary).unwrap();
    let (burn, _) = function_range(&binary, "burn_60");
    let mut recording = Synthetic::new();
    recording.process(100, 0, "split", &binary);
    recording.samples(100, burn + 4, &[], 10);
    recording.write(&dir.join("split.data"), &["./split"]);
    std::fs::remove_file(&binary).unwrap();
    mkfifo(&binary);

    for view in [
        &["report"][..],
        &["report", "--format", "json"],
        &["hist"],
        &["annotate", "split:0x1000"],
        &["export", "--format", "gmon", "-o", "gmon.out"],
    ] {
        let mut args = view.to_vec();
        args.extend(["-i", "split.data"]);
        let output = run_bounded(&dir, &args, 1024);
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            stderr(&output)
        );
        assert!(
            printed.contains("a FIFO, not a regular file"),
            "{args:?}: {printed}"
        );
    }
    // The views without notes finish all the same.
    run_ok(&dir, &["flamegraph", "-i", "split.data", "-o", "flame.svg"]);
    let report = run_ok(&dir, &["report", "-i", "split.data"]);
    let text = String::from_utf8(report.stdout).unwrap();
    assert!(text.contains("100.00%"), "{text}");
}
