//! What recording costs beyond the program's own work, against `perf
//! record` in the same run: the recorder's own CPU at 10 kHz, samples lost
//! with dwarf stacks at 10 kHz, the size of recordings without stacks, with
//! `-g` and with dwarf stacks at each compression level against perf.data,
//! the time `report` takes on compressed and plain recordings, and the size
//! and memory of histogram recordings of a 10-second and a 60-second run;
//! written to BENCHMARKS.md.
//!
//! `cargo bench --bench recording [-- RUNS]` (default 3 runs per figure).
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

/// Rounds of the split fixture (about 0.11 s of CPU each): about 27 s, so
/// that a recorder's cost of 0.1% is 3 of the kernel's 10 ms clock ticks.
const OWN_CPU_ROUNDS: &str = "250";
/// About 1.1 s, for counting lost samples.
const DWARF_ROUNDS: &str = "10";
/// About 1.1 s, for recording sizes at 10 kHz.
const SIZE_ROUNDS: &str = "10";
/// About 2.2 s, for report times at 20 kHz (some 45k samples, a typical
/// recording's size).
const REPORT_ROUNDS: &str = "20";
/// About 10 s and 60 s, for histogram recordings.
const SHORT_ROUNDS: &str = "90";
const LONG_ROUNDS: &str = "545";

/// Which recorder runs: the profiler or perf.
#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Profiler,
    Perf,
}

impl Tool {
    fn command(self, dir: &Path, data: &str, flags: &[&str]) -> Command {
        let mut command = match self {
            Tool::Profiler => util::profiler(),
            Tool::Perf => Command::new("perf"),
        };
        let event = match self {
            Tool::Profiler => "cpu-clock",
            Tool::Perf => "cpu-clock:u",
        };
        command
            .current_dir(dir)
            .args(["record", "-e", event, "-o", data])
            .args(flags)
            .arg("--")
            .stdin(Stdio::null());
        command
    }
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let split = util::fixture("split");
    let split = split.to_str().unwrap();
    let dir = util::scratch("bench-recording");
    let perf_available = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let tools: &[Tool] = match perf_available {
        true => &[Tool::Profiler, Tool::Perf],
        false => &[Tool::Profiler],
    };

    let mut page = String::new();
    writeln!(page, "## What recording costs\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench recording` on {}. Medians of {runs} interleaved runs \
         unless said otherwise. Both tools sample `cpu-clock` in user space \
         (`perf record -e cpu-clock:u`). The machine was shared with other builds and \
         tests while it ran: ratios between rows of one table are what count.{}\n",
        common::machine(),
        if perf_available {
            ""
        } else {
            " perf is not installed: its rows are missing."
        }
    )
    .unwrap();
    own_cpu(&mut page, &dir, split, tools, runs);
    dwarf_losses(&mut page, &dir, split, tools, runs);
    sizes(&mut page, &dir, split, tools, runs);
    report_times(&mut page, &dir, split, runs);
    histograms(&mut page, &dir, split, perf_available);
    common::write_section("recording", &page);
}

/// The recorder's own CPU: the whole command's CPU (the kernel's accounting
/// of reaped children) less the workload's, which the workload's shell
/// measures itself with `times`. The kernel's sampling interrupts are
/// charged to the task they interrupt, so they count as the workload's.
fn own_cpu(page: &mut String, dir: &Path, split: &str, tools: &[Tool], runs: usize) {
    writeln!(page, "### The recorder's own CPU at 10 kHz\n").unwrap();
    writeln!(
        page,
        "Workload: `bash -c 'split {OWN_CPU_ROUNDS}; times'` (about 27 s of CPU). The \
         recorder's own CPU is the whole command's CPU less the workload's (bash's `times`, \
         which includes the kernel's sampling interrupts, charged to the task they \
         interrupt). The target: at most 0.5% of the workload's.\n"
    )
    .unwrap();
    writeln!(
        page,
        "| command | workload CPU s | recorder CPU s | recorder / workload | samples |\n\
         | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    let script = "\"$0\" \"$1\" >/dev/null; times";
    // The profiler compresses by default; plain, it does not.
    let mut variants: Vec<(Tool, &[&str], &str)> = vec![
        (Tool::Profiler, &[], "profiler record (compressed, level 1)"),
        (
            Tool::Profiler,
            &["--compression-level=0"],
            "profiler record --compression-level=0",
        ),
    ];
    if tools.contains(&Tool::Perf) {
        variants.push((Tool::Perf, &[], "perf record"));
    }
    let mut measures: Vec<Vec<(f64, f64, u64)>> = vec![Vec::new(); variants.len()];
    for _ in 0..runs {
        for ((tool, flags, _), measures) in variants.iter().zip(&mut measures) {
            let data = match tool {
                Tool::Profiler => "own.data",
                Tool::Perf => "own.perf",
            };
            let mut command = tool.command(dir, data, &[&["-F", "10000"], *flags].concat());
            command.args(["bash", "-c", script, split, OWN_CPU_ROUNDS]);
            let before = common::children_cpu_seconds();
            let output = common::succeeded(&mut command);
            let total = common::children_cpu_seconds() - before;
            let workload = shell_times(&output);
            let samples = counts(*tool, dir, data, &output).0;
            measures.push((workload, total - workload, samples));
        }
    }
    for ((_, _, what), measures) in variants.iter().zip(&measures) {
        let workload = common::median(measures.iter().map(|m| m.0).collect());
        let own = common::median(measures.iter().map(|m| m.1).collect());
        let share = common::median(measures.iter().map(|m| m.1 / m.0).collect());
        let mut samples: Vec<u64> = measures.iter().map(|m| m.2).collect();
        samples.sort();
        writeln!(
            page,
            "| {what} | {workload:.2} | {own:.3} | {:.2}% | {} |",
            share * 100.0,
            samples[samples.len() / 2]
        )
        .unwrap();
    }
    writeln!(page).unwrap();
}

/// Samples lost by a single-threaded program recorded with dwarf stacks.
fn dwarf_losses(page: &mut String, dir: &Path, split: &str, tools: &[Tool], runs: usize) {
    writeln!(page, "### Dwarf stacks at 10 kHz\n").unwrap();
    writeln!(
        page,
        "Workload: `split {DWARF_ROUNDS}` recorded with `--call-graph dwarf -F 10000` (each \
         tool's default stack copy and ring size). Lost is the share of samples the kernel \
         dropped because a ring buffer was full; the worst run is shown. The target: under 1%.\n"
    )
    .unwrap();
    writeln!(
        page,
        "| command | samples | lost | lost % |\n| --- | --- | --- | --- |"
    )
    .unwrap();
    let mut measures: Vec<Vec<(u64, u64)>> = vec![Vec::new(); tools.len()];
    for _ in 0..runs {
        for (tool, measures) in tools.iter().zip(&mut measures) {
            let data = match tool {
                Tool::Profiler => "dwarf.data",
                Tool::Perf => "dwarf.perf",
            };
            let flags = ["--call-graph", "dwarf", "-F", "10000"];
            let mut command = tool.command(dir, data, &flags);
            command.args([split, DWARF_ROUNDS]);
            let output = common::succeeded(&mut command);
            measures.push(counts(*tool, dir, data, &output));
        }
    }
    for (tool, measures) in tools.iter().zip(&measures) {
        let lost_share =
            |&(samples, lost): &(u64, u64)| lost as f64 / (samples + lost).max(1) as f64;
        let worst = measures
            .iter()
            .max_by(|a, b| lost_share(a).total_cmp(&lost_share(b)))
            .unwrap();
        writeln!(
            page,
            "| {} --call-graph dwarf | {} | {} | {:.1}% |",
            name(*tool),
            worst.0,
            worst.1,
            lost_share(worst) * 100.0
        )
        .unwrap();
    }
    writeln!(page).unwrap();
}

/// The stacks each size is measured with, and their flags.
const STACKS: [(&str, &[&str]); 3] = [
    ("none", &[]),
    ("-g", &["-g"]),
    ("dwarf", &["--call-graph", "dwarf"]),
];

/// The profiler's compression levels measured: plain, the default, and two
/// more.
const LEVELS: [&str; 4] = ["0", "1", "3", "9"];

/// Bytes per sample of each recording against perf.data's for the same
/// workload: sample counts differ from run to run, so sizes are compared
/// per sample.
fn sizes(page: &mut String, dir: &Path, split: &str, tools: &[Tool], runs: usize) {
    writeln!(page, "### Recording sizes\n").unwrap();
    writeln!(
        page,
        "Workload: `split {SIZE_ROUNDS}` at 10 kHz, without stacks, with `-g` and with \
         `--call-graph dwarf` (each tool's default stack copy). The profiler's recordings at \
         `--compression-level` 0 (plain), 1 (the default, `-z`), 3 and 9; perf.data as \
         `perf record` writes it by default (uncompressed). Bytes per sample, medians; the \
         target: at most 0.25× perf.data's.\n"
    )
    .unwrap();
    writeln!(
        page,
        "| stacks | command | samples | bytes | bytes per sample | × perf.data |\n\
         | --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    for (stacks, flags) in STACKS {
        // (what, samples, bytes) of each run, each command.
        let mut commands: Vec<(String, Vec<(u64, u64)>)> = Vec::new();
        for _ in 0..runs {
            let mut at = 0;
            for tool in tools {
                let levels: &[&str] = match tool {
                    Tool::Profiler => &LEVELS,
                    Tool::Perf => &[""],
                };
                for level in levels {
                    let data = format!("size.{}", if level.is_empty() { "perf" } else { level });
                    let mut all = vec!["-F", "10000"];
                    all.extend(flags);
                    let option = format!("--compression-level={level}");
                    if !level.is_empty() {
                        all.push(&option);
                    }
                    let mut command = tool.command(dir, &data, &all);
                    command.args([split, SIZE_ROUNDS]);
                    let output = common::succeeded(&mut command);
                    let samples = counts(*tool, dir, &data, &output).0;
                    let bytes = std::fs::metadata(dir.join(&data)).map_or(0, |m| m.len());
                    if commands.len() <= at {
                        let what = match tool {
                            Tool::Profiler => format!("profiler record {option}"),
                            Tool::Perf => "perf record".to_owned(),
                        };
                        commands.push((what, Vec::new()));
                    }
                    commands[at].1.push((samples, bytes));
                    at += 1;
                }
            }
        }
        let per_sample = |runs: &[(u64, u64)]| {
            common::median(
                runs.iter()
                    .map(|&(s, b)| b as f64 / s.max(1) as f64)
                    .collect(),
            )
        };
        let perf = commands
            .iter()
            .find(|(what, _)| what.starts_with("perf"))
            .map(|(_, runs)| per_sample(runs));
        for (what, runs) in &commands {
            let median = |f: fn(&(u64, u64)) -> u64| {
                common::median(runs.iter().map(|r| f(r) as f64).collect())
            };
            let each = per_sample(runs);
            let ratio = perf.map_or(String::new(), |p| format!("{:.3}", each / p));
            writeln!(
                page,
                "| {stacks} | {what} | {:.0} | {:.0} | {each:.1} | {ratio} |",
                median(|r| r.0),
                median(|r| r.1),
            )
            .unwrap();
        }
    }
    writeln!(page).unwrap();
}

/// `report` on the same recording written compressed and plain: the time
/// decompressing adds.
fn report_times(page: &mut String, dir: &Path, split: &str, runs: usize) {
    writeln!(page, "### Report on compressed and plain recordings\n").unwrap();
    writeln!(
        page,
        "Workload: `split {REPORT_ROUNDS}` at 20 kHz, recorded at the default level and with \
         `--compression-level=0`; `profiler report` of each to /dev/null, medians of {} runs \
         interleaved. The target: no slower on the compressed recording.\n",
        runs * 3
    )
    .unwrap();
    writeln!(
        page,
        "| stacks | recording | samples | bytes | wall s | CPU s |\n| --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    let profiler = util::profiler();
    let program = profiler.get_program().to_str().unwrap().to_owned();
    for (stacks, flags) in &STACKS[..2] {
        let mut recordings = Vec::new();
        for (what, level) in [("compressed (level 1)", "1"), ("plain (level 0)", "0")] {
            let data = format!("report.{level}");
            let option = format!("--compression-level={level}");
            let mut all = vec!["-F", "20000", &option];
            all.extend(*flags);
            let mut command = Tool::Profiler.command(dir, &data, &all);
            command.args([split, REPORT_ROUNDS]);
            let output = common::succeeded(&mut command);
            let samples = common::profiler_counts(&output).0;
            let path = dir.join(&data).to_str().unwrap().to_owned();
            let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
            recordings.push((what, path, samples, bytes, Vec::new()));
        }
        for _ in 0..runs * 3 {
            for (_, path, _, _, measures) in &mut recordings {
                let args = ["report", "-i", path.as_str()];
                measures.push(common::measure(&program, &args, None).unwrap());
            }
        }
        for (what, _, samples, bytes, measures) in &recordings {
            let m = common::medians(measures);
            writeln!(
                page,
                "| {stacks} | {what} | {samples} | {bytes} | {:.3} | {:.3} |",
                m.wall, m.cpu
            )
            .unwrap();
        }
    }
    writeln!(page).unwrap();
}

/// Histogram recordings of a short and a long run against perf.data of the
/// long run: the file's size and the recorder's peak memory.
fn histograms(page: &mut String, dir: &Path, split: &str, perf_available: bool) {
    writeln!(page, "### Histogram recordings\n").unwrap();
    writeln!(
        page,
        "Workload: `split {SHORT_ROUNDS}` (about 10 s) and `split {LONG_ROUNDS}` (about 60 s) \
         at 4000 Hz, one run each. `--histogram` keeps bucket counts over the text instead of \
         samples; perf has no such mode, so its row is the perf.data of the 60 s run. Peak \
         memory is the largest process of the command (the recorder's; `split` holds under \
         2 MiB). The target: a histogram recording independent of the run's length, and at \
         least 100× smaller than perf.data of the 60 s run.\n"
    )
    .unwrap();
    writeln!(
        page,
        "| command | run | wall s | recording bytes | peak memory MiB | samples |\n\
         | --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    let flags = ["-F", "4000"];
    let mut runs = vec![
        (Tool::Profiler, SHORT_ROUNDS, "short.data", "10 s"),
        (Tool::Profiler, LONG_ROUNDS, "long.data", "60 s"),
    ];
    if perf_available {
        runs.push((Tool::Perf, LONG_ROUNDS, "long.perf", "60 s"));
    }
    let mut sizes = Vec::new();
    for (tool, rounds, data, run) in runs {
        let mut flags = flags.to_vec();
        if tool == Tool::Profiler {
            flags.push("--histogram");
        }
        let recorder = tool.command(dir, data, &flags);
        let mut command = Command::new("/usr/bin/time");
        command
            .current_dir(dir)
            .args(["-f", "%e %M", "--"])
            .arg(recorder.get_program())
            .args(recorder.get_args())
            .args([split, rounds])
            .stdin(Stdio::null());
        let output = common::succeeded(&mut command);
        let time = String::from_utf8_lossy(&output.stderr);
        let mut fields = time.lines().last().unwrap_or_default().split_whitespace();
        let wall: f64 = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0.0);
        let peak_kib: f64 = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0.0);
        let bytes = std::fs::metadata(dir.join(data)).map_or(0, |m| m.len());
        let (samples, _) = counts(tool, dir, data, &output);
        let what = match tool {
            Tool::Profiler => "profiler record --histogram",
            Tool::Perf => "perf record",
        };
        writeln!(
            page,
            "| {what} | {run} | {wall:.1} | {bytes} | {:.1} | {samples} |",
            peak_kib / 1024.0
        )
        .unwrap();
        sizes.push(bytes);
    }
    writeln!(page).unwrap();
    write!(
        page,
        "The 60 s histogram recording is {:.3}× the size of the 10 s one",
        sizes[1] as f64 / sizes[0].max(1) as f64
    )
    .unwrap();
    match sizes.get(2) {
        Some(perf) => writeln!(
            page,
            "; perf.data of the 60 s run is {:.0}× the 60 s histogram recording.",
            *perf as f64 / sizes[1].max(1) as f64
        ),
        None => writeln!(page, "."),
    }
    .unwrap();
}

fn name(tool: Tool) -> &'static str {
    match tool {
        Tool::Profiler => "profiler record",
        Tool::Perf => "perf record",
    }
}

/// Samples and lost samples, from the recorder's own summary.
fn counts(tool: Tool, dir: &Path, data: &str, output: &Output) -> (u64, u64) {
    match tool {
        Tool::Profiler => common::profiler_counts(output),
        Tool::Perf => common::perf_counts(output, &dir.join(data)),
    }
}

/// The CPU seconds bash's `times` printed: the shell's own user and system
/// time, then its children's (`0m0.001s 0m0.000s`).
fn shell_times(output: &Output) -> f64 {
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .rev()
        .take(2)
        .flat_map(str::split_whitespace)
        .map(|time| {
            let (minutes, seconds) = time.trim_end_matches('s').split_once('m').unwrap();
            minutes.parse::<f64>().unwrap() * 60.0 + seconds.parse::<f64>().unwrap()
        })
        .sum()
}
