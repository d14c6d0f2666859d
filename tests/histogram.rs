//! Histogram mode (PAPI_profil) and the histogram table, end to end.

use std::path::Path;

use serde_json::Value;

use crate::util::*;

fn hist_json(dir: &Path, args: &[&str]) -> Value {
    run_json(dir, &[&["hist", "--format", "json"], args].concat())
}

/// Sum of the counts (of event column `column`) of the rows whose symbol
/// belongs to `function`.
pub(crate) fn function_count(table: &Value, function: &str, column: usize) -> u64 {
    table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["symbol"].as_str().unwrap().split('+').next() == Some(function))
        .map(|r| r["counts"][column].as_u64().unwrap())
        .sum()
}

live_test!(histogram_mode_keeps_the_profile_in_constant_space, || {
    let dir = scratch("histogram-constant");
    let split = fixture("split");
    let split = split.to_str().unwrap();
    record(
        &dir,
        "short.data",
        &["--histogram", "-e", "cpu-clock"],
        &[split, "2"],
    );
    record(
        &dir,
        "long.data",
        &["--histogram", "-e", "cpu-clock"],
        &[split, "6"],
    );
    // Three times longer, three times the samples, about the same size: a
    // sample adds to the file only where it is a bucket's first (a few
    // bytes), where a recording of samples grows by about 40 bytes each.
    let (short, long) = (dir.join("short.data"), dir.join("long.data"));
    let (short_size, long_size) = (
        short.metadata().unwrap().len(),
        long.metadata().unwrap().len(),
    );
    assert!(
        short_size.abs_diff(long_size) <= 512,
        "{short_size} vs {long_size}"
    );

    let report = report_json(&dir, "long.data");
    assert!(samples(&report) >= 2000, "{}", samples(&report));
    for (name, share) in [("burn_60", 60.0), ("burn_30", 30.0), ("burn_10", 10.0)] {
        assert_near(name, percent(&report, name), share, 3.0, &report);
    }
    let table = hist_json(&dir, &["-i", "long.data", "--module", "split"]);
    assert_eq!(table["bucket_bits"], 16);
    assert_eq!(table["scale"], 65536);
    assert_eq!(table["events"], serde_json::json!(["cpu-clock"]));
    let in_region = table["in_region"][0].as_u64().unwrap();
    assert_eq!(
        in_region + table["outside"][0].as_u64().unwrap(),
        samples(&report)
    );
    let burn = function_count(&table, "burn_60", 0) as f64 / in_region as f64;
    assert!(
        (burn - 0.6).abs() <= 0.03,
        "burn_60 has {burn} of the buckets' counts"
    );
});

live_test!(the_table_of_a_full_recording_at_any_scale, || {
    let dir = scratch("histogram-scales");
    let split = fixture("split");
    record(
        &dir,
        "full.data",
        &["-e", "cpu-clock"],
        &[split.to_str().unwrap(), "3"],
    );
    let mut per_scale = Vec::new();
    for (scale, bytes) in [(131072, 1), (65536, 2), (32768, 4), (16384, 8)] {
        let table = hist_json(
            &dir,
            &[
                "-i",
                "full.data",
                "--module",
                "split",
                "--scale",
                &scale.to_string(),
            ],
        );
        assert_eq!(table["scale"], scale);
        let region = table["regions"][0]["address"].as_u64().unwrap();
        for row in table["rows"].as_array().unwrap() {
            // Each row starts at its bucket's first byte: the exact inverse.
            let address = row["address"].as_u64().unwrap();
            assert_eq!((address - region) % bytes, 0, "scale {scale}: {row}");
        }
        per_scale.push(["burn_60", "burn_30", "burn_10"].map(|f| function_count(&table, f, 0)));
    }
    // The functions are 16-byte aligned, so no bucket straddles two of them:
    // every scale tells the same totals.
    assert!(per_scale.windows(2).all(|w| w[0] == w[1]), "{per_scale:?}");
    assert!(
        per_scale[0][0] > 2 * per_scale[0][1] - per_scale[0][1] / 2,
        "{per_scale:?}"
    );

    let text =
        String::from_utf8(run(&dir, &["hist", "-i", "full.data", "--module", "split"]).stdout)
            .unwrap();
    for part in [
        "16-bit buckets",
        "scale 65536",
        "cpu-clock, 4000 Hz",
        "in regions",
        "outside",
        "saturated",
        "burn_60+0x",
    ] {
        assert!(text.contains(part), "'{part}' missing from:\n{text}");
    }
    let csv = String::from_utf8(run(&dir, &["hist", "-i", "full.data", "--format", "csv"]).stdout)
        .unwrap();
    assert!(
        csv.starts_with("address,module,symbol,cpu-clock\n"),
        "{csv}"
    );
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.starts_with("0x") && l.split(',').count() == 4),
        "{csv}"
    );
});

live_test!(several_events_side_by_side_each_with_its_threshold, || {
    let dir = scratch("histogram-events");
    let split = fixture("split");
    record(
        &dir,
        "two.data",
        &[
            "--histogram",
            "-e",
            "cpu-clock",
            "-c",
            "200000",
            "-e",
            "page-faults",
            "-c",
            "1",
        ],
        &[split.to_str().unwrap(), "2"],
    );
    let table = hist_json(&dir, &["-i", "two.data"]);
    assert_eq!(
        table["events"],
        serde_json::json!(["cpu-clock", "page-faults"])
    );
    for key in ["outside", "saturated", "in_region"] {
        assert_eq!(table[key].as_array().unwrap().len(), 2, "{key}");
    }
    let rows = table["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .all(|r| r["counts"].as_array().unwrap().len() == 2)
    );
    let column = |i: usize| {
        rows.iter()
            .map(|r| r["counts"][i].as_u64().unwrap())
            .sum::<u64>()
    };
    assert!(column(0) >= 500, "cpu-clock counts: {}", column(0));
    assert!(column(1) >= 10, "page-fault counts: {}", column(1));
    let only = hist_json(&dir, &["-i", "two.data", "--event", "page-faults"]);
    assert_eq!(only["events"], serde_json::json!(["page-faults"]));
});

live_test!(a_region_of_the_program_and_what_lies_outside_it, || {
    let dir = scratch("histogram-region");
    let split = fixture("split");
    // burn_60's extent, as nm prints it.
    let nm = std::process::Command::new("nm")
        .arg("-S")
        .arg(&split)
        .output()
        .unwrap();
    let symbols = String::from_utf8(nm.stdout).unwrap();
    let line = symbols.lines().find(|l| l.ends_with(" burn_60")).unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    let start = u64::from_str_radix(fields[0], 16).unwrap();
    let end = start + u64::from_str_radix(fields[1], 16).unwrap();
    let region = format!("{start:#x}:{end:#x}:131072");
    record(
        &dir,
        "region.data",
        &["--histogram", "--region", &region],
        &[split.to_str().unwrap(), "2"],
    );
    let table = hist_json(&dir, &["-i", "region.data"]);
    let rows = table["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let address = row["address"].as_u64().unwrap();
        assert!((start..end).contains(&address), "{row} outside {region}");
        assert!(
            row["symbol"].as_str().unwrap().starts_with("burn_60"),
            "{row}"
        );
    }
    let (inside, outside) = (
        table["in_region"][0].as_f64().unwrap(),
        table["outside"][0].as_f64().unwrap(),
    );
    let share = inside / (inside + outside);
    assert!(
        (0.55..=0.65).contains(&share),
        "{share} of the samples in burn_60"
    );
});

live_test!(full_buckets_saturate_or_wrap_and_are_counted, || {
    let dir = scratch("histogram-saturate");
    let split = fixture("split");
    let split = split.to_str().unwrap();
    // Weighted by its period (250000 ns), one sample fills a 16-bit bucket.
    record(
        &dir,
        "saturate.data",
        &["--histogram", "--weighted", "-e", "cpu-clock"],
        &[split, "1"],
    );
    let table = hist_json(&dir, &["-i", "saturate.data"]);
    let counts: Vec<u64> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["counts"][0].as_u64().unwrap())
        .collect();
    assert!(counts.iter().all(|&c| c == 65_535), "{counts:?}");
    let saturated = table["saturated"][0].as_u64().unwrap();
    assert_eq!(
        saturated,
        table["in_region"][0].as_u64().unwrap(),
        "every increment overflowed"
    );

    record(
        &dir,
        "wrap.data",
        &["--histogram", "--weighted", "--wrap", "-e", "cpu-clock"],
        &[split, "1"],
    );
    let table = hist_json(&dir, &["-i", "wrap.data"]);
    assert!(table["saturated"][0].as_u64().unwrap() > 0);
    let counts: Vec<u64> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["counts"][0].as_u64().unwrap())
        .collect();
    assert!(
        counts.iter().any(|&c| c < 65_535),
        "nothing wrapped: {counts:?}"
    );

    // A wider bucket holds them all: no saturation.
    record(
        &dir,
        "wide.data",
        &[
            "--histogram",
            "--weighted",
            "--bucket",
            "64",
            "-e",
            "cpu-clock",
        ],
        &[split, "1"],
    );
    let table = hist_json(&dir, &["-i", "wide.data"]);
    assert_eq!(table["saturated"][0], 0);
    assert_eq!(table["bucket_bits"], 64);
});

live_test!(random_drops_a_quarter, || {
    let dir = scratch("histogram-random");
    let split = fixture("split");
    record(
        &dir,
        "random.data",
        &["--histogram", "--random", "-e", "cpu-clock"],
        &[split.to_str().unwrap(), "2"],
    );
    let table = hist_json(&dir, &["-i", "random.data"]);
    let dropped = table["dropped"][0].as_f64().unwrap();
    let kept = table["in_region"][0].as_f64().unwrap() + table["outside"][0].as_f64().unwrap();
    let share = dropped / (dropped + kept);
    assert!((0.22..=0.28).contains(&share), "{share} dropped");
});

/// Runs `args` in `dir`, which must fail with one line naming `needle`.
fn refused(dir: &Path, args: &[&str], needle: &str) {
    let output = run(dir, args);
    let message = stderr(&output);
    assert!(!output.status.success(), "{args:?}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.contains(needle),
        "{args:?}: '{needle}' not in {message}"
    );
}

#[test]
fn histogram_options_are_checked() {
    let dir = scratch("histogram-bad-input");
    let fails = |args: &[&str], needle: &str| refused(&dir, args, needle);
    fails(
        &["record", "--histogram", "--scale", "70000", "--", "true"],
        "131072",
    );
    fails(
        &["record", "--histogram", "--bucket", "8", "--", "true"],
        "16, 32 or 64",
    );
    fails(
        &[
            "record",
            "--histogram",
            "--region",
            "nonsense",
            "--",
            "true",
        ],
        "START:END",
    );
    fails(
        &[
            "record",
            "--histogram",
            "--region",
            "0x10:0x8",
            "--",
            "true",
        ],
        "after the start",
    );
    fails(&["record", "--scale", "4096", "--", "true"], "--histogram");
    fails(
        &["hist", "--scale", "3", "-i", "none.data"],
        "cannot open none.data",
    );
    fails(&["hist", "--scale", "1", "-i", "none.data"], "131072");
}

// What can be checked only against a program and a recording of it.
live_test!(histogram_options_are_checked_against_the_recording, || {
    let dir = scratch("hist-bad-recorded");
    let fails = |args: &[&str], needle: &str| refused(&dir, args, needle);
    let split = fixture("split");
    let split = split.to_str().unwrap();
    fails(
        &[
            "record",
            "--histogram",
            "--region",
            "0xffffff000:0xffffff100",
            "--",
            split,
        ],
        "loadable segment",
    );
    record(
        &dir,
        "h.data",
        &["--histogram", "--scale", "32768", "-e", "cpu-clock"],
        &[split, "1"],
    );
    fails(&["hist", "-i", "h.data", "--scale", "65536"], "coarser");
    fails(
        &["hist", "-i", "h.data", "--module", "nope"],
        "no module 'nope'",
    );
    assert!(
        run(&dir, &["hist", "-i", "h.data", "--scale", "16384"])
            .status
            .success()
    );
});
