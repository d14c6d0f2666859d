//! `profiler report` (the default view) against `perf report --stdio` at
//! every size of recording, from a few seconds' to minutes': each profiler
//! records the same workload (passes of the debug build of this profiler
//! symbolizing 100k of its own addresses, as the symbolize bench's reports
//! do) at a rate and length that give about 10k, 50k, 300k, 1M and 4M
//! samples, and both reports of each are timed in turns. Then this profiler
//! profiles its own report of the 50k recording, to show where the time
//! goes. Written to the report-sizes section of BENCHMARKS.md.
//!
//! `cargo bench --bench report_sizes [-- RUNS] [-- --sizes N]` (default 5
//! runs per figure, interleaved, medians; `--sizes 4` leaves out the
//! largest). Recording takes long (the largest recordings are minutes of
//! the workload for each profiler): the recordings and the workload they
//! ran are kept in target/bench-report-sizes and used again by later runs;
//! delete that folder to record afresh.

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

/// Each size: its name, passes of the workload, and samples per second.
const SIZES: [(&str, usize, u32); 5] = [
    ("10k", 1, 1000),
    ("50k", 1, 4500),
    ("300k", 2, 14000),
    ("1m", 5, 20000),
    ("4m", 14, 20000),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = (args.iter())
        .filter(|a| !a.starts_with('-'))
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let sizes: usize = (args.iter().position(|a| a == "--sizes"))
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(SIZES.len())
        .min(SIZES.len());
    let perf = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !perf {
        common::write_section(
            "report-sizes",
            "## Reports at every size\n\nperf is not installed: these figures are measured \
             against perf report, and are left out.\n",
        );
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-report-sizes");
    let big = workload_in(&dir);
    let recorded: Vec<Recorded> = (SIZES[..sizes].iter())
        .map(|&(name, passes, rate)| record(&dir, &big, name, passes, rate))
        .collect();

    let size_mb = big.metadata().unwrap().len() as f64 / 1e6;
    let mut page = String::new();
    writeln!(page, "## Reports at every size\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench report_sizes` on {}, a machine shared with other work: \
         CPU time (user and system) is the steadier measure. The workload: passes of the debug \
         build of this profiler ({size_mb:.0} MB) symbolizing 100k of its own addresses \
         (`profiler symbolize --inlines`), recorded by each profiler in the same way \
         (`profiler record -e cpu-clock -F RATE`, `perf record -e cpu-clock:u -F RATE`) at a \
         rate and length that give each size. `profiler report -i FILE` (the default view, \
         which names the functions inlined into each row from DWARF) against `perf report \
         --stdio -i FILE` (symbol tables only), output to /dev/null; medians of {runs} \
         interleaved runs.\n",
        common::machine()
    )
    .unwrap();
    table(&mut page, &recorded, runs);
    own_profile(&mut page, &dir);
    common::write_section("report-sizes", &page);
}

/// The debug build the recordings ran, kept in `dir` with them: built and
/// copied there (with the addresses it names) if missing.
fn workload_in(dir: &Path) -> PathBuf {
    let big = dir.join("profiler-debug");
    if !big.exists() {
        std::fs::create_dir_all(dir).unwrap();
        workload::debug_build(dir);
        let all = workload::address_set(&big);
        let text: String = (all.iter().take(100_000))
            .map(|a| format!("{a:#x}\n"))
            .collect();
        std::fs::write(dir.join("addresses-100000.txt"), text).unwrap();
    }
    big
}

/// One size's recordings: both profilers', and how many samples each holds.
struct Recorded {
    name: &'static str,
    passes: usize,
    rate: u32,
    ours: PathBuf,
    perf: PathBuf,
    our_samples: u64,
    perf_samples: u64,
}

/// Records `passes` of the workload at `rate` with both profilers, unless
/// both recordings are already in `dir`.
fn record(dir: &Path, big: &Path, name: &'static str, passes: usize, rate: u32) -> Recorded {
    let (ours, perf) = (
        dir.join(format!("{name}.data")),
        dir.join(format!("{name}.perf")),
    );
    let script = format!(
        "for i in $(seq {passes}); do {big} symbolize --inlines --exe {big} < {input} > /dev/null; done",
        big = big.display(),
        input = dir.join("addresses-100000.txt").display()
    );
    let rate_arg = rate.to_string();
    if !ours.exists() {
        eprintln!("recording {name} with profiler record");
        let output = util::profiler()
            .current_dir(dir)
            .args(["record", "-e", "cpu-clock", "-F", &rate_arg, "-o"])
            .arg(&ours)
            .args(["--", "sh", "-c", &script])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    if !perf.exists() {
        eprintln!("recording {name} with perf record");
        let output = Command::new("perf")
            .current_dir(dir)
            .args(["record", "-q", "-e", "cpu-clock:u", "-F", &rate_arg, "-o"])
            .arg(&perf)
            .args(["--", "sh", "-c", &script])
            .output()
            .unwrap();
        assert!(output.status.success(), "perf record failed");
    }
    Recorded {
        name,
        passes,
        rate,
        our_samples: our_samples(&ours),
        perf_samples: perf_samples(&perf),
        ours,
        perf,
    }
}

/// Samples in one of our recordings, from its own report's header.
fn our_samples(data: &Path) -> u64 {
    let text = common::output_of(
        util::profiler()
            .args(["report", "--header-only", "-i"])
            .arg(data),
    );
    header_samples(&text)
}

/// Samples in a perf recording, from its report's header.
fn perf_samples(data: &Path) -> u64 {
    let text = common::output_of(
        Command::new("perf")
            .args(["report", "--stdio", "--header-only", "--sort", "dso", "-i"])
            .arg(data),
    );
    let text = match text.contains("# Samples:") {
        true => text,
        false => common::output_of(
            Command::new("perf")
                .args(["report", "--stdio", "--sort", "dso", "-i"])
                .arg(data),
        ),
    };
    header_samples(&text)
}

/// `# Samples: 54K of event 'cpu-clock'` or `# Samples: 54652 of ...`.
fn header_samples(text: &str) -> u64 {
    let Some(count) = text.lines().find_map(|l| {
        let rest = l.split_once("Samples: ")?.1;
        rest.split_whitespace().next()
    }) else {
        return 0;
    };
    let (digits, scale) = match count.strip_suffix('K') {
        Some(d) => (d, 1_000),
        None => match count.strip_suffix('M') {
            Some(d) => (d, 1_000_000),
            None => (count, 1),
        },
    };
    digits
        .parse::<f64>()
        .map_or(0, |n| (n * scale as f64) as u64)
}

/// Each size's figures, both reports timed in turns, with their ratios and
/// the targets.
fn table(page: &mut String, recorded: &[Recorded], runs: usize) {
    writeln!(
        page,
        "| size | recorded | samples (ours / perf's) | profiler report: wall s | CPU s | MiB | \
         perf report: wall s | CPU s | MiB | ratio: wall | CPU | memory | targets |"
    )
    .unwrap();
    writeln!(
        page,
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    let ours = env!("CARGO_BIN_EXE_profiler");
    let mut verdicts = Vec::new();
    for size in recorded {
        let (ours_args, perf_args) = (
            ["report", "-i", size.ours.to_str().unwrap()],
            ["report", "--stdio", "-i", size.perf.to_str().unwrap()],
        );
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        // Once each untimed: the files' pages in the page cache for both.
        measure(ours, &ours_args, None);
        measure("perf", &perf_args, None);
        for _ in 0..runs {
            mine.extend(measure(ours, &ours_args, None));
            theirs.extend(measure("perf", &perf_args, None));
        }
        let (m, p) = (medians(&mine), medians(&theirs));
        let (wall, cpu, memory) = (m.wall / p.wall, m.cpu / p.cpu, m.memory / p.memory);
        // 0.5x wall and 1x CPU at 50k samples, 0.3x wall from 1M on;
        // memory at most perf's everywhere.
        let wall_target = match size.our_samples {
            n if n >= 1_000_000 => Some(0.3),
            n if (40_000..100_000).contains(&n) => Some(0.5),
            _ => None,
        };
        let cpu_target = (40_000..100_000).contains(&size.our_samples).then_some(1.0);
        let mut targets = Vec::new();
        let mut check = |what: &str, ratio: f64, target: Option<f64>| {
            if let Some(target) = target {
                let met = if ratio <= target { "met" } else { "missed" };
                targets.push(format!("{what} ≤ {target}×: {met}"));
            }
        };
        check("wall", wall, wall_target);
        check("CPU", cpu, cpu_target);
        check("memory", memory, Some(1.0));
        writeln!(
            page,
            "| {} | {} pass{} at {} Hz | {} / {} | {} | {:.3} | {:.0} | {} | {:.3} | {:.0} | {:.2}× | \
             {:.2}× | {:.2}× | {} |",
            size.name,
            size.passes,
            if size.passes == 1 { "" } else { "es" },
            size.rate,
            size.our_samples,
            size.perf_samples,
            seconds(m),
            m.cpu,
            m.memory,
            seconds(p),
            p.cpu,
            p.memory,
            wall,
            cpu,
            memory,
            targets.join(", ")
        )
        .unwrap();
        verdicts.extend(
            (targets.iter())
                .filter(|t| t.ends_with("missed"))
                .map(|t| format!("{}: {t}", size.name)),
        );
    }
    match verdicts.is_empty() {
        true => writeln!(page, "\nEvery target is met.\n").unwrap(),
        false => writeln!(page, "\nMissed: {}.\n", verdicts.join("; ")).unwrap(),
    }
}

/// Wall seconds, to the hundredth that GNU time gives.
fn seconds(m: Measured) -> String {
    format!("{:.2}", m.wall)
}

/// This profiler's profile of its own report of the 50k recording: where
/// a small report's time goes.
fn own_profile(page: &mut String, dir: &Path) {
    let (data, profile) = (dir.join("50k.data"), dir.join("self.data"));
    if !data.exists() {
        return;
    }
    let ours = env!("CARGO_BIN_EXE_profiler");
    let recorded = util::profiler()
        .args(["record", "-g", "-F", "20000", "-o"])
        .arg(&profile)
        .args(["--", ours, "report", "-i"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        recorded.status.success(),
        "{}",
        String::from_utf8_lossy(&recorded.stderr)
    );
    let report = common::output_of(
        util::profiler()
            .args([
                "report",
                "--children",
                "--percent-limit",
                "3",
                "--width",
                "140",
                "-i",
            ])
            .arg(&profile),
    );
    writeln!(
        page,
        "Where the time of `profiler report` goes at 50k samples: `profiler record -g -F 20000 -- \
         profiler report -i 50k.data`, then `profiler report --children --percent-limit 3` \
         (functions with at least 3% of the samples below them):\n\n```\n{report}\n```\n"
    )
    .unwrap();
}
