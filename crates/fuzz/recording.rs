//! The recording target: the profiler's own recordings opened, read record
//! by record, and put through every view. Built-in seeds are written here
//! with the profiler's writer (processes, threads, mappings, samples with
//! call chains, stack copies and group counts, losses, a histogram-mode
//! recording); the corpus adds the recordings the tests made.
//!
//! Chunks and the header carry CRCs, so nearly every mutation would only
//! reach the check that skips a damaged chunk: half the inputs have their
//! checksums mended after mutation, so that the records behind them are
//! decoded. The sampled seed comes plain, so that mutations reach the
//! records themselves, and compressed, as `record` writes it, so that they
//! reach the decompression of chunks and the sizes their payloads claim.

use profiler_histogram::{BucketWidth, Buckets};
use profiler_model::{
    Avma, BuildId, CallGraph, CallchainEntry, ChunkLimits, Comm, CpuMode,
    DEFAULT_COMPRESSION_LEVEL, EventDescription, EventIndex, FileOffset, HistogramRecord,
    HistogramSettings, HostInfo, Lost, Mmap, Record, RecordSink, RecordingHeader, RecordingWriter,
    Sample, Sampling, TaskEvent, Throttle, Trailer, UserStack,
};

use crate::target::{Scratch, Target};
use crate::views;

pub(crate) const TARGET: Target = Target {
    name: "recording",
    accepts: |bytes| bytes.starts_with(b"PROFILER"),
    seeds,
    dictionary: &[
        b"PROFILER",
        b"PROFEND1",
        b"CHNK",
        // A zstd frame's magic.
        b"\x28\xb5\x2f\xfd",
        b"\"events\":[",
        b"\"call_graph\":",
        b"\"histogram\":",
        b"\"archive\":[",
        b"\"stack_bytes\":",
        b"\"leader\":",
        b"18446744073709551615",
        b"4294967295",
        b"-1",
        b"1e999",
    ],
    mend: Some(mend_checksums),
    restructure: Some(crate::structure::restructure),
    run,
};

fn run(input: &[u8], scratch: &Scratch) {
    let path = scratch.write("input.data", input);
    if let Ok(recording) = profiler_model::Recording::open(&path) {
        views::exercise(&recording);
    }
}

/// Layout constants of the recording format (crates/model/src/layout.rs,
/// chunk.rs): the preamble, and each chunk's header.
const PREAMBLE_LEN: usize = 20;
const CHUNK_HEADER_LEN: usize = 20;

/// Recomputes the header's checksum and that of every chunk found walking
/// from it, as a crafted file would have them.
fn mend_checksums(bytes: &mut [u8]) {
    let Some(word) = bytes.get(12..16) else {
        return;
    };
    let header_len = u32::from_le_bytes(word.try_into().unwrap_or_default()) as usize;
    let Some(header) = bytes.get(PREAMBLE_LEN..PREAMBLE_LEN.saturating_add(header_len)) else {
        return;
    };
    let checksum = crc32fast::hash(header);
    bytes[16..20].copy_from_slice(&checksum.to_le_bytes());
    let mut at = PREAMBLE_LEN + header_len;
    while let Some(rest) = bytes.get(at..) {
        let Some(found) = rest.windows(4).position(|w| w == b"CHNK") else {
            return;
        };
        at += found;
        let Some(chunk) = bytes.get(at..at + CHUNK_HEADER_LEN) else {
            return;
        };
        let len = u32::from_le_bytes(chunk[8..12].try_into().unwrap_or_default()) as usize;
        let payload_start = at + CHUNK_HEADER_LEN;
        let Some(payload) = bytes.get(payload_start..payload_start.saturating_add(len)) else {
            at += 4;
            continue;
        };
        let payload_checksum = crc32fast::hash(payload);
        bytes[at + 12..at + 16].copy_from_slice(&payload_checksum.to_le_bytes());
        let own = crc32fast::hash(&bytes[at..at + 16]);
        bytes[at + 16..at + 20].copy_from_slice(&own.to_le_bytes());
        at = payload_start + len;
    }
}

fn seeds() -> Vec<Vec<u8>> {
    vec![sampled(0), sampled(DEFAULT_COMPRESSION_LEVEL), histograms()]
}

fn header(events: Vec<EventDescription>) -> RecordingHeader {
    RecordingHeader {
        events,
        command: vec!["./app".into(), "--work".into()],
        program: Some("/bin/app".into()),
        user: None,
        histogram: None,
        call_graph: Some(CallGraph::Dwarf { stack_bytes: 64 }),
        host: HostInfo::default(),
        job: None,
        start_unix_ns: 1,
        profiler_version: "0".into(),
    }
}

fn event(name: &str, config: u64, leader: Option<EventIndex>) -> EventDescription {
    EventDescription {
        name: name.into(),
        perf_type: 1,
        config,
        config1: 0,
        config2: 0,
        sampling: Sampling::Frequency(4000),
        unit: "ns".into(),
        user: true,
        kernel: true,
        leader,
        role: profiler_model::EventRole::Sampled,
    }
}

/// Two processes (a fork), a group of two events, samples in user and
/// kernel space with call chains, stack copies and the member's counts.
/// The sampled seed, its chunks compressed at `level` (0: plain).
fn sampled(level: u8) -> Vec<u8> {
    let events = vec![event("cpu-clock", 0, None), event("task-clock", 1, Some(0))];
    let mut records = vec![
        Record::Comm(Comm {
            time: 1,
            pid: 10,
            tid: 10,
            name: "app".into(),
            exec: true,
        }),
        Record::Mmap(Mmap {
            time: 2,
            pid: 10,
            tid: 10,
            start: Avma(0x5555_5555_5000),
            len: 0x3000,
            offset: FileOffset(0x1000),
            path: "/bin/app".into(),
            build_id: Some(BuildId(vec![0xab; 20])),
        }),
        Record::Mmap(Mmap {
            time: 3,
            pid: 10,
            tid: 10,
            start: Avma(0x7f00_0000_0000),
            len: 0x1000,
            offset: FileOffset(0),
            path: "//anon".into(),
            build_id: None,
        }),
        Record::Fork(TaskEvent {
            time: 4,
            pid: 11,
            ppid: 10,
            tid: 11,
            ptid: 10,
        }),
    ];
    for i in 0..12u64 {
        let pid = 10 + (i % 2) as u32;
        records.push(Record::Sample(Sample {
            time: 10 + i,
            pid,
            tid: pid,
            cpu: (i % 3) as u32,
            event: (i % 2) as EventIndex,
            mode: if i % 4 == 0 {
                CpuMode::Kernel
            } else {
                CpuMode::User
            },
            ip: Avma(0x5555_5555_5010 + 0x100 * i),
            period: 250_000,
            callchain: vec![
                CallchainEntry::Context(CpuMode::User),
                CallchainEntry::Address(Avma(0x5555_5555_5010 + 0x100 * i)),
                CallchainEntry::Address(Avma(0x5555_5555_6020)),
                CallchainEntry::Address(Avma(0x7f00_0000_0040)),
            ],
            user_stack: (i % 3 == 0).then(|| UserStack {
                ip: Avma(0x5555_5555_5010),
                sp: Avma(0x7ffd_0000_0000),
                bp: Avma(0x7ffd_0000_0010),
                bytes: (0..8u64)
                    .flat_map(|w| (0x5555_5555_6000 + w).to_le_bytes())
                    .collect(),
            }),
            read: vec![(1, 1000 * i)],
        }));
    }
    records.push(Record::Lost(Lost {
        time: 30,
        event: 0,
        count: 3,
    }));
    records.push(Record::Throttle(Throttle {
        time: 31,
        event: 1,
        unthrottle: false,
    }));
    records.push(Record::Exit(TaskEvent {
        time: 40,
        pid: 11,
        ppid: 10,
        tid: 11,
        ptid: 10,
    }));
    write(&header(events), &records, level)
}

/// A histogram-mode recording: buckets of two widths, no samples.
fn histograms() -> Vec<u8> {
    let mut header = header(vec![event("cpu-clock", 0, None)]);
    header.call_graph = None;
    header.histogram = Some(HistogramSettings {
        bucket_bits: 32,
        scale: 0x8000,
        regions: vec!["0x1000:0x2000".into()],
        ..HistogramSettings::default()
    });
    let records = [16u8, 32, 64].map(|bits| {
        Record::Histogram(HistogramRecord {
            event: 0,
            path: "/bin/app".into(),
            build_id: None,
            start: FileOffset(0x1000),
            scale: 0x8000,
            buckets: BucketWidth::from_bits(u64::from(bits))
                .ok()
                .and_then(|width| Buckets::from_le_bytes(width, &(0..64).collect::<Vec<u8>>()))
                .unwrap_or_else(|| Buckets::new(BucketWidth::Bits16, 0)),
        })
    });
    write(&header, &records, 0)
}

fn write(header: &RecordingHeader, records: &[Record], level: u8) -> Vec<u8> {
    let limits = ChunkLimits {
        compression_level: level,
        ..ChunkLimits::default()
    };
    let write = || {
        let mut writer = RecordingWriter::with_limits(Vec::new(), header, limits)?;
        for (i, record) in records.iter().enumerate() {
            writer.push(record)?;
            // Several chunks, so that chunks can be lost and spliced.
            if i % 4 == 3 {
                writer.end_batch()?;
            }
        }
        writer.finish(Trailer::default())
    };
    write().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_read_back_and_mended_checksums_hold() {
        let scratch = Scratch {
            dir: std::env::temp_dir().join(format!("fuzz-recording-{}", std::process::id())),
        };
        std::fs::create_dir_all(&scratch.dir).unwrap();
        let seeds = seeds();
        // The compressed seed is format 3, the others format 2.
        let versions: Vec<u8> = seeds.iter().map(|seed| seed[8]).collect();
        assert_eq!(versions, [2, 3, 2]);
        for seed in seeds {
            let path = scratch.write("seed.data", &seed);
            let recording = profiler_model::Recording::open(&path).unwrap();
            assert_eq!(recording.damage, None);
            assert!(recording.records().unwrap().count() >= 3);

            // A changed record, its chunk's checksum mended, is read as
            // written, not skipped as damage.
            let mut changed = seed.clone();
            let chunk = changed.windows(4).position(|w| w == b"CHNK").unwrap();
            // Past the 12 bytes a compressed chunk's frame follows.
            let at = chunk + CHUNK_HEADER_LEN + 14;
            changed[at] ^= 0x01;
            std::fs::write(&path, &changed).unwrap();
            let damaged = profiler_model::Recording::open(&path).unwrap();
            assert!(damaged.damage.is_some());
            mend_checksums(&mut changed);
            std::fs::write(&path, &changed).unwrap();
            let mended = profiler_model::Recording::open(&path).unwrap();
            assert_eq!(mended.damage, None);
            // In the compressed seed the change lands in a zstd frame,
            // whose decompression then fails in one error.
            if seed[8] == 3 {
                let errors: Vec<String> = (mended.records().unwrap())
                    .filter_map(|r| r.err().map(|e| e.to_string()))
                    .collect();
                assert_eq!(errors.len(), 1, "{errors:?}");
                assert!(errors[0].contains("compressed chunk"), "{errors:?}");
            }
        }
        let _ = std::fs::remove_dir_all(&scratch.dir);
    }
}
