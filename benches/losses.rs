//! Samples lost under load: more threads than CPUs, each sample carrying
//! a copy of the stack, recorded by the profiler and by `perf record` in
//! the same run; written to BENCHMARKS.md.
//!
//! `cargo bench --bench losses [-- RUNS]` (default 3 runs per figure).
//! Runs of the two tools are interleaved; figures are medians.

// A benchmark stops at the first thing that fails, panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

#[allow(dead_code)]
mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// The load: this many threads, each burning this many units of work.
const THREADS: &str = "200";
const UNITS: &str = "10";

/// One recording's counts.
#[derive(Clone, Copy)]
struct Counts {
    wall: f64,
    samples: u64,
    lost: u64,
}

impl Counts {
    fn lost_percent(&self) -> f64 {
        self.lost as f64 * 100.0 / (self.samples + self.lost).max(1) as f64
    }
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let program = util::fixture("manythreads");
    let program = program.to_str().unwrap();
    let dir = util::scratch("bench-losses");
    let perf_available = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());

    let mut page = String::new();
    writeln!(page, "## Samples lost under load\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench losses` on {}. Medians of {runs} interleaved runs. \
         Workload: `fixtures/programs/manythreads {THREADS} {UNITS}`: {THREADS} threads \
         working at once on 2 CPUs, sampled on `cpu-clock` in user space; the recorder is one \
         more thread wanting a CPU. Lost is the share of samples the kernel dropped because a \
         ring buffer was full.\n",
        common::machine()
    )
    .unwrap();
    writeln!(
        page,
        "| rate | stacks | command | wall s | samples | lost | lost % |\n| --- | --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    let command = |tool: &str, flags: &[&str]| -> Vec<String> {
        [tool, "record"]
            .iter()
            .chain(flags)
            .map(|a| a.to_string())
            .collect()
    };
    let ours = |flags: &[&str]| command("profiler", flags);
    let perf = |flags: &[&str]| command("perf", flags);
    for rate in ["4000", "20000"] {
        let configurations: [(&str, Vec<String>); 6] = [
            ("dwarf", ours(&["--call-graph", "dwarf"])),
            (
                "dwarf",
                ours(&["--call-graph", "dwarf", "--mmap-pages", "1024"]),
            ),
            ("dwarf", perf(&["--call-graph", "dwarf"])),
            ("fp", ours(&["-g"])),
            ("fp", ours(&["--call-graph", "fp,0"])),
            ("fp", perf(&["-g"])),
        ];
        let mut measured: Vec<Vec<Counts>> = vec![Vec::new(); configurations.len()];
        for _ in 0..runs {
            for ((_, command), counts) in configurations.iter().zip(&mut measured) {
                if command[0] == "perf" && !perf_available {
                    continue;
                }
                counts.push(record(&dir, command, rate, program));
            }
        }
        for ((stacks, command), counts) in configurations.iter().zip(&measured) {
            if counts.is_empty() {
                continue;
            }
            let mut counts = counts.clone();
            counts.sort_by(|a, b| a.lost_percent().total_cmp(&b.lost_percent()));
            let m = counts[counts.len() / 2];
            let wall = common::median(counts.iter().map(|c| c.wall).collect());
            let mut shown = command.join(" ");
            if shown.ends_with("--mmap-pages 1024") {
                shown.push_str(" (the former ring size)");
            } else if shown.ends_with("fp,0") {
                shown.push_str(" (the former -g)");
            }
            writeln!(
                page,
                "| {rate} Hz | {stacks} | {shown} | {wall:.2} | {} | {} | {:.1}% |",
                m.samples,
                m.lost,
                m.lost_percent()
            )
            .unwrap();
        }
    }
    writeln!(
        page,
        "\nThe profiler's rings default to 32 MiB per CPU with dwarf stacks and 16 MiB with `-g` \
         (less where the locked-memory budget is smaller; this machine's root has none), and \
         the recorder is woken when one is a quarter full."
    )
    .unwrap();
    common::write_section("losses", &page);
}

/// Runs `command` (the profiler's or perf's `record ...`) on the workload at
/// `rate` and reads back its samples and losses.
fn record(dir: &Path, command: &[String], rate: &str, program: &str) -> Counts {
    let perf = command[0] == "perf";
    let data = if perf { "load.perf" } else { "load.data" };
    let mut process = match perf {
        true => Command::new("perf"),
        false => util::profiler(),
    };
    process
        .current_dir(dir)
        .args(&command[1..])
        .args(["-e", if perf { "cpu-clock:u" } else { "cpu-clock" }])
        .args(["-F", rate, "-o", data, "--", program, THREADS, UNITS])
        .stdin(Stdio::null());
    let start = Instant::now();
    let output: Output = process.output().unwrap();
    let wall = start.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (samples, lost) = match perf {
        true => common::perf_counts(&output, &dir.join(data)),
        false => common::profiler_counts(&output),
    };
    Counts {
        wall,
        samples,
        lost,
    }
}
