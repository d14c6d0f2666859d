//! Readers against what a hostile or unlucky file system gives them: a
//! recording or a module path that is a FIFO or a device, stacks deeper
//! than any program's, and recordings whose counts ask for more than the
//! machine has. Every case must end, in bounded memory, with a view or a
//! one-line refusal.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use profiler_model::{Avma, FileOffset, Lost, Mmap, Record};

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
    let child = command.spawn().unwrap();
    let pid = child.id().to_string();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(child.wait_with_output().unwrap()));
    receiver
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| {
            let _ = Command::new("kill").args(["-9", &pid]).status();
            panic!("profiler {args:?} still runs after 60 s");
        })
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

#[test]
fn a_stack_of_twelve_thousand_frames_is_shown_within_a_bounded_indent() {
    let dir = scratch("hostile-deep-stack");
    let binary = fixture("recurse");
    let (descend, size) = function_range(&binary, "descend");
    let (leaf, _) = function_range(&binary, "leaf");
    let mut recording = Synthetic::with_stacks();
    recording.process(100, 0, "recurse", &binary);
    let callers = vec![descend + size / 2; 12_000];
    recording.samples(100, leaf + 4, &callers, 3);
    recording.write(&dir.join("deep.data"), &["./recurse"]);

    // Callers first, the 12,000 descend rows come first; callees first,
    // below leaf.
    for (direction, deepest) in [("caller", 12_000), ("callee", 12_001)] {
        let option = format!("--call-graph={direction}");
        let output = run_bounded(&dir, &["report", "-i", "deep.data", &option], 1024);
        assert!(output.status.success(), "{option}: {}", stderr(&output));
        let text = String::from_utf8(output.stdout).unwrap();
        let tree: Vec<&str> = (text.lines()).filter(|l| l.contains(" descend ")).collect();
        assert_eq!(tree.len(), 12_000, "{option}");
        let widest = text.lines().map(str::len).max().unwrap();
        assert!(widest < 200, "{option}: a line of {widest} bytes");
        // Past the indentation's limit each row says how deep it is.
        let last = tree.last().unwrap();
        assert!(
            last.contains(&format!("(depth {deepest}) descend")),
            "{last}"
        );
    }
    for view in [
        &["report", "--children"][..],
        &["report", "--format", "json"],
        &["flamegraph", "-o", "flame.svg"],
        &["export", "--format", "pprof", "-o", "deep.pb.gz"],
        &[
            "export",
            "--format",
            "speedscope",
            "-o",
            "deep.speedscope.json",
        ],
        &["export", "--format", "firefox", "-o", "deep.firefox.json"],
        &["export", "--format", "folded", "-o", "deep.folded"],
    ] {
        let mut args = view.to_vec();
        args.extend(["-i", "deep.data"]);
        let output = run_bounded(&dir, &args, 2048);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn three_hundred_thousand_mappings_cost_the_sampled_ones_only() {
    let dir = scratch("hostile-mappings");
    let binary = fixture("split");
    let (burn, _) = function_range(&binary, "burn_60");
    let mut recording = Synthetic::new();
    recording.process(100, 0, "split", &binary);
    recording.samples(100, burn + 4, &[], 10);
    // A library mapped again and again (a leak of dlopen, a JIT's files),
    // each time a page of text at a new place, none of them sampled.
    let path = fixture("libhot.so");
    for i in 0..300_000u64 {
        recording.push_raw(Record::Mmap(Mmap {
            time: 1,
            pid: 100,
            tid: 100,
            start: Avma(0x7000_0000_0000 + i * 0x2000),
            len: 0x1000,
            offset: FileOffset(0x1000),
            path: format!("{}.{i}", path.display()),
            build_id: None,
        }));
    }
    recording.write(&dir.join("maps.data"), &["./split"]);

    for view in [
        &["report"][..],
        &["hist"],
        &["export", "--format", "gmon", "-o", "gmon.out"],
    ] {
        let mut args = view.to_vec();
        args.extend(["-i", "maps.data"]);
        let output = run_bounded(&dir, &args, 512);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
    let hist = run_ok(&dir, &["hist", "-i", "maps.data"]);
    let text = String::from_utf8(hist.stdout).unwrap();
    assert!(text.contains("burn_60"), "{text}");

    // One mapping of a terabyte of text, sampled: refused in one line.
    let mut recording = Synthetic::new();
    recording.process(100, 0, "split", &binary);
    recording.push_raw(Record::Mmap(Mmap {
        time: 2,
        pid: 100,
        tid: 100,
        start: Avma(0x7000_0000_0000),
        len: 1 << 40,
        offset: FileOffset(0),
        path: path.display().to_string(),
        build_id: None,
    }));
    let at = At {
        pid: 100,
        user: vec![0x7000_0000_1000],
        ..At::default()
    };
    recording.take(&at, 10);
    recording.write(&dir.join("huge.data"), &["./split"]);
    for view in [
        &["hist"][..],
        &["export", "--format", "gmon", "-o", "huge.out"],
    ] {
        let mut args = view.to_vec();
        args.extend(["-i", "huge.data"]);
        let output = run_bounded(&dir, &args, 512);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let message = stderr(&output);
        assert!(
            message.contains("smaller scale") || message.contains("smaller --scale"),
            "{message}"
        );
        assert_eq!(message.lines().count(), 1, "{message}");
    }
}

#[test]
fn counts_as_large_as_the_file_can_state_are_summed_not_trusted() {
    let dir = scratch("hostile-counts");
    let binary = fixture("split");
    let (burn, _) = function_range(&binary, "burn_60");
    let mut recording = Synthetic::with_stacks();
    recording.process(100, 0, "split", &binary);
    let base = load_base(&binary);
    let at = At {
        pid: 100,
        period: u64::MAX,
        user: vec![base + burn + 4, base + burn + 8],
        ..At::default()
    };
    recording.take(&at, 3);
    recording.push_raw(Record::Lost(Lost {
        time: 10,
        event: 0,
        count: u64::MAX,
    }));
    recording.push_raw(Record::Lost(Lost {
        time: 11,
        event: 0,
        count: u64::MAX,
    }));
    recording.write(&dir.join("counts.data"), &["./split"]);

    for view in [
        &["report"][..],
        &["report", "--children"],
        &["report", "--format", "json"],
        &["report", "--call-graph=caller"],
        &["hist"],
        &["annotate", "burn_60"],
        &["flamegraph", "-o", "flame.svg"],
        &["export", "--format", "gmon", "-o", "gmon.out"],
        &["export", "--format", "pprof", "-o", "counts.pb.gz"],
        &[
            "export",
            "--format",
            "speedscope",
            "-o",
            "counts.speedscope.json",
        ],
        &["export", "--format", "firefox", "-o", "counts.firefox.json"],
    ] {
        let mut args = view.to_vec();
        args.extend(["-i", "counts.data"]);
        let output = run_bounded(&dir, &args, 1024);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
    let output = run_bounded(&dir, &["diff", "counts.data", "counts.data"], 1024);
    assert!(output.status.success(), "diff: {}", stderr(&output));
}
