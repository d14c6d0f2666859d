//! perf.data files built byte by byte: what they hold comes back as the
//! profiler's records, and every crafted, cut or damaged one is either read
//! or refused with one line, never a panic or an abort.

mod builder;

use std::path::PathBuf;

use profiler_model::{Avma, CallGraph, Record, Recording, Sampling};

use self::builder::*;
use crate::data_check::check_records;
use crate::layout::{self, Reader, Section};
use crate::{PerfData, PerfDataError, Refusal, from_file};

fn path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("perfdata-{name}-{}.data", std::process::id()))
}

fn read(name: &str, bytes: &[u8]) -> Result<PerfData, PerfDataError> {
    let path = path(name);
    std::fs::write(&path, bytes).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let result = from_file(file, &path);
    let _ = std::fs::remove_file(&path);
    result
}

fn refused(name: &str, bytes: &[u8]) -> Refusal {
    match read(name, bytes) {
        Err(PerfDataError::Refused { refusal, .. }) => refusal,
        Err(other) => panic!("{name}: not refused when opened: {other}"),
        Ok(_) => panic!("{name}: read"),
    }
}

/// A process running `/bin/app` with three samples in it and one
/// outside any mapping.
fn app(file: &PerfFile) -> PerfFile {
    let mut file = file.clone();
    file.records = vec![
        file.comm(1, 42, "app"),
        file.mmap2(2, 42, 0x40_0000, 0x1000, "/bin/app"),
        file.sample(
            3,
            42,
            0x40_0010,
            250,
            &[PERF_CONTEXT_USER, 0x40_0010, 0x40_0800],
        ),
        finished_round(),
        file.sample(4, 42, 0x40_0020, 250, &[PERF_CONTEXT_USER, 0x40_0020]),
        file.sample(5, 42, 0x40_0020, 500, &[PERF_CONTEXT_USER, 0x40_0020]),
        file.sample(6, 42, 0x7000_0000, 250, &[]),
        finished_round(),
    ];
    file
}

fn records(recording: &Recording) -> Vec<Record> {
    recording.records().unwrap().map(Result::unwrap).collect()
}

#[test]
fn samples_mappings_and_names_come_back_as_the_profilers_records() {
    let mut file = app(&PerfFile::new());
    file.features = vec![(11, string_list(&["perf", "record", "./app"]))];
    let (bytes, _) = file.build();
    let perf_data = read("app", &bytes).unwrap();
    assert_eq!(perf_data.notes, Vec::<String>::new());
    let recording = &perf_data.recording;
    assert_eq!(recording.header.command, ["perf", "record", "./app"]);
    let event = &recording.header.events[0];
    assert_eq!(event.name, "cpu-clock");
    assert_eq!(event.unit, "ns");
    assert_eq!(event.sampling, Sampling::Period(1000));
    assert!(event.user && !event.kernel);
    assert_eq!(recording.header.call_graph, None);
    let stats = recording.trailer.stats.total();
    assert_eq!((stats.samples, stats.period), (4, 1250));
    assert_eq!(recording.trailer.duration_ns, 5);

    let records = records(recording);
    assert!(matches!(&records[0], Record::Comm(c) if c.name == "app" && c.pid == 42));
    let Record::Mmap(mmap) = &records[1] else {
        panic!("{:?}", records[1]);
    };
    assert_eq!(
        (mmap.path.as_str(), mmap.start, mmap.len, mmap.time),
        ("/bin/app", Avma(0x40_0000), 0x1000, 2)
    );
    let samples: Vec<_> = (records.iter())
        .filter_map(|r| match r {
            Record::Sample(s) => Some((s.time, s.pid, s.ip.0, s.period)),
            _ => None,
        })
        .collect();
    assert_eq!(
        samples,
        [
            (3, 42, 0x40_0010, 250),
            (4, 42, 0x40_0020, 250),
            (5, 42, 0x40_0020, 500),
            (6, 42, 0x7000_0000, 250)
        ]
    );
    // Read again, the same.
    assert_eq!(records, self::records(recording));
}

#[test]
fn the_program_is_the_file_a_process_executed_and_named_itself_after() {
    let file = PerfFile::new();
    let (bytes, _) = app(&file).build();
    // `app` was running already (`perf record -p`): no program is known.
    assert_eq!(
        read("running", &bytes).unwrap().recording.header.program,
        None
    );

    let mut launched = file.clone();
    launched.records = vec![
        file.comm(1, 41, "perf-exec"),
        file.mmap2(2, 41, 0x7f00_0000, 0x1000, "/usr/bin/perf"),
        file.exec(3, 42, "a-rather-long-n"),
        file.mmap2(4, 42, 0x7f00_0000, 0x1000, "/lib/ld-linux-x86-64.so.2"),
        file.mmap2(5, 42, 0x40_0000, 0x1000, "/opt/a-rather-long-name"),
        file.exec(6, 43, "child"),
        file.mmap2(7, 43, 0x40_0000, 0x1000, "/bin/child"),
        finished_round(),
    ];
    let (bytes, _) = launched.build();
    let program = read("launched", &bytes).unwrap().recording.header.program;
    assert_eq!(program.as_deref(), Some("/opt/a-rather-long-name"));
}

#[test]
fn call_chains_keep_perfs_context_markers() {
    let mut file = PerfFile::new();
    file.sample_type |= SAMPLE_CALLCHAIN;
    file.frequency = Some(4000);
    let (bytes, _) = app(&file).build();
    let recording = read("chains", &bytes).unwrap().recording;
    assert_eq!(recording.header.call_graph, Some(CallGraph::FramePointer));
    assert_eq!(
        recording.header.events[0].sampling,
        Sampling::Frequency(4000)
    );
    let chains: Vec<Vec<u64>> = (records(&recording).into_iter())
        .filter_map(|r| match r {
            Record::Sample(s) => Some(s.callchain.iter().map(|e| e.to_raw()).collect()),
            _ => None,
        })
        .collect();
    assert_eq!(chains[0], [PERF_CONTEXT_USER, 0x40_0010, 0x40_0800]);
    assert_eq!(chains[3], Vec::<u64>::new());
}

#[test]
fn a_file_perf_record_did_not_finish_is_refused_as_perf_refuses_it() {
    let (mut bytes, _) = app(&PerfFile::new()).build();
    bytes[48..56].copy_from_slice(&0u64.to_le_bytes());
    let refusal = refused("unfinished", &bytes);
    assert!(matches!(refusal, Refusal::Unfinished), "{refusal}");
    let message = refusal.to_string();
    assert!(message.contains("data size field is 0"), "{message}");
    assert!(message.contains("properly terminated"), "{message}");
}

#[test]
fn sizes_that_would_make_the_reader_allocate_without_bound_are_refused() {
    let mut file = app(&PerfFile::new());
    file.features = vec![(11, string_list(&["perf"]))];
    let (bytes, built) = file.build();

    // A feature section of 2^44 bytes.
    let mut huge = bytes.clone();
    let size_at = built.feature_table + 8;
    huge[size_at..size_at + 8].copy_from_slice(&(1u64 << 44).to_le_bytes());
    let refusal = refused("huge-feature", &huge);
    assert!(
        refusal
            .to_string()
            .contains("feature 11 claims 17592186044416 bytes"),
        "{refusal}"
    );

    // The feature table itself past the end of the file.
    let mut cut = bytes.clone();
    cut.truncate(built.feature_table + 4);
    assert!(matches!(refused("cut-table", &cut), Refusal::Truncated(_)));

    // A data section that runs past the end.
    let mut long = bytes;
    long[48..56].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(matches!(refused("long-data", &long), Refusal::Truncated(_)));
}

#[test]
fn event_descriptions_claiming_more_than_they_hold_are_refused() {
    let mut desc = Vec::new();
    put32(&mut desc, u32::MAX); // events
    put32(&mut desc, 128); // attribute size
    desc.resize(8 + 128 + 8, 0);
    let mut file = app(&PerfFile::new());
    file.features = vec![(12, desc)];
    let refusal = refused("event-desc", &file.build().0);
    assert!(
        refusal.to_string().contains("claim 4294967295 events"),
        "{refusal}"
    );
}

#[test]
fn event_descriptions_name_the_events() {
    let mut desc = Vec::new();
    put32(&mut desc, 1);
    put32(&mut desc, 128);
    let file = PerfFile::new();
    let (bytes, _) = file.build();
    // The attribute as the attrs section holds it.
    desc.extend_from_slice(&bytes[104..104 + 128]);
    put32(&mut desc, 1); // one id
    put32(&mut desc, 16);
    desc.extend_from_slice(b"cpu-clock:u\0\0\0\0\0");
    put64(&mut desc, 1);
    let mut file = app(&file);
    file.features = vec![(12, desc)];
    let recording = read("named", &file.build().0).unwrap().recording;
    assert_eq!(recording.header.events[0].name, "cpu-clock:u");
    assert_eq!(recording.header.events[0].perf_type, 1);
}

#[test]
fn aux_trace_is_skipped_and_said_so_and_its_sizes_checked() {
    let mut file = app(&PerfFile::new());
    let mut trace = auxtrace(16);
    trace.extend_from_slice(&[0xaa; 16]);
    file.records.insert(2, trace);
    file.features = vec![(18, vec![0; 8])];
    let perf_data = read("aux", &file.build().0).unwrap();
    assert_eq!(perf_data.recording.trailer.stats.total().samples, 4);
    assert_eq!(perf_data.notes.len(), 1, "{:?}", perf_data.notes);
    let note = &perf_data.notes[0];
    assert!(note.contains("1 AUX area tracing records"), "{note}");
    assert!(note.contains("16 bytes of trace"), "{note}");
    assert!(note.contains("reads samples only"), "{note}");

    // A payload that claims more than the file holds.
    let mut file = app(&PerfFile::new());
    file.records.insert(2, auxtrace(1 << 50));
    let refusal = refused("aux-huge", &file.build().0);
    assert!(
        refusal.to_string().contains("AUX trace record"),
        "{refusal}"
    );
}

#[test]
fn other_kinds_of_perf_files_are_named_with_what_to_do() {
    let (bytes, _) = app(&PerfFile::new()).build();
    let mut pipe = b"PERFILE2".to_vec();
    put64(&mut pipe, 16);
    pipe.extend_from_slice(&bytes[104..]);
    let message = refused("pipe", &pipe).to_string();
    assert!(
        message.contains("pipe format") && message.contains("-o perf.data"),
        "{message}"
    );

    let mut old = bytes.clone();
    old[..8].copy_from_slice(b"PERFFILE");
    assert!(matches!(refused("v1", &old), Refusal::VersionOne));

    for (bit, expected) in [(19, "perf stat record"), (24, "--threads")] {
        let mut file = app(&PerfFile::new());
        file.features = vec![(bit, vec![0; 8])];
        let message = refused("kind", &file.build().0).to_string();
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn every_cut_of_a_file_is_read_or_refused() {
    let (bytes, built) = app(&PerfFile::new()).build();
    for len in 0..bytes.len() {
        match read("cuts", &bytes[..len]) {
            Ok(_) => panic!("a file cut at {len} of {} was read", bytes.len()),
            Err(error) => assert!(!error.to_string().is_empty()),
        }
    }
    assert!(built.data_size > 0);
}

#[test]
fn every_damaged_byte_is_read_or_refused_never_a_panic() {
    let mut file = PerfFile::new();
    file.sample_type |= SAMPLE_CALLCHAIN;
    let mut file = app(&file);
    file.features = vec![(11, string_list(&["perf", "record"]))];
    let build_id = file.mmap2_build_id(42, "/bin/app", &[7; 20], 20);
    file.records.insert(2, build_id);
    let (bytes, _) = file.build();
    for at in 0..bytes.len() {
        for value in [0x00, 0xff, 0x80, 0x07] {
            let mut damaged = bytes.clone();
            damaged[at] = value;
            if let Ok(perf_data) = read("damaged", &damaged) {
                // What was read reads again the same way, or fails with
                // one error.
                let _ = perf_data.recording.records().map(|r| r.count());
            }
        }
    }
}

#[test]
fn compressed_records_are_read_and_a_round_too_large_to_sort_is_refused() {
    let file = PerfFile::new();
    let inner: Vec<u8> = [
        file.mmap2(2, 42, 0x40_0000, 0x1000, "/bin/app"),
        file.sample(3, 42, 0x40_0010, 250, &[]),
    ]
    .concat();
    let compressed = compress(&inner);
    let mut file = app(&file);
    file.records = vec![record(81, 0, &compressed), finished_round()];
    let (bytes, built) = file.build();
    let recording = read("compressed", &bytes).unwrap().recording;
    assert_eq!(recording.trailer.stats.total().samples, 1);
    assert_eq!(records(&recording).len(), 2);

    // 64 KiB of records, compressed to a few hundred bytes, against a
    // budget of 32 KiB.
    let flood: Vec<u8> = std::iter::repeat_n(finished_round_free_record(), 8192)
        .flatten()
        .collect();
    let mut file = PerfFile::new();
    file.records = vec![record(81, 0, &compress(&flood))];
    let (bytes, built_flood) = file.build();
    let path = path("flood");
    std::fs::write(&path, &bytes).unwrap();
    let opened = std::fs::File::open(&path).unwrap();
    let reader = Reader {
        file: &opened,
        size: bytes.len() as u64,
        big_endian: false,
    };
    let data = Section {
        offset: built_flood.data_offset as u64,
        size: built_flood.data_size as u64,
    };
    let error = check_records(&reader, data, 32 << 10).unwrap_err();
    assert!(error.to_string().contains("more than fit"), "{error}");
    assert!(check_records(&reader, data, 64 << 20).is_ok());
    let _ = std::fs::remove_file(&path);
    assert!(built.data_size > 0);
    assert!(layout::check(&opened, bytes.len() as u64).is_ok());
}

#[test]
fn a_mapping_build_id_is_read_when_it_fits_its_field() {
    let build_id: Vec<u8> = (1..=20).collect();
    let mut file = app(&PerfFile::new());
    file.records[1] = file.mmap2_build_id(42, "/bin/app", &build_id, 20);
    let perf_data = read("build-id", &file.build().0).unwrap();
    assert_eq!(perf_data.notes, Vec::<String>::new());
    let mapping = records(&perf_data.recording)
        .into_iter()
        .find_map(|r| match r {
            Record::Mmap(mmap) => Some(mmap),
            _ => None,
        });
    assert_eq!(mapping.unwrap().build_id.unwrap().0, build_id);
}

// The kernel marks an MMAP2 record of device fe:00 as carrying a build-id
// when another session records build-ids: its major number, 254, reads as
// the build-id's length. Such a record, plainly or compressed, is read as
// the device and inode it holds, and said once.
#[test]
fn a_mapping_marked_as_a_build_id_over_its_inode_is_read_as_the_inode() {
    let plain = app(&PerfFile::new());
    let expected = records(&read("inode", &plain.build().0).unwrap().recording);
    for major in [254, 21, 0] {
        let mut marked = plain.mmap2(2, 42, 0x40_0000, 0x1000, "/bin/app");
        marked[4..6].copy_from_slice(&(2 | MISC_MMAP_BUILD_ID).to_le_bytes());
        marked[40] = major;
        let mut file = plain.clone();
        file.records[1] = marked.clone();
        let compressed = {
            let mut file = plain.clone();
            file.records[1] = record(81, 0, &compress(&marked));
            file
        };
        for (name, file) in [("marked", file), ("marked-compressed", compressed)] {
            let perf_data = read(name, &file.build().0).unwrap();
            assert_eq!(records(&perf_data.recording), expected, "{name} {major}");
            assert_eq!(perf_data.notes.len(), 1, "{:?}", perf_data.notes);
            assert!(
                perf_data.notes[0]
                    .starts_with("1 mapping records are marked as carrying a build-id"),
                "{}",
                perf_data.notes[0]
            );
        }
    }
}

/// An 8-byte record of a kind the reader skips.
fn finished_round_free_record() -> Vec<u8> {
    record(69, 0, &[])
}

fn compress(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0; zstd_safe::compress_bound(bytes.len())];
    let len = zstd_safe::compress(&mut out[..], bytes, 3).unwrap();
    out.truncate(len);
    out
}
