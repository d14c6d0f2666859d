//! Every renderer on recordings made by hand, compared with the expected
//! outputs under `tests/expected/` (see `golden.rs`): no kernel needed.
//!
//! The recordings are made over the stable fixtures (`fixtures/programs/
//! stable.c`), whose code lies at the same addresses on every machine; the
//! samples' addresses are still looked up in them by name, so that a reader
//! sees what each sample is. Each command runs with one thread naming code
//! and with four, which must print the same.
//!
//! Exports in other tools' formats (pprof, speedscope, the Firefox
//! profiler) are checked the same way, with their expected files under
//! `tests/expected/export/`; a pprof profile is compared as text
//! (`pprof_text.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

use profiler_model::{HistogramSettings, HistogramTotals, Sampling};

use crate::golden::{assert_expected, normalize};
use crate::pprof_text::pprof_text;
use crate::synthetic::*;
use crate::util::*;

/// Where the recordings map libstable.so.
pub(crate) const LIBRARY_BASE: u64 = 0x7f3a_1c40_0000;
/// Kernel code: no symbols for it, as the recording's kernel is not this
/// machine's.
const KERNEL: [u64; 2] = [0xffff_ffff_8100_1230, 0xffff_ffff_8100_4560];
/// Where nothing is mapped.
const UNMAPPED: u64 = 0x10_0000;

/// The stable fixtures, and what lies where in them.
pub(crate) struct Stable {
    pub exe: PathBuf,
    pub stripped: PathBuf,
    pub lib: PathBuf,
}

pub(crate) fn stable() -> Stable {
    Stable {
        exe: fixture("stable"),
        stripped: fixture("stable-stripped"),
        lib: fixture("libstable.so"),
    }
}

/// The stated addresses of `function`'s instructions, from `objdump -d`.
fn instructions(binary: &Path, function: &str) -> Vec<u64> {
    disassembly(binary, function)
        .iter()
        .map(|(address, _)| *address)
        .collect()
}

/// `function`'s instructions as `objdump -d` prints them: address, text.
fn disassembly(binary: &Path, function: &str) -> Vec<(u64, String)> {
    let output = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(binary)
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let heading = format!("<{function}>:");
    let lines = (text.lines())
        .skip_while(|l| !l.ends_with(&heading))
        .skip(1)
        .take_while(|l| !l.is_empty());
    lines
        .filter_map(|l| {
            let (address, instruction) = l.trim().split_once(":\t")?;
            Some((u64::from_str_radix(address, 16).ok()?, instruction.into()))
        })
        .collect()
}

/// The return address of `caller`'s call of `callee`: the instruction
/// after the call.
fn return_address(binary: &Path, caller: &str, callee: &str) -> u64 {
    let code = disassembly(binary, caller);
    let call = format!("<{callee}>");
    let at = (code.iter())
        .position(|(_, text)| text.starts_with("call") && text.ends_with(&call))
        .unwrap_or_else(|| panic!("{caller} does not call {callee}: {code:?}"));
    code[at + 1].0
}

/// The `nth` instruction of `function` whose inline chain (innermost
/// first, `function` last) is `chain`.
fn instruction_in(binary: &Path, function: &str, chain: &[&str], nth: usize) -> u64 {
    let starts = instructions(binary, function);
    let chains = inline_chains(binary, function);
    let matching: Vec<u64> = (chains.iter())
        .filter(|(address, names)| {
            starts.contains(address) && names.iter().map(String::as_str).eq(chain.iter().copied())
        })
        .map(|(address, _)| *address)
        .collect();
    *matching
        .get(nth)
        .unwrap_or_else(|| panic!("no instruction {nth} of {function} is {chain:?}: {chains:?}"))
}

/// Sample addresses, by what they are.
pub(crate) struct Places {
    /// hot_a: mix inlined into burn inlined into it; burn's own; its own.
    pub hot_a_mix: u64,
    pub hot_a_burn: u64,
    pub hot_a: u64,
    pub hot_b_mix: u64,
    /// Three instructions of hot_c's own loop.
    pub hot_c: [u64; 3],
    pub leaf: u64,
    pub parse: u64,
    pub work: u64,
    /// lib_burn's inlined mix, relative to the library's base.
    pub lib_mix: u64,
    pub main_after_hot_a: u64,
    pub main_after_hot_b: u64,
    pub main_after_descend: u64,
    pub main_after_thread_start: u64,
    pub descend_after_descend: u64,
    pub leaf_after_hot_c: u64,
    pub thread_start_after_hot_c: u64,
    pub lib_entry_after_lib_burn: u64,
}

pub(crate) fn places(stable: &Stable) -> Places {
    let exe = &stable.exe;
    Places {
        hot_a_mix: instruction_in(exe, "hot_a", &["mix", "burn", "hot_a"], 1),
        hot_a_burn: instruction_in(exe, "hot_a", &["burn", "hot_a"], 0),
        hot_a: instruction_in(exe, "hot_a", &["hot_a"], 1),
        hot_b_mix: instruction_in(exe, "hot_b", &["mix", "burn", "hot_b"], 0),
        hot_c: [0, 2, 4].map(|nth| instruction_in(exe, "hot_c", &["hot_c"], nth + 3)),
        leaf: instructions(exe, "leaf")[1],
        parse: instructions(exe, "_ZN6Parser5parseEv")[1],
        work: instructions(exe, "_ZN6stable4work17h0123456789abcdefE")[1],
        lib_mix: instruction_in(&stable.lib, "lib_burn", &["mix", "burn", "lib_burn"], 0),
        main_after_hot_a: return_address(exe, "main", "hot_a"),
        main_after_hot_b: return_address(exe, "main", "hot_b"),
        main_after_descend: return_address(exe, "main", "descend"),
        main_after_thread_start: return_address(exe, "main", "thread_start"),
        descend_after_descend: return_address(exe, "descend", "descend"),
        leaf_after_hot_c: return_address(exe, "leaf", "hot_c"),
        thread_start_after_hot_c: return_address(exe, "thread_start", "hot_c"),
        lib_entry_after_lib_burn: return_address(&stable.lib, "lib_entry", "lib_burn@plt"),
    }
}

/// A process of `stable` (pid 100, with a thread `worker`, 101) and
/// libstable.so, and a process of its stripped copy (pid 200). `scale`
/// multiplies some counts, for a second recording to compare with.
pub(crate) fn write_flat(dir: &Path, name: &str, scale: u32) {
    let stable = stable();
    let at = places(&stable);
    let mut recording = Synthetic::new();
    recording.program = Some(stable.exe.to_str().unwrap().to_owned());
    recording.process(100, 0, "stable", &stable.exe);
    recording.map(100, &stable.lib, LIBRARY_BASE);
    recording.thread(100, 101, "worker");
    recording.process(200, 100, "stripped", &stable.stripped);
    let user = |pid, tid, address: u64| At {
        pid,
        tid,
        user: vec![address],
        ..At::default()
    };
    for (address, count) in [
        (at.hot_a_mix, 300),
        (at.hot_a_burn, 150),
        (at.hot_a, 50),
        (at.hot_b_mix, 200 * scale),
        (at.hot_c[0], 50),
        (at.hot_c[1], 30),
        (at.hot_c[2], 20),
        (at.leaf, 10),
        (at.parse, 20),
        (at.work, 20),
        (LIBRARY_BASE + at.lib_mix, 60),
        (UNMAPPED, 5),
    ] {
        recording.take(&user(100, 100, address), count);
    }
    recording.take(&user(100, 101, at.hot_c[1]), 80);
    recording.take(&user(200, 200, at.hot_a_mix), 40);
    let kernel = At {
        pid: 100,
        kernel: vec![KERNEL[0]],
        user: vec![at.hot_c[0]],
        ..At::default()
    };
    recording.take(&kernel, 30);
    recording.write(&dir.join(name), &["stable"]);
}

/// Call stacks: main calling hot_a, hot_b, descend (four deep) to leaf to
/// hot_c, and the library; a thread from thread_start; stacks cut short
/// and stacks through the kernel.
pub(crate) fn write_stacks(dir: &Path, name: &str, scale: u32) {
    let stable = stable();
    let at = places(&stable);
    let mut recording = Synthetic::with_stacks();
    recording.program = Some(stable.exe.to_str().unwrap().to_owned());
    recording.process(100, 0, "stable", &stable.exe);
    recording.map(100, &stable.lib, LIBRARY_BASE);
    recording.thread(100, 101, "worker");
    let descent = [
        // descend(0) jumps to leaf: no frame of its own.
        at.leaf_after_hot_c,
        at.descend_after_descend,
        at.descend_after_descend,
        at.descend_after_descend,
        at.descend_after_descend,
        at.main_after_descend,
    ];
    let stacks: Vec<(u32, Vec<u64>, u32)> = vec![
        (100, vec![at.hot_a_mix, at.main_after_hot_a], 300),
        (100, vec![at.hot_a, at.main_after_hot_a], 30),
        (100, vec![at.hot_b_mix, at.main_after_hot_b], 150 * scale),
        (100, [&[at.hot_c[0]][..], &descent].concat(), 200),
        (101, vec![at.hot_c[1], at.thread_start_after_hot_c], 100),
        (100, vec![at.hot_c[2], at.leaf_after_hot_c], 50),
        (
            100,
            vec![
                LIBRARY_BASE + at.lib_mix,
                LIBRARY_BASE + at.lib_entry_after_lib_burn,
                at.main_after_thread_start,
            ],
            60,
        ),
    ];
    for (tid, user, count) in stacks {
        let sample = At {
            pid: 100,
            tid,
            user,
            ..At::default()
        };
        recording.take(&sample, count);
    }
    let through_kernel = At {
        pid: 100,
        kernel: KERNEL.to_vec(),
        user: [&[at.hot_c[0]][..], &descent].concat(),
        ..At::default()
    };
    recording.take(&through_kernel, 40);
    recording.write(&dir.join(name), &["stable", "--stacks"]);
}

/// Four events: cpu-clock, page-faults with its own period, and a group of
/// task-clock leading context-switches, each in its own functions.
pub(crate) fn write_events(dir: &Path) {
    let stable = stable();
    let at = places(&stable);
    let mut recording = Synthetic::new();
    recording.process(100, 0, "stable", &stable.exe);
    recording.thread(100, 101, "worker");
    let cpu_clock = recording.add_event("cpu-clock", Sampling::Period(250_000), None);
    let faults = recording.add_event("page-faults", Sampling::Period(10), None);
    let task_clock = recording.add_event("task-clock", Sampling::Frequency(1000), None);
    let switches = recording.add_event("context-switches", Sampling::Period(1), Some(task_clock));
    let samples = [
        (cpu_clock, 100, at.hot_a_mix, 0, vec![], 400),
        (cpu_clock, 101, at.hot_c[0], 0, vec![], 100),
        (faults, 100, at.hot_c[1], 10, vec![], 70),
        (faults, 100, at.leaf, 10, vec![], 30),
        (
            task_clock,
            100,
            at.hot_b_mix,
            1_000_000,
            vec![(switches, 2)],
            60,
        ),
        (
            task_clock,
            101,
            at.hot_c[2],
            1_000_000,
            vec![(switches, 5)],
            40,
        ),
    ];
    for (event, tid, address, period, read, count) in samples {
        let sample = At {
            pid: 100,
            tid,
            event,
            period,
            user: vec![address],
            read,
            ..At::default()
        };
        recording.take(&sample, count);
    }
    recording.write(&dir.join("events.data"), &["stable", "--events"]);
}

/// A histogram-mode recording of two events over the stable program's
/// text and the library's, one 16-bit bucket per 2 bytes.
pub(crate) fn write_histograms(dir: &Path) {
    let stable = stable();
    let at = places(&stable);
    let mut recording = Synthetic::with_histograms(HistogramSettings {
        bucket_bits: 16,
        scale: 65536,
        ..HistogramSettings::default()
    });
    recording.process(100, 0, "stable", &stable.exe);
    recording.map(100, &stable.lib, LIBRARY_BASE);
    let cpu_clock = recording.add_event("cpu-clock", Sampling::Period(250_000), None);
    let faults = recording.add_event("page-faults", Sampling::Period(10), None);
    // The program's text: 0x228 bytes at file offset 0x1000, stated at
    // 0x401000; the library's 0x5f bytes at 0x1000.
    let bucket = |svma: u64, text: u64| ((svma - text) / 2) as usize;
    let mut program = vec![0_u16; 0x114];
    let mut program_faults = vec![0_u16; 0x114];
    let mut library = vec![0_u16; 0x30];
    for (address, count) in [(at.hot_a_mix, 500), (at.hot_a, 20), (at.hot_c[0], 70)] {
        program[bucket(address, 0x401000)] += count;
    }
    program_faults[bucket(at.hot_c[1], 0x401000)] += 9;
    library[bucket(at.lib_mix, 0x1000)] += 40;
    recording.buckets(cpu_clock, &stable.exe, 0x1000, &program);
    recording.buckets(faults, &stable.exe, 0x1000, &program_faults);
    recording.buckets(cpu_clock, &stable.lib, 0x1000, &library);
    recording.histogram_totals(vec![
        HistogramTotals {
            in_region: 630,
            outside: 12,
            saturated: 0,
            dropped: 0,
        },
        HistogramTotals {
            in_region: 9,
            outside: 1,
            saturated: 0,
            dropped: 0,
        },
    ]);
    for (event, count) in [(cpu_clock, 642), (faults, 10)] {
        let sample = At {
            pid: 100,
            event,
            user: vec![at.hot_a_mix],
            ..At::default()
        };
        recording.take(&sample, count);
    }
    recording.write(&dir.join("hist.data"), &["stable", "--histogram"]);
}

/// A recording with no samples at all, and one whose process ran but was
/// never sampled.
fn write_empty(dir: &Path) {
    Synthetic::with_stacks().write(&dir.join("empty.data"), &["true"]);
    let mut recording = Synthetic::new();
    recording.process(100, 0, "stable", &stable().exe);
    recording.write(&dir.join("unsampled.data"), &["stable"]);
}

/// Runs `args` in `dir`: its standard output, or, when it fails, its exit
/// status and standard error; with this checkout's paths as placeholders.
fn output(dir: &Path, args: &[&str]) -> Vec<u8> {
    let output = run(dir, args);
    if output.status.success() {
        return match String::from_utf8(output.stdout) {
            Ok(text) => normalize(&text, dir).into_bytes(),
            Err(binary) => binary.into_bytes(),
        };
    }
    let status = (output.status.code()).map_or("a signal".to_owned(), |code| code.to_string());
    let text = format!("exit status: {status}\n{}", stderr(&output));
    normalize(&text, dir).into_bytes()
}

/// Runs `args` with one thread naming code and with four, asserts they
/// print the same, and compares that with `tests/expected/{name}`.
pub(crate) fn check(dir: &Path, name: &str, args: &[&str]) {
    check_as(dir, name, args, |output| output);
}

/// [`check`]s what `args` print as `shown` shows it.
pub(crate) fn check_as(dir: &Path, name: &str, args: &[&str], shown: impl Fn(Vec<u8>) -> Vec<u8>) {
    let with = |jobs: &str| shown(output(dir, &[args, &["--jobs", jobs]].concat()));
    let one = with("1");
    let four = with("4");
    assert!(
        one == four,
        "{args:?} prints differently with 4 threads naming code than with 1:\n{}\n---\n{}",
        String::from_utf8_lossy(&one),
        String::from_utf8_lossy(&four)
    );
    assert_expected(name, &one);
}

#[test]
fn reports_of_samples() {
    let dir = scratch("renderers-report");
    write_flat(&dir, "flat.data", 1);
    let report = ["report", "-i", "flat.data"];
    for (name, options) in [
        ("flat.txt", &[][..]),
        ("flat.json", &["--format", "json"]),
        ("flat-inline.txt", &["--inline"]),
        ("flat-inline.json", &["--inline", "--format", "json"]),
        ("flat-threads.txt", &["--threads"]),
        ("flat-threads.json", &["--threads", "--format", "json"]),
        ("flat-sort-comm.txt", &["--sort", "comm"]),
        ("flat-sort-pid.txt", &["--sort", "pid"]),
        ("flat-sort-pid.json", &["--sort", "pid", "--format", "json"]),
        ("flat-sort-dso-sym.txt", &["--sort", "dso,sym"]),
        ("flat-sort-line.txt", &["--sort", "line"]),
        (
            "flat-sort-line.json",
            &["--sort", "line", "--format", "json"],
        ),
        ("flat-sort-address.txt", &["--sort", "address"]),
        ("flat-pid-200.txt", &["--pid", "200"]),
        ("flat-percent-limit.txt", &["--percent-limit", "10"]),
        ("flat-children.txt", &["--children"]),
    ] {
        check(
            &dir,
            &format!("report/{name}"),
            &[&report[..], options].concat(),
        );
    }
}

#[test]
fn reports_of_call_stacks() {
    let dir = scratch("renderers-stacks");
    write_stacks(&dir, "stacks.data", 1);
    let report = ["report", "-i", "stacks.data"];
    for (name, options) in [
        ("stacks.txt", &[][..]),
        ("stacks.json", &["--format", "json"]),
        ("stacks-children.txt", &["--children"]),
        ("stacks-children-inline.txt", &["--children", "--inline"]),
        ("stacks-children.json", &["--children", "--format", "json"]),
        ("stacks-caller.txt", &["--call-graph", "caller"]),
        ("stacks-callee.txt", &["--call-graph", "callee"]),
        (
            "stacks-caller.json",
            &["--call-graph", "caller", "--format", "json"],
        ),
        (
            "stacks-caller-inline.txt",
            &["--call-graph", "caller", "--inline"],
        ),
        ("stacks-threads.txt", &["--threads", "--children"]),
    ] {
        check(
            &dir,
            &format!("report/{name}"),
            &[&report[..], options].concat(),
        );
    }
}

#[test]
fn reports_of_several_events_and_groups() {
    let dir = scratch("renderers-events");
    write_events(&dir);
    let report = ["report", "-i", "events.data"];
    for (name, options) in [
        ("events.txt", &[][..]),
        ("events.json", &["--format", "json"]),
        ("events-page-faults.txt", &["--event", "page-faults"]),
    ] {
        check(
            &dir,
            &format!("report/{name}"),
            &[&report[..], options].concat(),
        );
    }
    check(&dir, "hist/events.txt", &["hist", "-i", "events.data"]);
}

#[test]
fn folded_stacks_and_flame_graphs() {
    let dir = scratch("renderers-folded");
    write_stacks(&dir, "stacks.data", 1);
    write_flat(&dir, "flat.data", 1);
    let folded = ["export", "--format", "folded", "-i"];
    for (name, options) in [
        ("stacks.txt", &["stacks.data"][..]),
        ("stacks-no-inline.txt", &["stacks.data", "--no-inline"]),
        ("stacks-pid-tid.txt", &["stacks.data", "--pid", "--tid"]),
        ("flat.txt", &["flat.data"]),
    ] {
        check(
            &dir,
            &format!("folded/{name}"),
            &[&folded[..], options].concat(),
        );
    }
    let flamegraph = ["flamegraph", "-o", "-", "-i", "stacks.data"];
    for (name, options) in [
        ("stacks.svg", &[][..]),
        ("stacks-per-thread.svg", &["--per-thread"]),
        ("stacks-reverse.svg", &["--reverse", "--no-inline"]),
    ] {
        check(
            &dir,
            &format!("flamegraph/{name}"),
            &[&flamegraph[..], options].concat(),
        );
    }
}

#[test]
fn histogram_tables() {
    let dir = scratch("renderers-hist");
    write_flat(&dir, "flat.data", 1);
    write_histograms(&dir);
    for (name, args) in [
        ("flat.txt", &["hist", "-i", "flat.data"][..]),
        (
            "flat.json",
            &["hist", "-i", "flat.data", "--format", "json"],
        ),
        ("flat.csv", &["hist", "-i", "flat.data", "--format", "csv"]),
        (
            "flat-scale.txt",
            &[
                "hist",
                "-i",
                "flat.data",
                "--scale",
                "8192",
                "--module",
                "stable",
            ],
        ),
        ("hist.txt", &["hist", "-i", "hist.data"]),
        (
            "hist.json",
            &["hist", "-i", "hist.data", "--format", "json"],
        ),
        ("hist.csv", &["hist", "-i", "hist.data", "--format", "csv"]),
        (
            "hist-coarser.txt",
            &["hist", "-i", "hist.data", "--scale", "16384"],
        ),
        (
            "hist-finer.txt",
            &["hist", "-i", "hist.data", "--scale", "131072"],
        ),
    ] {
        check(&dir, &format!("hist/{name}"), args);
    }
    for (name, options) in [("hist.txt", &[][..]), ("hist.json", &["--format", "json"])] {
        let args = [&["report", "-i", "hist.data"][..], options].concat();
        check(&dir, &format!("report/{name}"), &args);
    }
}

#[test]
fn annotated_listings() {
    let dir = scratch("renderers-annotate");
    write_flat(&dir, "flat.data", 1);
    write_histograms(&dir);
    let sources = format!(
        "/fixtures={}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/programs")
            .display()
    );
    let annotate = ["annotate", "--color", "never", "--source-dir", &sources];
    for (name, options) in [
        ("hot_a.txt", &["-i", "flat.data", "hot_a"][..]),
        (
            "hot_a.json",
            &["-i", "flat.data", "hot_a", "--format", "json"],
        ),
        ("hot_a-asm.txt", &["-i", "flat.data", "hot_a", "--asm"]),
        (
            "hot_c-source.txt",
            &["-i", "flat.data", "hot_c", "--source"],
        ),
        (
            "hot_c-intel.txt",
            &["-i", "flat.data", "hot_c", "-M", "intel"],
        ),
        ("lib_burn.txt", &["-i", "flat.data", "lib_burn"]),
        ("parse.txt", &["-i", "flat.data", "Parser::parse"]),
        ("burn.txt", &["-i", "flat.data", "burn"]),
        ("burn.json", &["-i", "flat.data", "mix", "--format", "json"]),
        ("hist-hot_a.txt", &["-i", "hist.data", "hot_a"]),
        ("nothing.txt", &["-i", "flat.data", "nothing"]),
    ] {
        check(
            &dir,
            &format!("annotate/{name}"),
            &[&annotate[..], options].concat(),
        );
    }
}

#[test]
fn differences_between_recordings() {
    let dir = scratch("renderers-diff");
    write_flat(&dir, "base.data", 1);
    write_flat(&dir, "new.data", 3);
    write_stacks(&dir, "base-stacks.data", 1);
    write_stacks(&dir, "new-stacks.data", 3);
    for (name, args) in [
        ("flat.txt", &["diff", "base.data", "new.data"][..]),
        (
            "flat.json",
            &["diff", "base.data", "new.data", "--format", "json"],
        ),
        (
            "flat-inline.txt",
            &["diff", "base.data", "new.data", "--inline"],
        ),
        (
            "stacks.txt",
            &["diff", "base-stacks.data", "new-stacks.data"],
        ),
        (
            "stacks.svg",
            &[
                "diff",
                "base-stacks.data",
                "new-stacks.data",
                "--flamegraph",
                "-",
            ],
        ),
    ] {
        check(&dir, &format!("diff/{name}"), args);
    }
}

#[test]
fn gmon_files() {
    let dir = scratch("renderers-gmon");
    write_flat(&dir, "flat.data", 1);
    write_histograms(&dir);
    for (name, data, options) in [
        ("flat.gmon", "flat.data", &[][..]),
        (
            "flat-library.gmon",
            "flat.data",
            &["--module", "libstable.so"],
        ),
        ("hist.gmon", "hist.data", &[]),
    ] {
        let args = [
            &["export", "--format", "gmon", "-o", "-", "-i", data][..],
            options,
        ]
        .concat();
        check(&dir, &format!("gmon/{name}"), &args);
    }
}

#[test]
fn exports_for_other_tools() {
    let dir = scratch("renderers-exports");
    write_flat(&dir, "flat.data", 1);
    write_stacks(&dir, "stacks.data", 1);
    write_events(&dir);
    write_histograms(&dir);
    write_empty(&dir);
    for data in ["flat", "stacks", "events", "hist", "empty", "unsampled"] {
        let input = format!("{data}.data");
        let export = |format| ["export", "--format", format, "-o", "-", "-i", &input];
        check_as(
            &dir,
            &format!("export/{data}.pprof.txt"),
            &export("pprof"),
            |output| pprof_shown(output, &dir),
        );
        for format in ["speedscope", "firefox"] {
            let name = format!("export/{data}.{format}.json");
            check(&dir, &name, &export(format));
        }
    }
}

/// A pprof export's `output` as text (gzipped protobuf is compared
/// decoded); a failed command's message is text already.
pub(crate) fn pprof_shown(output: Vec<u8>, dir: &Path) -> Vec<u8> {
    match output.starts_with(b"exit status:") {
        true => output,
        false => normalize(&pprof_text(&output), dir).into_bytes(),
    }
}

#[test]
fn every_view_of_an_empty_recording() {
    let dir = scratch("renderers-empty");
    write_empty(&dir);
    for data in ["empty", "unsampled"] {
        let input = format!("{data}.data");
        let input = input.as_str();
        for (view, args) in [
            ("report.txt", &["report", "-i", input][..]),
            ("report.json", &["report", "-i", input, "--format", "json"]),
            ("children.txt", &["report", "-i", input, "--children"]),
            ("folded.txt", &["export", "--format", "folded", "-i", input]),
            ("flamegraph.svg", &["flamegraph", "-o", "-", "-i", input]),
            ("hist.txt", &["hist", "-i", input]),
            ("annotate.txt", &["annotate", "-i", input, "main"]),
            (
                "gmon.txt",
                &["export", "--format", "gmon", "-o", "-", "-i", input],
            ),
            ("diff.txt", &["diff", input, input]),
        ] {
            check(&dir, &format!("empty/{data}-{view}"), args);
        }
    }
}
