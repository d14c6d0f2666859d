//! The renderers of what the sampler finds rather than what a recording
//! holds (stat's counts, doctor's checkup, the event list), on facts made
//! by hand, and `symbolize` on the stable fixture, compared with the
//! expected outputs under `tests/expected/` (see `golden.rs`). No kernel
//! needed.

use std::path::Path;
use std::time::Duration;

use profiler_events::{
    CAP_PERFMON, CAP_SYS_ADMIN, Checkup, Count, EventCheck, EventCount, EventSource, EventValue,
    Pmus, Privileges, StatCounts, ThreadCount, Usability, list_events,
};
use profiler_report::{
    StatExit, StatSummary, render_checkup_json, render_checkup_text, render_event_list_json,
    render_event_list_text, render_stat_interval_json, render_stat_interval_text, render_stat_json,
    render_stat_text,
};

use crate::golden::{assert_expected, normalize};
use crate::util::*;

/// Renders into a buffer.
fn rendered(render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Vec<u8> {
    let mut out = Vec::new();
    render(&mut out).unwrap();
    out
}

fn count(raw: u64, enabled_ns: u64, running_ns: u64) -> EventValue {
    EventValue::Counted(Count::new(raw, enabled_ns, running_ns))
}

/// task-clock and page-faults counted all along, context-switches
/// multiplexed half the time, cycles not supported; `threads` splits them
/// over two threads.
fn counts(threads: bool) -> StatCounts {
    let events = |scale: u64| {
        vec![
            EventCount {
                event: "task-clock".into(),
                unit: "ns",
                value: count(1_234_567_890 / scale, 2_000_000_000, 2_000_000_000),
            },
            EventCount {
                event: "page-faults".into(),
                unit: "events",
                value: count(12_345 / scale, 2_000_000_000, 2_000_000_000),
            },
            EventCount {
                event: "context-switches".into(),
                unit: "events",
                value: count(500 / scale, 2_000_000_000, 1_000_000_000),
            },
            EventCount {
                event: "cycles".into(),
                unit: "events",
                value: EventValue::NotSupported {
                    reason: "no hardware performance-monitoring unit".into(),
                },
            },
        ]
    };
    let per_thread = |tid, name: &str| ThreadCount {
        pid: 100,
        tid,
        name: Some(name.into()),
        events: events(2),
    };
    StatCounts {
        elapsed: Duration::from_millis(2000),
        span: Duration::from_millis(1000),
        events: events(1),
        threads: match threads {
            true => vec![per_thread(100, "app"), per_thread(101, "worker")],
            false => Vec::new(),
        },
    }
}

#[test]
fn stat_counts_intervals_and_totals() {
    for threads in [false, true] {
        let counts = counts(threads);
        let summary = StatSummary {
            target: "'./app'",
            totals: &counts,
            exit: Some(StatExit {
                outcome: "exited with status 3".into(),
                status: 3,
            }),
            user_time: Some(Duration::from_millis(1100)),
            system_time: Some(Duration::from_millis(130)),
            interrupted_by: None,
        };
        let name = if threads {
            "stat/per-thread"
        } else {
            "stat/totals"
        };
        let text = rendered(|out| render_stat_text(&summary, out));
        assert_expected(&format!("{name}.txt"), &text);
        let json = rendered(|out| render_stat_json(&summary, true, out));
        assert_expected(&format!("{name}.json"), &json);
        let intervals = rendered(|out| {
            render_stat_interval_text(&counts, true, out)?;
            render_stat_interval_text(&counts, false, out)
        });
        assert_expected(&format!("{name}-intervals.txt"), &intervals);
        let intervals = rendered(|out| render_stat_interval_json(&counts, out));
        assert_expected(&format!("{name}-intervals.json"), &intervals);
    }
    let interrupted = StatSummary {
        target: "process 1234",
        totals: &counts(false),
        exit: None,
        user_time: None,
        system_time: None,
        interrupted_by: Some(2),
    };
    let text = rendered(|out| render_stat_text(&interrupted, out));
    assert_expected("stat/interrupted.txt", &text);
    let json = rendered(|out| render_stat_json(&interrupted, false, out));
    assert_expected("stat/interrupted.json", &json);
}

/// A VM without a PMU at paranoid 2: root may do everything, cycles is
/// refused; or an unprivileged user at paranoid 3, refused everything.
fn checkup(root: bool) -> Checkup {
    let privileges = Privileges {
        euid: if root { 0 } else { 1000 },
        paranoid: Some(if root { 2 } else { 3 }),
        mlock_kb: Some(516),
        memlock_bytes: Some(8 << 20),
        capabilities: Some(match root {
            true => (1 << CAP_PERFMON) | (1 << CAP_SYS_ADMIN),
            false => 0,
        }),
    };
    let refused = |event: &str, why: &str| EventCheck {
        event: event.into(),
        refused: Some(why.into()),
    };
    let events = match root {
        true => vec![
            refused("cycles", "no hardware performance-monitoring unit"),
            EventCheck {
                event: "cpu-clock".into(),
                refused: None,
            },
        ],
        false => vec![
            refused("cycles", "permission denied"),
            refused("cpu-clock", "permission denied"),
        ],
    };
    Checkup {
        kernel: Some("6.1.0-test".into()),
        cpu_model: Some("Test CPU @ 2.00GHz".into()),
        online_cpus: vec![0, 1, 2, 3, 6],
        event_sources: vec![
            EventSource {
                name: "software".into(),
                perf_type: Some(1),
            },
            EventSource {
                name: "tracepoint".into(),
                perf_type: Some(2),
            },
        ],
        has_cpu_pmu: false,
        privileges,
        max_sample_rate: Some(100_000),
        cpu_time_max_percent: Some(25),
        events,
        advice: match root {
            true => vec!["no hardware PMU: record samples cpu-clock instead".into()],
            false => {
                vec!["allow your own programs with `sysctl kernel.perf_event_paranoid=2`".into()]
            }
        },
    }
}

#[test]
fn doctor_checkups() {
    for (name, root) in [("root", true), ("refused", false)] {
        let checkup = checkup(root);
        let text = rendered(|out| render_checkup_text(&checkup, out));
        assert_expected(&format!("doctor/{name}.txt"), &text);
        let json = rendered(|out| render_checkup_json(&checkup, out));
        assert_expected(&format!("doctor/{name}.json"), &json);
    }
}

#[test]
fn event_lists() {
    let sysfs = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sysfs/amd-zen2");
    let mut events = list_events(&Pmus::load(&sysfs).unwrap());
    // As probing would leave them: software events usable, the rest not.
    for event in &mut events {
        if event.spec.is_some() {
            event.usability = match event.group.label() {
                "Software event" => Usability::Usable,
                _ => Usability::Unusable("permission denied".into()),
            };
        }
    }
    assert_expected(
        "list/amd-zen2.txt",
        &rendered(|out| render_event_list_text(&events, out)),
    );
    assert_expected(
        "list/amd-zen2.json",
        &rendered(|out| render_event_list_json(&events, out)),
    );
}

#[test]
fn symbolized_addresses() {
    let dir = scratch("renderers-symbolize");
    let stable = fixture("stable");
    let input: String = (0x401000..0x401240_u64)
        .step_by(6)
        .map(|a| format!("{a:#x}\n"))
        .collect();
    for (name, options) in [
        ("functions.txt", &[][..]),
        ("inlines.txt", &["--inlines"]),
        ("functions.json", &["--format", "json"]),
        ("inlines.json", &["--inlines", "--format", "json"]),
    ] {
        let args = [
            &["symbolize", "--exe", stable.to_str().unwrap()][..],
            options,
        ]
        .concat();
        let one = run_with_input(&dir, &[&args[..], &["--jobs", "1"]].concat(), &input);
        let four = run_with_input(&dir, &[&args[..], &["--jobs", "4"]].concat(), &input);
        assert!(one.status.success(), "{}", stderr(&one));
        assert_eq!(one.stdout, four.stdout, "{args:?}");
        let text = normalize(&String::from_utf8(one.stdout).unwrap(), &dir);
        assert_expected(&format!("symbolize/{name}"), text.as_bytes());
    }
}
