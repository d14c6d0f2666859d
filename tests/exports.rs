//! The JSON exports read back as their consumers read them, on recordings
//! made by hand: speedscope's file format (tests/browser.rs opens it in
//! speedscope itself) and the Firefox Profiler's processed format.
//!
//! The Firefox Profiler has no offline build to open a file with (npm has
//! none, and its site needs the network), so its export is checked here by
//! structure only, as the profiler's loader reads it: the metadata, a
//! thread per recorded thread with its process, and every sample's stack
//! resolved through the stack, frame, function and string tables to the
//! functions the recording has.

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
    recording.program = Some(binary.to_str().unwrap().to_owned());
    recording.process(100, 0, "inlinesplit", &binary);
    recording.process(101, 100, "worker", &binary);
    recording.samples(100, a, &[main + 8], 30);
    recording.samples(101, c, &[main + 8], 10);
    recording.samples(100, b, &[main + 8], 20);
    recording.samples(100, b_own, &[main + 8], 5);
    recording.samples(100, a, &[main + 8], 30);
    recording.write(&dir.join("two.data"), &["inlinesplit", "4"]);
}

/// Exporting `two.data` as `format` again writes the same bytes as
/// `file` has.
fn assert_same_again(dir: &Path, format: &str, file: &str) {
    let again = [
        "export", "--format", format, "-i", "two.data", "-o", "again",
    ];
    run_ok(dir, &again);
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    assert!(read(file) == read("again"), "two {format} exports differ");
}

pub(crate) fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The names of a speedscope profile's samples, root first.
pub(crate) fn speedscope_stacks(file: &Value, profile: &Value) -> Vec<Vec<String>> {
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
    assert_same_again(&dir, "speedscope", "profile.speedscope.json");

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

/// A Firefox Profiler thread's samples: each stack's function names, leaf
/// first, with its category and subcategory names, and the sample's
/// weight and time (ms since the profile's start).
pub(crate) struct FirefoxSample {
    pub names: Vec<String>,
    pub category: (String, String),
    pub weight: i64,
    pub time: f64,
}

pub(crate) fn firefox_samples(profile: &Value, thread: &Value) -> Vec<FirefoxSample> {
    let index = |v: &Value| v.as_u64().unwrap() as usize;
    let (stacks, frames) = (&thread["stackTable"], &thread["frameTable"]);
    let strings = thread["stringArray"].as_array().unwrap();
    let categories = profile["meta"]["categories"].as_array().unwrap();
    let samples = &thread["samples"];
    let mut time = 0.0;
    (0..samples["length"].as_u64().unwrap() as usize)
        .map(|i| {
            time += samples["timeDeltas"][i].as_f64().unwrap();
            let mut names = Vec::new();
            let mut stack = &samples["stack"][i];
            let leaf = index(&stacks["frame"][index(stack)]);
            while !stack.is_null() {
                let frame = index(&stacks["frame"][index(stack)]);
                let func = index(&frames["func"][frame]);
                let name = &strings[index(&thread["funcTable"]["name"][func])];
                names.push(name.as_str().unwrap().to_owned());
                stack = &stacks["prefix"][index(stack)];
            }
            let category = &categories[index(&frames["category"][leaf])];
            let subcategory = &category["subcategories"][index(&frames["subcategory"][leaf])];
            FirefoxSample {
                names,
                category: (
                    category["name"].as_str().unwrap().to_owned(),
                    subcategory.as_str().unwrap().to_owned(),
                ),
                weight: samples["weight"][i].as_i64().unwrap(),
                time,
            }
        })
        .collect()
}

#[test]
fn firefox_has_a_track_per_thread_and_every_stack_resolves_to_its_functions() {
    let dir = scratch("export-firefox");
    write_two_processes(&dir);
    run_ok(&dir, &["export", "--format", "firefox", "-i", "two.data"]);
    let profile = read_json(&dir.join("profile.firefox.json"));
    assert_same_again(&dir, "firefox", "profile.firefox.json");

    let meta = &profile["meta"];
    assert_eq!(meta["product"], "inlinesplit 4");
    assert_eq!(meta["symbolicated"], true);
    assert_eq!(meta["interval"], 0.25, "cpu-clock's period, in ms");
    assert_eq!(meta["oscpu"], "Linux 0.0");
    assert_eq!(
        meta["startTime"], 0.0,
        "the recording's start, ms since 1970"
    );
    let categories: Vec<&str> = (meta["categories"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for kind in ["Program", "Library", "Kernel", "Other"] {
        assert!(categories.contains(&kind), "{categories:?}");
    }

    let threads = profile["threads"].as_array().unwrap();
    let tracks: Vec<(&str, &str, &str, &str, bool)> = (threads.iter())
        .map(|t| {
            let text = |key: &str| t[key].as_str().unwrap();
            let main = t["isMainThread"].as_bool().unwrap();
            (
                text("name"),
                text("processName"),
                text("pid"),
                text("tid"),
                main,
            )
        })
        .collect();
    assert_eq!(
        tracks,
        [
            ("inlinesplit", "inlinesplit", "100", "100", true),
            ("worker", "worker", "101", "101", true)
        ]
    );

    let main = firefox_samples(&profile, &threads[0]);
    assert_eq!(main.len(), 85, "one sample each");
    assert!(main.iter().all(|s| s.weight == 1));
    assert!(
        main.windows(2).all(|w| w[0].time <= w[1].time),
        "not in time order"
    );
    let count = |names: &[&str]| main.iter().filter(|s| s.names == names).count();
    assert_eq!(count(&["burn (inlined)", "hot_a", "main"]), 60);
    assert_eq!(count(&["burn (inlined)", "hot_b", "main"]), 20);
    assert_eq!(count(&["hot_b", "main"]), 5);
    // Taken in that order: hot_a, hot_b, hot_a.
    let mut runs: Vec<&str> = (main.iter())
        .filter_map(|s| s.names.iter().find(|n| n.starts_with("hot_")))
        .map(String::as_str)
        .collect();
    runs.dedup();
    assert_eq!(runs, ["hot_a", "hot_b", "hot_a"]);
    let program = ("Program".to_owned(), "inlinesplit".to_owned());
    assert!(
        main.iter().all(|s| s.category == program),
        "{:?}",
        main[0].category
    );
    let worker = firefox_samples(&profile, &threads[1]);
    assert_eq!(worker.len(), 10);
    assert!(
        worker
            .iter()
            .all(|s| s.names == ["burn (inlined)", "hot_c", "main"])
    );
}

// A recording of the recursion: the program's frames are in Program, its
// module the subcategory, libc's in Library; every sample is there.
live_test!(firefox_puts_frames_in_categories_by_module_kind, || {
    let dir = scratch("export-firefox-live");
    let program = fixture("recurse");
    record(
        &dir,
        "r.data",
        &["-e", "cpu-clock", "-g"],
        &[program.to_str().unwrap(), "2"],
    );
    run_ok(
        &dir,
        &[
            "export", "--format", "firefox", "-i", "r.data", "-o", "r.json",
        ],
    );
    let profile = read_json(&dir.join("r.json"));
    let threads = profile["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1);
    let samples = firefox_samples(&profile, &threads[0]);
    assert_eq!(
        samples.len() as u64,
        self::samples(&report_json(&dir, "r.data"))
    );
    let leaf = samples.iter().find(|s| s.names[0] == "leaf").unwrap();
    assert_eq!(leaf.category, ("Program".to_owned(), "recurse".to_owned()));
    assert!(
        leaf.names
            .ends_with(&["main".to_owned(), "__libc_start_call_main".to_owned()])
    );

    // The category of libc's frame, through the frame table.
    let thread = &threads[0];
    let strings = thread["stringArray"].as_array().unwrap();
    let funcs = &thread["funcTable"];
    let func = (0..funcs["length"].as_u64().unwrap() as usize)
        .find(|&f| strings[funcs["name"][f].as_u64().unwrap() as usize] == "__libc_start_call_main")
        .unwrap();
    let frames = &thread["frameTable"];
    let frame = (0..frames["length"].as_u64().unwrap() as usize)
        .find(|&i| frames["func"][i] == func)
        .unwrap();
    let category =
        &profile["meta"]["categories"][frames["category"][frame].as_u64().unwrap() as usize];
    assert_eq!(category["name"], "Library");
    let subcategory = frames["subcategory"][frame].as_u64().unwrap() as usize;
    assert_eq!(category["subcategories"][subcategory], "libc.so.6");
});
