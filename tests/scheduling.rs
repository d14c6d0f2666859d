//! The recorder's scheduling priority: raised for the thread that drains
//! the ring buffers where this process may, never for the command.

use std::process::Command;

use crate::util::{profiler, scratch, stderr};

/// The kernel's numbers for the ordinary policy and first-in first-out
/// real-time.
const SCHED_OTHER: u32 = 0;
const SCHED_FIFO: u32 = 1;

/// A task's policy, real-time priority and nice value, from the fields
/// of its `/proc/PID/stat` after the command name.
#[derive(Debug, PartialEq, Eq)]
struct Scheduling {
    policy: u32,
    rt_priority: u32,
    nice: i32,
}

impl Scheduling {
    fn parse(stat: &str) -> Scheduling {
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .collect();
        // Field 3 (state) is the first after the name: field N is N - 3.
        Scheduling {
            nice: fields[19 - 3].parse().unwrap(),
            rt_priority: fields[40 - 3].parse().unwrap(),
            policy: fields[41 - 3].parse().unwrap(),
        }
    }
}

/// Records, under `wrapper` and at nice 5, a command that prints its own
/// scheduling and its parent's (the recorder, whose main thread drains);
/// returns them with the recorder's stderr.
fn record_scheduling(dir: &std::path::Path, wrapper: &[&str]) -> (Scheduling, Scheduling, String) {
    let recorder = profiler();
    let mut command = Command::new(wrapper[0]);
    command
        .args(&wrapper[1..])
        .args(["nice", "-n", "5"])
        .arg(recorder.get_program())
        .envs(recorder.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(dir)
        .args(["record", "-F", "1000", "-o", "sched.data", "--"])
        .args(["sh", "-c", "cat /proc/$$/stat /proc/$PPID/stat"]);
    let output = command.output().unwrap();
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    (
        Scheduling::parse(lines[0]),
        Scheduling::parse(lines[1]),
        said,
    )
}

// As root the drainer runs at SCHED_FIFO 1, which costs no line of its
// own; the command runs as the profiler was started (nice 5, the ordinary
// policy).
live_test!(the_drainer_alone_runs_at_real_time_priority, || {
    if !profiler_testing::root("raising a thread to real-time priority") {
        return;
    }
    let dir = scratch("scheduling-root");
    let (command, recorder, said) = record_scheduling(&dir, &["env"]);
    let ordinary = Scheduling {
        policy: SCHED_OTHER,
        rt_priority: 0,
        nice: 5,
    };
    assert_eq!(command, ordinary, "{said}");
    assert_eq!(recorder.policy, SCHED_FIFO, "{said}");
    assert_eq!(recorder.rt_priority, 1, "{said}");
    assert_eq!(said.lines().count(), 1, "{said}");
});

// Without CAP_SYS_NICE nothing changes and nothing is said of it.
live_test!(without_cap_sys_nice_the_priority_stays, || {
    if !profiler_testing::root("dropping CAP_SYS_NICE with setpriv")
        || !profiler_testing::tool("setpriv")
    {
        return;
    }
    let dir = scratch("scheduling-no-cap");
    let wrapper = [
        "setpriv",
        "--bounding-set",
        "-sys_nice",
        "--inh-caps",
        "-sys_nice",
    ];
    let (command, recorder, said) = record_scheduling(&dir, &wrapper);
    for task in [&command, &recorder] {
        assert_eq!(task.policy, SCHED_OTHER, "{said}");
        assert_eq!(task.nice, 5, "{said}");
    }
    assert!(!said.contains("real-time"), "{said}");
});
