//! Symbolization speed, against GNU addr2line, llvm-symbolizer and the
//! addr2line crate's own tool on one large address set of a debug build of a
//! real Rust program (this profiler), and the time and memory of `profiler
//! report` against `perf report` on a recording of about a million samples
//! of that program. Written to the symbolization section of BENCHMARKS.md.
//!
//! `cargo bench --bench symbolize [-- RUNS]` (default 3 runs per figure).
//! The addr2line crate's tool is installed into target/bench-tools on first
//! use (`cargo install addr2line --features bin`).

#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

#[allow(dead_code)]
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Addresses symbolized in one run.
const ADDRESSES: usize = 100_000;
/// Samples per second when recording the workload for the report figures:
/// at higher rates the cost of the sampling interrupt in a VM feeds back into
/// cpu-clock and the run spirals.
const RATE: &str = "20000";
/// Symbolization passes in the recorded workload (about 3.5 s of CPU each).
const PASSES: usize = 12;

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let dir = util::scratch("bench-symbolize");
    let big = debug_build(&dir);
    let addresses = dir.join("addresses.txt");
    std::fs::write(&addresses, address_set(&big)).unwrap();
    let size_mb = big.metadata().unwrap().len() as f64 / 1e6;

    let mut page = String::new();
    writeln!(page, "## Symbolization\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench symbolize` on {}. {ADDRESSES} random instruction addresses of a \
         debug build of this profiler ({size_mb:.0} MB), with their inline chains; medians of {runs} runs.\n",
        common::machine()
    )
    .unwrap();
    symbolizers(&mut page, &big, &addresses, runs);
    reports(&mut page, &big, &addresses, &dir, runs);
    common::write_section("symbolization", &page);
}

/// The debug build of the profiler, copied so that it holds still.
fn debug_build(dir: &Path) -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--bin", "profiler"])
        .status()
        .unwrap();
    assert!(status.success(), "cargo build failed");
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/debug/profiler");
    let copy = dir.join("profiler-debug");
    std::fs::copy(built, &copy).unwrap();
    copy
}

/// ADDRESSES instruction addresses inside functions, in a fixed random
/// order (a linear congruential shuffle), one per line.
fn address_set(binary: &Path) -> String {
    let disassembly = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(binary)
        .output()
        .unwrap();
    let mut all: Vec<u64> = String::from_utf8_lossy(&disassembly.stdout)
        .lines()
        .filter(|l| l.starts_with(' '))
        .filter_map(|l| u64::from_str_radix(l.trim_start().split(':').next()?, 16).ok())
        .collect();
    let mut state = 0x853c_49e6_748f_ea9b_u64;
    for i in (1..all.len()).rev() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        all.swap(i, (state >> 33) as usize % (i + 1));
    }
    all.iter()
        .take(ADDRESSES)
        .map(|a| format!("{a:#x}\n"))
        .collect()
}

/// The addr2line crate's command-line tool, installed on first use.
fn addr2line_crate() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-tools");
    let tool = root.join("bin/addr2line");
    if !tool.exists() {
        let status = Command::new(env!("CARGO"))
            .args([
                "install",
                "--quiet",
                "addr2line",
                "--version",
                "0.25.1",
                "--features",
                "bin",
                "--root",
            ])
            .arg(&root)
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
    }
    Some(tool)
}

fn symbolizers(page: &mut String, big: &Path, addresses: &Path, runs: usize) {
    let big = big.to_str().unwrap();
    let ours = env!("CARGO_BIN_EXE_profiler").to_owned();
    let crate_tool = addr2line_crate().map(|p| p.to_string_lossy().into_owned());
    let obj = format!("--obj={big}");
    let mut tools: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "profiler symbolize --inlines",
            ours,
            vec!["symbolize", "--inlines", "--exe", big],
        ),
        (
            "GNU addr2line -f -i -C",
            "addr2line".into(),
            vec!["-f", "-i", "-C", "-e", big],
        ),
        ("llvm-symbolizer", "llvm-symbolizer".into(), vec![&obj]),
    ];
    if let Some(tool) = &crate_tool {
        tools.push((
            "addr2line crate's tool -f -i -C",
            tool.clone(),
            vec!["-f", "-i", "-C", "-e", big],
        ));
    }
    writeln!(
        page,
        "| tool | wall s | peak memory MiB | profiler symbolize is faster by |"
    )
    .unwrap();
    writeln!(page, "| --- | --- | --- | --- |").unwrap();
    let mut ours_wall = f64::NAN;
    for (name, program, args) in &tools {
        let measures: Vec<(f64, u64)> = (0..runs)
            .filter_map(|_| common::time_and_memory(program, args, Some(addresses)))
            .collect();
        if measures.is_empty() {
            writeln!(page, "| {name} | failed | | |").unwrap();
            continue;
        }
        let wall = common::median(measures.iter().map(|m| m.0).collect());
        let memory = common::median(measures.iter().map(|m| m.1 as f64).collect()) / 1024.0;
        if ours_wall.is_nan() {
            ours_wall = wall;
        }
        writeln!(
            page,
            "| {name} | {wall:.2} | {memory:.0} | {:.1}× |",
            wall / ours_wall
        )
        .unwrap();
    }
    if crate_tool.is_none() {
        writeln!(
            page,
            "\nThe addr2line crate's tool could not be installed (no network?): its row is missing."
        )
        .unwrap();
    }
    writeln!(page).unwrap();
}

/// Records the debug build symbolizing its own addresses, with both
/// profilers, and times their reports.
fn reports(page: &mut String, big: &Path, addresses: &Path, dir: &Path, runs: usize) {
    let workload = format!(
        "for i in $(seq {PASSES}); do {} symbolize --inlines --exe {} < {} > /dev/null; done",
        big.display(),
        big.display(),
        addresses.display()
    );
    let ours = env!("CARGO_BIN_EXE_profiler");
    let recorded = util::profiler()
        .current_dir(dir)
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-F",
            RATE,
            "-o",
            "big.data",
            "--",
            "sh",
            "-c",
            &workload,
        ])
        .output()
        .unwrap();
    assert!(
        recorded.status.success(),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let summary = String::from_utf8_lossy(&recorded.stderr)
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    let perf = Command::new("perf")
        .current_dir(dir)
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock:u",
            "-F",
            RATE,
            "-o",
            "big.perf",
            "--",
            "sh",
            "-c",
            &workload,
        ])
        .output();
    let perf_ok = perf.is_ok_and(|o| o.status.success());

    writeln!(page, "### Report on about a million samples\n").unwrap();
    writeln!(page, "The workload: {PASSES} passes of the symbolization above, run by the debug build, recorded at {RATE} Hz by each profiler ({}). Reports go to /dev/null.\n", summary.trim_start_matches("profiler: ")).unwrap();
    writeln!(page, "| command | wall s | peak memory MiB |").unwrap();
    writeln!(page, "| --- | --- | --- |").unwrap();
    let data = dir.join("big.data");
    let perf_data = dir.join("big.perf");
    let (data, perf_data) = (data.to_str().unwrap(), perf_data.to_str().unwrap());
    let mut rows: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "profiler report (inlined functions named from DWARF)",
            ours,
            vec!["report", "-i", data],
        ),
        (
            "profiler report --no-inline (symbol tables, as perf report)",
            ours,
            vec!["report", "--no-inline", "-i", data],
        ),
    ];
    if perf_ok {
        rows.push((
            "perf report --stdio",
            "perf",
            vec!["report", "--stdio", "-i", perf_data],
        ));
        rows.push((
            "perf report --stdio --sort srcline (stopped after 120 s)",
            "timeout",
            vec![
                "120", "perf", "report", "--stdio", "--sort", "srcline", "-i", perf_data,
            ],
        ));
    }
    for (name, program, args) in rows {
        let slow = program == "timeout";
        let measures: Vec<(f64, u64)> = (0..if slow { 1 } else { runs })
            .filter_map(|_| common::time_and_memory(program, &args, None))
            .collect();
        match measures.is_empty() {
            true => writeln!(page, "| {name} | did not finish | |").unwrap(),
            false => {
                let wall = common::median(measures.iter().map(|m| m.0).collect());
                let memory = common::median(measures.iter().map(|m| m.1 as f64).collect()) / 1024.0;
                writeln!(page, "| {name} | {wall:.2} | {memory:.0} |").unwrap()
            }
        }
    }
    if !perf_ok {
        writeln!(page, "\nperf is not installed: its rows are missing.").unwrap();
    }
}
