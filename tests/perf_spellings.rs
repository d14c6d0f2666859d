//! perf's spellings of `report`'s options, each run on recordings made by
//! hand (no kernel needed) and its rows compared with those of the option
//! it stands for here; where perf's option has no other spelling here,
//! with the rows of the plain report that it keeps. `record`'s spellings
//! that have no meaning here are refused, before anything runs.

use std::path::Path;

use crate::renderers::{write_flat, write_stacks};
use crate::util::*;

/// What `report ARGS` prints on `data`.
fn report(dir: &Path, data: &str, args: &[&str]) -> String {
    let output = run_ok(dir, &[&["report", "-i", data][..], args].concat());
    String::from_utf8(output.stdout).unwrap()
}

/// The rows of a report: its lines that are not comments, each with its
/// cells separated by single spaces (a table narrows to what it shows).
fn rows(text: &str) -> Vec<String> {
    (text.lines())
        .filter(|line| !line.starts_with('#'))
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The call tree of a report: the lines after its heading.
fn tree(text: &str) -> Vec<String> {
    let lines = text.lines().skip_while(|l| !l.starts_with("# Call tree"));
    rows(&lines.collect::<Vec<_>>().join("\n"))
}

#[test]
fn perf_report_spellings_give_the_rows_of_what_they_stand_for() {
    let dir = scratch("perf-spellings");
    write_flat(&dir, "flat.data", 1);
    write_stacks(&dir, "stacks.data", 1);
    // (recording, perf's spelling, the options here it stands for)
    let same: &[(&str, &[&str], &[&str])] = &[
        ("flat.data", &["--stdio"], &[]),
        ("flat.data", &["--no-children"], &[]),
        ("stacks.data", &["--children", "--no-children"], &[]),
        (
            "stacks.data",
            &["--no-children", "--children"],
            &["--children"],
        ),
        ("flat.data", &["-n"], &[]),
        ("flat.data", &["--show-nr-samples"], &[]),
        ("flat.data", &["-q"], &[]),
        ("flat.data", &["--quiet"], &[]),
        (
            "stacks.data",
            &["-g", "caller"],
            &["--call-graph", "caller"],
        ),
        (
            "stacks.data",
            &["--call-graph=callee"],
            &["--call-graph", "callee"],
        ),
        (
            "stacks.data",
            &["-g", "graph,0.5,callee,function,percent"],
            &["--call-graph", "callee"],
        ),
        ("stacks.data", &["-g", "none"], &[]),
        ("stacks.data", &["-G"], &["--call-graph", "caller"]),
        ("stacks.data", &["--inverted"], &["--call-graph", "caller"]),
        ("stacks.data", &["-g"], &["--call-graph", "caller"]),
        (
            "stacks.data",
            &["--children", "-g"],
            &["--children", "--call-graph", "caller"],
        ),
        (
            "stacks.data",
            &["--max-stack", "127", "--children"],
            &["--children"],
        ),
        ("flat.data", &["-s", "dso"], &["--sort", "dso"]),
        (
            "flat.data",
            &["--sort=comm,dso,sym"],
            &["--sort", "comm,dso,sym"],
        ),
        (
            "flat.data",
            &["-F", "overhead,sample,comm,dso,sym"],
            &["--sort", "comm,dso,sym"],
        ),
        (
            "flat.data",
            &["--fields", "pid,sym"],
            &["--sort", "pid,sym"],
        ),
        (
            "stacks.data",
            &["-F", "overhead,overhead_children,sym"],
            &["--children"],
        ),
        (
            "flat.data",
            &["--percent-limit=10"],
            &["--percent-limit", "10"],
        ),
        ("flat.data", &["--pid=200"], &["--pid", "200"]),
        ("flat.data", &["--tid=101"], &["--tid", "101"]),
        ("stacks.data", &["--time", "0%-100%"], &[]),
        ("stacks.data", &["--time", "0,"], &[]),
        (
            "stacks.data",
            &["--time", "10%/1,10%/2"],
            &["--time", "0%-20%"],
        ),
        ("stacks.data", &["--time", ",0"], &["--time", "0%-0%"]),
    ];
    for (data, perf, ours) in same {
        let (theirs, ours_) = (report(&dir, data, perf), report(&dir, data, ours));
        assert_eq!(
            rows(&theirs),
            rows(&ours_),
            "{data}: {perf:?} against {ours:?}"
        );
        assert!(!rows(&theirs).is_empty(), "{data} {perf:?} shows no row");
    }
    // -i FILE and FILE alone.
    let positional = run_ok(&dir, &["report", "flat.data"]);
    assert_eq!(
        String::from_utf8(positional.stdout).unwrap(),
        report(&dir, "flat.data", &[])
    );
    // --stdio is the whole text report, and -q its rows alone.
    let plain = report(&dir, "flat.data", &[]);
    assert_eq!(report(&dir, "flat.data", &["--stdio"]), plain);
    let quiet = report(&dir, "flat.data", &["-q"]);
    assert!(!quiet.lines().any(|l| l.starts_with('#')), "{quiet}");
    // --header-only is the commented header, up to the table's heading.
    let header: Vec<&str> = plain
        .lines()
        .take_while(|l| !l.starts_with("#  Self %"))
        .collect();
    let header_only = report(&dir, "flat.data", &["--header-only"]);
    assert_eq!(header_only.lines().collect::<Vec<_>>(), header);
    // perf's threshold prunes the tree as --percent-limit does the rows.
    let pruned = report(&dir, "stacks.data", &["-g", "graph,10,caller"]);
    let limited = report(
        &dir,
        "stacks.data",
        &["--call-graph", "caller", "--percent-limit", "10"],
    );
    assert_eq!(tree(&pruned), tree(&limited));
    assert!(tree(&pruned).len() < tree(&report(&dir, "stacks.data", &["-g", "caller"])).len());
}

#[test]
fn perf_report_filters_keep_rows_and_shares_of_the_whole_event() {
    let dir = scratch("perf-spellings-filters");
    write_flat(&dir, "flat.data", 1);
    let by = ["--sort", "comm,dso,sym"];
    let all = rows(&report(&dir, "flat.data", &by));
    // Each row: share, samples, command, module, function...
    let cell = |row: &String, n: usize| row.split(' ').nth(n).unwrap_or("").to_owned();
    let filters: &[(&[&str], usize, &str)] = &[
        (&["--comms", "worker"], 2, "worker"),
        (&["--comm", "stable"], 2, "stable"),
        (&["-c", "stripped"], 2, "stripped"),
        (&["--dsos", "libstable.so"], 3, "libstable.so"),
        (&["--dso", "[kernel.kallsyms]"], 3, "[kernel]"),
        (&["-d", "stable"], 3, "stable"),
        (&["--symbols", "hot_c"], 4, "hot_c"),
        (&["-S", "Parser::parse"], 4, "Parser::parse"),
    ];
    for (filter, column, value) in filters {
        let kept = rows(&report(&dir, "flat.data", &[&by[..], filter].concat()));
        let expected: Vec<String> = (all.iter())
            .filter(|row| cell(row, *column) == *value)
            .cloned()
            .collect();
        assert!(
            !expected.is_empty(),
            "{filter:?}: nothing to keep in {all:?}"
        );
        assert_eq!(kept, expected, "{filter:?}");
    }
    let none = report(&dir, "flat.data", &["--symbols", "nothing"]);
    assert!(rows(&none).is_empty(), "{none}");
}

#[test]
fn max_stack_cuts_the_callers_out_of_the_totals() {
    let dir = scratch("perf-spellings-max-stack");
    write_stacks(&dir, "stacks.data", 1);
    // One frame: every function's total is its own samples.
    let cut = rows(&report(
        &dir,
        "stacks.data",
        &["--children", "--max-stack", "1"],
    ));
    assert!(!cut.is_empty());
    for row in &cut {
        let cells: Vec<&str> = row.split(' ').collect();
        assert_eq!(cells[0], cells[1], "{row}");
    }
    let whole = report(&dir, "stacks.data", &["--children"]);
    assert!(rows(&whole).iter().any(|r| r.ends_with(" main")), "{whole}");
}

#[test]
fn perf_forms_that_do_not_map_are_refused_with_the_reason() {
    let dir = scratch("perf-spellings-refused");
    write_stacks(&dir, "stacks.data", 1);
    for (args, reason) in [
        (&["-g", "fractal"][..], "graph"),
        (&["-g", "folded"], "export --format folded"),
        (&["-g", "caller,address"], "--sort address"),
        (&["-g", "stacks.data"], "-i FILE"),
        (&["-F", "period"], "--format json"),
        (&["-F", "overhead_sys"], "CPU mode"),
        (&["--time", "10%"], "10%/2"),
        (&["--header-only", "--format", "json"], "cannot be combined"),
    ] {
        let output = run(&dir, &[&["report", "-i", "stacks.data"][..], args].concat());
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(reason), "{args:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
    }
    for (args, reason) in [
        (&["--user-regs=ax,bx"][..], "--call-graph dwarf"),
        (&["--user-regs"], "--call-graph dwarf"),
        (&["--user-callchains"], "--user-only"),
    ] {
        let output = run(
            &dir,
            &[&["record", "-o", "refused.data"][..], args, &["--", "true"]].concat(),
        );
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(125), "{args:?}: {message}");
        assert!(message.contains(reason), "{args:?}: {message}");
        assert!(
            !dir.join("refused.data").exists(),
            "{args:?} wrote a recording"
        );
    }
}

#[test]
fn report_help_lists_perfs_spellings() {
    let output = run_ok(Path::new("."), &["report", "--help"]);
    let help = String::from_utf8(output.stdout).unwrap();
    for spelling in [
        "perf report's spellings",
        "--stdio",
        "--no-children",
        "-n, --show-nr-samples",
        "-q, --quiet",
        "-G, --inverted",
        "-g, --call-graph",
        "-c, --comms",
        "[alias: --comm]",
        "-d, --dsos",
        "-S, --symbols",
        "--max-stack",
        "-F, --fields",
        "--header-only",
        "--time",
    ] {
        assert!(
            help.contains(spelling),
            "report --help lacks {spelling}:\n{help}"
        );
    }
}

// perf record's spellings, as they record.
live_test!(perf_record_spellings_record_with_perfs_meaning, || {
    let dir = scratch("perf-record-spellings");
    let header = |data: &str| {
        let text = run_ok(&dir, &["report", "-i", data, "--header-only"]).stdout;
        String::from_utf8(text).unwrap()
    };
    let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate").unwrap();
    let output = record(
        &dir,
        "max.data",
        &["-e", "cpu-clock", "-F", "max"],
        &["true"],
    );
    let max = max.trim();
    assert!(
        stderr(&output).contains(&format!("-F max: sampling at {max} Hz")),
        "{}",
        stderr(&output)
    );
    assert!(
        header("max.data").contains(&format!("cpu-clock, {max} Hz")),
        "{}",
        header("max.data")
    );

    // -z is level 1, as the default is; --compression-level=0 writes the
    // records plain, in format 2; a level past zstd's 22 is refused.
    let split = fixture("split");
    let split = split.to_str().unwrap();
    let mut sizes = Vec::new();
    for (name, option, version) in [
        ("z", "-z", 3),
        ("z3", "--compression-level=3", 3),
        ("z0", "--compression-level=0", 2),
    ] {
        let data = format!("{name}.data");
        let output = record(
            &dir,
            &data,
            &["-e", "cpu-clock", "-F", "4000", option],
            &[split, "2"],
        );
        assert!(!stderr(&output).contains("compress"), "{}", stderr(&output));
        let bytes = std::fs::read(dir.join(&data)).unwrap();
        assert_eq!(bytes[8..12], u32::to_le_bytes(version), "{option}");
        assert!(header(&data).contains("cpu-clock, 4000 Hz"), "{option}");
        let report = run_ok(&dir, &["report", "-i", &data]).stdout;
        assert!(
            String::from_utf8_lossy(&report).contains("burn_60"),
            "{option}"
        );
        // Per sample, as the runs' sample counts differ.
        let text = stderr(&output);
        let words: Vec<&str> = text.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "samples").unwrap();
        let samples: u64 = words[at - 1].parse().unwrap();
        sizes.push(bytes.len() as f64 / samples.max(1) as f64);
    }
    assert!(sizes[0] * 3.0 < sizes[2], "bytes per sample: {sizes:?}");
    assert!(sizes[1] * 3.0 < sizes[2], "bytes per sample: {sizes:?}");
    let output = run(&dir, &["record", "--compression-level=23", "--", "true"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--compression-level"),
        "{}",
        stderr(&output)
    );

    for (name, options, stacks) in [
        (
            "dwarf",
            &["--call-graph=dwarf,8192"][..],
            "dwarf, 8192-byte stack copies",
        ),
        (
            "g-dwarf",
            &["-g", "--call-graph=dwarf,4096"],
            "dwarf, 4096-byte stack copies",
        ),
        ("g", &["-g"], "frame pointers"),
    ] {
        let data = format!("{name}.data");
        record(
            &dir,
            &data,
            &[&["-e", "cpu-clock"][..], options].concat(),
            &[split, "1"],
        );
        let text = header(&data);
        assert!(
            text.contains(&format!("# Stacks:   {stacks}")),
            "{options:?}: {text}"
        );
    }
});
