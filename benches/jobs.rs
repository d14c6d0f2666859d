//! What reading an MPI job's recordings costs: `report` and `report
//! --ranks` over 16, 64 and 256 recordings of 50,000 call-stack samples each
//! (written here with the recording writer, over the stable fixture), the
//! time and memory per rank, and a 10,000-rank job extrapolated from it;
//! beside GNU `cat` reading the same bytes, the floor any reader pays.
//! Written to BENCHMARKS.md.
//!
//! `cargo bench --bench jobs [-- RUNS]` (default 3 runs per figure).

// A benchmark stops at the first thing that fails, panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

#[allow(dead_code)]
#[path = "../tests/synthetic.rs"]
mod synthetic;

#[allow(dead_code)]
mod common;

use std::fmt::Write as _;
use std::path::Path;

use profiler_model::{BuildId, JobInfo};
use synthetic::{Synthetic, function_range};

/// Samples in each rank's recording: a few seconds at 4 kHz with threads.
const SAMPLES: u32 = 50_000;
/// The job sizes measured; the largest is the target.
const SIZES: [u32; 3] = [16, 64, 256];
/// The job size extrapolated to.
const FAR: f64 = 10_000.0;

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let dir = util::scratch("bench-jobs");
    let profiler = env!("CARGO_BIN_EXE_profiler");
    let largest = SIZES[SIZES.len() - 1];
    write_job(&dir, largest);

    let mut page = String::new();
    writeln!(page, "## Reading an MPI job\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench jobs` on {}. Each rank's recording holds {SAMPLES} \
         samples with call stacks over one binary (one build-id: named once for the whole \
         job); the first N ranks of a {largest}-rank job are read with `-i DIR`. Medians of \
         {runs} run(s), with the machine's load average at {load} (shared with other work: \
         wall times are longer than on a quiet machine). `cat` reads the same files to \
         /dev/null: the floor of any reader.\n",
        common::machine(),
        load = load_average(),
    )
    .unwrap();
    writeln!(
        page,
        "| Ranks | Recordings, MB | `report` s (CPU s) | `report` MiB | `report --ranks` s | \
         `--ranks` MiB | `cat` s | `report` / `cat` |"
    )
    .unwrap();
    writeln!(page, "|---:|---:|---:|---:|---:|---:|---:|---:|").unwrap();
    let mut rows = Vec::new();
    for size in SIZES {
        let ranks = dir.join(format!("ranks-{size}"));
        std::fs::create_dir_all(&ranks).unwrap();
        let mut bytes = 0;
        let mut files = Vec::new();
        for r in 0..size {
            let name = format!("run.{r:03}.data");
            let link = ranks.join(&name);
            if !link.exists() {
                std::fs::hard_link(dir.join(&name), &link).unwrap();
            }
            bytes += std::fs::metadata(&link).unwrap().len();
            files.push(link.to_str().unwrap().to_owned());
        }
        let input = ranks.to_str().unwrap();
        let measure = |args: &[&str]| {
            let all: Vec<_> = (0..runs)
                .map(|_| common::measure(profiler, args, None).expect("report runs"))
                .collect();
            common::medians(&all)
        };
        let report = measure(&["report", "-i", input]);
        let ranks_view = measure(&["report", "-i", input, "--ranks"]);
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let cat: Vec<_> = (0..runs)
            .map(|_| common::measure("cat", &files, None).expect("cat runs"))
            .collect();
        let cat = common::medians(&cat);
        writeln!(
            page,
            "| {size} | {:.0} | {:.2} ({:.2}) | {:.0} | {:.2} | {:.0} | {:.2} | {:.1} |",
            bytes as f64 / 1e6,
            report.wall,
            report.cpu,
            report.memory,
            ranks_view.wall,
            ranks_view.memory,
            cat.wall,
            report.wall / cat.wall.max(0.01),
        )
        .unwrap();
        rows.push((size, report, ranks_view));
    }
    extrapolate(&mut page, &rows);
    common::write_section("jobs", &page);
}

/// The 1-minute load average, as /proc/loadavg says it.
fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().next().unwrap_or("?").to_owned()
}

/// The cost of each rank past the smallest job, and a 10,000-rank job at
/// that cost.
fn extrapolate(page: &mut String, rows: &[(u32, common::Measured, common::Measured)]) {
    let (small, small_report, _) = rows[0];
    let (large, large_report, large_ranks) = rows[rows.len() - 1];
    let added = f64::from(large - small);
    let per_rank = |large: f64, small: f64| (large - small) / added;
    let seconds = per_rank(large_report.wall, small_report.wall);
    let memory = per_rank(large_report.memory, small_report.memory).max(0.0);
    let ranks_seconds = per_rank(large_ranks.wall, rows[0].2.wall);
    let far = |at_large: f64, per: f64| at_large + per * (FAR - f64::from(large));
    writeln!(
        page,
        "\nPer rank past {small} ranks, `report` costs {:.1} ms and {:.0} KiB. At that cost a \
         {FAR:.0}-rank job of the same recordings would report in about {:.0} s with about \
         {:.0} MiB ({:.0} s for `--ranks`), read on one machine (memory follows the distinct \
         stacks and functions more than the ranks).",
        seconds * 1000.0,
        memory * 1024.0,
        far(large_report.wall, seconds),
        far(large_report.memory, memory),
        far(large_ranks.wall, ranks_seconds),
    )
    .unwrap();
}

/// Writes `size` ranks' recordings into `dir` as `run.RANK.data`: samples
/// in hot_a, hot_b and hot_c under main, rank 0 with twice the hot_a.
fn write_job(dir: &Path, size: u32) {
    let exe = util::fixture("stable");
    let (hot_a, _) = function_range(&exe, "hot_a");
    let (hot_b, _) = function_range(&exe, "hot_b");
    let (hot_c, _) = function_range(&exe, "hot_c");
    let (main, _) = function_range(&exe, "main");
    for rank in 0..size {
        let path = dir.join(format!("run.{rank:03}.data"));
        if path.exists() {
            continue;
        }
        let mut recording = Synthetic::with_stacks();
        recording.job = Some(JobInfo {
            rank: Some(rank),
            size: Some(size),
            job_id: Some("4711".into()),
            launcher: Some("Open MPI".into()),
        });
        recording.host = Some(format!("node{}", rank / 16));
        recording.build_id = Some(BuildId(vec![0xab, 0xcd]));
        recording.program = Some(exe.to_str().unwrap().to_owned());
        let pid = 1000 + rank;
        recording.process(pid, 0, "stable", &exe);
        let split = match rank {
            0 => [SAMPLES / 2, SAMPLES / 4, SAMPLES / 4],
            _ => [SAMPLES / 3, SAMPLES / 3, SAMPLES - 2 * (SAMPLES / 3)],
        };
        for (at, count) in [hot_a, hot_b, hot_c].into_iter().zip(split) {
            // Spread over eight instructions, as real samples are.
            for step in 0..8 {
                recording.samples(pid, at + step, &[main + 8], count / 8);
            }
        }
        recording.write(&path, &["stable"]);
    }
}
