//! perf's recordings read by every view: the fixtures recorded with `perf
//! record`, reported by both, and perf.data files perf cannot have meant
//! for us (unfinished, crafted, of other kinds) refused in one line.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::util::*;

/// Records `command` with `perf record -e cpu-clock` and `options` into
/// `dir/data`.
pub(crate) fn perf_record(dir: &Path, data: &str, options: &[&str], command: &[&str]) {
    let output = Command::new("perf")
        .current_dir(dir)
        .args(["record", "-q", "-e", "cpu-clock", "-o", data])
        .args(options)
        .args(command)
        .output()
        .unwrap();
    assert!(output.status.success(), "perf record: {}", stderr(&output));
}

/// Each function's share of the samples' period as `perf report
/// --no-children` gives it, each named as we name the same code (see
/// [`PERF_PLT_NAME`]).
fn perf_shares(dir: &Path, data: &str, program: &Path) -> BTreeMap<String, f64> {
    let output = Command::new("perf")
        .current_dir(dir)
        .args(["report", "-i", data, "--stdio", "--no-children", "-q"])
        .args(["--sort", "sym", "-g", "none"])
        .output()
        .unwrap();
    assert!(output.status.success(), "perf report: {}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    let mut shares = BTreeMap::new();
    for line in text.lines() {
        // "    59.35%  [.] burn_60"
        let Some((percent, symbol)) = line.trim().split_once("%  ") else {
            continue;
        };
        let name = symbol.get(4..).unwrap_or(symbol).trim().to_owned();
        *shares.entry(name).or_insert(0.0) += percent.parse::<f64>().unwrap();
    }
    if let Some(share) = shares.remove(PERF_PLT_NAME) {
        let script = Command::new("perf")
            .current_dir(dir)
            .args(["script", "-i", data, "-G", "-F", "ip,sym,symoff,dso,period"])
            .output()
            .unwrap();
        assert!(script.status.success(), "perf script: {}", stderr(&script));
        let samples = String::from_utf8_lossy(&script.stdout);
        let periods = perf_plt_periods(&samples, program);
        let total: u64 = periods.values().sum();
        assert!(
            total > 0,
            "perf script has no {PERF_PLT_NAME} sample:\n{samples}"
        );
        for (name, period) in periods {
            *shares.entry(name).or_insert(0.0) += share * period as f64 / total as f64;
        }
    }
    shares
}

/// The one name perf gives code that we name otherwise: perf 6.1 does not
/// name the stubs of a program's `.plt` (`strlen@plt`, as objdump and we
/// name them) but stretches the symbol before them, `_init`, over them.
/// Its share is split by the address of each sample perf names so.
const PERF_PLT_NAME: &str = "_init";

/// The period of the samples `perf script -F ip,sym,symoff,dso,period`
/// names [`PERF_PLT_NAME`], by the name objdump gives the instruction at
/// each (for `program`'s samples; others keep perf's name).
fn perf_plt_periods(script: &str, program: &Path) -> BTreeMap<String, u64> {
    let program = program.canonicalize().unwrap();
    let names = objdump_names(&program);
    let start = names
        .iter()
        .find(|(_, n)| *n == PERF_PLT_NAME)
        .map(|(a, _)| *a);
    let mut periods = BTreeMap::new();
    for line in script.lines() {
        // "    250000      55b3b14ae030 _init+0x30 (/path/to/libcall)"
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [period, _ip, symbol, dso] = fields[..] else {
            continue;
        };
        let Some(offset) = symbol.strip_prefix(&format!("{PERF_PLT_NAME}+0x")) else {
            continue;
        };
        let offset = u64::from_str_radix(offset, 16).unwrap();
        let ours = Path::new(dso.trim_matches(['(', ')'])) == program;
        let name = match (ours, start) {
            (true, Some(start)) => names.get(&(start + offset)).map(String::as_str),
            _ => None,
        };
        let name = name.unwrap_or(PERF_PLT_NAME).to_owned();
        *periods.entry(name).or_insert(0) += period.parse::<u64>().unwrap();
    }
    periods
}

/// The instructions of `program`'s `.init` and PLT sections, by address,
/// each with the name of the symbol or stub objdump lists it under.
fn objdump_names(program: &Path) -> BTreeMap<u64, String> {
    let output = Command::new("objdump")
        .args([
            "-d",
            "--no-show-raw-insn",
            "-j",
            ".init",
            "-j",
            ".plt",
            "-j",
            ".plt.sec",
        ])
        .arg(program)
        .output()
        .unwrap();
    assert!(output.status.success(), "objdump: {}", stderr(&output));
    let mut names = BTreeMap::new();
    let mut label = String::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        // "0000000000001030 <strlen@plt>:", then "    1030:\tjmp ..."
        if let Some((_, name)) = line.strip_suffix(">:").and_then(|l| l.split_once(" <")) {
            label = name.to_owned();
        } else if let Some((address, _)) = line.trim_start().split_once(":\t")
            && let Ok(address) = u64::from_str_radix(address, 16)
        {
            names.insert(address, label.clone());
        }
    }
    names
}

/// Each function's self share in our report of the same file.
fn our_shares(report: &Value) -> BTreeMap<String, f64> {
    let mut shares = BTreeMap::new();
    for function in report["functions"].as_array().unwrap() {
        let name = function["name"].as_str().unwrap().to_owned();
        *shares.entry(name).or_insert(0.0) += function["self_percent"].as_f64().unwrap();
    }
    shares
}

/// Every function over 2% in either report is within a point in the other.
fn assert_shares_agree(what: &str, ours: &BTreeMap<String, f64>, perf: &BTreeMap<String, f64>) {
    let names = ours.iter().chain(perf).filter(|(_, s)| **s > 2.0);
    for (name, _) in names {
        let (a, b) = (
            ours.get(name).copied().unwrap_or(0.0),
            perf.get(name).copied().unwrap_or(0.0),
        );
        assert!(
            (a - b).abs() <= 1.0,
            "{what}: {name} is {a:.2}% in our report and {b:.2}% in perf's\nours: {ours:?}\n\
             perf: {perf:?}"
        );
    }
    assert!(
        perf.values().any(|&s| s > 2.0),
        "{what}: perf reports nothing over 2%: {perf:?}"
    );
}

// The fixtures recorded by perf, plainly, with frame-pointer chains and
// with stack copies: each function's self share is perf's, within a
// point. (Totals would differ where a frameless leaf hides its caller
// from perf's chains: our recorder splices the caller back in, perf's
// does not, so only self shares compare like for like.)
live_test!(perfs_recordings_report_the_shares_perf_reports, || {
    if !profiler_testing::perf_reads_its_own() {
        return;
    }
    let dir = scratch("perfdata-shares");
    let runs: [(&str, &[&str], &[&str]); 5] = [
        ("split", &["3"], &[]),
        ("split", &["3"], &["-g"]),
        ("libcall", &["100"], &["-g"]),
        ("cppwork", &["200"], &[]),
        ("recurse-nofp", &["3"], &["--call-graph", "dwarf"]),
    ];
    for (i, (name, args, options)) in runs.into_iter().enumerate() {
        let program = fixture(name);
        let mut command = vec![program.to_str().unwrap()];
        command.extend_from_slice(args);
        let data = format!("{i}-{name}.data");
        perf_record(&dir, &data, options, &command);
        let report = report_json(&dir, &data);
        let what = format!("{name} {options:?}");
        assert_shares_agree(
            &what,
            &our_shares(&report),
            &perf_shares(&dir, &data, &program),
        );
    }
});

// perf's name for a PLT stub is read back by address: a sample perf
// names `_init` plus the offset of libcall's first stub is in
// `strlen@plt`, as objdump and our report name it; `_init` itself and
// other modules' `_init` keep their name.
#[test]
fn perfs_name_for_a_plt_stub_is_read_by_address() {
    if !profiler_testing::tool("objdump") {
        return;
    }
    let program = fixture("libcall");
    let names = objdump_names(&program);
    let address = |wanted: &str| names.iter().find(|(_, n)| *n == wanted).map(|(a, _)| *a);
    let (init, stub) = (address("_init").unwrap(), address("strlen@plt").unwrap());
    let ours = program.canonicalize().unwrap().display().to_string();
    let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    let line = |period: u64, symbol: String, dso: &str| {
        format!("    {period}  55b3b14a1000 {symbol} ({dso})")
    };
    let script = [
        line(250_000, format!("_init+{:#x}", stub - init), &ours),
        line(250_000, format!("_init+{:#x}", stub - init + 6), &ours),
        line(500_000, "_init+0x0".to_owned(), &ours),
        line(250_000, format!("_init+{:#x}", stub - init), libc),
        line(250_000, "main+0x3d".to_owned(), &ours),
    ]
    .join("\n");
    let periods = perf_plt_periods(&script, &program);
    let expected = BTreeMap::from([
        ("_init".to_owned(), 750_000),
        ("strlen@plt".to_owned(), 500_000),
    ]);
    assert_eq!(periods, expected);
}

// perf keeps a copy of each sampled binary by build-id (in ~/.debug, here
// under a home of the test's own): a program rebuilt since its perf.data
// was recorded is named from that copy, as perf report names it; without
// the copy, the rebuilt file is said to have changed.
live_test!(perfs_build_id_cache_names_a_rebuilt_program, || {
    if !profiler_testing::perf_reads_its_own() {
        return;
    }
    let dir = scratch("perfdata-build-id-cache");
    std::fs::copy(fixture("split"), dir.join("app")).unwrap();
    for home in ["home", "empty-home"] {
        std::fs::create_dir_all(dir.join(home)).unwrap();
    }
    let output = Command::new("perf")
        .env("HOME", dir.join("home"))
        .current_dir(&dir)
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock",
            "-o",
            "app.data",
            "./app",
            "3",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "perf record: {}", stderr(&output));
    assert!(dir.join("home/.debug/.build-id").is_dir());
    // Rebuilt: another program under the same name, a new file as a linker
    // writes it (perf's copy may be a hard link to the old one).
    std::fs::remove_file(dir.join("app")).unwrap();
    std::fs::copy(fixture("recurse"), dir.join("app")).unwrap();
    let report = |home: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_profiler"))
            .env("HOME", dir.join(home))
            .current_dir(&dir)
            .args(["report", "-i", "app.data", "--format", "json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let cached = report("home");
    assert!(
        percent(&cached, "burn_60") > 40.0,
        "{}",
        cached["functions"]
    );
    assert!(!cached.to_string().contains("has changed"), "{cached}");
    let uncached = report("empty-home");
    assert_eq!(
        percent(&uncached, "burn_60"),
        0.0,
        "{}",
        uncached["functions"]
    );
    assert!(uncached.to_string().contains("has changed"), "{uncached}");
});

// perf's stack copies go through our unwinder: `recurse-nofp` has no
// frame pointers, and its samples still reach `main` through `descend`.
live_test!(perfs_stack_copies_are_unwound, || {
    if !profiler_testing::perf_reads_its_own() {
        return;
    }
    let dir = scratch("perfdata-dwarf");
    let program = fixture("recurse-nofp");
    let command = [program.to_str().unwrap(), "3"];
    perf_record(&dir, "dwarf.data", &["--call-graph", "dwarf"], &command);
    let output = run_ok(&dir, &["export", "-i", "dwarf.data", "--format", "folded"]);
    let folded = String::from_utf8(output.stdout).unwrap();
    let (mut leaf, mut through_main) = (0u64, 0u64);
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let count: u64 = count.parse().unwrap();
        if stack.ends_with(";leaf") {
            leaf += count;
            if stack.contains(";main;descend;descend;") {
                through_main += count;
            }
        }
    }
    assert!(leaf > 100, "{folded}");
    assert!(through_main * 100 >= leaf * 95, "{folded}");
});

// Every view reads a perf.data file: flame graph, annotate, hist and the
// exports, and a compressed one (`perf record -z`) as well.
live_test!(every_view_reads_perf_data, || {
    if !profiler_testing::perf_reads_its_own() {
        return;
    }
    let dir = scratch("perfdata-views");
    let program = fixture("split");
    let command = [program.to_str().unwrap(), "3"];
    perf_record(&dir, "g.data", &["-g"], &command);
    perf_record(&dir, "z.data", &["-z"], &command);
    run_ok(&dir, &["flamegraph", "-i", "g.data", "-o", "g.svg"]);
    let svg = std::fs::read_to_string(dir.join("g.svg")).unwrap();
    assert!(svg.contains("burn_60"), "the flame graph names no burn_60");
    let annotated = run_ok(&dir, &["annotate", "-i", "g.data", "burn_60"]);
    assert!(String::from_utf8_lossy(&annotated.stdout).contains("split.c"));
    let hist = run_ok(&dir, &["hist", "-i", "g.data"]);
    assert!(String::from_utf8_lossy(&hist.stdout).contains("burn_30+0x"));
    run_ok(
        &dir,
        &[
            "export", "-i", "g.data", "--format", "gmon", "-o", "gmon.out",
        ],
    );
    let diff = run_ok(&dir, &["diff", "g.data", "z.data"]);
    assert!(String::from_utf8_lossy(&diff.stdout).contains("burn_10"));
    let compressed = report_json(&dir, "z.data");
    assert_near(
        "burn_60 (-z)",
        percent(&compressed, "burn_60"),
        60.0,
        5.0,
        &compressed,
    );
});

// perf's recording with each of its MMAP2 records marked as carrying a
// build-id over its device and inode, as the kernel marks them while
// another session records build-ids (the major number, here 254, reads as
// the build-id's length): the same functions in the same modules, and one
// note. Recorded with -B: perf 6.1 aborts collecting build-ids when the
// kernel marks its records so.
live_test!(
    mappings_marked_as_build_ids_over_their_inode_read_as_unmarked,
    || {
        if !profiler_testing::tool("perf") {
            return;
        }
        let dir = scratch("perfdata-marked-mappings");
        let program = fixture("split");
        let command = [program.to_str().unwrap(), "1"];
        perf_record(&dir, "plain.data", &["-g", "-B"], &command);
        let mut bytes = std::fs::read(dir.join("plain.data")).unwrap();
        let (data_offset, data_size) = (word(&bytes, 40) as usize, word(&bytes, 48) as usize);
        let mut at = data_offset;
        let mut marked = 0;
        while at < data_offset + data_size {
            let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            let size = u16::from_le_bytes([bytes[at + 6], bytes[at + 7]]) as usize;
            if kind == MMAP2 {
                bytes[at + 5] |= 0x40;
                bytes[at + 40] = 254;
                marked += 1;
            }
            at += size.max(8);
        }
        assert!(marked > 0, "perf wrote no MMAP2 record");
        std::fs::write(dir.join("marked.data"), &bytes).unwrap();

        let output = run_ok(&dir, &["report", "-i", "marked.data", "--format", "json"]);
        let note = stderr(&output);
        let said = format!("{marked} mapping records are marked as carrying a build-id");
        assert!(note.contains(&said), "{note}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            report["functions"],
            report_json(&dir, "plain.data")["functions"]
        );
        let module = (report["functions"].as_array().unwrap().iter())
            .find(|f| f["name"] == "burn_60")
            .map(|f| f["module"].clone());
        assert_eq!(module, Some(Value::from("split")), "{report}");
    }
);

/// Runs a view on `data` and asserts that it refuses in one line naming
/// the file, with exit status 1: no panic, no abort.
fn refused(dir: &Path, data: &str) -> String {
    let output: Output = run(dir, &["report", "-i", data]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{data}: {message}");
    assert_eq!(message.lines().count(), 1, "{data}: {message}");
    assert!(
        message.starts_with(&format!("profiler: {data}: ")),
        "{message}"
    );
    message
}

const MMAP2: u32 = 10;

/// A u64 of a perf.data header, little-endian.
fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

// perf's own recording, its header then damaged as a killed `perf
// record` or a crafted file leaves it; and perf's other kinds of files.
live_test!(
    unfinished_crafted_and_other_perf_files_are_refused_in_one_line,
    || {
        if !profiler_testing::perf_reads_its_own() {
            return;
        }
        let dir = scratch("perfdata-refused");
        let program = fixture("split");
        let command = [program.to_str().unwrap(), "1"];
        perf_record(&dir, "good.data", &[], &command);
        let good = std::fs::read(dir.join("good.data")).unwrap();
        let (data_offset, data_size) = (word(&good, 40) as usize, word(&good, 48) as usize);
        let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();

        let mut unfinished = good.clone();
        unfinished[48..56].fill(0);
        write("unfinished.data", &unfinished);
        let message = refused(&dir, "unfinished.data");
        assert!(message.contains("data size field is 0"), "{message}");
        assert!(message.contains("properly terminated"), "{message}");

        // The first feature section claims 2^44 bytes.
        let mut huge = good.clone();
        let size_at = data_offset + data_size + 8;
        huge[size_at..size_at + 8].copy_from_slice(&(1u64 << 44).to_le_bytes());
        write("huge.data", &huge);
        assert!(refused(&dir, "huge.data").contains("17592186044416 bytes"));

        // The first record turned into an AUX trace of 2^50 bytes.
        let mut aux = good.clone();
        aux[data_offset..data_offset + 4].copy_from_slice(&71u32.to_le_bytes());
        aux[data_offset + 8..data_offset + 16].copy_from_slice(&(1u64 << 50).to_le_bytes());
        write("aux.data", &aux);
        assert!(refused(&dir, "aux.data").contains("AUX trace record"));

        write("cut.data", &good[..data_offset + data_size / 2]);
        assert!(refused(&dir, "cut.data").contains("cut short"));

        let piped = Command::new("perf")
            .current_dir(&dir)
            .args(["record", "-q", "-e", "cpu-clock", "-o", "-"])
            .args(command)
            .output()
            .unwrap();
        write("pipe.data", &piped.stdout);
        assert!(refused(&dir, "pipe.data").contains("pipe format"));

        let stat = Command::new("perf")
            .current_dir(&dir)
            .args(["stat", "record", "-o", "stat.data", "-e", "cpu-clock"])
            .args(command)
            .output()
            .unwrap();
        assert!(stat.status.success(), "perf stat record: {}", stderr(&stat));
        assert!(refused(&dir, "stat.data").contains("perf stat report"));

        perf_record(&dir, "threads.data", &["--threads"], &command);
        assert!(refused(&dir, "threads.data").contains("--threads"));
    }
);
