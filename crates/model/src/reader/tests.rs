//! The reader on whole, cut, damaged and compressed recordings.

use std::time::Duration;

use super::*;
use crate::address::{Avma, FileOffset};
use crate::header::HostInfo;
use crate::record::{CpuMode, Mmap, Sample};
use crate::writer::{ChunkLimits, RecordSink, RecordingWriter};

fn header() -> RecordingHeader {
    RecordingHeader {
        events: vec![],
        command: vec!["./app".into(), "arg".into()],
        program: None,
        user: None,
        histogram: None,
        call_graph: None,
        host: HostInfo::default(),
        job: None,
        start_unix_ns: 42,
        profiler_version: "test".into(),
    }
}

fn sample(i: u64) -> Record {
    Record::Sample(Sample {
        time: i + 1,
        pid: 1,
        tid: 1,
        cpu: 0,
        event: 0,
        mode: CpuMode::User,
        ip: Avma(0x1000 + i),
        period: 10,
        callchain: Vec::new(),
        user_stack: None,
        read: Vec::new(),
    })
}

fn path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("reader-{name}-{}.data", std::process::id()))
}

/// A mapping, then `count` samples, `per_batch` to a batch and each
/// batch its own chunk.
/// The records' chunks at compression `level`, 0 for plain.
fn recording_bytes(count: u64, per_batch: u64, level: u8) -> Vec<u8> {
    let limits = ChunkLimits {
        bytes: 1,
        age: Duration::MAX,
        most_bytes: usize::MAX,
        compression_level: level,
    };
    let mut writer = RecordingWriter::with_limits(Vec::new(), &header(), limits).unwrap();
    writer
        .push(&Record::Mmap(Mmap {
            time: 1,
            pid: 1,
            tid: 1,
            start: Avma(0x1000),
            len: 0x1000,
            offset: FileOffset(0),
            path: "/bin/app".into(),
            build_id: None,
        }))
        .unwrap();
    for i in 0..count {
        writer.push(&sample(i)).unwrap();
        if (i + 1) % per_batch == 0 {
            writer.end_batch().unwrap();
        }
    }
    let trailer = Trailer {
        outcome: "exited with status 0".into(),
        ..Trailer::default()
    };
    writer.finish(trailer).unwrap()
}

/// Plain chunks, as format 2 has them, and compressed ones.
const LEVELS: [u8; 2] = [0, 1];

fn write_recording(name: &str, count: u64, level: u8) -> PathBuf {
    let path = path(name);
    std::fs::write(&path, recording_bytes(count, 1000, level)).unwrap();
    path
}

fn samples(recording: &Recording) -> Vec<Record> {
    (recording.records().unwrap())
        .map(Result::unwrap)
        .filter(|r| matches!(r, Record::Sample(_)))
        .collect()
}

/// The offsets at which the chunks after the header start, and where
/// the records end (the trailer chunk's offset).
fn chunk_starts(bytes: &[u8]) -> Vec<usize> {
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let mut at = PREAMBLE_LEN as usize + header_len;
    let mut starts = vec![];
    while let Some(header) = ChunkHeader::decode(&bytes[at..]) {
        starts.push(at);
        if header.kind == ChunkKind::Trailer {
            break;
        }
        at += header.total_len() as usize;
    }
    starts
}

#[test]
fn a_written_recording_reads_back_whole_and_twice() {
    for level in LEVELS {
        let path = write_recording("whole", 10_000, level);
        let recording = Recording::open(&path).unwrap();
        assert_eq!(recording.header, header());
        assert_eq!(recording.damage, None);
        assert_eq!(recording.trailer.stats.events[0].samples, 10_000);
        assert_eq!(recording.trailer.stats.events[0].period, 100_000);
        assert_eq!(recording.trailer.outcome, "exited with status 0");
        for _ in 0..2 {
            let samples = samples(&recording);
            assert_eq!(samples.len(), 10_000);
            assert_eq!(samples[9_999], sample(9_999));
        }
    }
}

#[test]
fn every_cut_keeps_every_whole_chunk_before_it() {
    for level in LEVELS {
        let bytes = recording_bytes(12, 3, level);
        let starts = chunk_starts(&bytes);
        // The mapping and three samples, three chunks of three samples,
        // the trailer.
        assert_eq!(starts.len(), 5);
        let trailer_end = bytes.len() - FOOTER_LEN as usize;
        let path = path("cut");
        for len in 0..bytes.len() {
            std::fs::write(&path, &bytes[..len]).unwrap();
            let result = Recording::open(&path);
            if len < starts[0] {
                let error = result.unwrap_err();
                assert!(
                    matches!(
                        error,
                        RecordingError::Truncated { .. } | RecordingError::NotARecording { .. }
                    ),
                    "cut at {len}: {error}"
                );
                continue;
            }
            let recording = result.unwrap();
            let read = samples(&recording);
            if len >= trailer_end {
                // Only the end marker is missing: nothing was lost.
                assert_eq!(recording.damage, None, "cut at {len}");
                assert_eq!(read.len(), 12, "cut at {len}");
                assert_eq!(recording.trailer.outcome, "exited with status 0");
                continue;
            }
            let whole = starts[1..].iter().filter(|&&end| end <= len).count();
            let good_end = if whole == 0 { starts[0] } else { starts[whole] };
            let expected: Vec<Record> = (0..3 * whole as u64).map(sample).collect();
            assert_eq!(read, expected, "cut at {len}");
            assert_eq!(recording.trailer.stats.total().samples, 3 * whole as u64);
            let damage = recording.damage.as_ref().unwrap();
            assert_eq!(damage.samples_read, 3 * whole as u64, "cut at {len}");
            assert_eq!(
                damage.ends_early,
                Some((len - good_end) as u64),
                "cut at {len}"
            );
            assert_eq!(damage.skipped_chunks, 0, "cut at {len}");
            assert!(damage.to_string().starts_with("recording ends early"));
        }
    }
}

#[test]
fn every_flipped_byte_is_caught_and_never_read_as_a_record() {
    for level in LEVELS {
        let bytes = recording_bytes(12, 3, level);
        let starts = chunk_starts(&bytes);
        let originals: Vec<Record> = (0..12).map(sample).collect();
        let path = path("flip");
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x5a;
            std::fs::write(&path, &flipped).unwrap();
            let Ok(recording) = Recording::open(&path) else {
                assert!(at < starts[0], "byte {at} made the file unreadable");
                continue;
            };
            let read = samples(&recording);
            assert!(
                read.iter().all(|r| originals.contains(r)),
                "byte {at}: a record that was never written"
            );
            let damage = recording.damage.clone().unwrap_or_default();
            if (starts[1]..starts[4]).contains(&at) {
                // In a chunk of samples: that chunk alone is skipped.
                assert_eq!(read.len(), 9, "byte {at}");
                assert_eq!(damage.skipped_chunks, 1, "byte {at}");
                assert_eq!(damage.samples_written, Some(12), "byte {at}");
                assert!(
                    damage.to_string().contains("3 of 12 samples lost"),
                    "{damage}"
                );
            } else if (starts[4]..bytes.len() - 24).contains(&at) {
                assert!(damage.trailer_damaged, "byte {at}");
                assert_eq!(read.len(), 12);
                assert_eq!(recording.trailer.stats.events[0].samples, 12);
            } else if at >= starts[0] {
                // The first chunk holds the mapping and three samples; a
                // damaged end marker costs nothing.
                assert!(read.len() >= 9, "byte {at}");
            }
        }
    }
}

#[test]
fn records_read_in_parts_are_the_records_read_whole() {
    for level in LEVELS {
        let mut bytes = recording_bytes(30, 3, level);
        let starts = chunk_starts(&bytes);
        // A damaged chunk is skipped by whichever part holds it.
        bytes[starts[4] + 30] ^= 1;
        let path = path("parts");
        std::fs::write(&path, &bytes).unwrap();
        let recording = Recording::open(&path).unwrap();
        let whole = samples(&recording);
        assert_eq!(whole.len(), 27);
        for parts in 1..14 {
            let split = recording.records_in_parts(parts).unwrap().unwrap();
            assert!(split.len() <= parts);
            let read: Vec<Record> = (split.into_iter().flatten())
                .map(Result::unwrap)
                .filter(|r| matches!(r, Record::Sample(_)))
                .collect();
            assert_eq!(read, whole, "{parts} parts");
        }
    }
}

#[test]
fn neighbouring_damaged_chunks_are_each_counted_and_skipped() {
    for level in LEVELS {
        let mut bytes = recording_bytes(12, 3, level);
        let starts = chunk_starts(&bytes);
        bytes[starts[1] + 30] ^= 1;
        bytes[starts[2] + 2] ^= 1;
        let path = path("neighbours");
        std::fs::write(&path, &bytes).unwrap();
        let recording = Recording::open(&path).unwrap();
        let damage = recording.damage.clone().unwrap();
        assert_eq!(damage.skipped_chunks, 2);
        assert_eq!(damage.skipped_bytes, (starts[3] - starts[1]) as u64);
        let expected: Vec<Record> = [0, 1, 2, 9, 10, 11].into_iter().map(sample).collect();
        assert_eq!(samples(&recording), expected);
        assert!(
            damage.to_string().contains("6 of 12 samples lost"),
            "{damage}"
        );
    }
}

#[test]
fn foreign_files_and_other_versions_are_named_as_such() {
    let path = write_recording("foreign", 1, 0);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8] = 1;
    std::fs::write(&path, &bytes).unwrap();
    let error = Recording::open(&path).unwrap_err();
    assert!(
        matches!(
            error,
            RecordingError::Version {
                found: 1,
                supported: 3,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("record it again"), "{error}");

    std::fs::write(
        &path,
        b"\x7fELF not a recording at all, but long enough to look",
    )
    .unwrap();
    let error = Recording::open(&path).unwrap_err();
    assert!(
        matches!(error, RecordingError::NotARecording { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("profiler record"), "{error}");

    let missing = path.with_extension("missing");
    let error = Recording::open(&missing).unwrap_err();
    assert!(error.to_string().contains("No such file"), "{error}");
    assert!(error.to_string().contains("-i FILE"), "{error}");
}

#[test]
fn a_good_chunk_with_a_bad_record_is_reported_with_its_offset() {
    let mut bytes = recording_bytes(3, 3, 0);
    let at = chunk_starts(&bytes)[0];
    let payload = at + CHUNK_HEADER_LEN;
    // Claim a record far longer than its chunk, and make the checksums
    // agree, as a crafted file would.
    bytes[payload + 1..payload + 5].copy_from_slice(&u32::MAX.to_le_bytes());
    let len = ChunkHeader::decode(&bytes[at..]).unwrap().len as usize;
    let header = ChunkHeader::encode(ChunkKind::Records, 1, &bytes[payload..payload + len]);
    bytes[at..payload].copy_from_slice(&header);
    let path = path("crafted");
    std::fs::write(&path, &bytes).unwrap();
    let recording = Recording::open(&path).unwrap();
    let results: Vec<_> = recording.records().unwrap().collect();
    assert_eq!(results.len(), 1);
    let error = results[0].as_ref().unwrap_err();
    assert!(
        error.to_string().contains(&format!("byte {payload}")),
        "{error}"
    );
}

#[test]
fn a_compressed_chunk_whose_checksums_hold_but_whose_size_lies_is_refused() {
    let bytes = recording_bytes(300, 300, 1);
    let at = chunk_starts(&bytes)[0];
    let header = ChunkHeader::decode(&bytes[at..]).unwrap();
    assert_eq!(header.kind, ChunkKind::ZstdRecords);
    let payload = at + CHUNK_HEADER_LEN;
    let declared = u32::from_le_bytes(bytes[payload..payload + 4].try_into().unwrap());
    let path = path("lying");
    // Fewer bytes than the frame holds, more, and far more than any
    // chunk may hold; the checksums made to agree, as a crafted file
    // would.
    for claim in [declared - 1, declared + 1, u32::MAX] {
        let mut crafted = bytes.clone();
        crafted[payload..payload + 4].copy_from_slice(&claim.to_le_bytes());
        let len = header.len as usize;
        let new = ChunkHeader::encode(
            ChunkKind::ZstdRecords,
            header.number,
            &crafted[payload..payload + len],
        );
        crafted[at..payload].copy_from_slice(&new);
        std::fs::write(&path, &crafted).unwrap();
        let recording = Recording::open(&path).unwrap();
        let results: Vec<_> = recording.records().unwrap().collect();
        assert_eq!(results.len(), 1, "claim {claim}");
        let error = results[0].as_ref().unwrap_err().to_string();
        assert!(error.contains(&format!("byte {payload}")), "{error}");
        assert!(error.contains("compressed chunk"), "{error}");
    }
}

#[test]
fn a_pass_over_side_band_records_finds_them_whether_or_not_it_reads_every_chunk() {
    for level in LEVELS {
        // The mapping in the first chunk, then chunks of samples alone,
        // which compressed are stepped over unread.
        let path = path("side-band");
        std::fs::write(&path, recording_bytes(30, 3, level)).unwrap();
        let recording = Recording::open(&path).unwrap();
        let side_band: Vec<Record> = (recording.side_band_records().unwrap())
            .map(Result::unwrap)
            .collect();
        assert_eq!(side_band.len(), 1, "level {level}");
        assert!(matches!(side_band[0], Record::Mmap(_)), "level {level}");
        assert_eq!(samples(&recording).len(), 30, "level {level}");
    }
}
