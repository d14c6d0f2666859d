//! The `-e` syntax end to end: several events in one argument sampled side
//! by side, bad event strings refused with one line naming the part at
//! fault, and `profiler list` telling usable events from unusable ones on
//! the machine the tests run on.

use serde_json::Value;

use crate::util::*;

const NO_PMU: &str =
    "this machine exposes no hardware performance-monitoring unit (a virtual machine?)";

live_test!(one_argument_samples_several_events_side_by_side, || {
    let dir = scratch("events-side-by-side");
    let split = fixture("split");
    let report = record_and_report(
        &dir,
        "two",
        &["-e", "cpu-clock,page-faults"],
        &[split.to_str().unwrap(), "1"],
    );
    let events = report["events"].as_array().unwrap();
    assert_eq!(events.len(), 2, "{}", report["events"]);
    assert_eq!(events[0]["name"], "cpu-clock");
    assert_eq!(events[1]["name"], "page-faults");
    assert!(
        events[0]["samples"].as_u64().unwrap() > 0,
        "{}",
        report["events"]
    );
    // A process faults pages in as it starts; the first fault is sampled.
    assert!(
        events[1]["samples"].as_u64().unwrap() > 0,
        "{}",
        report["events"]
    );
});

#[test]
fn bad_event_strings_fail_with_one_line_naming_the_part() {
    let dir = scratch("events-bad");
    for (event, expected) in [
        ("nosuch/event=1/", "unknown PMU 'nosuch'"),
        (
            "cpu-clok",
            "unknown event 'cpu-clok' (did you mean 'cpu-clock'?)",
        ),
        ("cpu-clock:z", "modifier 'z' is not supported"),
        ("cpu-clock:p", "software events have none"),
        ("cpu-clock,{page-faults", "'{' without a '}'"),
        ("cpu-clock,,page-faults", "an empty event"),
    ] {
        let output = run(
            &dir,
            &["record", "-e", event, "-o", "bad.data", "--", "true"],
        );
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(125), "{event}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{event}: {stderr}");
        assert!(stderr.starts_with("profiler: "), "{event}: {stderr}");
        assert!(stderr.contains(expected), "{event}: {stderr}");
    }
    assert!(!dir.join("bad.data").exists());
}

/// The line of `profiler list` for the event called `name`.
fn line<'a>(listing: &'a str, name: &str) -> &'a str {
    listing
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("{name} is not listed:\n{listing}"))
}

#[test]
fn list_tells_usable_events_from_unusable_ones() {
    let dir = scratch("events-list");
    let output = run_ok(&dir, &["list"]);
    let listing = String::from_utf8(output.stdout).unwrap();
    let clock = line(&listing, "cpu-clock");
    assert!(clock.contains("[Software event]"), "{clock}");
    let samples = profiler_testing::sampling_refusal().is_none();
    assert_eq!(clock.trim_end().ends_with(" usable"), samples, "{clock}");
    let cycles = line(&listing, "cycles");
    assert!(cycles.contains("cycles OR cpu-cycles"), "{cycles}");
    assert!(cycles.contains("[Hardware event]"), "{cycles}");
    if has_pmu() {
        assert!(cycles.trim_end().ends_with(" usable"), "{cycles}");
    } else if samples {
        assert!(
            cycles.contains(&format!("not usable: {NO_PMU}")),
            "{cycles}"
        );
    }
    let cache = line(&listing, "L1-dcache-load-misses");
    assert!(cache.contains("[Hardware cache event]"), "{cache}");
    let raw = line(&listing, "rNNNN");
    assert!(raw.contains("[Raw event descriptor]"), "{raw}");
    // The columns line up: every status starts at the same place.
    let column = clock.find("[Software event]").unwrap();
    assert_eq!(cycles.find("[Hardware event]"), Some(column));
}

#[test]
fn list_json_gives_each_event_its_encoding_and_verdict() {
    let dir = scratch("events-list-json");
    let list = run_json(&dir, &["list", "--json"]);
    let find = |name: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed"))
            .clone()
    };
    let clock = find("cpu-clock");
    assert_eq!(clock["group"], "Software event");
    let samples = profiler_testing::sampling_refusal().is_none();
    assert_eq!(clock["usable"], samples);
    assert_eq!(clock["reason"] == Value::Null, samples);
    assert_eq!(clock["encoding"]["type"], 1);
    assert_eq!(clock["encoding"]["config"], 0);
    let cycles = find("cycles");
    assert_eq!(cycles["aliases"][0], "cpu-cycles");
    assert_eq!(cycles["encoding"]["type"], 0);
    if has_pmu() {
        assert_eq!(cycles["usable"], true, "{cycles}");
    } else {
        assert_eq!(cycles["usable"], false, "{cycles}");
        if samples {
            assert_eq!(cycles["reason"], NO_PMU);
        }
    }
    let misses = find("L1-dcache-load-misses");
    assert_eq!(misses["group"], "Hardware cache event");
    assert_eq!(misses["encoding"]["type"], 3);
    assert_eq!(misses["encoding"]["config"], 0x10000);
    let raw = find("rNNNN");
    assert_eq!(raw["usable"], Value::Null);
    assert_eq!(raw["encoding"], Value::Null);
}

live_test!(
    a_threshold_on_a_software_event_takes_one_sample_per_threshold,
    || {
        let dir = scratch("events-threshold");
        let program = fixture("groupwork");
        // 40000 page faults, one sample per 100 of them.
        let report = record_and_report(
            &dir,
            "threshold",
            &["-e", "page-faults", "-c", "100"],
            &[program.to_str().unwrap()],
        );
        let event = &report["events"][0];
        let samples = event["samples"].as_u64().unwrap();
        assert!((380..=420).contains(&samples), "{event}");
        assert_eq!(event["period"].as_u64().unwrap(), samples * 100, "{event}");
        assert!(percent(&report, "touch") >= 95.0, "{}", report["functions"]);
    }
);
