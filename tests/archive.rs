//! Recordings that travel: archived, they report the same once their
//! binaries are gone or rebuilt; without an archive, the views say the
//! binaries changed.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::synthetic::Synthetic;
use crate::util::*;

/// Builds the `split` fixture's source into `dir/app` with `flags`.
fn build_split(dir: &Path, flags: &[&str]) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs");
    let status = Command::new("cc")
        .args(flags)
        .args(["-g", "-fno-omit-frame-pointer", "-pie", "-fPIE", "-o"])
        .arg(dir.join("app"))
        .arg(source.join("split.c"))
        .status()
        .unwrap();
    assert!(status.success(), "cc failed");
}

/// The functions of the report of `data` with at least 2% of the samples.
fn functions(dir: &Path, data: &str) -> BTreeSet<String> {
    let report = report_json(dir, data);
    (report["functions"].as_array().unwrap().iter())
        .filter(|f| f["self_percent"].as_f64().unwrap() >= 2.0)
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The frames of the folded stacks of `data`.
fn folded_frames(dir: &Path, data: &str) -> BTreeSet<String> {
    let output = run_ok(dir, &["export", "-i", data, "--format", "folded"]);
    let text = String::from_utf8(output.stdout).unwrap();
    (text.lines())
        .filter_map(|line| line.rsplit_once(' '))
        .flat_map(|(stack, _)| stack.split(';').map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// What every view names in `data`: the report's functions, the flame
/// graph's and the folded stacks' frames, annotate's source line.
fn views(dir: &Path, data: &str) -> (BTreeSet<String>, BTreeSet<String>, String) {
    let svg = dir.join(format!("{data}.svg"));
    run_ok(
        dir,
        &["flamegraph", "-i", data, "-o", svg.to_str().unwrap()],
    );
    let svg = std::fs::read_to_string(svg).unwrap();
    let annotated = run_ok(dir, &["annotate", "-i", data, "--source", "burn_60"]);
    let annotated = String::from_utf8(annotated.stdout).unwrap();
    let line = (annotated.lines())
        .find(|l| l.contains("100.00%") || l.contains("uint64_t burn_60"))
        .unwrap_or_default()
        .to_owned();
    let frames = folded_frames(dir, data);
    for name in ["burn_60", "burn_30", "main"] {
        assert!(svg.contains(name), "{data}: the flame graph lacks {name}");
    }
    (functions(dir, data), frames, line)
}

// Record, archive, then take the binary away and rebuild it: every view
// of the archived recording names what it named before, and no view of
// it says the binary changed; the recording without an archive does.
live_test!(
    an_archived_recording_reports_the_same_without_its_binary,
    || {
        let dir = scratch("archive-travels");
        build_split(&dir, &["-O2"]);
        let record = |data: &str, extra: &[&str]| {
            let mut options = vec!["-e", "cpu-clock", "-g"];
            options.extend_from_slice(extra);
            record(&dir, data, &options, &["./app", "3"])
        };
        record("plain.data", &[]);
        let output = record("recorded.data", &["--archive"]);
        // The program and libc (every stack passes through its start) have
        // samples; the dynamic loader has one only when one lands in the
        // program's first instants.
        let message = stderr(&output);
        assert!(
            ["archived 2 modules", "archived 3 modules"]
                .iter()
                .any(|m| message.contains(m)),
            "{message}"
        );
        record("later.data", &[]);
        let archived = run_ok(&dir, &["archive", "-i", "later.data"]);
        assert!(
            stderr(&archived).contains("the code of"),
            "{}",
            stderr(&archived)
        );
        let again = run_ok(&dir, &["archive", "-i", "later.data"]);
        assert!(stderr(&again).contains("archived already"));

        let before = views(&dir, "later.data");
        assert!(
            before.0.contains("burn_60") && before.0.contains("burn_30"),
            "{before:?}"
        );
        assert!(before.1.contains("main"), "{before:?}");
        assert!(before.2.contains("burn_60"), "{before:?}");
        assert_eq!(views(&dir, "recorded.data").0, before.0);

        std::fs::rename(dir.join("app"), dir.join("app.moved")).unwrap();
        assert_eq!(views(&dir, "later.data"), before);
        assert_eq!(views(&dir, "recorded.data").0, before.0);
        assert!(!functions(&dir, "plain.data").contains("burn_60"));

        build_split(&dir, &["-O0", "-DREBUILT"]);
        assert_eq!(views(&dir, "later.data"), before);
        for data in ["later.data", "recorded.data"] {
            let report = run_ok(&dir, &["report", "-i", data]);
            let text = String::from_utf8_lossy(&report.stdout);
            assert!(!text.contains("has changed since"), "{data}: {text}");
        }
        let report = run_ok(&dir, &["report", "-i", "plain.data"]);
        let text = String::from_utf8_lossy(&report.stdout);
        assert!(text.contains("has changed since the recording"), "{text}");
    }
);

// Stack copies are unwound with the unwind tables the archive kept: a
// program without frame pointers, gone, still unwinds through `main`.
live_test!(
    archived_unwind_tables_unwind_stack_copies_without_the_binary,
    || {
        let dir = scratch("archive-dwarf");
        std::fs::copy(fixture("recurse-nofp"), dir.join("recurse")).unwrap();
        let options = ["-e", "cpu-clock", "--call-graph", "dwarf", "--archive"];
        let output = record(&dir, "dwarf.data", &options, &["./recurse", "2"]);
        assert!(
            stderr(&output).contains("unwind tables of"),
            "{}",
            stderr(&output)
        );
        std::fs::remove_file(dir.join("recurse")).unwrap();
        let output = run_ok(&dir, &["export", "-i", "dwarf.data", "--format", "folded"]);
        let text = String::from_utf8(output.stdout).unwrap();
        let (mut leaf, mut rooted) = (0u64, 0u64);
        for (stack, count) in text.lines().filter_map(|l| l.rsplit_once(' ')) {
            if stack.ends_with(";leaf") {
                let count: u64 = count.parse().unwrap();
                leaf += count;
                if stack.contains(";main;descend;descend;") {
                    rooted += count;
                }
            }
        }
        assert!(leaf > 100 && rooted * 100 >= leaf * 95, "{text}");
    }
);

/// A recording made by hand of the `split` fixture, at its functions.
fn synthetic(dir: &Path, data: &str) {
    std::fs::copy(fixture("split"), dir.join("app")).unwrap();
    let binary = dir.join("app");
    let address = |name: &str| -> u64 {
        let output = Command::new("nm").arg(&binary).output().unwrap();
        let text = String::from_utf8(output.stdout).unwrap();
        let line = text
            .lines()
            .find(|l| l.ends_with(&format!(" {name}")))
            .unwrap();
        u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap()
    };
    let mut recording = Synthetic::new();
    recording.process(100, 0, "app", &binary);
    recording.samples(100, address("burn_60") + 4, &[], 60);
    recording.samples(100, address("burn_30") + 4, &[], 30);
    recording.write(&dir.join(data), &["./app"]);
}

/// An archive chunk that fails its checksum is skipped like any damaged
/// chunk, said once, and its module named from the file on disk again.
#[test]
fn a_damaged_archive_is_said_and_the_binary_names_the_code_again() {
    let dir = scratch("archive-damaged");
    synthetic(&dir, "a.data");
    run_ok(&dir, &["archive", "-i", "a.data"]);
    let mut bytes = std::fs::read(dir.join("a.data")).unwrap();
    let chunk = (bytes.windows(5))
        .rposition(|w| w[..4] == *b"CHNK" && w[4] == 3)
        .unwrap();
    bytes[chunk + 40] ^= 0x55;
    std::fs::write(dir.join("a.data"), &bytes).unwrap();
    let output = run_ok(&dir, &["report", "-i", "a.data"]);
    let message = stderr(&output);
    assert!(message.contains("1 damaged chunk"), "{message}");
    assert!(message.contains("0 of 90 samples lost"), "{message}");
    assert!(
        message.contains("1 of its archive's 1 parts are damaged"),
        "{message}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("burn_60"));
}

/// What archive refuses, in one line each, before it writes anything.
#[test]
fn archive_refuses_what_it_cannot_archive() {
    let dir = scratch("archive-refusals");
    std::fs::write(dir.join("perf.data"), b"PERFILE2 and then nothing").unwrap();
    let output = run(&dir, &["archive", "-i", "perf.data"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("perf archive"),
        "{}",
        stderr(&output)
    );

    synthetic(&dir, "whole.data");
    let bytes = std::fs::read(dir.join("whole.data")).unwrap();
    std::fs::write(dir.join("cut.data"), &bytes[..bytes.len() - 100]).unwrap();
    let output = run(&dir, &["archive", "-i", "cut.data"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("cannot archive cut.data: it is damaged"));
    assert_eq!(
        std::fs::read(dir.join("cut.data")).unwrap(),
        &bytes[..bytes.len() - 100]
    );

    let output = run(&dir, &["record", "--archive", "-o", "-", "--", "true"]);
    assert_eq!(output.status.code(), Some(125), "{}", stderr(&output));
    assert!(stderr(&output).contains("--archive"), "{}", stderr(&output));

    // Into another file: the recording itself is left as it was.
    run_ok(&dir, &["archive", "-i", "whole.data", "-o", "copy.data"]);
    assert_eq!(std::fs::read(dir.join("whole.data")).unwrap(), bytes);
    std::fs::remove_file(dir.join("app")).unwrap();
    let report = report_json(&dir, "copy.data");
    assert_near("burn_60", percent(&report, "burn_60"), 66.7, 0.1, &report);
}
