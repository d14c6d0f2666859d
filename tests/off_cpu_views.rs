//! Every view and export of the off-CPU and wall events, on a recording
//! made by hand over the stable fixtures (see `renderers.rs`), compared
//! with the expected outputs under `tests/expected/`: no kernel needed.

use std::path::Path;

use profiler_model::Sampling;

use crate::renderers::{check, check_as, places, pprof_shown, stable};
use crate::synthetic::*;
use crate::util::*;

/// A `record --off-cpu -g` of `stable`: the main thread (pid 100) runs
/// hot_a, blocks 5 ms in leaf (four calls of descend deep), is preempted
/// twice in hot_a, and blocks 0.1 ms where the kernel took no stack; its
/// thread `worker` (101) runs hot_c, then blocks 2 ms in it and exits.
/// `scale` multiplies the main thread's blocked time, for a second
/// recording to compare with. Clock samples weigh 1 µs, as the records
/// are a microsecond apart.
fn write_off_cpu(dir: &Path, name: &str, scale: u64) {
    let stable = stable();
    let at = places(&stable);
    let mut recording = Synthetic::with_stacks();
    recording.program = Some(stable.exe.to_str().unwrap().to_owned());
    recording.add_event("cpu-clock", Sampling::Period(1000), None);
    let switch_out = recording.add_off_cpu_events();
    recording.process(100, 0, "stable", &stable.exe);
    recording.thread(100, 101, "worker");
    let descent = [
        at.leaf_after_hot_c,
        at.descend_after_descend,
        at.descend_after_descend,
        at.descend_after_descend,
        at.descend_after_descend,
        at.main_after_descend,
    ];
    let running = |tid, user: Vec<u64>| At {
        pid: 100,
        tid,
        period: 1000,
        user,
        ..At::default()
    };
    let leaving = |tid, user: Vec<u64>| At {
        event: switch_out,
        period: 1,
        ..running(tid, user)
    };
    recording.take(&running(100, vec![at.hot_a_mix, at.main_after_hot_a]), 40);
    let blocked = leaving(100, [&[at.hot_c[0]][..], &descent].concat());
    recording.off_cpu(&blocked, false, 5_000_000 * scale);
    recording.take(
        &running(101, vec![at.hot_c[1], at.thread_start_after_hot_c]),
        20,
    );
    for _ in 0..2 {
        recording.off_cpu(
            &leaving(100, vec![at.hot_a, at.main_after_hot_a]),
            true,
            300_000,
        );
    }
    recording.off_cpu(
        &leaving(101, vec![at.hot_c[1], at.thread_start_after_hot_c]),
        false,
        2_000_000,
    );
    recording.exit(100, 101);
    recording.off_cpu(&leaving(100, Vec::new()), false, 100_000);
    recording.take(&running(100, vec![at.hot_a_mix, at.main_after_hot_a]), 10);
    recording.write(&dir.join(name), &["stable", "--off-cpu"]);
}

#[test]
fn reports_of_off_cpu_and_wall_time() {
    let dir = scratch("renderers-off-cpu");
    write_off_cpu(&dir, "off-cpu.data", 1);
    let report = ["report", "-i", "off-cpu.data"];
    for (name, options) in [
        ("off-cpu.txt", &[][..]),
        (
            "off-cpu-children.txt",
            &["--event", "off-cpu", "--children"],
        ),
        (
            "off-cpu-state.txt",
            &["--event", "off-cpu", "--sort", "state,sym"],
        ),
        (
            "off-cpu-state.json",
            &[
                "--event",
                "off-cpu",
                "--sort",
                "state,sym",
                "--format",
                "json",
            ],
        ),
        (
            "off-cpu-caller.txt",
            &["--event", "off-cpu", "--call-graph", "caller"],
        ),
        ("wall-state.txt", &["--event", "wall", "--sort", "state"]),
        (
            "wall-threads.txt",
            &["--event", "wall", "--threads", "--children"],
        ),
    ] {
        check(
            &dir,
            &format!("report/{name}"),
            &[&report[..], options].concat(),
        );
    }
    // The samples taken as threads left the CPU are the off-CPU event's.
    let refused = ["--event", "context-switches"];
    check(
        &dir,
        "report/off-cpu-switch-out-event.txt",
        &[&report[..], &refused].concat(),
    );
}

#[test]
fn off_cpu_stacks_folded_drawn_compared_and_exported() {
    let dir = scratch("renderers-off-cpu-stacks");
    write_off_cpu(&dir, "off-cpu.data", 1);
    write_off_cpu(&dir, "longer.data", 3);
    let input = ["-i", "off-cpu.data"];
    let event = ["--event", "off-cpu"];
    check(
        &dir,
        "folded/off-cpu.txt",
        &[&["export", "--format", "folded"][..], &input, &event].concat(),
    );
    for (name, which) in [("off-cpu.svg", "off-cpu"), ("wall.svg", "wall")] {
        let args = ["flamegraph", "-o", "-", "--event", which];
        check(
            &dir,
            &format!("flamegraph/{name}"),
            &[&args[..], &input].concat(),
        );
    }
    let diff = ["diff", "off-cpu.data", "longer.data", "--event", "off-cpu"];
    check(&dir, "diff/off-cpu.txt", &diff);
    let export = |format| {
        [
            "export",
            "--format",
            format,
            "-o",
            "-",
            "-i",
            "off-cpu.data",
        ]
    };
    check_as(
        &dir,
        "export/off-cpu.pprof.txt",
        &export("pprof"),
        |output| pprof_shown(output, &dir),
    );
    check(
        &dir,
        "export/off-cpu.speedscope.json",
        &[&export("speedscope")[..], &event].concat(),
    );
    check(
        &dir,
        "export/wall.firefox.json",
        &[&export("firefox")[..], &["--event", "wall"]].concat(),
    );
}
