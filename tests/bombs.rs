//! Inputs of a few kilobytes (or sparse gigabytes) that claim far more than
//! they hold: a JIT map of 8 GiB, a debug section that inflates to 2 GiB,
//! a `.debug_info` of zeros, a source file of 4 GiB, a histogram recording
//! claiming 768 MiB of buckets, a perf.data whose zstd records inflate to
//! gigabytes, a recording whose compressed chunk inflates to gigabytes. Each is read within 1 GiB of address space, and where
//! something was left unread, one line says what.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use profiler_histogram::{BucketWidth, Buckets};
use profiler_model::{FileOffset, HistogramRecord, HistogramSettings, Record, Sampling};

use crate::hostile::run_bounded;
use crate::reading::jit_recording;
use crate::synthetic::*;
use crate::util::*;

/// Runs the profiler with `args` in `dir` within 1 GiB and asserts that
/// it succeeds; returns what it printed, both streams.
fn read_within_a_gib(dir: &Path, args: &[&str]) -> String {
    let output = run_bounded(dir, args, 1024);
    let printed = printed(&output);
    assert!(output.status.success(), "{args:?}: {printed}");
    printed
}

fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        stderr(output)
    )
}

#[test]
fn a_jit_map_of_8_gib_is_read_as_far_as_256_mib() {
    let dir = scratch("bombs-jit-map");
    let pid = 0x4000_0000 + std::process::id() % 0x1000_0000;
    let map = format!("/tmp/perf-{pid}.map");
    let mut file = std::fs::File::create(&map).unwrap();
    file.write_all(b"710000000000 40 jit_hot\n").unwrap();
    // The rest is sparse: zeros, and no line end.
    file.set_len(8 << 30).unwrap();
    drop(file);
    jit_recording(&dir.join("jit.data"), pid, None);
    let printed = read_within_a_gib(&dir, &["report", "-i", "jit.data"]);
    let _ = std::fs::remove_file(&map);
    assert!(printed.contains("jit_hot"), "{printed}");
    let note = format!("/tmp/perf-{pid}.map: only its first 256 MiB were read");
    assert_eq!(printed.matches(&note).count(), 1, "{printed}");
}

/// `bytes` of an ELF file with section `name`'s contents replaced by
/// `contents`, appended at the end.
fn replace_section(mut bytes: Vec<u8>, name: &str, contents: &[u8]) -> Vec<u8> {
    let word = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
    let half = |b: &[u8], at: usize| usize::from(u16::from_le_bytes([b[at], b[at + 1]]));
    let (shoff, shentsize, shnum) = (word(&bytes, 0x28), half(&bytes, 0x3a), half(&bytes, 0x3c));
    let names = word(&bytes, shoff + half(&bytes, 0x3e) * shentsize + 0x18);
    let header = (0..shnum)
        .map(|i| shoff + i * shentsize)
        .find(|&h| {
            let at = names + u32::from_le_bytes(bytes[h..h + 4].try_into().unwrap()) as usize;
            bytes[at..].starts_with(name.as_bytes()) && bytes[at + name.len()] == 0
        })
        .unwrap_or_else(|| panic!("no section {name}"));
    let offset = bytes.len() as u64;
    bytes[header + 0x18..header + 0x20].copy_from_slice(&offset.to_le_bytes());
    bytes[header + 0x20..header + 0x28].copy_from_slice(&(contents.len() as u64).to_le_bytes());
    bytes.extend_from_slice(contents);
    bytes
}

/// A zlib stream of `mib` MiB of zeros, made of one compressed MiB
/// repeated (each ends in a full flush, so each stands alone).
fn zlib_zeros(mib: u64) -> Vec<u8> {
    let mut one = Vec::with_capacity(4096);
    let mut deflate = flate2::Compress::new(flate2::Compression::best(), false);
    deflate
        .compress_vec(&vec![0; 1 << 20], &mut one, flate2::FlushCompress::Full)
        .unwrap();
    assert_eq!(deflate.total_in(), 1 << 20, "compressed in one call");
    let mut stream = vec![0x78, 0x01];
    for _ in 0..mib {
        stream.extend_from_slice(&one);
    }
    // The last block: stored, empty, final.
    stream.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    // Adler-32 of zeros: a stays 1, b counts the bytes.
    let b = ((mib << 20) % 65521) as u32;
    stream.extend_from_slice(&((b << 16) | 1).to_be_bytes());
    stream
}

/// A recording of process 100 running `binary`, sampled in `function`.
fn sampled_in(path: &Path, binary: &Path, function: &str) {
    let (start, size) = function_range(binary, function);
    let mut recording = Synthetic::new();
    recording.process(100, 0, "prog", binary);
    recording.samples(100, start + size / 2, &[], 20);
    recording.write(path, &["./prog"]);
}

#[test]
fn a_debug_section_that_inflates_to_2_gib_is_not_inflated() {
    let dir = scratch("bombs-zlib");
    // Elf64_Chdr: zlib, 2 GiB once inflated, byte-aligned; and the stream.
    let mut section = Vec::new();
    section.extend_from_slice(&1u32.to_le_bytes());
    section.extend_from_slice(&0u32.to_le_bytes());
    section.extend_from_slice(&(2u64 << 30).to_le_bytes());
    section.extend_from_slice(&1u64.to_le_bytes());
    section.extend_from_slice(&zlib_zeros(2048));
    let bytes = std::fs::read(fixture("inlining-zlib")).unwrap();
    let bomb = dir.join("bomb");
    std::fs::write(&bomb, replace_section(bytes, ".debug_info", &section)).unwrap();
    assert!(std::fs::metadata(&bomb).unwrap().len() < 8 << 20);
    sampled_in(&dir.join("bomb.data"), &bomb, "main");
    for view in [&["report", "--inline"][..], &["report", "--sort", "line"]] {
        let args = [view, &["-i", "bomb.data"]].concat();
        let printed = read_within_a_gib(&dir, &args);
        assert!(printed.contains("main"), "{printed}");
        let note = "its .debug_info claims 2147483648 bytes once decompressed, more than 64 \
                    times its";
        assert_eq!(printed.matches(note).count(), 1, "{args:?}: {printed}");
    }
}

#[test]
fn a_debug_info_of_zeros_costs_no_more_than_its_pages() {
    let dir = scratch("bombs-debug-info-zeros");
    let zeros = dir.join("zeros");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let bomb = dir.join("bomb");
    let status = Command::new("objcopy")
        .arg(format!("--update-section=.debug_info={}", zeros.display()))
        .arg(fixture("inlining"))
        .arg(&bomb)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_file(&zeros).unwrap();
    sampled_in(&dir.join("bomb.data"), &bomb, "main");
    for view in [&["report", "--inline"][..], &["report", "--sort", "line"]] {
        let args = [view, &["-i", "bomb.data"]].concat();
        let printed = read_within_a_gib(&dir, &args);
        // Named from the symbol table, as without debug info.
        assert!(printed.contains("main"), "{args:?}: {printed}");
    }
}

const PROGRAM: &str = "\
volatile unsigned long sink;
__attribute__((noinline)) void hot(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
}
int main(void)
{
    hot(1000);
    return 0;
}
";

#[test]
fn a_source_file_of_4_gib_is_read_as_far_as_256_mib() {
    let dir = scratch("bombs-source");
    let source = dir.join("prog.c");
    std::fs::write(&source, PROGRAM).unwrap();
    let output = Command::new("cc")
        .current_dir(&dir)
        .args(["-g", "-O1", "-o", "prog", "prog.c"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    sampled_in(&dir.join("prog.data"), &dir.join("prog"), "hot");
    // Sparse: zeros, and no line end.
    std::fs::File::create(&source)
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    for view in [&["annotate", "hot"][..], &["annotate", "hot", "--source"]] {
        let args = [view, &["-i", "prog.data"]].concat();
        let printed = read_within_a_gib(&dir, &args);
        let note = format!(
            "only the first 256 MiB of {} were read: lines from 2 on are not shown",
            source.display()
        );
        assert_eq!(printed.matches(&note).count(), 1, "{args:?}: {printed}");
        assert!(!printed.contains("\0"), "{args:?}");
    }
}

#[test]
fn a_histogram_recording_claiming_768_mib_of_buckets_costs_its_counts() {
    let dir = scratch("bombs-histogram");
    let binary = fixture("split");
    let (burn, _) = function_range(&binary, "burn_60");
    let mut recording = Synthetic::with_histograms(HistogramSettings {
        bucket_bits: 64,
        scale: 65536,
        ..HistogramSettings::default()
    });
    recording.process(100, 0, "split", &binary);
    let event = recording.add_event("cpu-clock", Sampling::Period(250_000), None);
    // Three regions of 32 Mi 64-bit buckets, at burn_60, one bucket each
    // counted.
    for region in 0..3u64 {
        let mut buckets = Buckets::sparse(BucketWidth::Bits64, 32 << 20);
        buckets.add(usize::from(region == 0) * 2, 5, Default::default());
        recording.push_raw(Record::Histogram(HistogramRecord {
            event,
            path: binary.display().to_string(),
            build_id: None,
            start: FileOffset((burn & !0xf) + region * 0x10000),
            scale: 65536,
            buckets,
        }));
    }
    let path = dir.join("claims.data");
    recording.write(&path, &["./split"]);
    assert!(std::fs::metadata(&path).unwrap().len() < 4 << 10);
    for view in [
        &["report"][..],
        &["hist"],
        &["annotate", "burn_60"],
        &["flamegraph", "-o", "claims.svg"],
    ] {
        let args = [view, &["-i", "claims.data"]].concat();
        let printed = read_within_a_gib(&dir, &args);
        if view[0] == "report" || view[0] == "hist" {
            assert!(printed.contains("burn_60"), "{args:?}: {printed}");
        }
    }
}

/// A perf.data file (little-endian, one cpu-clock event) holding
/// `records`.
fn perf_data(records: &[u8]) -> Vec<u8> {
    const ATTR_LEN: u64 = 128;
    let put = |out: &mut Vec<u8>, words: &[u64]| {
        words
            .iter()
            .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    };
    let mut out = vec![0; 104];
    let attrs = out.len() as u64;
    // PERF_TYPE_SOFTWARE, its size, cpu-clock; period, IP|TID|TIME|PERIOD.
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(ATTR_LEN as u32).to_le_bytes());
    put(
        &mut out,
        &[0, 1000, 1 | 2 | 4 | 256, 0, (1 << 5) | (1 << 18)],
    );
    out.resize(attrs as usize + ATTR_LEN as usize, 0);
    let ids = out.len() as u64 + 16;
    put(&mut out, &[ids, 8, 1]);
    let data = out.len() as u64;
    out.extend_from_slice(records);
    let mut header = b"PERFILE2".to_vec();
    put(&mut header, &[104, ATTR_LEN + 16, attrs, ATTR_LEN + 16]);
    put(&mut header, &[data, records.len() as u64, 0, 0, 0, 0, 0, 0]);
    out[..104].copy_from_slice(&header);
    out
}

/// A zstd frame of RLE blocks: 14,000 of 128 KiB of the byte 8, 1.8 GB in
/// all, in 56 KB.
fn zstd_bomb() -> Vec<u8> {
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
    let blocks = 14_000;
    for i in 0..blocks {
        let header = (128u32 << 10 << 3) | (1 << 1) | u32::from(i == blocks - 1);
        frame.extend_from_slice(&header.to_le_bytes()[..3]);
        frame.push(8);
    }
    frame
}

#[test]
fn a_perf_data_whose_zstd_records_inflate_to_gigabytes_is_refused_in_one_line() {
    let dir = scratch("bombs-perf-data-zstd");
    // The byte 8 reads as records of 2,056 bytes.
    let frame = zstd_bomb();
    let mut record = Vec::new();
    record.extend_from_slice(&81u32.to_le_bytes());
    record.extend_from_slice(&0u16.to_le_bytes());
    record.extend_from_slice(&((8 + frame.len()) as u16).to_le_bytes());
    record.extend_from_slice(&frame);
    let bytes = perf_data(&record);
    assert!(bytes.len() < 64 << 10);
    std::fs::write(dir.join("bomb.perf.data"), bytes).unwrap();
    for view in [
        &["report"][..],
        &["hist"],
        &["flamegraph", "-o", "bomb.svg"],
    ] {
        let args = [view, &["-i", "bomb.perf.data"]].concat();
        let output = run_bounded(&dir, &args, 1024);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
        assert!(message.contains("bomb.perf.data"), "{message}");
        assert!(
            message.contains("256 MiB") || message.contains("times their size"),
            "{message}"
        );
    }
}

#[test]
fn a_recording_whose_compressed_chunk_inflates_to_gigabytes_is_refused_in_one_line() {
    let dir = scratch("bombs-recording-zstd");
    let binary = fixture("split");
    sampled_in(&dir.join("whole.data"), &binary, "burn_60");
    let bytes = std::fs::read(dir.join("whole.data")).unwrap();
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let records_start = 20 + word(12);
    let footer = bytes.len() - 24;
    let trailer = word(footer)..footer;
    assert_eq!(
        bytes[records_start + 4],
        4,
        "a compressed chunk comes first"
    );
    let crc = |bytes: &[u8]| {
        let mut crc = flate2::Crc::new();
        crc.update(bytes);
        crc.sum()
    };
    // The one chunk of records, replaced: it claims 16 MiB of records (as
    // much as a chunk may hold), the 20 samples the trailer counts and the
    // process's two records, and its frame holds 1.8 GB; its checksums
    // hold.
    for claim in [16u32 << 20, u32::MAX] {
        let mut payload = claim.to_le_bytes().to_vec();
        payload.extend_from_slice(&20u32.to_le_bytes());
        payload.extend_from_slice(&2u32.to_le_bytes());
        payload.extend_from_slice(&zstd_bomb());
        let mut out = bytes[..records_start].to_vec();
        let chunk_start = out.len();
        out.extend_from_slice(b"CHNK\x04\x01\0\0");
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc(&payload).to_le_bytes());
        let own = crc(&out[chunk_start..]);
        out.extend_from_slice(&own.to_le_bytes());
        out.extend_from_slice(&payload);
        let trailer_start = out.len();
        out.extend_from_slice(&bytes[trailer.clone()]);
        out.extend_from_slice(&(trailer_start as u64).to_le_bytes());
        out.extend_from_slice(&(trailer.len() as u64).to_le_bytes());
        out.extend_from_slice(b"PROFEND1");
        assert!(out.len() < 64 << 10);
        std::fs::write(dir.join("bomb.data"), &out).unwrap();
        for view in [
            &["report"][..],
            &["script"],
            &["flamegraph", "-o", "bomb.svg"],
        ] {
            let args = [view, &["-i", "bomb.data"]].concat();
            let output = run_bounded(&dir, &args, 1024);
            let message = stderr(&output);
            assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
            assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
            assert!(
                message.contains(&format!(
                    "bomb.data is corrupt at byte {}",
                    chunk_start + 20
                )),
                "{message}"
            );
            assert!(message.contains("compressed chunk"), "{message}");
        }
    }
}
