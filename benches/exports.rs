//! Export speed on a recording of about a million samples with call stacks:
//! each format against `profiler report` on the same recording (the
//! target: every export takes less), and against `perf script |
//! inferno-collapse-perf` on perf's recording of the same workload, the
//! usual way to get a perf recording into another tool. Written to the
//! exports section of BENCHMARKS.md.
//!
//! `cargo bench --bench exports [-- RUNS]` (default 5 runs per figure,
//! interleaved).
//! inferno's collapser is installed into target/bench-tools on first use
//! (`cargo install inferno`); where that fails, its row is missing and the
//! page says so (the profiler's own folded export is then the only row of
//! its kind).

// A benchmark stops at the first thing that fails, panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

#[allow(dead_code)]
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Samples per second, as the symbolization benchmark records.
const RATE: &str = "20000";
/// Rounds of the workload: about 50 s of CPU, a million samples at RATE.
const ROUNDS: usize = 11;

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let dir = util::scratch("bench-exports");
    let workload = workload();
    let summary = record(&dir, &workload);
    let perf_ok = perf_record(&dir, &workload);
    let collapse = inferno_collapse_perf();

    let mut page = String::new();
    writeln!(page, "## Exports\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench exports` on {}; medians of {runs} runs. The workload: {ROUNDS} \
         rounds of `split 20`, `inlinesplit 10` and `recurse 4` side by side (stacks 4 to 70 \
         frames deep), recorded with `-g` at {RATE} Hz by each profiler ({}). Outputs go to \
         files in the scratch directory; `report` to /dev/null. The machine is shared: CPU \
         time (user and system) is the steadier measure. The Firefox Profiler's format and \
         speedscope's keep every sample with its time (the former one entry per sample in \
         several columns), pprof and folded stacks each distinct stack once.\n",
        common::machine(),
        summary.trim_start_matches("profiler: ")
    )
    .unwrap();
    let rows = timings(&dir, perf_ok, collapse.as_deref(), runs);
    write_table(&mut page, &rows);
    if !perf_ok {
        writeln!(page, "\nperf is not installed: its row is missing.").unwrap();
    }
    if collapse.is_none() {
        writeln!(
            page,
            "\ninferno-collapse-perf could not be installed (no network?): its row is missing, \
             and the profiler's own folded export is the only row of its kind."
        )
        .unwrap();
    }
    common::write_section("exports", &page);
}

/// The workload, as a shell command line.
fn workload() -> String {
    let fixture = |name: &str| util::fixture(name).display().to_string();
    let round = format!(
        "{} 20 >/dev/null & {} 10 >/dev/null & {} 4 >/dev/null & wait",
        fixture("split"),
        fixture("inlinesplit"),
        fixture("recurse")
    );
    format!("for i in $(seq {ROUNDS}); do {round}; done")
}

/// Records the workload with the profiler; returns its summary line.
fn record(dir: &Path, workload: &str) -> String {
    let args = [
        "record",
        "-e",
        "cpu-clock",
        "-F",
        RATE,
        "-g",
        "-o",
        "big.data",
        "--",
        "sh",
        "-c",
        workload,
    ];
    let recorded = util::profiler()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&recorded.stderr);
    assert!(recorded.status.success(), "{stderr}");
    let summary = stderr.lines().find(|l| l.contains(" samples ("));
    summary.unwrap_or_default().to_owned()
}

/// Records the workload with perf, as the profiler did; whether it could.
fn perf_record(dir: &Path, workload: &str) -> bool {
    let perf = Command::new("perf")
        .current_dir(dir)
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock:u",
            "-F",
            RATE,
            "-g",
            "-o",
            "big.perf",
            "--",
            "sh",
            "-c",
            workload,
        ])
        .output();
    perf.is_ok_and(|o| o.status.success())
}

/// inferno's perf collapser, installed on first use.
fn inferno_collapse_perf() -> Option<PathBuf> {
    common::cargo_installed("inferno", "0.12.8", &[], "inferno-collapse-perf")
}

/// What one command took.
#[derive(Clone, Copy, Debug)]
struct Measure {
    wall: f64,
    /// User and system time.
    cpu: f64,
    /// Peak resident memory, MiB.
    memory: f64,
}

/// A row: what ran, its medians (`None` if it failed), and the size of
/// what it wrote, MB.
type Row = (String, Option<Measure>, Option<f64>);

/// Wall and CPU seconds and peak memory of `sh -c command`, from GNU time.
fn measure(command: &str) -> Option<Measure> {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%e %U %S %M", "--", "sh", "-c", command])
        .stdout(std::process::Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let fields: Vec<f64> = (stderr.lines().last()?.split_whitespace())
        .filter_map(|f| f.parse().ok())
        .collect();
    match fields[..] {
        [wall, user, system, memory] => Some(Measure {
            wall,
            cpu: user + system,
            memory: memory / 1024.0,
        }),
        _ => None,
    }
}

fn timings(dir: &Path, perf_ok: bool, collapse: Option<&Path>, runs: usize) -> Vec<Row> {
    let ours = env!("CARGO_BIN_EXE_profiler");
    let data = dir.join("big.data");
    let data = data.to_str().unwrap();
    let out = |name: &str| dir.join(name).display().to_string();
    let export = |format: &str, file: &str| {
        (
            format!("profiler export --format {format}"),
            format!("{ours} export --format {format} -i {data} -o {}", out(file)),
            Some(out(file)),
        )
    };
    let report = format!("{ours} report -i {data} > /dev/null");
    let mut commands: Vec<(String, String, Option<String>)> = vec![
        ("profiler report".into(), report, None),
        export("pprof", "big.pb.gz"),
        export("firefox", "big.firefox.json"),
        export("speedscope", "big.speedscope.json"),
        export("folded", "big.folded"),
    ];
    if let (true, Some(collapse)) = (perf_ok, collapse) {
        let (perf_data, folded) = (out("big.perf"), out("perf.folded"));
        commands.push((
            "perf script \\| inferno-collapse-perf (perf's recording)".into(),
            format!(
                "perf script -i {perf_data} | {} > {folded}",
                collapse.display()
            ),
            Some(folded),
        ));
    }
    // Interleaved, so that a busy spell of the machine falls on every row.
    let mut measures: Vec<Vec<Measure>> = vec![Vec::new(); commands.len()];
    for _ in 0..runs {
        for (row, (_, command, _)) in commands.iter().enumerate() {
            measures[row].extend(measure(command));
        }
    }
    (commands.into_iter().zip(measures))
        .map(|((name, _, output), measures)| {
            let median = |f: fn(&Measure) -> f64| common::median(measures.iter().map(f).collect());
            let result = (!measures.is_empty()).then(|| Measure {
                wall: median(|m| m.wall),
                cpu: median(|m| m.cpu),
                memory: median(|m| m.memory),
            });
            let size = output
                .and_then(|file| std::fs::metadata(file).ok())
                .map(|m| m.len() as f64 / 1e6);
            (name, result, size)
        })
        .collect()
}

fn write_table(page: &mut String, rows: &[Row]) {
    let report = rows.first().and_then(|(_, r, _)| *r);
    writeln!(
        page,
        "| command | wall s | CPU s | peak memory MiB | output MB | wall × report | CPU × report |"
    )
    .unwrap();
    writeln!(page, "| --- | --- | --- | --- | --- | --- | --- |").unwrap();
    for (name, result, size) in rows {
        let Some(m) = result else {
            writeln!(page, "| {name} | failed | | | | | |").unwrap();
            continue;
        };
        let size = size.map_or(String::new(), |s| format!("{s:.2}"));
        let ratios = match report {
            Some(r) => format!("{:.2}× | {:.2}×", m.wall / r.wall, m.cpu / r.cpu),
            None => " | ".into(),
        };
        writeln!(
            page,
            "| {name} | {:.2} | {:.2} | {:.0} | {size} | {ratios} |",
            m.wall, m.cpu, m.memory
        )
        .unwrap();
    }
    // The target: every export in less CPU time than report.
    let Some(report) = report else { return };
    let over: Vec<String> = (rows.iter().skip(1))
        .filter(|(name, _, _)| name.starts_with("profiler export"))
        .filter_map(|(name, m, _)| {
            let ratio = m.as_ref()?.cpu / report.cpu;
            (ratio > 1.0).then(|| format!("{} ({ratio:.2}×)", name.trim_start_matches("profiler ")))
        })
        .collect();
    match over.is_empty() {
        true => writeln!(page, "\nEvery export takes less CPU time than report.").unwrap(),
        false => writeln!(
            page,
            "\nThe target, every export in less time than report, is missed by {}.",
            over.join(" and ")
        )
        .unwrap(),
    }
}
