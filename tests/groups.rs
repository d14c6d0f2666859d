//! Event groups end to end: a leader's samples carry its members' counts
//! (PERF_SAMPLE_READ), which the report and the histogram table show as
//! columns beside the leader's.

use serde_json::Value;

use crate::util::*;

/// The member count `member` of function `name` in a JSON report.
fn counted(report: &Value, name: &str, member: &str) -> u64 {
    let row = function(report, name).unwrap_or_else(|| panic!("no {name}: {report}"));
    row["group"][member]
        .as_u64()
        .unwrap_or_else(|| panic!("no {member} in {row}"))
}

live_test!(a_group_member_counts_where_its_leader_samples, || {
    let dir = scratch("groups");
    let program = fixture("groupwork");
    let report = record_and_report(
        &dir,
        "group",
        // User space only: with the kernel's, the leader's samples in the
        // fault handler take the faults counted there.
        &["--user-only", "-e", "{cpu-clock,page-faults}"],
        &[program.to_str().unwrap()],
    );
    // The member is a column of its leader, not an event with rows.
    let events = report["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["name"], "cpu-clock");
    assert_eq!(events[0]["group"], serde_json::json!(["page-faults"]));
    assert!(
        samples(&report) >= 500,
        "too few samples: {}",
        samples(&report)
    );
    // Equal work in both; the faults all in `touch` (40000 pages).
    assert_near("touch", percent(&report, "touch"), 50.0, 15.0, &report);
    assert_near("burn", percent(&report, "burn"), 50.0, 15.0, &report);
    let (touch, burn) = (
        counted(&report, "touch", "page-faults"),
        counted(&report, "burn", "page-faults"),
    );
    assert!(
        touch >= 36_000,
        "touch counted {touch} page faults of 40000"
    );
    assert!(burn * 10 <= touch, "burn counted {burn}, touch {touch}");

    let text = run(&dir, &["report", "-i", "group.data"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("# Group:    page-faults"), "{text}");
    let header = text.lines().find(|l| l.contains("Self %")).unwrap();
    assert!(header.contains("page-faults"), "{header}");

    // The histogram table: the member is a column too.
    let hist = run_json(&dir, &["hist", "-i", "group.data", "--format", "json"]);
    let text = hist.to_string();
    assert!(text.contains("page-faults"), "{text}");

    // Histogram mode keeps the member's counts in its own histograms.
    let report = record_and_report(
        &dir,
        "group-histogram",
        &[
            "--histogram",
            "--user-only",
            "-e",
            "{cpu-clock,page-faults}",
        ],
        &[program.to_str().unwrap()],
    );
    let touch = counted(&report, "touch", "page-faults");
    assert!(
        touch >= 36_000,
        "touch counted {touch} page faults of 40000"
    );
});

#[test]
fn a_group_with_a_bad_member_is_refused_by_name() {
    let dir = scratch("groups-bad");
    let output = run(
        &dir,
        &["record", "-e", "{cpu-clock,page-fautls}", "--", "true"],
    );
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(125), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("page-fautls"), "{message}");
}

live_test!(events_of_different_layouts_share_the_rings, || {
    // A frequency-sampled event, a group leader (whose samples carry
    // counts) and a software event with a threshold write differently laid
    // out samples into the same per-CPU rings.
    let dir = scratch("groups-mixed");
    let program = fixture("groupwork");
    let report = record_and_report(
        &dir,
        "mixed",
        &[
            // As above: the faults counted where touch runs.
            "--user-only",
            "-e",
            "cpu-clock",
            "-F",
            "1000",
            "-e",
            "{task-clock,page-faults}",
            "-e",
            "page-faults",
            "-c",
            "1000",
        ],
        &[program.to_str().unwrap()],
    );
    let events = report["events"].as_array().unwrap();
    let names: Vec<&str> = events.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["cpu-clock", "task-clock", "page-faults"],
        "{events:?}"
    );
    let samples = |i: usize| events[i]["samples"].as_u64().unwrap();
    assert!(samples(0) >= 200 && samples(1) >= 800, "{events:?}");
    // 40000 faults, one sample per 1000.
    assert!((36..=44).contains(&samples(2)), "{events:?}");
    let touch = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "touch" && f["event"] == "task-clock")
        .unwrap();
    assert!(
        touch["group"]["page-faults"].as_u64().unwrap() >= 36_000,
        "{touch}"
    );
});
