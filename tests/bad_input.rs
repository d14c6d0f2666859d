//! Bad input: a one-line error that names the problem and what to do, a
//! non-zero exit, no panic, and no file written or damaged.

use std::path::Path;

use crate::util::*;

/// Runs the profiler in `dir` and checks the failure's shape; returns the
/// message.
fn fails(dir: &Path, args: &[&str], status: i32, needles: &[&str]) -> String {
    let output = run(dir, args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(status), "{args:?}: {message}");
    assert_eq!(message.lines().count(), 1, "not one line: {message}");
    assert!(message.starts_with("profiler: "), "{message}");
    assert!(!message.contains("panicked"), "{message}");
    assert!(
        message.matches("(os error").count() <= 1,
        "cause repeated: {message}"
    );
    for needle in needles {
        assert!(
            message.contains(needle),
            "{args:?}: '{needle}' missing from: {message}"
        );
    }
    message
}

/// The directory holds exactly `names`, nothing half-written beside them.
fn assert_files(dir: &Path, names: &[&str]) {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    assert_eq!(found, names);
}

live_test!(a_command_that_does_not_exist, || {
    let dir = scratch("no-command");
    fails(
        &dir,
        &["record", "-e", "cpu-clock", "--", "no-such-command-xyz"],
        127,
        &["command not found", "no-such-command-xyz"],
    );
    fails(
        &dir,
        &["record", "-e", "cpu-clock", "--", "./no/such/program"],
        127,
        &["command not found"],
    );
    assert_files(&dir, &[]);
});

live_test!(a_file_that_is_not_executable, || {
    let dir = scratch("not-executable");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs/split.c");
    fails(
        &dir,
        &["record", "-e", "cpu-clock", "--", source.to_str().unwrap()],
        126,
        &["cannot run", "not executable"],
    );
    fails(
        &dir,
        &["record", "-e", "cpu-clock", "--", "/"],
        126,
        &["is a directory"],
    );
    assert_files(&dir, &[]);
});

live_test!(a_file_the_kernel_cannot_execute, || {
    let dir = scratch("bad-exec");
    let script = dir.join("script");
    // Written by a shell: a command another test spawns meanwhile would
    // inherit a writable descriptor to the script until its exec, and the
    // script's own exec would fail with ETXTBSY.
    let written = std::process::Command::new("sh")
        .arg("-c")
        .arg("printf '#!/no/such/interpreter\\n' > \"$0\" && chmod 755 \"$0\"")
        .arg(&script)
        .status()
        .unwrap();
    assert!(written.success());
    let output = run(&dir, &["record", "-e", "cpu-clock", "--", "./script"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(126), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("cannot run './script'"), "{message}");
    assert_files(&dir, &["script"]);
});

#[test]
fn an_unknown_event_or_modifier() {
    let dir = scratch("unknown-event");
    fails(
        &dir,
        &["record", "-e", "cpu-clok", "--", "true"],
        125,
        &["unknown event 'cpu-clok'", "did you mean 'cpu-clock'"],
    );
    fails(
        &dir,
        &["record", "-e", "cpu-clock:q", "--", "true"],
        125,
        &["modifier 'q'"],
    );
    assert_files(&dir, &[]);
}

live_test!(
    a_hardware_event_without_a_pmu_names_the_software_alternative,
    || {
        if has_pmu() {
            return;
        }
        let dir = scratch("no-pmu");
        fails(
            &dir,
            &["record", "-e", "cycles", "--", "true"],
            125,
            &[
                "'cycles' cannot be sampled",
                "performance-monitoring unit",
                "-e cpu-clock",
            ],
        );
        assert_files(&dir, &[]);
    }
);

#[test]
fn a_zero_threshold_or_frequency() {
    let dir = scratch("zero");
    fails(
        &dir,
        &["record", "-e", "cpu-clock", "-c", "0", "--", "true"],
        125,
        &["threshold (-c) must be at least 1"],
    );
    fails(
        &dir,
        &["record", "-F", "0", "--", "true"],
        125,
        &["frequency (-F) must be at least 1"],
    );
    fails(
        &dir,
        &["record", "-c", "many", "--", "true"],
        2,
        &["invalid value 'many'"],
    );
    assert_files(&dir, &[]);
}

#[test]
fn a_frequency_above_the_kernels_maximum() {
    let dir = scratch("too-fast");
    let max: u64 = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let too_fast = (max + 1).to_string();
    fails(
        &dir,
        &["record", "-e", "cpu-clock", "-F", &too_fast, "--", "true"],
        125,
        &[
            &format!("-F {too_fast} is above the kernel's maximum sample rate of {max} Hz"),
            "perf_event_max_sample_rate",
        ],
    );
    assert_files(&dir, &[]);
}

#[test]
fn an_output_path_that_cannot_be_written() {
    let dir = scratch("bad-output");
    fails(
        &dir,
        &[
            "record",
            "-e",
            "cpu-clock",
            "-o",
            "no/such/dir/out.data",
            "--",
            "true",
        ],
        125,
        &[
            "cannot write the recording to no/such/dir/out.data",
            "-o FILE",
        ],
    );
    std::fs::create_dir(dir.join("a-directory")).unwrap();
    fails(
        &dir,
        &[
            "record",
            "-e",
            "cpu-clock",
            "-o",
            "a-directory",
            "--",
            "true",
        ],
        125,
        &["a-directory"],
    );
    assert_files(&dir, &["a-directory"]);
}

live_test!(
    a_failed_record_leaves_an_existing_recording_untouched,
    || {
        let dir = scratch("keep-old");
        std::fs::write(dir.join("profiler.data"), b"the previous recording").unwrap();
        fails(
            &dir,
            &["record", "-e", "cpu-clock", "--", "no-such-command-xyz"],
            127,
            &[],
        );
        fails(&dir, &["record", "-e", "nope", "--", "true"], 125, &[]);
        assert_eq!(
            std::fs::read(dir.join("profiler.data")).unwrap(),
            b"the previous recording"
        );
        assert_files(&dir, &["profiler.data"]);
    }
);

#[test]
fn report_on_a_missing_file() {
    let dir = scratch("report-missing");
    fails(
        &dir,
        &["report"],
        1,
        &[
            "cannot open profiler.data",
            "No such file",
            "profiler record",
        ],
    );
    fails(
        &dir,
        &["report", "-i", "other.data"],
        1,
        &["cannot open other.data"],
    );
}

#[test]
fn report_on_a_file_that_is_not_a_recording() {
    let dir = scratch("report-foreign");
    std::fs::write(
        dir.join("notes.txt"),
        "just some text, long enough to have a header\n",
    )
    .unwrap();
    fails(
        &dir,
        &["report", "-i", "notes.txt"],
        1,
        &["notes.txt is not a profiler recording"],
    );
    std::fs::write(dir.join("empty.data"), "").unwrap();
    fails(
        &dir,
        &["report", "-i", "empty.data"],
        1,
        &["empty.data is not a profiler recording"],
    );
    fails(&dir, &["report", "-i", "."], 1, &[". holds no recording"]);
}

live_test!(report_on_a_recording_cut_inside_its_header, || {
    let dir = scratch("report-truncated");
    record(&dir, "whole.data", &["-e", "cpu-clock"], &["true"]);
    let bytes = std::fs::read(dir.join("whole.data")).unwrap();
    // Cut later, a recording is read as far as it goes (see salvage.rs).
    for cut in [10, 19, 40] {
        std::fs::write(dir.join("cut.data"), &bytes[..cut]).unwrap();
        fails(
            &dir,
            &["report", "-i", "cut.data"],
            1,
            &[
                "cut.data is truncated",
                "inside its header",
                "record it again",
            ],
        );
    }
});

live_test!(report_on_an_event_the_recording_lacks, || {
    let dir = scratch("report-event");
    record(&dir, "profiler.data", &["-e", "cpu-clock"], &["true"]);
    fails(
        &dir,
        &["report", "--event", "page-faults"],
        1,
        &["no event 'page-faults'", "cpu-clock"],
    );
});

#[test]
fn usage_errors_are_one_line_too() {
    let dir = scratch("usage");
    fails(
        &dir,
        &["record", "-e", "cpu-clock"],
        2,
        &["required", "--help"],
    );
    fails(
        &dir,
        &["report", "--format", "xml"],
        2,
        &["invalid value 'xml'"],
    );
    fails(&dir, &["frobnicate"], 2, &["unrecognized subcommand"]);
    // An unknown flag is a mistake, not the command to run.
    fails(
        &dir,
        &["record", "--frobnicate", "--", "true"],
        2,
        &["unexpected argument '--frobnicate'"],
    );
    fails(
        &dir,
        &["record", "--scale", "4096", "--", "true"],
        2,
        &["--histogram"],
    );
    // Targets that exclude each other, said before anything runs.
    let own = std::process::id().to_string();
    let conflicts: [(&[&str], &str); 4] = [
        (
            &["-p", &own, "--", "true"],
            "-p takes no command; leave out the command",
        ),
        (&["-p", &own, "-a"], "-p and -a cannot be combined"),
        (&["-t", &own, "-C", "0"], "-t and -C cannot be combined"),
        (&["-p", &own, "-t", &own], "-p and -t cannot be combined"),
    ];
    for (args, needle) in conflicts {
        let mut all = vec!["record", "-e", "cpu-clock"];
        all.extend_from_slice(args);
        fails(&dir, &all, 2, &[needle]);
    }
    assert_files(&dir, &[]);
    // A recording named twice, and one asked of the standard input.
    fails(
        &dir,
        &["report", "-i", "a.data", "b.data"],
        2,
        &["-i and a recording named without it cannot be combined"],
    );
    fails(
        &dir,
        &["report", "-i", "-"],
        1,
        &["not read from the standard input; save it to a file first"],
    );
    // One pointer to the subcommand's help, not clap's as well.
    let message = fails(
        &dir,
        &["report", "--sort", "cpu"],
        2,
        &["unknown sort key 'cpu'", "see `profiler report --help`"],
    );
    assert!(!message.contains("For more information"), "{message}");
    let message = fails(&dir, &["report", "--bogus"], 2, &["'--bogus'"]);
    assert!(!message.contains("tip:"), "{message}");
    // A recording named without -i, where only -i names one.
    std::fs::write(dir.join("old.data"), b"").unwrap();
    fails(
        &dir,
        &["hist", "old.data"],
        2,
        &["to read a recording, give -i old.data"],
    );
}
