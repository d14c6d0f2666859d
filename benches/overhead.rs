//! Recording overhead and report time, against `perf` in the same run,
//! written to BENCHMARKS.md.
//!
//! `cargo bench --bench overhead [-- RUNS] [recording]` (default 5 runs per
//! figure; `recording`: the overhead table alone, printed rather than
//! written).
//! Runs of the bare program, `profiler record` and `perf record` are
//! interleaved so that drift in the machine's speed hits all alike; figures
//! are medians. CPU time is that of the whole command (profiler or perf
//! included), from the kernel's accounting of reaped children.

// A benchmark stops at the first thing that fails, panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

#[allow(dead_code)]
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

/// Sampling rates compared.
const RATES: [u64; 4] = [1000, 4000, 10000, 20000];
/// Rounds of the split fixture (about 0.14 s of CPU each).
const ROUNDS: &str = "10";

#[derive(Clone, Copy, Default)]
struct Measure {
    wall: f64,
    cpu: f64,
    samples: u64,
    lost: u64,
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let split = util::fixture("split");
    let dir = util::scratch("bench");
    let perf_available = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());

    let mut page = String::new();
    header(&mut page, runs, perf_available);
    overhead(&mut page, &split, &dir, runs, perf_available);
    // `-- recording`: the overhead alone, printed rather than written.
    if std::env::args().any(|a| a == "recording") {
        print!("{page}");
        return;
    }
    startup(&mut page, &dir, runs * 2, perf_available);
    report_time(&mut page, &split, &dir, runs, perf_available);
    annotate_time(&mut page, &dir, runs, perf_available);
    counting(&mut page, &split, &dir, runs, perf_available);
    call_graphs(&mut page, &dir, runs, perf_available);

    common::write_section("overhead", &page);
}

fn header(page: &mut String, runs: usize, perf_available: bool) {
    let perf = if perf_available {
        common::output_of(Command::new("perf").arg("--version"))
    } else {
        "no perf".into()
    };
    writeln!(page, "## Recording\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench overhead` on {}, {perf}. Medians of {runs} interleaved runs. \
         No hardware PMU on this machine: both tools sample `cpu-clock` in user space \
         (`perf record -e cpu-clock:u`).\n",
        common::machine()
    )
    .unwrap();
    match samply() {
        Ok(samply) => writeln!(
            page,
            "samply ({}) is the other peer for recording: `samply record --save-only -r RATE`; \
             it was installed with `cargo install samply --locked`, and records only where \
             kernel.perf_event_paranoid is 1 or less, root or not (it was {} for this run).\n",
            common::output_of(Command::new(samply).arg("--version")),
            common::output_of(Command::new("cat").arg("/proc/sys/kernel/perf_event_paranoid"))
        )
        .unwrap(),
        Err(why) => writeln!(page, "{why}: its rows are missing.\n").unwrap(),
    }
}

/// samply, where installed and able to record here; else why not.
fn samply() -> Result<PathBuf, String> {
    let samply = installed_samply().ok_or(
        "samply is not installed here (`cargo install samply --locked` puts it in ~/.cargo/bin)",
    )?;
    let dir = std::env::temp_dir();
    let probe = Command::new(&samply)
        .current_dir(&dir)
        .args([
            "record",
            "--save-only",
            "-o",
            "samply-probe.json.gz",
            "--",
            "true",
        ])
        .output()
        .map_err(|e| format!("samply cannot run: {e}"))?;
    let _ = std::fs::remove_file(dir.join("samply-probe.json.gz"));
    match probe.status.success() {
        true => Ok(samply),
        false => {
            let stderr = String::from_utf8_lossy(&probe.stderr);
            let why = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            Err(format!("samply refuses to record here (`{}`)", why.trim()))
        }
    }
}

/// samply, where installed: on the PATH, in ~/.cargo/bin, or in
/// target/bench-tools (`cargo install samply --locked --root target/bench-tools`).
fn installed_samply() -> Option<PathBuf> {
    let runs = |p: &Path| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    [
        Some(PathBuf::from("samply")),
        home.map(|h| h.join(".cargo/bin/samply")),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-tools/bin/samply")),
    ]
    .into_iter()
    .flatten()
    .find(|p| runs(p))
}

/// Bare program vs `profiler record` vs `perf record` at several rates.
fn overhead(page: &mut String, split: &Path, dir: &Path, runs: usize, perf_available: bool) {
    writeln!(page, "### Overhead\n").unwrap();
    writeln!(page, "Workload: `fixtures/programs/split {ROUNDS}` (CPU-bound, single-threaded). Ratios are against the bare program; lower is better. perf records with `--no-buildid`: its build-id pass after recording aborts on this machine's kernel (perf 6.1.192, Linux 6.18), so its times leave that pass out.\n").unwrap();
    writeln!(
        page,
        "| rate | command | wall s | wall × bare | CPU s | CPU × bare | samples | lost |"
    )
    .unwrap();
    writeln!(page, "| --- | --- | --- | --- | --- | --- | --- | --- |").unwrap();
    let split = split.to_str().unwrap();
    let samply = samply().ok();
    let mut sizes = Vec::new();
    for rate in RATES {
        let rate_text = rate.to_string();
        let (mut bare, mut ours, mut histogram, mut theirs, mut samplys) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let record = |extra: &[&str]| {
            let mut args = vec![
                "record",
                "-e",
                "cpu-clock",
                "-F",
                &rate_text,
                "-o",
                "bench.data",
            ];
            args.extend_from_slice(extra);
            args.extend(["--", split, ROUNDS]);
            let (mut m, output) = timed(util::profiler().current_dir(dir).args(&args));
            (m.samples, m.lost) = common::profiler_counts(&output);
            m
        };
        let bytes = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
        let (mut ours_bytes, mut histogram_bytes) = (0, 0);
        for _ in 0..runs {
            bare.push(timed(Command::new(split).arg(ROUNDS)).0);
            ours.push(record(&[]));
            ours_bytes = bytes("bench.data");
            histogram.push(record(&["--histogram"]));
            histogram_bytes = bytes("bench.data");
            if perf_available {
                let (mut m, output) = timed(Command::new("perf").current_dir(dir).args([
                    "record",
                    "--no-buildid",
                    "-e",
                    "cpu-clock:u",
                    "-F",
                    &rate_text,
                    "-o",
                    "perf.data",
                    "--",
                    split,
                    ROUNDS,
                ]));
                (m.samples, m.lost) = common::perf_counts(&output, &dir.join("perf.data"));
                theirs.push(m);
            }
            if let Some(samply) = &samply {
                let (m, _) = timed(Command::new(samply).current_dir(dir).args([
                    "record",
                    "--save-only",
                    "-r",
                    &rate_text,
                    "-o",
                    "samply.json.gz",
                    "--",
                    split,
                    ROUNDS,
                ]));
                samplys.push(m);
            }
        }
        let size = |name: &str| match std::fs::metadata(dir.join(name)) {
            Ok(m) => format!("{:.2}", m.len() as f64 / 1e6),
            Err(_) => "-".into(),
        };
        sizes.push(format!(
            "| {rate} Hz | {:.2} | {:.3} | {} | {} |",
            ours_bytes as f64 / 1e6,
            histogram_bytes as f64 / 1e6,
            size("perf.data"),
            if samply.is_some() {
                size("samply.json.gz")
            } else {
                "-".into()
            }
        ));
        let bare = median(&bare);
        row(
            page,
            &format!("{rate} Hz"),
            "bare program",
            bare,
            bare,
            false,
        );
        row(page, "", "profiler record", median(&ours), bare, true);
        row(
            page,
            "",
            "profiler record --histogram",
            median(&histogram),
            bare,
            true,
        );
        if perf_available {
            row(page, "", "perf record", median(&theirs), bare, true);
        }
        if !samplys.is_empty() {
            row(page, "", "samply record", median(&samplys), bare, false);
        }
    }
    writeln!(
        page,
        "\nRecording sizes, MB (the last run at each rate):\n\n| rate | profiler record | \
         profiler record --histogram | perf record | samply record |\n| --- | --- | --- | --- | --- |"
    )
    .unwrap();
    for line in sizes {
        writeln!(page, "{line}").unwrap();
    }
    writeln!(page).unwrap();
}

/// `record -- true`: the fixed cost of starting and finishing a recording.
fn startup(page: &mut String, dir: &Path, runs: usize, perf_available: bool) {
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..runs {
        ours.push(
            timed(util::profiler().current_dir(dir).args([
                "record",
                "-e",
                "cpu-clock",
                "-o",
                "true.data",
                "--",
                "true",
            ]))
            .0,
        );
        if perf_available {
            theirs.push(
                timed(Command::new("perf").current_dir(dir).args([
                    "record",
                    "-e",
                    "cpu-clock:u",
                    "-o",
                    "true.perf",
                    "--",
                    "true",
                ]))
                .0,
            );
        }
    }
    writeln!(page, "### Start-up: `record -- true`\n").unwrap();
    let medians = table(
        page,
        &[("profiler record", &ours), ("perf record", &theirs)],
    );
    if let [ours, theirs] = medians[..] {
        let speedup = theirs.wall / ours.wall;
        writeln!(page, "\nprofiler record finishes {speedup:.0}× faster.").unwrap();
    }
    writeln!(page).unwrap();
}

/// `profiler report` vs `perf report --stdio` on recordings of one workload.
fn report_time(page: &mut String, split: &Path, dir: &Path, runs: usize, perf_available: bool) {
    let split = split.to_str().unwrap();
    let rate = "20000";
    let rounds = "20";
    let recorded = util::profiler()
        .current_dir(dir)
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-F",
            rate,
            "-o",
            "report.data",
            "--",
            split,
            rounds,
        ])
        .output()
        .unwrap();
    let samples = common::profiler_counts(&recorded).0;
    if perf_available {
        Command::new("perf")
            .current_dir(dir)
            .args([
                "record",
                "-e",
                "cpu-clock:u",
                "-F",
                rate,
                "-o",
                "report.perf",
                "--",
                split,
                rounds,
            ])
            .output()
            .unwrap();
    }
    let (mut ours, mut folded, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    let report = |extra: &[&str]| {
        let mut args = vec!["report", "-i", "report.data"];
        args.extend_from_slice(extra);
        timed(util::profiler().current_dir(dir).args(&args)).0
    };
    for _ in 0..runs {
        ours.push(report(&[]));
        folded.push(report(&["--no-inline"]));
        if perf_available {
            let perf = ["report", "--stdio", "-i", "report.perf"];
            theirs.push(timed(Command::new("perf").current_dir(dir).args(perf)).0);
        }
    }
    writeln!(page, "### Report time\n").unwrap();
    writeln!(
        page,
        "Recordings of `split {rounds}` at {rate} Hz ({samples} samples in ours), reported to \
         /dev/null. By default the report names inlined functions from DWARF (here the debug \
         info of libc too, when its debug package is installed); with `--no-inline` it reads \
         symbol tables only, as perf report does.\n"
    )
    .unwrap();
    let rows = [
        ("profiler report", &ours),
        ("profiler report --no-inline", &folded),
        ("perf report --stdio", &theirs),
    ];
    if let [ours, folded, theirs] = table(page, &rows)[..] {
        writeln!(
            page,
            "\nprofiler report takes {:.2}× perf report's wall time, {:.2}× with --no-inline.",
            ours.wall / theirs.wall,
            folded.wall / theirs.wall
        )
        .unwrap();
    }
}

/// `profiler annotate` and `report --sort line` vs `perf annotate --stdio`
/// and `perf report --sort srcline`, on the recordings `report_time` made.
fn annotate_time(page: &mut String, dir: &Path, runs: usize, perf_available: bool) {
    let (mut ours, mut ours_lines, mut theirs, mut theirs_lines) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let profiler = |args: &[&str]| timed(util::profiler().current_dir(dir).args(args)).0;
    let perf = |args: &[&str]| timed(Command::new("perf").current_dir(dir).args(args)).0;
    for _ in 0..runs {
        ours.push(profiler(&["annotate", "-i", "report.data", "burn_60"]));
        ours_lines.push(profiler(&["report", "-i", "report.data", "--sort", "line"]));
        if perf_available {
            theirs.push(perf(&[
                "annotate",
                "--stdio",
                "-i",
                "report.perf",
                "burn_60",
            ]));
            theirs_lines.push(perf(&[
                "report",
                "--stdio",
                "--sort",
                "srcline",
                "-i",
                "report.perf",
            ]));
        }
    }
    writeln!(page, "\n### Annotate and lines\n").unwrap();
    writeln!(
        page,
        "The same recordings: `burn_60` annotated with source and disassembly (perf runs \
         objdump for it), and a flat profile by source line, to /dev/null.\n"
    )
    .unwrap();
    let rows = [
        ("profiler annotate burn_60", &ours),
        ("perf annotate --stdio burn_60", &theirs),
        ("profiler report --sort line", &ours_lines),
        ("perf report --stdio --sort srcline", &theirs_lines),
    ];
    if let [ours, theirs, ours_lines, theirs_lines] = table(page, &rows)[..] {
        writeln!(
            page,
            "\nprofiler annotate takes {:.2}× perf annotate's wall time; report by line {:.2}× \
             perf's.\n",
            ours.wall / theirs.wall,
            ours_lines.wall / theirs_lines.wall
        )
        .unwrap();
    }
}

/// `profiler stat` vs `perf stat` counting the same events of one workload.
fn counting(page: &mut String, split: &Path, dir: &Path, runs: usize, perf_available: bool) {
    let split = split.to_str().unwrap();
    let events = "task-clock,page-faults,context-switches";
    let (mut bare, mut ours, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        bare.push(timed(Command::new(split).current_dir(dir).arg("5")).0);
        let stat = ["stat", "-e", events, "--", split, "5"];
        ours.push(timed(util::profiler().current_dir(dir).args(stat)).0);
        if perf_available {
            let stat = ["stat", "-e", events, "--", split, "5"];
            theirs.push(timed(Command::new("perf").current_dir(dir).args(stat)).0);
        }
    }
    writeln!(page, "\n### Counting: `stat -e {events} -- split 5`\n").unwrap();
    let rows = [
        ("bare program", &bare),
        ("profiler stat", &ours),
        ("perf stat", &theirs),
    ];
    if let [bare, ours, theirs] = table(page, &rows)[..] {
        writeln!(
            page,
            "\nprofiler stat takes {:.3}× the bare program's wall time, perf stat {:.3}×.\n",
            ours.wall / bare.wall,
            theirs.wall / bare.wall
        )
        .unwrap();
    }
}

/// Recording and reporting call stacks, by frame pointers (the kernel's
/// chain alone, and with the caller it skips put back from the top of the
/// stack) and by stack copies, against `perf record -g` / `--call-graph
/// dwarf` and `perf report --children`.
fn call_graphs(page: &mut String, dir: &Path, runs: usize, perf_available: bool) {
    let recurse = util::fixture("recurse");
    let recurse = recurse.to_str().unwrap();
    let rounds = "10";
    writeln!(page, "### Call stacks\n").unwrap();
    writeln!(
        page,
        "Workload: `fixtures/programs/recurse {rounds}` (stacks 68 frames deep) at 4000 Hz. \
         `fp, chain` is the kernel's frame-pointer chain alone (`--call-graph fp,0`, what \
         `perf record -g` records); `fp` is `-g`, which also copies the top 512 bytes of the \
         stack to put back the caller a frameless function's chain skips (none here: every \
         function of `recurse` keeps a frame). Reports with the Children column, to \
         /dev/null; perf unwinds dwarf recordings with its own unwinder (libdw or \
         libunwind).\n"
    )
    .unwrap();
    writeln!(
        page,
        "| mode | command | wall s | CPU s | recording MB | samples | lost |\n| --- | --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    let size_mb =
        |name: &str| std::fs::metadata(dir.join(name)).map_or(0.0, |m| m.len() as f64 / 1e6);
    // (mode, our flags, perf's flags where perf has the mode)
    type Mode<'a> = (&'a str, &'a [&'a str], Option<&'a [&'a str]>);
    let modes: [Mode; 3] = [
        (
            "fp, chain",
            &["--call-graph", "fp,0"],
            Some(&["--call-graph", "fp"]),
        ),
        ("fp", &["-g"], None),
        (
            "dwarf",
            &["--call-graph", "dwarf"],
            Some(&["--call-graph", "dwarf"]),
        ),
    ];
    let mut chain_only = None;
    for (mode, flags, perf_flags) in modes {
        let perf_flags = perf_flags.filter(|_| perf_available);
        let (mut records, mut perf_records) = (Vec::new(), Vec::new());
        let (mut reports, mut perf_reports) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let mut args = vec![
                "record",
                "-e",
                "cpu-clock",
                "-F",
                "4000",
                "-o",
                "stacks.data",
            ];
            args.extend(flags);
            args.extend(["--", recurse, rounds]);
            let (mut m, output) = timed(util::profiler().current_dir(dir).args(&args));
            (m.samples, m.lost) = common::profiler_counts(&output);
            records.push(m);
            let report = ["report", "--children", "-i", "stacks.data"];
            reports.push(timed(util::profiler().current_dir(dir).args(report)).0);
            if let Some(perf_flags) = perf_flags {
                let mut args = vec![
                    "record",
                    "-e",
                    "cpu-clock:u",
                    "-F",
                    "4000",
                    "-o",
                    "stacks.perf",
                ];
                args.extend(perf_flags);
                args.extend(["--", recurse, rounds]);
                let (mut m, output) = timed(Command::new("perf").current_dir(dir).args(&args));
                (m.samples, m.lost) = common::perf_counts(&output, &dir.join("stacks.perf"));
                perf_records.push(m);
                let report = ["report", "--stdio", "--children", "-i", "stacks.perf"];
                perf_reports.push(timed(Command::new("perf").current_dir(dir).args(report)).0);
            }
        }
        let line = |page: &mut String, what: &str, m: Measure, size: Option<f64>| {
            let size = size.map_or(String::new(), |s| format!("{s:.1}"));
            let counts = match size.is_empty() {
                true => "| | |".to_owned(),
                false => format!("| {} | {} |", m.samples, m.lost),
            };
            writeln!(
                page,
                "| {mode} | {what} | {:.3} | {:.2} | {size} {counts}",
                m.wall, m.cpu
            )
            .unwrap();
        };
        let (ours, ours_report) = (median(&records), median(&reports));
        let size = size_mb("stacks.data");
        line(page, "profiler record", ours, Some(size));
        line(page, "profiler report --children", ours_report, None);
        match chain_only {
            None => chain_only = Some((ours, size)),
            Some((chain, chain_size)) if mode == "fp" => writeln!(
                page,
                "| fp | ratio (fp / fp, chain) | record CPU {:.3}×, size {:.3}× | | | | |",
                ours.cpu / chain.cpu,
                size / chain_size
            )
            .unwrap(),
            Some(_) => {}
        }
        if perf_flags.is_some() {
            let (theirs, theirs_report) = (median(&perf_records), median(&perf_reports));
            line(page, "perf record", theirs, Some(size_mb("stacks.perf")));
            line(page, "perf report --children", theirs_report, None);
            writeln!(
                page,
                "| {mode} | ratio (profiler / perf) | record {:.2}×, report {:.2}× | | | | |",
                ours.wall / theirs.wall,
                ours_report.wall / theirs_report.wall
            )
            .unwrap();
        }
    }
    writeln!(page).unwrap();
    leaf_callers(page, dir, runs, perf_available);
}

/// `-g` on a program whose hot functions set up no frame (`split`): the
/// kernel's chain alone skips their caller, `main`; with the caller put
/// back, what it costs in recording time and size.
fn leaf_callers(page: &mut String, dir: &Path, runs: usize, perf_available: bool) {
    let split = util::fixture("split");
    let split = split.to_str().unwrap();
    let rounds = "10";
    // Each run's measure, and its recording's bytes per sample.
    let (mut chain, mut spliced, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    let bytes_per_sample = |data: &str, m: &Measure| {
        let bytes = std::fs::metadata(dir.join(data)).map_or(0, |m| m.len());
        bytes as f64 / m.samples.max(1) as f64
    };
    let record = |flags: &[&str], data: &str| {
        let mut args = vec!["record", "-e", "cpu-clock", "-F", "4000", "-o", data];
        args.extend(flags);
        args.extend(["--", split, rounds]);
        let (mut m, output) = timed(util::profiler().current_dir(dir).args(&args));
        (m.samples, m.lost) = common::profiler_counts(&output);
        (m, bytes_per_sample(data, &m))
    };
    for _ in 0..runs {
        chain.push(record(&["--call-graph", "fp,0"], "chain.data"));
        spliced.push(record(&["-g"], "spliced.data"));
        if perf_available {
            let args = ["record", "-e", "cpu-clock:u", "-F", "4000", "-g", "-o"];
            let (mut m, output) = timed(Command::new("perf").current_dir(dir).args(args).args([
                "split.perf",
                split,
                rounds,
            ]));
            (m.samples, m.lost) = common::perf_counts(&output, &dir.join("split.perf"));
            theirs.push((m, bytes_per_sample("split.perf", &m)));
        }
    }
    writeln!(page, "### Frameless functions under `-g`\n").unwrap();
    writeln!(
        page,
        "Workload: `fixtures/programs/split {rounds}` at 4000 Hz: `burn_60`, `burn_30` and \
         `burn_10` set up no frame (GCC omits it in leaf functions even with \
         `-fno-omit-frame-pointer`), so the kernel's frame-pointer chain skips their caller \
         `main`. `main` is its share of the samples' stacks (the Children column); bytes per \
         sample are the recording's size over its samples.\n"
    )
    .unwrap();
    writeln!(
        page,
        "| command | wall s | CPU s | bytes per sample | samples | main |\n| --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    let main_share = |data: &str| {
        let report = common::output_of(
            util::profiler()
                .current_dir(dir)
                .args(["report", "--format", "json", "-i", data]),
        );
        let report: serde_json::Value = serde_json::from_str(&report).unwrap_or_default();
        let main = report["functions"].as_array().and_then(|functions| {
            functions.iter().find(|f| f["name"] == "main")?["total_percent"].as_f64()
        });
        main.unwrap_or(0.0)
    };
    let summary = |runs: &[(Measure, f64)]| {
        let measures: Vec<Measure> = runs.iter().map(|(m, _)| *m).collect();
        let bytes = common::median(runs.iter().map(|(_, b)| *b).collect());
        (median(&measures), bytes)
    };
    let mut rows = vec![
        (
            "profiler record --call-graph fp,0",
            summary(&chain),
            main_share("chain.data"),
        ),
        (
            "profiler record -g",
            summary(&spliced),
            main_share("spliced.data"),
        ),
    ];
    if perf_available {
        rows.push(("perf record -g", summary(&theirs), perf_main_share(dir)));
    }
    for (what, (m, bytes), main) in &rows {
        writeln!(
            page,
            "| {what} | {:.3} | {:.2} | {bytes:.1} | {} | {main:.2}% |",
            m.wall, m.cpu, m.samples
        )
        .unwrap();
    }
    let ((chain, chain_bytes), (spliced, spliced_bytes)) = (rows[0].1, rows[1].1);
    writeln!(
        page,
        "\n`-g` against the kernel's chain alone: CPU {:.3}×, wall {:.3}×, recording size {:.3}× \
         (one more return address in each stack that lacked it).\n",
        spliced.cpu / chain.cpu,
        spliced.wall / chain.wall,
        spliced_bytes / chain_bytes
    )
    .unwrap();
}

/// `main`'s share of the stacks in `split.perf`, by `perf report --children`.
fn perf_main_share(dir: &Path) -> f64 {
    let report = common::output_of(Command::new("perf").current_dir(dir).args([
        "report",
        "--stdio",
        "--children",
        "--sort",
        "sym",
        "-i",
        "split.perf",
    ]));
    report
        .lines()
        .find(|line| line.trim_end().ends_with("[.] main"))
        .and_then(|line| {
            line.split_whitespace()
                .next()?
                .trim_end_matches('%')
                .parse()
                .ok()
        })
        .unwrap_or(0.0)
}

/// A table of the median wall and CPU time of each command that was run;
/// returns the medians.
fn table(page: &mut String, rows: &[(&str, &Vec<Measure>)]) -> Vec<Measure> {
    writeln!(page, "| command | wall s | CPU s |\n| --- | --- | --- |").unwrap();
    rows.iter()
        .filter(|(_, measures)| !measures.is_empty())
        .map(|(name, measures)| {
            let m = median(measures);
            writeln!(page, "| {name} | {:.3} | {:.2} |", m.wall, m.cpu).unwrap();
            m
        })
        .collect()
}

fn row(page: &mut String, rate: &str, what: &str, m: Measure, bare: Measure, counts: bool) {
    let (samples, lost) = if counts {
        (m.samples.to_string(), m.lost.to_string())
    } else {
        ("".into(), "".into())
    };
    writeln!(
        page,
        "| {rate} | {what} | {:.3} | {:.3} | {:.2} | {:.3} | {samples} | {lost} |",
        m.wall,
        m.wall / bare.wall,
        m.cpu,
        m.cpu / bare.cpu
    )
    .unwrap();
}

/// Runs `command` to completion with its output captured; wall time and the
/// CPU time of it and its reaped descendants.
fn timed(command: &mut Command) -> (Measure, Output) {
    let cpu_before = common::children_cpu_seconds();
    let start = Instant::now();
    let output = command.stdin(Stdio::null()).output().unwrap();
    let wall = start.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let measure = Measure {
        wall,
        cpu: common::children_cpu_seconds() - cpu_before,
        ..Measure::default()
    };
    (measure, output)
}

fn median(measures: &[Measure]) -> Measure {
    let middle = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let mut samples: Vec<u64> = measures.iter().map(|m| m.samples).collect();
    samples.sort();
    Measure {
        wall: middle(measures.iter().map(|m| m.wall).collect()),
        cpu: middle(measures.iter().map(|m| m.cpu).collect()),
        samples: samples[samples.len() / 2],
        lost: measures.iter().map(|m| m.lost).max().unwrap_or(0),
    }
}
