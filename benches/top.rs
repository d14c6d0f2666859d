//! `cargo bench --bench top [MINUTES]`: what `profiler top -a` costs the
//! machine it watches. It samples every CPU at 4 kHz for MINUTES (default
//! 30) with its snapshots going to a file, beside `perf top -a` doing the
//! same, while a niced copy of the `split` fixture keeps at least one CPU
//! busy and a shell loop starts and ends processes; at 1, 10 and 30 minutes (those within MINUTES) it reads each
//! one's CPU time and resident memory from /proc. First it times the
//! screen's refresh over 5,000 distinct functions (in process, on
//! ratatui's test backend). Writes the `top` and `top-refresh` sections
//! of BENCHMARKS.md; `cargo bench --bench top refresh` only the second.

// A benchmark stops at the first thing that fails, panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/util.rs"]
#[allow(dead_code)]
mod util;

#[allow(dead_code)]
mod common;

/// What /proc says of a process at one moment.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    /// Seconds of CPU, user and system.
    cpu: f64,
    /// Resident memory now, and at most so far, MiB.
    rss: f64,
    peak: f64,
}

fn usage(pid: u32) -> Option<Usage> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
    let hz = clock_ticks();
    let cpu = (ticks(11)? + ticks(12)?) / hz;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |key: &str| {
        (status.lines())
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
    };
    Some(Usage {
        cpu,
        rss: kib("VmRSS:")? / 1024.0,
        peak: kib("VmHWM:")? / 1024.0,
    })
}

fn clock_ticks() -> f64 {
    let out = Command::new("getconf").arg("CLK_TCK").output();
    out.ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// A tool watching the machine.
struct Watcher {
    name: &'static str,
    child: Child,
    /// Usage at each checkpoint.
    seen: Vec<Usage>,
}

fn main() {
    // `cargo bench --bench top refresh` measures the refresh alone, in a
    // minute, leaving the half-hour figures as they are.
    let refresh_only = std::env::args().any(|a| a == "refresh");
    refresh();
    if refresh_only {
        return;
    }
    let minutes: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(30);
    let dir = util::scratch("bench-top");
    let mut page = String::new();
    writeln!(page, "## What `top` costs\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench top {minutes}` on {}. `profiler top -a -F 4000 --stdio` \
         (its snapshots to a file) and `perf top -a -F 4000 -e cpu-clock:u --stdio` ran side \
         by side for {minutes} minutes, with a `nice -n 19` copy of the `split` fixture keeping \
         a CPU busy and a shell loop starting and ending some twenty processes a second \
         (`{CHURN}`); the machine's load average (/proc/loadavg: 1, 5 and 15 minutes) was \
         {} as the run started. CPU is each tool's own (user and system, from \
         /proc) over the stretch up to each point, as a share of one CPU; memory is resident \
         memory then (the peak so far in parentheses).\n",
        common::machine(),
        common::load_average(),
    )
    .unwrap();
    let split = util::fixture("split");
    let mut load = Command::new("nice")
        .args(["-n", "19"])
        .arg(&split)
        .arg("100000000")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Processes that start and exit all the while: each maps its program
    // and libraries, and the tools must let them go when it exits.
    let mut churn = Command::new("sh")
        .args(["-c", CHURN])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let log = std::fs::File::create(dir.join("top.log")).unwrap();
    let ours = util::profiler()
        .args(["top", "-a", "-F", "4000", "--stdio", "--rows", "10"])
        .stdout(log)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut watchers = vec![Watcher {
        name: "profiler top",
        child: ours,
        seen: Vec::new(),
    }];
    if perf_available() {
        // perf top reads keys from its standard input: a pipe kept open.
        let perf = Command::new("perf")
            .args(["top", "-a", "-F", "4000", "-e", "cpu-clock:u", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("perf-top.log")).unwrap())
            .spawn()
            .unwrap();
        watchers.push(Watcher {
            name: "perf top",
            child: perf,
            seen: Vec::new(),
        });
    }
    let started = Instant::now();
    let mut points: Vec<u64> = [1, 10, 30].into_iter().filter(|&m| m < minutes).collect();
    points.push(minutes);
    for &point in &points {
        let at = started + Duration::from_secs(point * 60);
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        for watcher in &mut watchers {
            // A tool that has exited has no figures: NaN, printed as such.
            let gone = Usage {
                cpu: f64::NAN,
                rss: f64::NAN,
                peak: f64::NAN,
            };
            let seen = usage(watcher.child.id()).unwrap_or(gone);
            watcher.seen.push(seen);
        }
        eprintln!("top bench: {point} min");
    }
    for watcher in &mut watchers {
        let _ = Command::new("kill")
            .args(["-INT", &watcher.child.id().to_string()])
            .status();
        let _ = watcher.child.wait();
    }
    for child in [&mut load, &mut churn] {
        let _ = child.kill();
        let _ = child.wait();
    }
    table(&mut page, &points, &watchers);
    writeln!(
        page,
        "\nThe load average as the run ended: {}.",
        common::load_average()
    )
    .unwrap();
    let log = std::fs::read_to_string(dir.join("top.log")).unwrap_or_default();
    if let Some(rate) = sample_rate(&log) {
        writeln!(
            page,
            "\n`profiler top` counted {rate:.0} samples a second over the run (both CPUs, user \
             space and kernel; 4 kHz a CPU while busy).",
        )
        .unwrap();
    }
    common::write_section("top", &page);
}

/// Some twenty short-lived processes a second: a program, a shell and a
/// coreutil, each exiting at once.
const CHURN: &str = "while :; do /bin/true; sh -c 'ls / >/dev/null'; sleep 0.1; done";

fn perf_available() -> bool {
    Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn table(page: &mut String, points: &[u64], watchers: &[Watcher]) {
    write!(page, "| at |").unwrap();
    for watcher in watchers {
        write!(page, " {} CPU | {} memory |", watcher.name, watcher.name).unwrap();
    }
    writeln!(page).unwrap();
    writeln!(page, "|---|{}", "---:|---:|".repeat(watchers.len())).unwrap();
    for (index, point) in points.iter().enumerate() {
        write!(page, "| {point} min |").unwrap();
        let since = if index == 0 { 0 } else { points[index - 1] };
        for watcher in watchers {
            let now = watcher.seen[index];
            let before = match index {
                0 => Usage::default(),
                _ => watcher.seen[index - 1],
            };
            let stretch = ((point - since) * 60) as f64;
            let share = (now.cpu - before.cpu) / stretch * 100.0;
            write!(
                page,
                " {share:.2}% | {:.1} MiB ({:.1}) |",
                now.rss, now.peak
            )
            .unwrap();
        }
        writeln!(page).unwrap();
    }
}

/// Samples a second over the run, from the last snapshot's head line:
/// `# profiler top: cpu-clock 4000 Hz, all CPUs, 1800.0 s: 7,203,114 samples, ...`.
fn sample_rate(log: &str) -> Option<f64> {
    let head = log.lines().rfind(|l| l.starts_with("# profiler top:"))?;
    let (before, after) = head.split_once(" s: ")?;
    let seconds: f64 = before.rsplit(", ").next()?.parse().ok()?;
    let samples: f64 = after
        .split_whitespace()
        .next()?
        .replace(',', "")
        .parse()
        .ok()?;
    Some(samples / seconds)
}

fn refresh() {
    let mut times: Vec<f64> = profiler_tui::refresh_times(5000, 8000, 30)
        .iter()
        .map(|t| t.as_secs_f64() * 1000.0)
        .collect();
    times.sort_by(f64::total_cmp);
    let median = common::median(times.clone());
    let max = times.last().copied().unwrap_or(f64::NAN);
    let mut page = String::new();
    writeln!(
        page,
        "### `top`'s refresh\n\nWritten by `cargo bench --bench top` (or `top refresh`, this \
         alone) on {}. A refresh of the screen (160x50) over 5,000 distinct functions in 4 \
         processes, each interval bringing 8,000 samples (4 kHz on 2 CPUs), from taking the interval's counts \
         to the frame drawn: median {median:.1} ms, slowest {max:.1} ms of 30 (after the first, \
         which names every function). The load average was {} as it started.",
        common::machine(),
        common::load_average(),
    )
    .unwrap();
    common::write_section("top-refresh", &page);
}
