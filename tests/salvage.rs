//! A recording cut short or damaged is still read: every good chunk, with
//! one warning that says what was lost, and never a wrong number.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::util::*;

/// Records `split` into `dir/whole.data` for long enough to fill several
/// chunks; returns the file's bytes.
fn several_chunks(dir: &Path) -> Vec<u8> {
    let split = fixture("split");
    record(
        dir,
        "whole.data",
        &["-e", "cpu-clock", "-F", "10000"],
        &[split.to_str().unwrap(), "10"],
    );
    std::fs::read(dir.join("whole.data")).unwrap()
}

/// Where each chunk starts, and where the trailer chunk starts (last), as
/// the format's layout puts them: a 20-byte preamble whose bytes 12..16
/// give the header's length, then chunks of a 20-byte header (kind at 4,
/// payload length at 8..12) and their payload.
fn chunk_starts(bytes: &[u8]) -> Vec<usize> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut at = 20 + word(12);
    let mut starts = Vec::new();
    loop {
        assert_eq!(&bytes[at..at + 4], b"CHNK", "no chunk at {at}");
        starts.push(at);
        if bytes[at + 4] == 2 {
            return starts;
        }
        at += 20 + word(at + 8);
    }
}

/// Reports `data` as JSON: the samples it counted and the warnings.
pub(crate) fn report(dir: &Path, data: &str) -> (u64, Vec<String>, Output) {
    let output = run(dir, &["report", "-i", data, "--format", "json"]);
    assert!(output.status.success(), "{data}: {}", stderr(&output));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let warnings = stderr(&output).lines().map(str::to_owned).collect();
    (samples(&json), warnings, output)
}

/// The number in "recording ends early: 7,514 samples read".
pub(crate) fn samples_read(warning: &str) -> u64 {
    let count = warning
        .split("recording ends early: ")
        .nth(1)
        .and_then(|rest| rest.split(" samples read").next())
        .unwrap_or_else(|| panic!("not an early end: {warning}"));
    count.replace(',', "").parse().unwrap()
}

live_test!(
    a_recording_cut_anywhere_reads_every_whole_chunk_before_the_cut,
    || {
        let dir = scratch("salvage-cut");
        let bytes = several_chunks(&dir);
        let starts = chunk_starts(&bytes);
        let (total, warnings, _) = report(&dir, "whole.data");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(starts.len() >= 4, "only {} chunks", starts.len() - 1);

        // Every chunk boundary, a byte either side, and offsets spread over the
        // file by a fixed sequence.
        let mut cuts: Vec<usize> = starts.iter().flat_map(|&s| [s - 1, s, s + 1]).collect();
        let mut seed = 0x2545_f491_u64;
        cuts.extend((0..12).map(|_| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            starts[0] + (seed >> 33) as usize % (bytes.len() - starts[0])
        }));
        cuts.sort();
        cuts.dedup();
        let mut previous = 0;
        let records = starts[0]..*starts.last().unwrap();
        for cut in cuts.into_iter().filter(|c| records.contains(c)) {
            std::fs::write(dir.join("cut.data"), &bytes[..cut]).unwrap();
            let (counted, warnings, output) = report(&dir, "cut.data");
            assert_eq!(warnings.len(), 1, "cut at {cut}: {}", stderr(&output));
            assert!(
                warnings[0].starts_with("profiler: warning: cut.data: recording ends early: ")
                    && warnings[0].ends_with(" samples read, the rest is lost"),
                "{}",
                warnings[0]
            );
            let read = samples_read(&warnings[0]);
            assert_eq!(
                read, counted,
                "cut at {cut}: the warning and the report disagree"
            );
            assert!(
                read >= previous && read < total,
                "cut at {cut}: {read} of {total}"
            );
            if starts[1..].contains(&cut) {
                assert!(
                    read > previous,
                    "cut at {cut}: the chunk before it was not read"
                );
            }
            previous = read;
        }
        assert!(
            previous > total / 2,
            "the last cut kept only {previous} of {total}"
        );
    }
);

live_test!(a_flipped_byte_costs_its_chunk_and_nothing_else, || {
    let dir = scratch("salvage-flip");
    let bytes = several_chunks(&dir);
    let starts = chunk_starts(&bytes);
    let (total, _, _) = report(&dir, "whole.data");
    let mut lost_in_all = 0;
    for pair in starts.windows(2) {
        let mut flipped = bytes.clone();
        flipped[(pair[0] + pair[1]) / 2] ^= 0x10;
        std::fs::write(dir.join("flip.data"), &flipped).unwrap();
        let (counted, warnings, _) = report(&dir, "flip.data");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let warning = &warnings[0];
        let lost = total - counted;
        assert!(lost > 0, "no sample lost: {warning}");
        assert!(
            warning.contains("1 damaged chunk (")
                && warning.contains("failed its checksum and was skipped: ")
                && warning.ends_with(" samples lost"),
            "{warning}"
        );
        lost_in_all += lost;
    }
    // Each chunk's samples are lost once: together, all of them.
    assert_eq!(lost_in_all, total);

    // The header names the events: damaged, nothing can be trusted.
    let mut flipped = bytes.clone();
    flipped[30] ^= 0x10;
    std::fs::write(dir.join("header.data"), &flipped).unwrap();
    let output = run(&dir, &["report", "-i", "header.data"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output)
            .contains("header.data is corrupt at byte 20: the header fails its checksum"),
        "{}",
        stderr(&output)
    );
});

#[test]
fn a_recording_of_an_older_format_is_named_as_such() {
    let dir = scratch("salvage-version");
    let mut old = b"PROFILER".to_vec();
    old.extend_from_slice(&1u32.to_le_bytes());
    old.extend_from_slice(&[0; 40]);
    std::fs::write(dir.join("old.data"), &old).unwrap();
    let output = run(&dir, &["report", "-i", "old.data"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(
            "old.data uses recording format version 1, but this profiler reads versions 2 to 3"
        ),
        "{}",
        stderr(&output)
    );
}

live_test!(a_recording_killed_mid_run_is_read_from_its_leftover, || {
    let dir = scratch("salvage-kill");
    let split = fixture("split");
    let mut child = profiler()
        .current_dir(&dir)
        .args(["record", "-e", "cpu-clock", "-o", "killed.data", "--"])
        .arg(&split)
        .arg("40")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until a few chunks are on disk, then kill the profiler, and the
    // command it leaves behind.
    let leftover = wait_for(|| {
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".tmp"))?;
        // Compressed, a second's chunk of samples is some 20 KB.
        (std::fs::metadata(&file).ok()?.len() > 40_000).then_some(file)
    });
    let children = format!("/proc/{0}/task/{0}/children", child.id());
    let command = std::fs::read_to_string(children).unwrap_or_default();
    child.kill().unwrap();
    child.wait().unwrap();
    for pid in command.split_whitespace() {
        let _ = Command::new("kill").args(["-9", pid]).status();
    }
    assert!(!dir.join("killed.data").exists());

    let name = leftover.file_name().unwrap().to_str().unwrap();
    let (counted, warnings, _) = report(&dir, name);
    assert!(counted > 1000, "only {counted} samples in the leftover");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(samples_read(&warnings[0]), counted);

    let output = run_ok(
        &dir,
        &[
            "record",
            "-e",
            "cpu-clock",
            "-o",
            "killed.data",
            "--",
            "true",
        ],
    );
    let advice = format!(
        "{name} was left by an earlier recording that was killed; read what it holds with `profiler report -i {name}`"
    );
    assert!(stderr(&output).contains(&advice), "{}", stderr(&output));
});

/// Polls `found` for up to 20 s.
fn wait_for<T>(mut found: impl FnMut() -> Option<T>) -> T {
    for _ in 0..400 {
        if let Some(value) = found() {
            return value;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("waited 20 s in vain");
}
