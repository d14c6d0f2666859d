//! A recording's chunks cut and pasted with their checksums intact: one
//! removed, one repeated, two swapped, the first or the last gone. Each is
//! named by its number in one warning, with the samples it affects, and
//! the totals are those read; a recording from before chunks were
//! numbered still reads, and a chunk gone from it is seen by the trailer's
//! totals.

use std::path::Path;

use crate::hostile::rewrite_trailer;
use crate::synthetic::*;
use crate::util::*;

/// Where each chunk starts, the trailer chunk last (see chunk.rs).
fn chunks(bytes: &[u8]) -> Vec<(usize, usize)> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut at = 20 + word(12);
    let mut chunks = Vec::new();
    loop {
        assert_eq!(&bytes[at..at + 4], b"CHNK", "no chunk at {at}");
        let end = at + 20 + word(at + 8);
        chunks.push((at, end));
        if bytes[at + 4] == 2 {
            return chunks;
        }
        at = end;
    }
}

/// The recording `bytes` with its chunks of records in `order` (indices
/// from 0; the first holds the process and its mappings, each other 20
/// samples), the trailer's offset mended.
fn rearranged(bytes: &[u8], order: &[usize]) -> Vec<u8> {
    let all = chunks(bytes);
    let (records, trailer) = all.split_at(all.len() - 1);
    let mut out = bytes[..records[0].0].to_vec();
    for &i in order {
        out.extend_from_slice(&bytes[records[i].0..records[i].1]);
    }
    let trailer_start = out.len() as u64;
    let (start, end) = trailer[0];
    out.extend_from_slice(&bytes[start..end]);
    out.extend_from_slice(&trailer_start.to_le_bytes());
    out.extend_from_slice(&((end - start) as u64).to_le_bytes());
    out.extend_from_slice(b"PROFEND1");
    out
}

/// A recording of split: the process in chunk 1, then five chunks of 20
/// samples in burn_60.
fn numbered(path: &Path) {
    let binary = fixture("split");
    let (burn, _) = function_range(&binary, "burn_60");
    let mut recording = Synthetic::new();
    recording.process(100, 0, "split", &binary);
    for _ in 0..5 {
        recording.end_chunk();
        recording.samples(100, burn + 4, &[], 20);
    }
    recording.write(path, &["./split"]);
}

/// The report of `data` in `dir`: its samples in burn_60, and its
/// warnings.
fn read(dir: &Path, data: &str) -> (f64, u64, Vec<String>) {
    let output = run(dir, &["report", "-i", data, "--format", "json"]);
    assert!(output.status.success(), "{data}: {}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let warnings = stderr(&output).lines().map(str::to_owned).collect();
    (percent(&json, "burn_60"), samples(&json), warnings)
}

#[test]
fn chunks_missing_repeated_or_out_of_place_are_named_with_their_samples() {
    let dir = scratch("chunks-order");
    numbered(&dir.join("whole.data"));
    let bytes = std::fs::read(dir.join("whole.data")).unwrap();
    assert_eq!(
        chunks(&bytes).len(),
        7,
        "six chunks of records and a trailer"
    );
    assert_eq!(read(&dir, "whole.data"), (100.0, 100, vec![]));

    let prefix = |name: &str| format!("profiler: warning: {name}: ");
    // (name, chunks in order, samples read, the warning)
    let cases: [(&str, &[usize], u64, &str); 6] = [
        (
            "removed",
            &[0, 1, 3, 4, 5],
            80,
            "chunk 3 of the records is missing: 20 of 100 samples lost",
        ),
        (
            "repeated",
            &[0, 1, 2, 2, 3, 4, 5],
            100,
            "chunk 3 appears twice: its copy's 20 samples are not counted",
        ),
        (
            "swapped",
            &[0, 1, 3, 2, 4, 5],
            100,
            "chunk 3 comes after a later one: its 20 samples are read where it lies",
        ),
        (
            "last",
            &[0, 1, 2, 3, 4],
            80,
            "chunk 6 of the records is missing: 20 of 100 samples lost",
        ),
        (
            "two",
            &[0, 2, 3, 5, 5],
            60,
            "chunks 2, 5 of the records are missing: 40 of 100 samples lost; chunk 6 appears \
             twice: its copy's 20 samples are not counted",
        ),
        (
            "first",
            &[1, 2, 3, 4, 5],
            100,
            "chunk 1 of the records is missing (the first held the mappings: samples may be \
             [unknown])",
        ),
    ];
    for (name, order, read_samples, warning) in cases {
        let data = format!("{name}.data");
        std::fs::write(dir.join(&data), rearranged(&bytes, order)).unwrap();
        let (burn, samples, warnings) = read(&dir, &data);
        assert_eq!(samples, read_samples, "{name}: {warnings:?}");
        assert_eq!(warnings, [format!("{}{warning}", prefix(&data))], "{name}");
        // Without its mappings, no sample is placed.
        assert_eq!(burn, if name == "first" { 0.0 } else { 100.0 }, "{name}");
    }
}

/// `bytes` as a recording made before chunks were numbered: every
/// chunk's number 0 (its header's checksum mended), and a trailer that
/// does not count them.
fn unnumbered(path: &Path, bytes: &[u8]) {
    let mut bytes = bytes.to_vec();
    for (at, _) in chunks(&bytes) {
        bytes[at + 5..at + 8].fill(0);
        let mut crc = flate2::Crc::new();
        crc.update(&bytes[at..at + 16]);
        bytes[at + 16..at + 20].copy_from_slice(&crc.sum().to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
    rewrite_trailer(path, |trailer| {
        trailer.as_object_mut().unwrap().remove("record_chunks");
    });
}

#[test]
fn recordings_made_before_chunks_were_numbered_read_and_their_totals_are_checked() {
    let dir = scratch("chunks-unnumbered");
    numbered(&dir.join("new.data"));
    let bytes = std::fs::read(dir.join("new.data")).unwrap();
    unnumbered(&dir.join("old.data"), &bytes);
    let old = std::fs::read(dir.join("old.data")).unwrap();
    assert!(!String::from_utf8_lossy(&old).contains("record_chunks"));
    assert_eq!(read(&dir, "old.data"), (100.0, 100, vec![]));

    std::fs::write(dir.join("cut.data"), rearranged(&old, &[0, 1, 2, 4, 5])).unwrap();
    let (_, samples, warnings) = read(&dir, "cut.data");
    assert_eq!(samples, 80);
    assert_eq!(
        warnings,
        [
            "profiler: warning: cut.data: the trailer counts 100 samples but the chunks hold 80: \
          20 of 100 samples lost"
        ]
    );
}
