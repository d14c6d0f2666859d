//! Samples lost under load: more threads than CPUs, each sample carrying
//! a copy of the stack, recorded by the profiler and by `perf record` in
//! the same run; written to BENCHMARKS.md.
//!
//! `cargo bench --bench losses [-- RUNS]` (default 3 runs per figure).
//! Runs of the two tools are interleaved; figures are medians. As root,
//! the profiler also runs without CAP_SYS_NICE (under `setpriv`), which
//! shows what its drainer's real-time priority gives.

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
/// perf's build-id pass after recording aborts on this machine's kernel
/// (perf 6.1.192, Linux 6.18); it comes after the samples are written.
const NO_BUILD_ID: &str = "--no-buildid";
/// The sampling rates, lowest first.
const RATES: [&str; 3] = ["4000", "10000", "20000"];

/// One recording's counts.
#[derive(Clone, Copy)]
struct Counts {
    wall: f64,
    samples: u64,
    lost: u64,
    /// The share of whole stacks, percent (the profiler's).
    whole: Option<f64>,
}

impl Counts {
    fn lost_percent(&self) -> f64 {
        self.lost as f64 * 100.0 / (self.samples + self.lost).max(1) as f64
    }
}

/// One way of recording, shown as one row.
struct Configuration {
    stacks: &'static str,
    /// The tool and its `record` options.
    command: Vec<String>,
    /// Run without CAP_SYS_NICE (as root: the recorder's priority stays).
    without_nice: bool,
    /// What the row shows of the levers, after the command.
    note: &'static str,
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
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        (status.lines()).any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
    });

    let mut page = String::new();
    writeln!(page, "## Samples lost under load\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench losses` on {}{}, on a machine shared with other \
         builds, so the CPUs the workload competes for are busier than its own {THREADS} \
         threads make them. Medians of {runs} interleaved runs. Workload: \
         `fixtures/programs/manythreads {THREADS} {UNITS}`: {THREADS} threads working at once \
         on 2 CPUs, sampled on `cpu-clock` in user space; the recorder is one more thread \
         wanting a CPU. Lost is the share of samples the kernel dropped because a ring buffer \
         was full, counted from each recording's records. Whole stacks: the share of the profiler's stacks that reached the start of \
         their thread, as `record` says.\n",
        common::machine(),
        if root { ", as root" } else { "" },
    )
    .unwrap();
    writeln!(
        page,
        "| rate | stacks | command | wall s | samples | lost | lost % | whole stacks |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    let command = |tool: &str, flags: &[&str]| -> Vec<String> {
        [tool, "record"]
            .iter()
            .chain(flags)
            .map(|a| a.to_string())
            .collect()
    };
    let row = |stacks: &'static str, tool: &str, flags: &[&str], without_nice: bool, note| {
        Configuration {
            stacks,
            command: command(tool, flags),
            without_nice,
            note,
        }
    };
    let dwarf = ["--call-graph", "dwarf"];
    let no_nice = "without CAP_SYS_NICE: the drainer at the ordinary priority";
    let mut configurations = vec![
        row("dwarf", "profiler", &dwarf, false, ""),
        row("dwarf", "profiler", &dwarf, true, no_nice),
        (row(
            "dwarf",
            "profiler",
            &["--call-graph", "dwarf,4096"],
            false,
            "",
        ))
        .noted("half the stack copied"),
        row(
            "dwarf",
            "profiler",
            &["--call-graph", "dwarf", "--mmap-pages", "1024"],
            false,
            "",
        )
        .noted("the former 4 MiB rings"),
        row(
            "dwarf",
            "perf",
            &[&dwarf[..], &[NO_BUILD_ID]].concat(),
            false,
            "",
        ),
        row("fp", "profiler", &["-g"], false, ""),
        row("fp", "profiler", &["-g"], true, no_nice),
        row("fp", "perf", &["-g", NO_BUILD_ID], false, ""),
    ];
    if !root {
        configurations.retain(|c| !c.without_nice);
    }
    // Lost %, at the highest rate, of each configuration.
    let mut at_top: Vec<Option<f64>> = vec![None; configurations.len()];
    for rate in RATES {
        let mut measured: Vec<Vec<Counts>> = vec![Vec::new(); configurations.len()];
        for _ in 0..runs {
            for (configuration, counts) in configurations.iter().zip(&mut measured) {
                if configuration.command[0] == "perf" && !perf_available {
                    continue;
                }
                counts.push(record(&dir, configuration, rate, program));
            }
        }
        for ((configuration, counts), top) in configurations.iter().zip(&measured).zip(&mut at_top)
        {
            if counts.is_empty() {
                continue;
            }
            let mut counts = counts.clone();
            counts.sort_by(|a, b| a.lost_percent().total_cmp(&b.lost_percent()));
            let m = counts[counts.len() / 2];
            let wall = common::median(counts.iter().map(|c| c.wall).collect());
            *top = Some(m.lost_percent());
            let mut shown = format!("`{}`", configuration.command.join(" "));
            if !configuration.note.is_empty() {
                write!(shown, " ({})", configuration.note).unwrap();
            }
            let whole = match m.whole {
                Some(whole) => format!("{whole:.1}%"),
                None => "-".to_owned(),
            };
            writeln!(
                page,
                "| {rate} Hz | {} | {shown} | {wall:.2} | {} | {} | {:.1}% | {whole} |",
                configuration.stacks,
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
         the recorder is woken when one is a quarter full. As root or with CAP_SYS_NICE the \
         thread that drains them runs at real-time priority (`SCHED_FIFO` 1) while it drains; \
         the command keeps its own. What each lever gives: the rows without CAP_SYS_NICE are \
         the drainer at the ordinary priority, the `dwarf,4096` rows half the stack copy, the \
         `--mmap-pages 1024` rows an eighth of the ring (the wake-up watermark, a quarter of \
         the ring, moves with it). The stack copy stays 8192 bytes by default, as perf's: this \
         workload's stacks are a few frames deep, and deeper ones need the bytes."
    )
    .unwrap();
    for stacks in ["dwarf", "fp"] {
        let lost = |tool: &str| {
            (configurations.iter().zip(&at_top))
                .find(|(c, _)| {
                    c.stacks == stacks
                        && c.command[0] == tool
                        && !c.without_nice
                        && c.note.is_empty()
                })
                .and_then(|(_, lost)| *lost)
        };
        let Some(ours) = lost("profiler") else {
            continue;
        };
        let verdict = match (root, ours < 10.0) {
            (false, _) => "not run as root, so the target does not apply",
            (true, true) => "target under 10% as root: met",
            (true, false) => "target under 10% as root: not met",
        };
        let perf = lost("perf")
            .map(|p| format!(", perf {p:.1}%"))
            .unwrap_or_default();
        writeln!(
            page,
            "\nAt {} Hz with {stacks} stacks the profiler lost {ours:.1}%{perf} ({verdict}).",
            RATES[RATES.len() - 1]
        )
        .unwrap();
    }
    common::write_section("losses", &page);
}

impl Configuration {
    fn noted(self, note: &'static str) -> Configuration {
        Configuration { note, ..self }
    }
}

/// Runs a configuration (the profiler's or perf's `record ...`) on the
/// workload at `rate` and reads back its samples, losses and stacks.
fn record(dir: &Path, configuration: &Configuration, rate: &str, program: &str) -> Counts {
    let command = &configuration.command;
    let perf = command[0] == "perf";
    let data = if perf { "load.perf" } else { "load.data" };
    let mut process = match perf {
        true => Command::new("perf"),
        false => util::profiler(),
    };
    if configuration.without_nice {
        let tool = process.get_program().to_owned();
        let mut wrapped = Command::new("setpriv");
        wrapped
            .args(["--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice"])
            .arg(tool)
            .envs(process.get_envs().filter_map(|(k, v)| Some((k, v?))));
        process = wrapped;
    }
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
        whole: (!perf).then(|| whole_stacks(&output)).flatten(),
    }
}

/// The share of stacks `record` says reached the start of their thread:
/// `... 97.2% reached the start of their program or thread ...`.
fn whole_stacks(output: &Output) -> Option<f64> {
    let text = String::from_utf8_lossy(&output.stderr);
    let line = text.lines().find(|l| l.contains("% reached the start"))?;
    let before = line.split("% reached").next()?;
    before.rsplit(' ').next()?.parse().ok()
}
