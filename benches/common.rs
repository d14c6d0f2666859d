//! What the benchmarks share: the machine's description, GNU time for wall
//! time and peak memory, and BENCHMARKS.md, where each benchmark rewrites its
//! own section between markers and leaves the others.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `2 CPUs (AMD EPYC), Linux 6.18.44, 2026-11-22 21:56 UTC`.
pub(crate) fn machine() -> String {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output();
    let date = date
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!(
        "{cpus} CPUs ({cpu}), Linux {}, {date}",
        read("/proc/sys/kernel/osrelease")
    )
}

/// Replaces the section `name` of BENCHMARKS.md (or appends it).
pub(crate) fn write_section(name: &str, content: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("BENCHMARKS.md");
    let page = std::fs::read_to_string(&path).unwrap_or_else(|_| "# Benchmarks\n".to_owned());
    let (start, end) = (
        format!("<!-- {name}: start -->"),
        format!("<!-- {name}: end -->"),
    );
    let section = format!("{start}\n{}\n{end}", content.trim_end());
    let page = match (page.find(&start), page.find(&end)) {
        (Some(a), Some(b)) if a < b => format!("{}{section}{}", &page[..a], &page[b + end.len()..]),
        _ => format!("{}\n\n{section}\n", page.trim_end()),
    };
    std::fs::write(&path, page).unwrap();
    print!("{content}");
    eprintln!("wrote the {name} section of {}", path.display());
}

/// What [`measure`] found of one run of a command.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Measured {
    /// Seconds of wall time.
    pub wall: f64,
    /// Seconds of CPU time, user and system.
    pub cpu: f64,
    /// Peak resident memory, MiB.
    pub memory: f64,
}

/// Wall time, CPU time and peak resident memory of a command, from GNU
/// time; its standard output goes to /dev/null. `None` if it failed.
pub(crate) fn measure(program: &str, args: &[&str], stdin: Option<&Path>) -> Option<Measured> {
    measure_with(program, args, stdin, &[])
}

/// [`measure`], with the variables `env` set for the command.
pub(crate) fn measure_with(
    program: &str,
    args: &[&str],
    stdin: Option<&Path>,
    env: &[(&str, &Path)],
) -> Option<Measured> {
    let mut command = Command::new("/usr/bin/time");
    command
        .args(["-f", "%e %U %S %M", "--"])
        .arg(program)
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null());
    if let Some(file) = stdin {
        command.stdin(std::fs::File::open(file).ok()?);
    }
    let output = command.output().ok()?;
    if !output.status.success() {
        return None;
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let fields: Vec<f64> = (stderr.lines().last()?.split_whitespace())
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    match fields[..] {
        [wall, user, system, kib] => Some(Measured {
            wall,
            cpu: user + system,
            memory: kib / 1024.0,
        }),
        _ => None,
    }
}

/// The medians of each figure of `runs`.
pub(crate) fn medians(runs: &[Measured]) -> Measured {
    Measured {
        wall: median(runs.iter().map(|m| m.wall).collect()),
        cpu: median(runs.iter().map(|m| m.cpu).collect()),
        memory: median(runs.iter().map(|m| m.memory).collect()),
    }
}

/// The median of `values`.
pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Samples and lost samples from `profiler record`'s summary line.
pub(crate) fn profiler_counts(output: &Output) -> (u64, u64) {
    let text = String::from_utf8_lossy(&output.stderr);
    let line = text
        .lines()
        .find(|l| l.contains(" samples ("))
        .unwrap_or_default();
    let words: Vec<&str> = line.split([' ', '(']).collect();
    let number = |after: &str| {
        words
            .iter()
            .position(|w| *w == after)
            .and_then(|i| words[i - 1].parse().ok())
            .unwrap_or(0)
    };
    (number("samples"), number("lost,"))
}

/// Samples and lost samples of a perf.data, counted from its records
/// (`PERF_RECORD_SAMPLE`; `PERF_RECORD_LOST` and `PERF_RECORD_LOST_SAMPLES`),
/// as `perf report` counts them: read here rather than by `perf report`,
/// which aborts on some kernels' mapping records (perf 6.1.192 on Linux
/// 6.18: "assertion failed at util/build-id.c:1010").
pub(crate) fn perf_counts(_output: &Output, data: &Path) -> (u64, u64) {
    const SAMPLE: u32 = 9;
    const LOST: u32 = 2;
    const LOST_SAMPLES: u32 = 13;
    let bytes = std::fs::read(data).unwrap();
    assert_eq!(&bytes[..8], b"PERFILE2", "{}", data.display());
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    // The header: magic, size, attr_size, attrs (offset, size), data
    // (offset, size).
    let (start, size) = (word(40) as usize, word(48) as usize);
    let (mut samples, mut lost, mut at) = (0, 0, start);
    while at + 8 <= start + size {
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let length = u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
        match kind {
            SAMPLE => samples += 1,
            // id, then the count.
            LOST => lost += word(at + 16),
            LOST_SAMPLES => lost += word(at + 8),
            _ => {}
        }
        if length == 0 {
            break;
        }
        at += length;
    }
    (samples, lost)
}

/// What `command` printed, once it has succeeded: a benchmark stops at a
/// command that fails, showing it and its standard error.
pub(crate) fn succeeded(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The load averages over 1, 5 and 15 minutes, as /proc/loadavg says them.
pub(crate) fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `bin`, a program of the crate `krate` at `version` (`cargo install`
/// with `args` besides), installed under target/bench-tools on first use;
/// `None` where cargo cannot install it.
pub(crate) fn cargo_installed(
    krate: &str,
    version: &str,
    args: &[&str],
    bin: &str,
) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-tools");
    let tool = root.join("bin").join(bin);
    if !tool.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["install", "--quiet", krate, "--version", version])
            .args(args)
            .arg("--root")
            .arg(&root)
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
    }
    Some(tool)
}

pub(crate) fn output_of(command: &mut Command) -> String {
    command
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// User + system time of this process's reaped children (/proc/self/stat
/// fields 16 and 17, in clock ticks of 1/100 s).
pub(crate) fn children_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Field 3 of the file is the first after the name; 16 and 17 follow.
    let ticks: u64 = fields[13].parse::<u64>().unwrap() + fields[14].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}
