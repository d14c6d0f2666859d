//! The JSON exports read back as their consumers read them, on recordings
//! made by hand: speedscope's file format (tests/browser.rs opens it in
//! speedscope itself) and the Firefox Profiler's processed format.

use std::path::Path;

use serde_json::Value;

use crate::synthetic::*;
use crate::util::*;

/// inlinesplit in two processes, with stacks: pid 100 runs hot_a (its
/// inlined burn), then hot_b, then hot_a again; pid 101 runs hot_c.
fn write_two_processes(dir: &Path) {
    let binary = fixture("inlinesplit");
    let (a, _) = inlined_and_own(&binary, "hot_a", "burn");
    let (b, b_own) = inlined_and_own(&binary, "hot_b", "burn");
    let (c, _) = inlined_and_own(&binary, "hot_c", "burn");
    let (main, _) = function_range(&binary, "main");
    let mut recording = Synthetic::with_stacks();
    recording.process(100, 0, "inlinesplit", &binary);
    recording.process(101, 100, "worker", &binary);
    recording.samples(100, a, &[main + 8], 30);
    recording.samples(101, c, &[main + 8], 10);
    recording.samples(100, b, &[main + 8], 20);
    recording.samples(100, b_own, &[main + 8], 5);
    recording.samples(100, a, &[main + 8], 30);
    recording.write(&dir.join("two.data"), &["inlinesplit", "4"]);
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The names of a speedscope profile's samples, root first.
fn speedscope_stacks(file: &Value, profile: &Value) -> Vec<Vec<String>> {
    let frames = file["shared"]["frames"].as_array().unwrap();
    (profile["samples"].as_array().unwrap().iter())
        .map(|stack| {
            (stack.as_array().unwrap().iter())
                .map(|i| {
                    frames[i.as_u64().unwrap() as usize]["name"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect()
        })
        .collect()
}

#[test]
fn speedscope_has_a_sampled_profile_per_thread_in_time_order() {
    let dir = scratch("export-speedscope");
    write_two_processes(&dir);
    run_ok(
        &dir,
        &["export", "--format", "speedscope", "-i", "two.data"],
    );
    let file = read_json(&dir.join("profile.speedscope.json"));

    // What speedscope's schema requires, and what its importer checks.
    assert_eq!(
        file["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    assert_eq!(file["name"], "inlinesplit 4");
    let profiles = file["profiles"].as_array().unwrap();
    let names: Vec<&str> = profiles
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "inlinesplit (pid 100, tid 100)",
            "worker (pid 101, tid 101)"
        ]
    );
    assert_eq!(file["activeProfileIndex"], 0);
    let frames = file["shared"]["frames"].as_array().unwrap();
    assert!(
        frames
            .iter()
            .all(|f| f["name"].is_string() && f["file"].is_string())
    );
    for profile in profiles {
        assert_eq!(profile["type"], "sampled");
        assert_eq!(profile["unit"], "nanoseconds");
        assert_eq!(profile["startValue"], 0);
        let weights: Vec<u64> = (profile["weights"].as_array().unwrap().iter())
            .map(|w| w.as_u64().unwrap())
            .collect();
        assert_eq!(weights.len(), profile["samples"].as_array().unwrap().len());
        assert_eq!(
            profile["endValue"].as_u64().unwrap(),
            weights.iter().sum::<u64>()
        );
    }

    // Runs of one stack are one sample, in the order they were taken;
    // each weighs its samples' periods (250 µs each here).
    let main = speedscope_stacks(&file, &profiles[0]);
    let hot_a = ["main", "hot_a", "burn (inlined)"];
    let hot_b = ["main", "hot_b", "burn (inlined)"];
    assert_eq!(main, [&hot_a[..], &hot_b, &["main", "hot_b"], &hot_a]);
    let weights = &profiles[0]["weights"];
    assert_eq!(
        weights,
        &serde_json::json!([7_500_000, 5_000_000, 1_250_000, 7_500_000])
    );
    let worker = speedscope_stacks(&file, &profiles[1]);
    assert_eq!(worker, [["main", "hot_c", "burn (inlined)"]]);
}
