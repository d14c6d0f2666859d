//! What `record --off-cpu` costs: a program that switches 10k and 100k
//! times a second (two processes passing a byte over pipes on one CPU),
//! recorded without and with `--off-cpu` (and with stacks), against the
//! bare program and against `perf record -e sched:sched_switch -g` in the
//! same run; and what each switch adds to the recording. Written to
//! BENCHMARKS.md.
//!
//! `cargo bench --bench off_cpu [-- RUNS]` (default 3 runs per figure).
//! Runs are interleaved; figures are medians. The rates are per second of
//! the program's own CPU time: the fixture works a set CPU time between
//! messages, so that a machine others load slows it down without changing
//! how often it switches for the CPU it gets.

// A benchmark stops at the first thing that fails, panicking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

#[allow(dead_code)]
mod common;

use std::fmt::Write as _;
use std::path::Path;

/// Switches per second of the program's CPU time, and the program's CPU
/// seconds at that rate.
const RATES: [u64; 2] = [10_000, 100_000];
const PROGRAM_SECONDS: f64 = 1.5;

/// One way to run the program.
struct Configuration {
    name: &'static str,
    /// The recorder and its options, before `--` and the program; empty
    /// for the bare program.
    recorder: Vec<&'static str>,
    /// Where it writes its recording.
    data: &'static str,
}

fn configurations() -> Vec<Configuration> {
    let ours = |flags: &[&'static str]| {
        let mut command = vec!["profiler", "record", "-e", "cpu-clock"];
        command.extend_from_slice(flags);
        command
    };
    vec![
        Configuration {
            name: "bare program",
            recorder: Vec::new(),
            data: "",
        },
        Configuration {
            name: "profiler record",
            recorder: ours(&["-o", "plain.data"]),
            data: "plain.data",
        },
        Configuration {
            name: "profiler record --off-cpu",
            recorder: ours(&["--off-cpu", "-o", "off.data"]),
            data: "off.data",
        },
        Configuration {
            name: "profiler record --off-cpu -g",
            recorder: ours(&["--off-cpu", "-g", "-o", "stacks.data"]),
            data: "stacks.data",
        },
        // What each of the kernel's records costs the program, apart:
        // the switch records alone, and a sample at each switch out alone.
        Configuration {
            name: "perf record --switch-events",
            recorder: perf_beside_clock(&["--switch-events", "-o", "records.perf"]),
            data: "records.perf",
        },
        Configuration {
            name: "perf record -e context-switches -c 1",
            recorder: perf_beside_clock(&[
                "-e",
                "context-switches/period=1/",
                "-o",
                "samples.perf",
            ]),
            data: "samples.perf",
        },
        Configuration {
            name: "perf record -e sched:sched_switch -g",
            // -B: perf 6.1's build-id pass after such a recording aborts
            // ("stack smashing detected") on this kernel.
            recorder: vec![
                "perf",
                "record",
                "-q",
                "-B",
                "-e",
                "sched:sched_switch",
                "-g",
                "-o",
                "switch.perf",
            ],
            data: "switch.perf",
        },
    ]
}

/// `perf record` sampling `cpu-clock` as ours do, with `flags`.
fn perf_beside_clock(flags: &[&'static str]) -> Vec<&'static str> {
    let mut command = vec![
        "perf",
        "record",
        "-q",
        "-B",
        "-e",
        "cpu-clock",
        "-F",
        "4000",
    ];
    command.extend_from_slice(flags);
    command
}

/// What one configuration measured at one rate.
#[derive(Default)]
struct Figures {
    runs: Vec<common::Measured>,
    /// The program's own CPU seconds in each run, the kernel's work in
    /// its switches included, the recorder's left out.
    program: Vec<f64>,
    /// The recording's size of the last run, bytes.
    bytes: u64,
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let dir = util::scratch("bench-off-cpu");
    let program = util::fixture("pingpong");
    let program = program.to_str().unwrap();
    let profiler = env!("CARGO_BIN_EXE_profiler");
    let perf = common::output_of(std::process::Command::new("perf").arg("--version"));
    let configurations: Vec<Configuration> = configurations()
        .into_iter()
        .filter(|c| !perf.is_empty() || c.recorder.first() != Some(&"perf"))
        .collect();

    // What a message costs the program itself, working for nothing.
    let calibration = 20_000;
    let cost = common::measure(program, &[&calibration.to_string(), "0"], None)
        .map_or(5e-6, |m| m.cpu / calibration as f64);

    let mut page = String::new();
    let load = common::load_average();
    writeln!(page, "## Off-CPU time\n").unwrap();
    writeln!(
        page,
        "Written by `cargo bench --bench off_cpu` on {}, {perf}. Medians of {runs} interleaved \
         runs. The machine was shared (load average {load} when the run started): CPU times \
         are the figures to compare, wall times include others' work.\n",
        common::machine()
    )
    .unwrap();
    writeln!(
        page,
        "Workload: `fixtures/programs/pingpong MESSAGES WORK_NS`: two processes on one CPU \
         passing a byte over pipes, each message a context switch, each side working WORK_NS \
         of its own CPU time before it replies; a message alone costs it {:.1} µs of CPU here. \
         The rate is switches per second of the program's own CPU time, {PROGRAM_SECONDS} s of \
         it per run. Every profiler run also samples `cpu-clock` at 4000 Hz; perf records the \
         `sched:sched_switch` tracepoint with stacks alone (root only; with `-B`, as perf 6.1 \
         aborts in its build-id pass after such a recording on this kernel). Two more perf \
         runs take apart what the kernel writes per switch: its switch records alone \
         (`--switch-events`: one as the thread leaves the CPU, one as it comes back) and a \
         sample as it leaves alone (`context-switches`, period 1). CPU is the whole \
         command's, the recorder's own included; the program's CPU is its own (measured by \
         GNU time inside the recorder), which includes what the kernel does for the recorder \
         as the program switches, and leaves the recorder's process out.\n",
        cost * 1e6
    )
    .unwrap();
    writeln!(
        page,
        "| switches/s | command | wall s | CPU s | CPU × bare | program CPU s | program × bare \
         | recording MB | bytes per switch |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    .unwrap();
    // At the highest rate: each command's CPU against the bare program's.
    let mut ratios: Vec<(&str, f64)> = Vec::new();
    // At the highest rate: each command's program CPU, and the switches.
    let mut programs: Vec<(&str, f64)> = Vec::new();
    let mut top_messages = 0;
    for rate in RATES {
        let work_ns = ((1e9 / rate as f64) - cost * 1e9).max(0.0) as u64;
        let messages = (PROGRAM_SECONDS * rate as f64) as u64;
        let args = vec![messages.to_string(), work_ns.to_string()];
        top_messages = messages;
        let mut figures: Vec<Figures> = configurations.iter().map(|_| Figures::default()).collect();
        for _ in 0..runs {
            for (configuration, figures) in configurations.iter().zip(&mut figures) {
                if let Some((measured, own)) = run(&dir, configuration, profiler, program, &args) {
                    figures.runs.push(measured);
                    figures.program.push(own);
                    figures.bytes = size(&dir.join(configuration.data));
                }
            }
        }
        let bare = common::medians(&figures[0].runs);
        let bare_program = common::median(figures[0].program.clone());
        let plain = figures[1].bytes;
        for (configuration, figures) in configurations.iter().zip(&figures) {
            if figures.runs.is_empty() {
                continue;
            }
            let m = common::medians(&figures.runs);
            let (recording, per_switch) = match configuration.data {
                "" => (String::new(), String::new()),
                data => {
                    // Ours: what --off-cpu adds to a recording of the
                    // same program without it; perf's: its whole file.
                    let added = match data.ends_with(".perf") || data == "plain.data" {
                        true => figures.bytes,
                        false => figures.bytes.saturating_sub(plain),
                    };
                    let per = match data == "plain.data" {
                        true => "—".to_owned(),
                        false => format!("{:.0}", added as f64 / messages as f64),
                    };
                    (format!("{:.2}", figures.bytes as f64 / 1e6), per)
                }
            };
            let own = common::median(figures.program.clone());
            if rate == RATES[RATES.len() - 1] {
                ratios.push((configuration.name, m.cpu / bare.cpu));
                programs.push((configuration.name, own));
            }
            writeln!(
                page,
                "| {rate} | {} | {:.2} | {:.2} | {:.3} | {own:.2} | {:.3} | {recording} | \
                 {per_switch} |",
                configuration.name,
                m.wall,
                m.cpu,
                m.cpu / bare.cpu,
                own / bare_program
            )
            .unwrap();
        }
    }
    let ratio = |name: &str| ratios.iter().find(|(n, _)| *n == name).map(|(_, r)| *r);
    if let Some(ours) = ratio("profiler record --off-cpu") {
        let perf = ratio("perf record -e sched:sched_switch -g")
            .map_or(String::new(), |r| format!("; perf's, with stacks, {r:.2}×"));
        let verdict = if ours < 1.3 { "met" } else { "missed" };
        writeln!(
            page,
            "\nAt {} switches a second `--off-cpu` takes {ours:.2}× the bare program's CPU (the \
             target, under 1.3×, is {verdict}){perf}.",
            RATES[RATES.len() - 1]
        )
        .unwrap();
    }
    writeln!(page, "{}", breakdown(&programs, top_messages)).unwrap();
    writeln!(
        page,
        "\nBytes per switch are what `--off-cpu` adds to the recording of the same program \
         without it, over the program's switches (one per message): for each, the kernel's \
         records of the thread leaving the CPU and coming back, and its sample as it leaves, \
         with the address it left from (and with `-g` its stack). perf's are its whole file \
         over the switches; it writes one sample per switch, with both threads' names and \
         pids."
    )
    .unwrap();
    common::write_section("off-cpu", &page);
}

/// One run of `configuration`, the program given `args`: the whole
/// command's figures, and the program's own CPU seconds.
fn run(
    dir: &Path,
    configuration: &Configuration,
    profiler: &str,
    program: &str,
    args: &[String],
) -> Option<(common::Measured, f64)> {
    let _ = std::fs::remove_file(dir.join(configuration.data));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some((&recorder, flags)) = configuration.recorder.split_first() else {
        return common::measure(program, &args, None).map(|m| (m, m.cpu));
    };
    let recorder = match recorder {
        "profiler" => profiler,
        other => other,
    };
    // GNU time inside the recorder: the program's CPU alone.
    let times = dir.join("program.time");
    let _ = std::fs::remove_file(&times);
    let mut command: Vec<&str> = flags.to_vec();
    command.extend([
        "--",
        "/usr/bin/time",
        "-f",
        "%U %S",
        "-o",
        "program.time",
        "--",
    ]);
    command.push(program);
    command.extend(args);
    let previous = std::env::current_dir().ok()?;
    std::env::set_current_dir(dir).ok()?;
    let measured = common::measure(recorder, &command, None);
    std::env::set_current_dir(previous).ok()?;
    let text = std::fs::read_to_string(&times).ok()?;
    let own: Vec<f64> = (text.lines().last()?.split_whitespace())
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    Some((measured?, own.iter().sum()))
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Where the CPU that `--off-cpu` adds goes, at the highest rate, from
/// the program's own CPU in each configuration (`programs`) over
/// `switches`: what the kernel's records cost the program per switch,
/// against the recording without `--off-cpu`.
fn breakdown(programs: &[(&str, f64)], switches: u64) -> String {
    let own = |name: &str| programs.iter().find(|(n, _)| *n == name).map(|(_, s)| *s);
    let (Some(plain), Some(off)) = (own("profiler record"), own("profiler record --off-cpu"))
    else {
        return String::new();
    };
    let per_switch = |seconds: f64| seconds / switches as f64 * 1e6;
    let mut text = format!(
        "\nThe program's own CPU, against `profiler record` without `--off-cpu`: `--off-cpu` \
         costs it {:.1} µs a switch, all of it the kernel's, in the scheduler's switch path as \
         it writes the three records (`profiler record -g --kernel` of the program places the \
         added time in `finish_task_switch`, where interrupts come back on after the switch); \
         the recorder's own process takes the rest of the whole command's CPU.",
        per_switch(off - plain)
    );
    let records = own("perf record --switch-events").map(|s| per_switch(s - plain));
    let sample = own("perf record -e context-switches -c 1").map(|s| per_switch(s - plain));
    if let (Some(records), Some(sample)) = (records, sample) {
        write!(
            text,
            " Apart, measured with perf: the two switch records cost {records:.1} µs a switch, \
             the sample as the thread leaves {sample:.1} µs. `--off-cpu` needs all three: the \
             switch out says whether the thread was preempted, the switch back in when it came \
             back, and the sample where it left from; the kernel writes switch records in pairs \
             or not at all."
        )
        .unwrap();
    }
    text
}
