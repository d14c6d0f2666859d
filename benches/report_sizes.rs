//! `profiler report` (the default view) against `perf report --stdio` at
//! every size of recording, from a few seconds' to minutes': each profiler
//! records the same workload (passes of the debug build of this profiler
//! symbolizing 100k of its own addresses, as the symbolize bench's reports
//! do) at a rate and length that give about 10k, 50k, 300k, 1M and 4M
//! samples, and the reports of each are timed in turns: ours cold (no
//! names kept from an earlier report) and warm (with them), then perf's.
//! Then this profiler profiles its own report of the 50k recording, cold
//! and warm, to show where the time goes. Written to the report-sizes
//! section of BENCHMARKS.md.
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

use common::{Measured, measure_with, medians};

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
         in user space (`profiler record -e cpu-clock:u -F RATE`, `perf record -B -e cpu-clock:u \
         -F RATE`: neither report has kernel code to name) at a rate and length that give each \
         size. `profiler report -i FILE` (the default view, \
         which names the functions inlined into each row from DWARF) against `perf report \
         --stdio -i FILE` (symbol tables only), output to /dev/null; ours cold (no names \
         kept: `XDG_CACHE_HOME` an empty directory each run) and warm (the names an earlier \
         report kept there); medians of {runs} interleaved runs.\n",
        common::machine()
    )
    .unwrap();
    table(&mut page, &dir, &recorded, runs);
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
        common::succeeded(
            util::profiler()
                .current_dir(dir)
                .args(["record", "-e", "cpu-clock:u", "-F", &rate_arg, "-o"])
                .arg(&ours)
                .args(["--", "sh", "-c", &script]),
        );
    }
    if !perf.exists() {
        eprintln!("recording {name} with perf record");
        common::succeeded(
            Command::new("perf")
                .current_dir(dir)
                .env("HOME", perf_home(dir))
                .args([
                    "record",
                    "-q",
                    "-B",
                    "-e",
                    "cpu-clock:u",
                    "-F",
                    &rate_arg,
                    "-o",
                ])
                .arg(&perf)
                .args(["--", "sh", "-c", &script]),
        );
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

/// The home perf runs with: perf 6.1 on this kernel aborts in its build-id
/// pass ("assertion failed at util/build-id.c"), most often with the
/// build-id cache of the user's own `~/.debug`; an empty one of its own
/// (and `-B` when recording) keeps it going.
fn perf_home(dir: &Path) -> PathBuf {
    let home = dir.join("perf-home");
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// Samples in a perf recording, from its report's header.
fn perf_samples(data: &Path) -> u64 {
    let home = perf_home(data.parent().unwrap());
    let text = common::output_of(
        Command::new("perf")
            .env("HOME", &home)
            .args(["report", "--stdio", "--header-only", "--sort", "dso", "-i"])
            .arg(data),
    );
    let text = match text.contains("# Samples:") {
        true => text,
        false => common::output_of(
            Command::new("perf")
                .env("HOME", &home)
                .args(["report", "--stdio", "--sort", "dso", "-i"])
                .arg(data),
        ),
    };
    header_samples(&text)
}

/// `# Samples: 54K of event 'cpu-clock'` or `# Samples: 54652 of ...`.
fn header_samples(text: &str) -> u64 {
    // Not perf's `# Total Lost Samples: 0`.
    let Some(count) = text.lines().find_map(|l| {
        let rest = l.strip_prefix("# Samples: ")?;
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

/// Each size's figures, the reports timed in turns (ours cold, with no
/// names kept, and warm, with the names the cold one kept; then perf's),
/// with their ratios and the targets.
fn table(page: &mut String, dir: &Path, recorded: &[Recorded], runs: usize) {
    writeln!(
        page,
        "| size | recorded | samples (ours / perf's) | profiler report cold: wall s | CPU s | MiB | \
         warm: wall s | CPU s | MiB | perf report: wall s | CPU s | MiB | cold / perf: wall | CPU | \
         memory | warm / perf: wall | CPU | memory | targets |"
    )
    .unwrap();
    writeln!(page, "|{}", " --- |".repeat(19)).unwrap();
    let mut verdicts = Vec::new();
    for size in recorded {
        let (cold, warm, p) = time_reports(dir, size, runs);
        let mut targets = Vec::new();
        for (when, m) in [("cold", cold), ("warm", warm)] {
            targets.extend(checks(size.our_samples, ratios(m, p), when));
        }
        let [c, w] = [ratios(cold, p), ratios(warm, p)];
        let figures = |m: Measured| format!("{} | {:.3} | {:.0}", seconds(m), m.cpu, m.memory);
        writeln!(
            page,
            "| {} | {} pass{} at {} Hz | {} / {} | {} | {} | {} | {:.2}× | {:.2}× | {:.2}× | \
             {:.2}× | {:.2}× | {:.2}× | {} |",
            size.name,
            size.passes,
            if size.passes == 1 { "" } else { "es" },
            size.rate,
            size.our_samples,
            size.perf_samples,
            figures(cold),
            figures(warm),
            figures(p),
            c[0],
            c[1],
            c[2],
            w[0],
            w[1],
            w[2],
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

/// The medians of our report cold and warm, and of perf's, of `size`'s
/// recordings, run in turns. A cold run's cache is emptied before it; the
/// warm runs use the one an untimed run filled.
fn time_reports(dir: &Path, size: &Recorded, runs: usize) -> (Measured, Measured, Measured) {
    let ours = env!("CARGO_BIN_EXE_profiler");
    let (ours_args, perf_args) = (
        ["report", "-i", size.ours.to_str().unwrap()],
        ["report", "--stdio", "-i", size.perf.to_str().unwrap()],
    );
    let (cold_cache, warm_cache) = (dir.join("cache-cold"), dir.join("cache-warm"));
    let _ = std::fs::remove_dir_all(&warm_cache);
    let cold = || {
        let _ = std::fs::remove_dir_all(&cold_cache);
        measure_with(ours, &ours_args, None, &[("XDG_CACHE_HOME", &cold_cache)])
    };
    let warm = || measure_with(ours, &ours_args, None, &[("XDG_CACHE_HOME", &warm_cache)]);
    let home = perf_home(dir);
    let perf = || measure_with("perf", &perf_args, None, &[("HOME", &home)]);
    // Once each untimed: the files' pages in the page cache for all, and
    // the warm runs' names kept.
    warm();
    perf();
    let (mut colds, mut warms, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        colds.extend(cold());
        warms.extend(warm());
        theirs.extend(perf());
    }
    (medians(&colds), medians(&warms), medians(&theirs))
}

/// Ours over perf's: wall, CPU and memory.
fn ratios(ours: Measured, perf: Measured) -> [f64; 3] {
    [
        ours.wall / perf.wall,
        ours.cpu / perf.cpu,
        ours.memory / perf.memory,
    ]
}

/// The targets at `samples` against the ratios `[wall, CPU, memory]`:
/// 0.5x wall and 1x CPU at 50k samples, 0.3x wall from 1M on; memory at
/// most perf's everywhere.
fn checks(samples: u64, [wall, cpu, memory]: [f64; 3], when: &str) -> Vec<String> {
    let wall_target = match samples {
        n if n >= 1_000_000 => Some(0.3),
        n if (40_000..100_000).contains(&n) => Some(0.5),
        _ => None,
    };
    let cpu_target = (40_000..100_000).contains(&samples).then_some(1.0);
    let checked = [
        ("wall", wall, wall_target),
        ("CPU", cpu, cpu_target),
        ("memory", memory, Some(1.0)),
    ];
    (checked.into_iter())
        .filter_map(|(what, ratio, target)| {
            let target = target?;
            let met = if ratio <= target { "met" } else { "missed" };
            Some(format!("{what} ({when}) ≤ {target}×: {met}"))
        })
        .collect()
}

/// Wall seconds, to the hundredth that GNU time gives.
fn seconds(m: Measured) -> String {
    format!("{:.2}", m.wall)
}

/// This profiler's profile of its own report of the 50k recording, cold
/// and warm: where a small report's time goes.
fn own_profile(page: &mut String, dir: &Path) {
    let (data, profile) = (dir.join("50k.data"), dir.join("self.data"));
    if !data.exists() {
        return;
    }
    let ours = env!("CARGO_BIN_EXE_profiler");
    let cache = dir.join("cache-profiled");
    let _ = std::fs::remove_dir_all(&cache);
    for when in ["cold", "warm"] {
        common::succeeded(
            util::profiler()
                .env("XDG_CACHE_HOME", &cache)
                .args(["record", "-g", "-F", "20000", "-o"])
                .arg(&profile)
                .args(["--", ours, "report", "-i"])
                .arg(&data),
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
            "Where the time of `profiler report` goes at 50k samples, {when}: `profiler record -g \
             -F 20000 -- profiler report -i 50k.data`, then `profiler report --children \
             --percent-limit 3` (functions with at least 3% of the samples below them):\n\n```\n\
             {report}\n```\n"
        )
        .unwrap();
    }
}
