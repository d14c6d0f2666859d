//! Readers against what a hostile or unlucky file system gives them: a
//! recording or a module path that is a FIFO or a device, stacks deeper
//! than any program's, recordings whose counts ask for more than the
//! machine has, and ELF files whose symbols claim the whole address space
//! or whose code is stated at its very end. Every case must end, in
//! bounded memory, with a view or a one-line refusal.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use profiler_histogram::{BucketWidth, Buckets};
use profiler_model::{
    Avma, CallchainEntry, CpuMode, FileOffset, HistogramRecord, HistogramSettings, Lost, Mmap,
    Record, Sample, Sampling, UserStack,
};

use crate::synthetic::*;
use crate::util::*;

/// Runs the profiler with `args` in `dir` within `memory_mib` of address
/// space; panics if it runs for more than 60 s (a hang).
pub(crate) fn run_bounded(dir: &Path, args: &[&str], memory_mib: u64) -> Output {
    run_bounded_from(dir, args, memory_mib, Stdio::null())
}

/// [`run_bounded`], with `stdin` as the profiler's input.
fn run_bounded_from(dir: &Path, args: &[&str], memory_mib: u64, stdin: Stdio) -> Output {
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
        .env("XDG_CACHE_HOME", cache_home())
        .stdin(stdin)
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

pub(crate) fn mkfifo(path: &Path) {
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
        // The process model of 300,000 mappings takes some 400 MB (a
        // debug build, glibc's arenas for the naming threads included):
        // what is bounded here is that unsampled modules cost no more.
        let output = run_bounded(&dir, &args, 768);
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

#[test]
fn histogram_buckets_as_full_as_64_bits_allow_are_summed_not_trusted() {
    let dir = scratch("hostile-buckets");
    let binary = fixture("split");
    let (burn, _) = function_range(&binary, "burn_60");
    let mut recording = Synthetic::with_histograms(HistogramSettings {
        bucket_bits: 64,
        scale: 65536,
        ..HistogramSettings::default()
    });
    recording.process(100, 0, "split", &binary);
    let cpu_clock = recording.add_event("cpu-clock", Sampling::Period(250_000), None);
    let faults = recording.add_event("page-faults", Sampling::Period(10), None);
    // Two events' buckets at the same place, of different lengths, every
    // one full: their sums overflow 64 bits many times over.
    for (event, buckets) in [(cpu_clock, 8), (faults, 3)] {
        recording.push_raw(Record::Histogram(HistogramRecord {
            event,
            path: binary.display().to_string(),
            build_id: None,
            start: FileOffset(burn & !0xf),
            scale: 65536,
            buckets: Buckets::from_le_bytes(BucketWidth::Bits64, &vec![0xff; 8 * buckets]).unwrap(),
        }));
    }
    recording.write(&dir.join("buckets.data"), &["./split"]);

    for view in [
        &["report"][..],
        &["report", "--children"],
        &["report", "--format", "json"],
        &["report", "--call-graph=caller"],
        &["report", "--sort", "address"],
        &["hist"],
        &["hist", "--format", "json"],
        &["annotate", "burn_60"],
        &["flamegraph", "-o", "flame.svg"],
        &["export", "--format", "gmon", "-o", "gmon.out"],
        &["export", "--format", "pprof", "-o", "buckets.pb.gz"],
        &["export", "--format", "folded", "-o", "buckets.folded"],
        &[
            "export",
            "--format",
            "speedscope",
            "-o",
            "buckets.speedscope.json",
        ],
        &[
            "export",
            "--format",
            "firefox",
            "-o",
            "buckets.firefox.json",
        ],
    ] {
        let mut args = view.to_vec();
        args.extend(["-i", "buckets.data"]);
        let output = run_bounded(&dir, &args, 1024);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
    let report = run_ok(&dir, &["report", "-i", "buckets.data"]);
    let text = String::from_utf8(report.stdout).unwrap();
    assert!(text.contains("burn_60"), "{text}");
    let output = run_bounded(&dir, &["diff", "buckets.data", "buckets.data"], 1024);
    assert!(output.status.success(), "diff: {}", stderr(&output));
}

/// A u64 of a file's bytes, little-endian.
fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn half(bytes: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap()))
}

/// The ELF file `binary` with its headers rewritten as a crafted file
/// would have them: every segment, section and symbol address moved by
/// `shift` (wrapping past the end of the address space), and with
/// `whole`, every symbol's size 2^64-1.
fn crafted_elf(binary: &Path, shift: u64, whole: bool) -> Vec<u8> {
    let mut bytes = std::fs::read(binary).unwrap();
    let put = |bytes: &mut Vec<u8>, at: usize, value: u64| {
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    };
    let (phoff, shoff) = (word(&bytes, 0x20) as usize, word(&bytes, 0x28) as usize);
    let (phentsize, phnum) = (half(&bytes, 0x36), half(&bytes, 0x38));
    let (shentsize, shnum) = (half(&bytes, 0x3a), half(&bytes, 0x3c));
    for header in (0..phnum).map(|i| phoff + i * phentsize) {
        for field in [0x10, 0x18] {
            let moved = word(&bytes, header + field).wrapping_add(shift);
            put(&mut bytes, header + field, moved);
        }
    }
    for header in (0..shnum).map(|i| shoff + i * shentsize) {
        let address = word(&bytes, header + 0x10);
        if address != 0 {
            put(&mut bytes, header + 0x10, address.wrapping_add(shift));
        }
        // SHT_SYMTAB and SHT_DYNSYM: 24-byte symbols, value at 8, size at 16.
        let kind = u32::from_le_bytes(bytes[header + 4..header + 8].try_into().unwrap());
        if kind == 2 || kind == 11 {
            let (offset, size) = (word(&bytes, header + 0x18), word(&bytes, header + 0x20));
            for symbol in (offset..offset + size).step_by(24).map(|at| at as usize) {
                let value = word(&bytes, symbol + 8);
                if value != 0 {
                    put(&mut bytes, symbol + 8, value.wrapping_add(shift));
                }
                if whole {
                    put(&mut bytes, symbol + 16, u64::MAX);
                }
            }
        }
    }
    bytes
}

#[test]
fn elf_files_stated_at_the_end_of_the_address_space_are_named_in_bounds() {
    let dir = scratch("hostile-elf-ends");
    let binary = fixture("split");
    let (burn, _) = function_range(&binary, "burn_60");
    // The executable segment's file offset is its stated address (0x1000).
    let text = 0x1000;
    // Every symbol claiming the whole address space; the text stated in
    // the address space's last 2 KiB, 0x315 bytes of it, and what follows
    // it (read-only data, GOT) wrapped past the end to 0x800.
    let top = u64::MAX - 0x7ff - text;
    for (name, shift, whole) in [("whole", 0, true), ("top", top, false), ("both", top, true)] {
        let crafted = dir.join(name);
        std::fs::write(&crafted, crafted_elf(&binary, shift, whole)).unwrap();
        let burn = burn.wrapping_add(shift);
        let addresses = [0, burn, burn + 8, u64::MAX - 1, u64::MAX];
        let list: String = addresses.iter().map(|a| format!("{a:#x}\n")).collect();
        std::fs::write(dir.join("addresses"), list).unwrap();
        for extra in [&[][..], &["--inlines"], &["--format", "json"]] {
            let stdin = std::fs::File::open(dir.join("addresses")).unwrap();
            let args = [&["symbolize", "--exe", name][..], extra].concat();
            let output = run_bounded_from(&dir, &args, 1024, stdin.into());
            assert!(
                output.status.success(),
                "{name} {args:?}: {}",
                stderr(&output)
            );
            let text = String::from_utf8(output.stdout).unwrap();
            assert!(text.contains("burn_60"), "{name} {args:?}: {text}");
        }

        // Sampled in a process that maps it, with a stack copy to unwind.
        let mut recording = Synthetic::with_stacks();
        recording.process(100, 0, "split", &binary);
        let start = 0x7000_0000_0000;
        recording.push_raw(Record::Mmap(Mmap {
            time: 2,
            pid: 100,
            tid: 100,
            start: Avma(start),
            len: 0x1000,
            offset: FileOffset(text),
            path: crafted.display().to_string(),
            build_id: None,
        }));
        let ip = Avma(start + (burn.wrapping_sub(shift) - text) + 4);
        let sp = 0x7ffd_0000_0000u64;
        for time in 10..13 {
            recording.push_raw(Record::Sample(Sample {
                time,
                pid: 100,
                tid: 100,
                cpu: 0,
                event: 0,
                mode: CpuMode::User,
                ip,
                period: 250_000,
                callchain: vec![
                    CallchainEntry::Context(CpuMode::User),
                    CallchainEntry::Address(ip),
                ],
                user_stack: Some(UserStack {
                    ip,
                    sp: Avma(sp),
                    bp: Avma(sp + 16),
                    bytes: [ip.0 + 8, sp + 32, ip.0 + 16, 0]
                        .iter()
                        .flat_map(|w| w.to_le_bytes())
                        .collect(),
                }),
                read: vec![],
            }));
        }
        recording.write(&dir.join("ends.data"), &["./split"]);
        for view in [
            &["report"][..],
            &["report", "--sort", "line"],
            &["report", "--inline"],
            &["hist"],
            &["annotate", "burn_60"],
            &["export", "--format", "gmon", "-o", "gmon.out"],
            &["export", "--format", "pprof", "-o", "ends.pb.gz"],
        ] {
            let mut args = view.to_vec();
            args.extend(["-i", "ends.data"]);
            let output = run_bounded(&dir, &args, 1024);
            assert!(
                output.status.success(),
                "{name} {args:?}: {}",
                stderr(&output)
            );
            if view == ["report"] {
                let text = String::from_utf8(output.stdout).unwrap();
                assert!(text.contains("burn_60"), "{name}: {text}");
            }
        }
    }
}

/// Rewrites the trailer of the recording at `path` with `change`, its
/// checksums mended, as a crafted file would have it.
pub(crate) fn rewrite_trailer(path: &Path, change: impl FnOnce(&mut serde_json::Value)) {
    let mut bytes = std::fs::read(path).unwrap();
    let footer = bytes.len() - 24;
    let start = word(&bytes, footer) as usize;
    let len = word(&bytes, footer + 8) as usize;
    let mut trailer: serde_json::Value =
        serde_json::from_slice(&bytes[start + 20..start + len]).expect("a trailer of JSON");
    change(&mut trailer);
    let payload = serde_json::to_vec(&trailer).unwrap();
    let crc = |bytes: &[u8]| {
        let mut crc = flate2::Crc::new();
        crc.update(bytes);
        crc.sum()
    };
    let mut chunk = b"CHNK\x02\0\0\0".to_vec();
    chunk.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    chunk.extend_from_slice(&crc(&payload).to_le_bytes());
    let own = crc(&chunk);
    chunk.extend_from_slice(&own.to_le_bytes());
    chunk.extend_from_slice(&payload);
    bytes.truncate(start);
    bytes.extend_from_slice(&chunk);
    bytes.extend_from_slice(&(start as u64).to_le_bytes());
    bytes.extend_from_slice(&(chunk.len() as u64).to_le_bytes());
    bytes.extend_from_slice(b"PROFEND1");
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn trailers_and_mappings_that_state_numbers_near_2_64_are_not_trusted() {
    let dir = scratch("hostile-trailer");
    let binary = fixture("split");
    let (burn, _) = function_range(&binary, "burn_60");
    let mut recording = Synthetic::with_stacks();
    recording.add_event("cpu-clock", Sampling::Frequency(4000), None);
    recording.add_event("task-clock", Sampling::Frequency(4000), None);
    recording.process(100, 0, "split", &binary);
    recording.samples(100, burn + 4, &[], 10);
    // A mapping at a file offset near 2^64, then one over its middle,
    // which splits it: the part after it starts further into the file.
    let path = binary.display().to_string();
    for (time, start, len) in [
        (100_000, 0x7000_0000_0000, 0x4000),
        (100_001, 0x7000_0000_1000, 0x1000),
    ] {
        recording.push_raw(Record::Mmap(Mmap {
            time,
            pid: 100,
            tid: 100,
            start: Avma(start),
            len,
            offset: FileOffset(u64::MAX - 0x1000),
            path: path.clone(),
            build_id: None,
        }));
    }
    for address in [0x7000_0000_0010, 0x7000_0000_3ff0] {
        let at = At {
            pid: 100,
            user: vec![address],
            ..At::default()
        };
        recording.take(&at, 3);
    }
    let path = dir.join("claims.data");
    recording.write(&path, &["./split"]);
    // The trailer counts more samples than memory holds, and more than
    // 2^64 of them and of throttled ones over both events.
    rewrite_trailer(&path, |trailer| {
        for event in 0..2 {
            let stats = &mut trailer["stats"]["events"][event];
            stats["samples"] = (u64::MAX - 1).into();
            stats["throttled"] = (u64::MAX - 1).into();
        }
    });

    // The exports with a timeline make room for the samples the trailer
    // counts.
    for view in [
        &["report"][..],
        &["report", "--format", "json"],
        &["hist"],
        &["annotate", "burn_60"],
        &["flamegraph", "-o", "claims.svg"],
        &[
            "export",
            "--format",
            "speedscope",
            "-o",
            "claims.speedscope.json",
        ],
        &["export", "--format", "firefox", "-o", "claims.firefox.json"],
        &["export", "--format", "pprof", "-o", "claims.pb.gz"],
    ] {
        let mut args = view.to_vec();
        args.extend(["-i", "claims.data"]);
        let output = run_bounded(&dir, &args, 1024);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
}

#[test]
fn a_debug_file_that_is_a_fifo_or_a_device_is_passed_over() {
    let dir = scratch("hostile-debuglink");
    let with_id = dir.join("with-id");
    std::fs::copy(fixture("inlining-debuglink"), &with_id).unwrap();
    let without_id = dir.join("without-id");
    let status = Command::new("objcopy")
        .args(["--remove-section", ".note.gnu.build-id"])
        .arg(&with_id)
        .arg(&without_id)
        .status()
        .unwrap();
    assert!(status.success());
    // The debuglink names /dev/zero instead, its CRC then read from the
    // padding.
    let mut bytes = std::fs::read(&without_id).unwrap();
    let name = b"inlining-debuglink.debug\0";
    let at = (bytes.windows(name.len()))
        .position(|w| w == name)
        .expect("a debuglink");
    bytes[at..at + name.len()].fill(0);
    bytes[at..at + 9].copy_from_slice(b"/dev/zero");
    let device = dir.join("device");
    std::fs::write(&device, bytes).unwrap();
    // The debug file where the debuglink says, and in .debug/, is a FIFO
    // no one writes to.
    std::fs::create_dir(dir.join(".debug")).unwrap();
    mkfifo(&dir.join("inlining-debuglink.debug"));
    mkfifo(&dir.join(".debug/inlining-debuglink.debug"));

    let text = Command::new("readelf")
        .args(["-SW"])
        .arg(&with_id)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let address = (text.lines())
        .find(|l| l.contains(" .text "))
        .and_then(|l| l.split_whitespace().skip_while(|f| *f != ".text").nth(2))
        .map(|a| u64::from_str_radix(a, 16).unwrap())
        .expect("a .text section");
    std::fs::write(dir.join("addresses"), format!("{:#x}\n", address + 0x10)).unwrap();
    for binary in ["with-id", "without-id", "device"] {
        for extra in [&[][..], &["--inlines"]] {
            let stdin = std::fs::File::open(dir.join("addresses")).unwrap();
            let args = [&["symbolize", "--exe", binary][..], extra].concat();
            let output = run_bounded_from(&dir, &args, 1024, stdin.into());
            assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        }
    }
}
