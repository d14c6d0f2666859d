//! pprof interop: `profiler export --format pprof` read by `go tool pprof`
//! (Debian's golang-go): its flat and cumulative shares agree with
//! `report`'s, its traces carry the stacks and the comm, pid and tid labels,
//! its lines name the hot line, and it names everything without the
//! binaries.
//!
//! `report` counts a sample for the function holding its code; pprof for
//! the innermost inlined function unless `-noinlines`, which is compared
//! with `report --inline`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::perfdata::perf_record;
use crate::synthetic::*;
use crate::util::*;

/// `go tool pprof ARGS`' standard output; asserts success.
fn pprof(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "go tool pprof {args:?}: {}",
        stderr(&output)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A row of `go tool pprof -top`: flat and cumulative percentages.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Shares {
    flat: f64,
    cum: f64,
}

/// The rows of `-top` output by name (` (inline)` dropped; several rows of
/// one name added up).
fn top_rows(text: &str) -> HashMap<String, Shares> {
    let mut rows: HashMap<String, Shares> = HashMap::new();
    let percent = |field: &str| field.trim_end_matches('%').parse::<f64>().ok();
    let table = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"));
    for line in table.skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 6 {
            continue;
        }
        let (Some(flat), Some(cum)) = (percent(fields[1]), percent(fields[4])) else {
            continue;
        };
        let name = fields[5..].join(" ");
        let name = name.trim_end_matches(" (inline)").to_owned();
        let row = rows.entry(name).or_insert(Shares {
            flat: 0.0,
            cum: 0.0,
        });
        row.flat += flat;
        row.cum = row.cum.max(cum);
    }
    rows
}

/// The JSON report's rows by name: self and total percentages.
fn report_rows(report: &Value) -> HashMap<String, Shares> {
    (report["functions"].as_array().unwrap().iter())
        .map(|f| {
            let shares = Shares {
                flat: f["self_percent"].as_f64().unwrap(),
                cum: f["total_percent"].as_f64().unwrap(),
            };
            (f["name"].as_str().unwrap().to_owned(), shares)
        })
        .collect()
}

/// Asserts that every function either lists has the same flat share (and,
/// with `cumulative`, the same cumulative one) within half a point.
fn assert_agree(what: &str, pprof: &str, report: &Value, cumulative: bool) {
    let (theirs, ours) = (top_rows(pprof), report_rows(report));
    assert!(!theirs.is_empty(), "{what}: no rows in\n{pprof}");
    let names: Vec<&String> = theirs.keys().chain(ours.keys()).collect();
    let none = Shares {
        flat: 0.0,
        cum: 0.0,
    };
    for name in names {
        let (t, o) = (
            theirs.get(name).copied().unwrap_or(none),
            ours.get(name).copied().unwrap_or(none),
        );
        assert!(
            (t.flat - o.flat).abs() <= 0.5,
            "{what}: {name} flat {:.2}% in pprof, {:.2}% in report\n{pprof}\n{}",
            t.flat,
            o.flat,
            report["functions"]
        );
        if cumulative {
            assert!(
                (t.cum - o.cum).abs() <= 0.5,
                "{what}: {name} cum {:.2}% in pprof, {:.2}% in report\n{pprof}\n{}",
                t.cum,
                o.cum,
                report["functions"]
            );
        }
    }
}

/// inlinesplit, copied into `dir`, with stacks: 570 samples in hot_a's
/// inlined burn and 30 in its own code, 300 in hot_b's burn, 100 in
/// hot_c's, each called from main; and 200 more in pid 101's hot_c.
fn write_inlined(dir: &Path) -> PathBuf {
    let binary = dir.join("inlinesplit");
    std::fs::copy(fixture("inlinesplit"), &binary).unwrap();
    let (a, a_own) = inlined_and_own(&binary, "hot_a", "burn");
    let (b, _) = inlined_and_own(&binary, "hot_b", "burn");
    let (c, _) = inlined_and_own(&binary, "hot_c", "burn");
    let (main, _) = function_range(&binary, "main");
    let mut recording = Synthetic::with_stacks();
    recording.process(100, 0, "inlinesplit", &binary);
    recording.samples(100, a, &[main + 8], 570);
    recording.samples(100, a_own, &[main + 8], 30);
    recording.samples(100, b, &[main + 8], 300);
    recording.samples(100, c, &[main + 8], 100);
    recording.process(101, 100, "inlinesplit", &binary);
    recording.samples(101, c, &[main + 8], 200);
    recording.write(&dir.join("inlined.data"), &["inlinesplit"]);
    binary
}

#[test]
fn pprof_agrees_with_report_with_inlined_functions_or_without() {
    if !profiler_testing::tool("go") {
        return;
    }
    let dir = scratch("pprof-inlined");
    let binary = write_inlined(&dir);
    run_ok(&dir, &["export", "--format", "pprof", "-i", "inlined.data"]);
    let file = "profile.pb.gz";
    // The same bytes every time.
    let again = [
        "export",
        "--format",
        "pprof",
        "-i",
        "inlined.data",
        "-o",
        "again.pb.gz",
    ];
    run_ok(&dir, &again);
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    assert!(read(file) == read("again.pb.gz"), "two exports differ");

    let top = pprof(&dir, &["-top", "-nodefraction=0", "-noinlines", file]);
    let report = report_json_with(&dir, "inlined.data", &["--children"]);
    assert_agree("-noinlines", &top, &report, true);
    assert!(top_rows(&top)["hot_a"].flat > 40.0, "{top}");
    assert!(top.contains("Type: cpu"), "{top}");

    let inline = pprof(&dir, &["-top", "-nodefraction=0", file]);
    let report = report_json_with(&dir, "inlined.data", &["--children", "--inline"]);
    assert_agree("inlined", &inline, &report, true);
    assert!(inline.contains("burn (inline)"), "{inline}");

    // One trace per stack and thread, leaf first, with its labels.
    let traces = traces(&pprof(&dir, &["-traces", file]));
    let hot_a: Vec<&Trace> = (traces.iter())
        .filter(|t| t.labels["pid"] == "100" && t.frames.contains(&"hot_a".to_owned()))
        .collect();
    let mut stacks: Vec<&[String]> = hot_a.iter().map(|t| &t.frames[..]).collect();
    stacks.sort();
    assert_eq!(
        stacks,
        [&["burn (inline)", "hot_a", "main"][..], &["hot_a", "main"]]
    );
    for trace in hot_a {
        assert_eq!(trace.labels["comm"], "inlinesplit");
        assert_eq!(trace.labels["tid"], "100");
    }
    assert!(
        traces.iter().any(|t| t.labels["pid"] == "101"),
        "{traces:?}"
    );

    // Named here: pprof needs neither its symbolizer nor the binary.
    let plain = pprof(&dir, &["-top", "-nodefraction=0", "-symbolize=none", file]);
    assert_eq!(top_rows(&plain), top_rows(&inline));
    std::fs::rename(&binary, dir.join("moved-away")).unwrap();
    for args in [&[][..], &["-symbolize=none"]] {
        let without = pprof(
            &dir,
            &[&["-top", "-nodefraction=0"], args, &[file]].concat(),
        );
        assert_eq!(
            top_rows(&without).keys().len(),
            top_rows(&inline).keys().len()
        );
        for name in ["hot_a", "hot_b", "hot_c", "burn", "main"] {
            assert!(without.contains(name), "{args:?} lost {name}:\n{without}");
        }
    }
}

/// A recursion 65 frames deep: pprof counts each sample once in a
/// function's cumulative share, as `report --children` does.
#[test]
fn pprof_counts_a_recursion_once_per_sample() {
    if !profiler_testing::tool("go") {
        return;
    }
    let dir = scratch("pprof-recursion");
    let binary = fixture("recurse");
    let (leaf, _) = function_range(&binary, "leaf");
    let (side, _) = function_range(&binary, "side");
    let (descend, _) = function_range(&binary, "descend");
    let (main, _) = function_range(&binary, "main");
    let mut recording = Synthetic::with_stacks();
    recording.process(100, 0, "recurse", &binary);
    let mut callers = vec![descend + 8; 65];
    callers.push(main + 8);
    recording.samples(100, leaf + 4, &callers, 90);
    recording.samples(100, side + 4, &[main + 8], 10);
    recording.write(&dir.join("recurse.data"), &["recurse"]);
    run_ok(&dir, &["export", "--format", "pprof", "-i", "recurse.data"]);

    let top = pprof(&dir, &["-top", "-nodefraction=0", "profile.pb.gz"]);
    let report = report_json_with(&dir, "recurse.data", &["--children"]);
    assert_agree("recursion", &top, &report, true);
    let rows = top_rows(&top);
    assert_eq!(rows["descend"].cum, 90.0, "{top}");
    assert_eq!(rows["main"].cum, 100.0, "{top}");
}

/// Records `fixture ARGS` with `options` into `dir/NAME.data` and exports
/// it to `NAME.pb.gz`.
fn record_and_export(dir: &Path, name: &str, options: &[&str], fixture_args: &[&str]) {
    let program = fixture(fixture_args[0]);
    let mut command = vec![program.to_str().unwrap()];
    command.extend_from_slice(&fixture_args[1..]);
    let data = format!("{name}.data");
    record(dir, &data, options, &command);
    let out = format!("-o={name}.pb.gz");
    run_ok(dir, &["export", "--format", "pprof", "-i", &data, &out]);
}

// Live recordings: the annotate fixture without stacks, whose hot loop is
// one line; the recursion with frame-pointer stacks; a histogram
// recording; and two events.
live_test!(
    pprof_of_recordings_names_the_hot_line_and_every_event,
    || {
        if !profiler_testing::tool("go") {
            return;
        }
        let dir = scratch("pprof-live");
        let top = |file: &str, options: &[&str]| {
            pprof(
                &dir,
                &[&["-top", "-nodefraction=0"], options, &[file]].concat(),
            )
        };
        record_and_export(&dir, "annotate", &["-e", "cpu-clock"], &["annotate"]);
        let annotate = top("annotate.pb.gz", &["-noinlines"]);
        assert_agree(
            "annotate",
            &annotate,
            &report_json(&dir, "annotate.data"),
            false,
        );

        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs/annotate.c");
        let text = std::fs::read_to_string(source).unwrap();
        let hot = 1 + text
            .lines()
            .position(|l| l.contains("/* hot line */"))
            .unwrap();
        let lines = pprof(&dir, &["-top", "-lines", "annotate.pb.gz"]);
        assert!(
            top_rows_in_order(&lines)[0].ends_with(&format!("annotate.c:{hot}")),
            "the hottest line is not annotate.c:{hot}:\n{lines}"
        );

        record_and_export(
            &dir,
            "recurse",
            &["-e", "cpu-clock", "-g"],
            &["recurse", "3"],
        );
        let report = report_json_with(&dir, "recurse.data", &["--children"]);
        let recurse = top("recurse.pb.gz", &["-noinlines"]);
        assert_agree("recurse -g", &recurse, &report, true);

        // A histogram recording: buckets at file offsets, counted in time.
        record_and_export(&dir, "hist", &["--histogram"], &["split", "2"]);
        let histogram = top("hist.pb.gz", &[]);
        assert_agree(
            "histogram",
            &histogram,
            &report_json(&dir, "hist.data"),
            false,
        );
        assert!(top_rows(&histogram)["burn_60"].flat > 40.0, "{histogram}");

        // Each event is a pair of sample types, page-faults' named after it.
        let events = ["-e", "cpu-clock", "-e", "page-faults", "-c", "1"];
        record_and_export(&dir, "two", &events, &["touchpages", "2000"]);
        let raw = pprof(&dir, &["-raw", "two.pb.gz"]);
        let types =
            "samples/count cpu/nanoseconds[dflt] page-faults_samples/count page-faults/count";
        assert!(raw.contains(types), "{raw}");
        let faults = top("two.pb.gz", &["-sample_index=page-faults"]);
        assert!(faults.contains("Type: page-faults"), "{faults}");
        let report = report_json_with(&dir, "two.data", &["--event", "page-faults"]);
        assert_agree("page-faults", &faults, &report, false);
    }
);

// perf's recordings, exported: the C++ fixture without stacks, the split
// one with frame-pointer chains. pprof reads their samples as report does,
// and names the program perf ran as the profile's.
live_test!(pprof_of_perf_data_agrees_with_report, || {
    if !profiler_testing::perf_reads_its_own() || !profiler_testing::tool("go") {
        return;
    }
    let dir = scratch("pprof-perfdata");
    let runs: [(&str, &[&str], &[&str]); 2] =
        [("cppwork", &["200"], &[]), ("split", &["3"], &["-g"])];
    for (name, args, options) in runs {
        let program = fixture(name);
        let mut command = vec![program.to_str().unwrap()];
        command.extend_from_slice(args);
        let data = format!("{name}.data");
        perf_record(&dir, &data, options, &command);
        let file = format!("{name}.pb.gz");
        run_ok(
            &dir,
            &["export", "--format", "pprof", "-i", &data, "-o", &file],
        );
        let top = pprof(&dir, &["-top", "-nodefraction=0", "-noinlines", &file]);
        let stacks = !options.is_empty();
        let report = match stacks {
            true => report_json_with(&dir, &data, &["--children"]),
            false => report_json(&dir, &data),
        };
        let what = format!("{name} {options:?}");
        assert_agree(&what, &top, &report, stacks);
        let rows = top_rows(&top);
        assert!(rows.values().any(|r| r.flat > 20.0), "{what}: {top}");
        // The program perf ran is the profile's main file.
        assert!(top.starts_with(&format!("File: {name}\n")), "{what}: {top}");
    }
});

/// One block of `-traces`: a sample's labels, and its stack leaf first.
#[derive(Debug, Default)]
struct Trace {
    labels: HashMap<String, String>,
    frames: Vec<String>,
}

/// `-traces` output: per block, `key:  value` label lines, then the frames,
/// the first after the sample's value in a 10-column field.
fn traces(text: &str) -> Vec<Trace> {
    let blocks = text.split("-----------+").skip(1);
    blocks
        .map(|block| {
            let mut trace = Trace::default();
            for line in block.lines().skip(1).filter(|l| l.len() > 13) {
                let label = line.trim_start().split_once(":  ");
                match label {
                    Some((key, value)) if !key.contains(' ') => {
                        trace.labels.insert(key.to_owned(), value.trim().to_owned());
                    }
                    _ => trace.frames.push(line[13..].trim().to_owned()),
                }
            }
            trace
        })
        .filter(|trace| !trace.frames.is_empty())
        .collect()
}

/// The names of `-top`'s rows, hottest first.
fn top_rows_in_order(text: &str) -> Vec<String> {
    let table = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"));
    table
        .skip(1)
        .map(|l| l.split_whitespace().skip(5).collect::<Vec<_>>().join(" "))
        .collect()
}

/// join's mangled name in the `templates` fixture.
const JOIN: &str = "_ZN8workload4text4joinERKSt6vectorINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESaIS7_EERKS7_";

/// `dir/cpp.data`: 10 samples of `templates`, copied into `dir`, at an
/// address of join's where std::string code was inlined; the copy, and
/// the innermost inlined function's name.
fn write_cpp(dir: &Path) -> (PathBuf, String) {
    let binary = dir.join("templates");
    std::fs::copy(fixture("templates"), &binary).unwrap();
    let (start, size) = function_range(&binary, JOIN);
    let chains = inline_chains(&binary, JOIN);
    let (inlined, chain) = (chains.iter())
        .find(|(_, chain)| chain.len() > 1 && chain[0].starts_with("std::__cxx11::basic_string"))
        .unwrap_or_else(|| panic!("no std::string code inlined into join: {chains:?}"));
    assert!((start..start + size).contains(inlined));
    let mut recording = Synthetic::new();
    recording.process(100, 0, "templates", &binary);
    recording.samples(100, *inlined, &[], 10);
    recording.write(&dir.join("cpp.data"), &["templates"]);
    (binary, chain[0].clone())
}

/// Exports `dir/cpp.data` to pprof and asserts that `go tool pprof -raw`
/// gives join, and `innermost` inlined into it, their mangled names.
fn assert_exports_mangled_names(dir: &Path, innermost: &str) {
    run_ok(dir, &["export", "--format", "pprof", "-i", "cpp.data"]);
    let raw = pprof(dir, &["-raw", "profile.pb.gz"]);
    let line_of = |name: &str| {
        (raw.lines())
            .find(|l| l.contains(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in\n{raw}"))
    };
    assert!(
        line_of("workload::text::join").contains(&format!("s=0({JOIN})")),
        "{raw}"
    );
    let innermost = line_of(innermost);
    assert!(innermost.contains("s=0(_ZN"), "{innermost}");
}

/// C++ functions carry their mangled names as system names, inlined ones
/// too, for the tools that demangle (or search) by them.
#[test]
fn pprof_keeps_mangled_names_as_system_names() {
    if !profiler_testing::tool("go") {
        return;
    }
    let dir = scratch("pprof-mangled");
    let (_, innermost) = write_cpp(&dir);
    assert_exports_mangled_names(&dir, &innermost);
}

/// An archive keeps the mangled names: the export of an archived
/// recording has them once the binary is gone.
#[test]
fn pprof_of_an_archived_recording_keeps_mangled_names_without_the_binary() {
    if !profiler_testing::tool("go") {
        return;
    }
    let dir = scratch("pprof-mangled-archived");
    let (binary, innermost) = write_cpp(&dir);
    run_ok(&dir, &["archive", "-i", "cpp.data"]);
    std::fs::rename(&binary, dir.join("moved-away")).unwrap();
    assert_exports_mangled_names(&dir, &innermost);
}
