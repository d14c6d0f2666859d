//! Symbolization speed, against GNU addr2line, llvm-symbolizer and the
//! addr2line crate's own tool, at 20k and 100k addresses of a debug build of
//! a real Rust program (this profiler), with the start-up each pays before
//! the first address; and `profiler report` against `perf report` on
//! recordings of that program symbolizing its own addresses (about a
//! million samples flat, fewer with call graphs), each profiler recording
//! the same workload. Written to the symbolization section of BENCHMARKS.md.
//!
//! `cargo bench --bench symbolize [-- RUNS] [addresses]` (default 3 runs per
//! figure, interleaved, medians; `addresses`: the tools alone, printed
//! rather than written). The addr2line crate's tool is installed into
//! target/bench-tools on first use (`cargo install addr2line --features
//! bin`); without a network its rows are left out.

// A benchmark stops at the first thing that fails, panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

#[allow(dead_code)]
mod common;

mod workload;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Measured, measure, medians};

/// The address sets symbolized, by size.
const SETS: [usize; 2] = [20_000, 100_000];
/// Samples per second when recording the workload for the report figures:
/// at higher rates the cost of the sampling interrupt in a VM feeds back into
/// cpu-clock and the run spirals.
const RATE: &str = "20000";
/// Symbolization passes over 100k addresses in the recorded workload
/// (about 5 s of CPU each): flat, with `-g`, with `--call-graph dwarf`.
const PASSES: usize = 12;
const CALL_GRAPH_PASSES: usize = 3;
const DWARF_PASSES: usize = 1;
/// Stack copies make dwarf recordings large, and perf slow to unwind them.
const DWARF_RATE: &str = "1000";

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let dir = util::scratch("bench-symbolize");
    let big = workload::debug_build(&dir);
    let all = workload::address_set(&big);
    let size_mb = big.metadata().unwrap().len() as f64 / 1e6;
    let perf = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());

    let mut page = String::new();
    writeln!(page, "## Symbolization\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench symbolize` on {}. Random instruction addresses of a debug \
         build of this profiler ({size_mb:.0} MB), with their inline chains; medians of {runs} \
         interleaved runs. The machine may be shared: CPU time (user and system) is the steadier \
         measure.\n",
        common::machine()
    )
    .unwrap();
    symbolizers(&mut page, &big, &all, &dir, runs);
    // `-- addresses`: the tools alone, printed rather than written.
    if std::env::args().any(|a| a == "addresses") {
        print!("{page}");
        return;
    }
    if perf {
        reports(&mut page, &big, &dir, runs);
    } else {
        writeln!(
            page,
            "perf is not installed: the reports, measured against perf report, are left out."
        )
        .unwrap();
    }
    common::write_section("symbolization", &page);
}

/// Writes the first `count` of `addresses` to a file in `dir`.
fn address_file(dir: &Path, addresses: &[u64], count: usize) -> PathBuf {
    let path = dir.join(format!("addresses-{count}.txt"));
    let text: String = (addresses.iter().take(count))
        .map(|a| format!("{a:#x}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The addr2line crate's command-line tool, installed on first use.
fn addr2line_crate() -> Option<PathBuf> {
    common::cargo_installed("addr2line", "0.25.1", &["--features", "bin"], "addr2line")
}

/// A tool that names addresses read from stdin: its name, program and
/// arguments.
type Tool = (&'static str, String, Vec<String>);

fn tools(big: &Path, crate_tool: Option<&Path>) -> Vec<Tool> {
    let big = big.to_str().unwrap().to_owned();
    let args = |list: &[&str]| list.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let mut tools = vec![
        (
            "profiler symbolize --inlines",
            env!("CARGO_BIN_EXE_profiler").to_owned(),
            args(&["symbolize", "--inlines", "--exe", &big]),
        ),
        (
            "GNU addr2line -f -i -C",
            "addr2line".to_owned(),
            args(&["-f", "-i", "-C", "-e", &big]),
        ),
        (
            "llvm-symbolizer",
            "llvm-symbolizer".to_owned(),
            vec![format!("--obj={big}")],
        ),
    ];
    if let Some(tool) = crate_tool {
        tools.push((
            "addr2line crate's tool -f -i -C",
            tool.to_string_lossy().into_owned(),
            args(&["-f", "-i", "-C", "-e", &big]),
        ));
    }
    tools
}

/// Each tool's runs over `input`, interleaved; `None` for a tool that failed.
fn run_tools(tools: &[Tool], input: &Path, runs: usize) -> Vec<Option<Measured>> {
    let mut measures: Vec<Vec<Measured>> = vec![Vec::new(); tools.len()];
    for _ in 0..runs {
        for (i, (_, program, args)) in tools.iter().enumerate() {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            measures[i].extend(measure(program, &args, Some(input)));
        }
    }
    (measures.iter())
        .map(|m| (!m.is_empty()).then(|| medians(m)))
        .collect()
}

fn symbolizers(page: &mut String, big: &Path, all: &[u64], dir: &Path, runs: usize) {
    let crate_tool = addr2line_crate();
    let tools = tools(big, crate_tool.as_deref());
    writeln!(page, "### Addresses\n").unwrap();
    writeln!(
        page,
        "| addresses | tool | wall s | CPU s | peak memory MiB | profiler symbolize is faster by (wall) | (CPU) |"
    )
    .unwrap();
    writeln!(page, "| --- | --- | --- | --- | --- | --- | --- |").unwrap();
    let mut summary = Vec::new();
    for count in SETS {
        let input = address_file(dir, all, count);
        let measured = run_tools(&tools, &input, runs);
        let ours = measured[0].unwrap_or_default();
        for ((name, _, _), m) in tools.iter().zip(&measured) {
            match m {
                Some(m) => writeln!(
                    page,
                    "| {count} | {name} | {:.2} | {:.2} | {:.0} | {:.1}× | {:.1}× |",
                    m.wall,
                    m.cpu,
                    m.memory,
                    m.wall / ours.wall,
                    m.cpu / ours.cpu
                )
                .unwrap(),
                None => writeln!(page, "| {count} | {name} | failed | | | | |").unwrap(),
            }
        }
        let ratio = |i: usize| measured[i].map_or(f64::NAN, |m| m.wall / ours.wall);
        summary.push(format!(
            "at {count} addresses {:.1}× GNU addr2line (target 10×) and {:.1}× llvm-symbolizer \
             (target 2×)",
            ratio(1),
            ratio(2)
        ));
    }
    writeln!(
        page,
        "\nprofiler symbolize is faster, in wall time, {}.",
        summary.join("; ")
    )
    .unwrap();

    // Start-up: what each pays before the first address is named.
    let empty = dir.join("no-addresses.txt");
    std::fs::write(&empty, "").unwrap();
    let one = address_file(dir, all, 1);
    writeln!(page, "\n### Start-up\n").unwrap();
    writeln!(
        page,
        "No address at all, and one: the fixed cost of opening the binary (and, for one \
         address, of reading the debug info's unit headers that find it).\n"
    )
    .unwrap();
    writeln!(
        page,
        "| tool | no address: wall s | CPU s | peak memory MiB | one address: wall s | CPU s | peak memory MiB |"
    )
    .unwrap();
    writeln!(page, "| --- | --- | --- | --- | --- | --- | --- |").unwrap();
    let startup_runs = runs.max(5);
    let none = run_tools(&tools, &empty, startup_runs);
    let single = run_tools(&tools, &one, startup_runs);
    for (((name, _, _), none), single) in tools.iter().zip(none).zip(single) {
        let cells = |m: Option<Measured>| match m {
            Some(m) => format!("{:.3} | {:.3} | {:.0}", m.wall, m.cpu, m.memory),
            None => "failed | |".to_owned(),
        };
        writeln!(page, "| {name} | {} | {} |", cells(none), cells(single)).unwrap();
    }
    if crate_tool.is_none() {
        writeln!(
            page,
            "\nThe addr2line crate's tool could not be installed (no network?): its rows are missing."
        )
        .unwrap();
    }
    writeln!(page).unwrap();
}

/// Records the debug build symbolizing its own addresses with both
/// profilers (flat, `-g`, `--call-graph dwarf`) and times their reports.
fn reports(page: &mut String, big: &Path, dir: &Path, runs: usize) {
    let input = dir.join("addresses-100000.txt");
    let workload = |passes: usize| {
        format!(
            "for i in $(seq {passes}); do {} symbolize --inlines --exe {} < {} > /dev/null; done",
            big.display(),
            big.display(),
            input.display()
        )
    };
    let record = |name: &str, extra: &[&str], rate: &str, passes: usize| -> String {
        let data = format!("{name}.data");
        let mut args = vec!["record", "-e", "cpu-clock", "-F", rate, "-o", &data];
        args.extend_from_slice(extra);
        let script = workload(passes);
        args.extend(["--", "sh", "-c", &script]);
        let recorded = common::succeeded(util::profiler().current_dir(dir).args(&args));
        let perf_data = format!("{name}.perf");
        let mut args = vec![
            "record",
            "-q",
            "-e",
            "cpu-clock:u",
            "-F",
            rate,
            "-o",
            &perf_data,
        ];
        args.extend_from_slice(extra);
        args.extend(["--", "sh", "-c", &script]);
        let perf = Command::new("perf").current_dir(dir).args(&args).output();
        assert!(perf.is_ok_and(|o| o.status.success()), "perf record failed");
        String::from_utf8_lossy(&recorded.stderr)
            .lines()
            .find(|l| l.contains(" samples ("))
            .unwrap_or_default()
            .trim_start_matches("profiler: ")
            .to_owned()
    };
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let ours = env!("CARGO_BIN_EXE_profiler");

    writeln!(page, "### Reports\n").unwrap();
    writeln!(
        page,
        "The workload: passes of `profiler symbolize --inlines` over the 100000 addresses above, \
         run by the debug build, recorded by each profiler in the same way (`profiler record -e \
         cpu-clock`, `perf record -e cpu-clock:u`). Reports go to /dev/null; ours keep names between runs, so \
         after the first run of each the names are read back: the medians are warm figures \
         (report_sizes has cold ones). By default the \
         report names the functions inlined into each row from DWARF; `--inline` counts code \
         as the function inlined there; perf report reads symbol tables only.\n"
    )
    .unwrap();

    let flat = record("big", &[], RATE, PASSES);
    let (big_data, big_perf) = (path("big.data"), path("big.perf"));
    writeln!(page, "**Flat**: {PASSES} passes at {RATE} Hz ({flat}).\n").unwrap();
    report_table(
        page,
        runs,
        &[
            ("profiler report", ours, vec!["report", "-i", &big_data]),
            (
                "profiler report --inline",
                ours,
                vec!["report", "--inline", "-i", &big_data],
            ),
            (
                "perf report --stdio",
                "perf",
                vec!["report", "--stdio", "-i", &big_perf],
            ),
        ],
        &[
            (0, "profiler report", 0.3, 0.5),
            (1, "profiler report --inline", 0.5, 1.0),
        ],
    );

    let graphs = record("g", &["-g"], RATE, CALL_GRAPH_PASSES);
    let (g_data, g_perf) = (path("g.data"), path("g.perf"));
    writeln!(
        page,
        "**Frame-pointer call graphs** (`-g`): {CALL_GRAPH_PASSES} passes at {RATE} Hz ({graphs}).\n"
    )
    .unwrap();
    report_table(
        page,
        runs,
        &[
            (
                "profiler report --children",
                ours,
                vec!["report", "--children", "-i", &g_data],
            ),
            (
                "perf report --stdio --children",
                "perf",
                vec!["report", "--stdio", "--children", "-i", &g_perf],
            ),
        ],
        &[(0, "profiler report --children", 0.3, f64::NAN)],
    );

    let dwarf = record(
        "dwarf",
        &["--call-graph", "dwarf"],
        DWARF_RATE,
        DWARF_PASSES,
    );
    let (dwarf_data, dwarf_perf) = (path("dwarf.data"), path("dwarf.perf"));
    writeln!(
        page,
        "**Stack copies unwound at report time** (`--call-graph dwarf`): {DWARF_PASSES} pass at \
         {DWARF_RATE} Hz ({dwarf}); perf unwinds with its own unwinder (libdw or libunwind), \
         once, as it is slow.\n"
    )
    .unwrap();
    report_table(
        page,
        runs,
        &[
            (
                "profiler report --children",
                ours,
                vec!["report", "--children", "-i", &dwarf_data],
            ),
            ("profiler report", ours, vec!["report", "-i", &dwarf_data]),
            (
                "perf report --stdio --children",
                "perf",
                vec!["report", "--stdio", "--children", "-i", &dwarf_perf],
            ),
        ],
        &[
            (0, "profiler report --children", 0.2, f64::NAN),
            (1, "profiler report", 0.2, f64::NAN),
        ],
    );
}

/// `0.41`, `0.0019`: two significant digits.
fn ratio(value: f64) -> String {
    match value {
        v if v >= 0.1 || v == 0.0 || !v.is_finite() => format!("{v:.2}"),
        v => {
            let digits = (1.0 - v.log10().floor()) as usize;
            format!("{v:.digits$}")
        }
    }
}

/// Times `rows` (the last is perf's, run once if it takes over 20 s), and
/// says how each of `ratios` (row, name, target time ratio, target memory
/// ratio) compares with perf's.
fn report_table(
    page: &mut String,
    runs: usize,
    rows: &[(&str, &str, Vec<&str>)],
    ratios: &[(usize, &str, f64, f64)],
) {
    let mut measures: Vec<Vec<Measured>> = vec![Vec::new(); rows.len()];
    for run in 0..runs {
        for (i, (_, program, args)) in rows.iter().enumerate() {
            let slow = i == rows.len() - 1 && measures[i].first().is_some_and(|m| m.wall > 20.0);
            if run > 0 && slow {
                continue;
            }
            measures[i].extend(measure(program, args, None));
        }
    }
    writeln!(page, "| command | wall s | CPU s | peak memory MiB |").unwrap();
    writeln!(page, "| --- | --- | --- | --- |").unwrap();
    let medians: Vec<Option<Measured>> = (measures.iter())
        .map(|m| (!m.is_empty()).then(|| medians(m)))
        .collect();
    for ((name, _, _), m) in rows.iter().zip(&medians) {
        match m {
            Some(m) => writeln!(
                page,
                "| {name} | {:.2} | {:.2} | {:.0} |",
                m.wall, m.cpu, m.memory
            )
            .unwrap(),
            None => writeln!(page, "| {name} | failed | | |").unwrap(),
        }
    }
    writeln!(page).unwrap();
    let Some(Some(perf)) = medians.last() else {
        return;
    };
    let perf_name = rows.last().map_or("perf", |r| r.0);
    if perf.wall > 3.0 * perf.cpu {
        writeln!(
            page,
            "{perf_name} spent {:.2} s of CPU in {:.2} s: the rest went to the GNU addr2line \
             processes it runs to find the inlined frames of the stacks, whose CPU time is not \
             counted in its own. Its wall time is the measure of the work here.\n",
            perf.cpu, perf.wall
        )
        .unwrap();
    }
    for &(row, name, time_target, memory_target) in ratios {
        let Some(m) = medians[row] else { continue };
        let verdict = |ratio: f64, target: f64| match ratio <= target {
            true => format!("target ≤ {target}×, met"),
            false => format!("target ≤ {target}×, missed"),
        };
        let mut line = format!(
            "{name}: {}× {perf_name}'s wall time ({}), {}× its CPU time, {:.2}× its peak \
             memory",
            ratio(m.wall / perf.wall),
            verdict(m.wall / perf.wall, time_target),
            ratio(m.cpu / perf.cpu),
            m.memory / perf.memory,
        );
        if !memory_target.is_nan() {
            write!(
                line,
                " ({})",
                verdict(m.memory / perf.memory, memory_target)
            )
            .unwrap();
        }
        writeln!(page, "- {line}.").unwrap();
    }
    writeln!(page).unwrap();
}
