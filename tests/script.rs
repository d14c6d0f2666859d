//! `profiler script` on recordings made by hand: its lines against the
//! expected files (perf script's layout), and what FlameGraph makes of
//! them: the stacks of `profiler script`, folded the way
//! stackcollapse-perf.pl folds `perf script` (inferno's port of it), are
//! the folded export's stacks.

use std::collections::BTreeMap;
use std::path::Path;

use inferno::collapse::Collapse;

use crate::renderers::{check, write_events, write_flat, write_histograms, write_stacks};
use crate::util::*;

/// Every period in the recordings of `renderers.rs`.
const PERIOD: u64 = 250_000;

#[test]
fn script_prints_perf_scripts_layout() {
    let dir = scratch("script-layout");
    write_stacks(&dir, "stacks.data", 1);
    write_flat(&dir, "flat.data", 1);
    write_events(&dir);
    for (name, args) in [
        ("stacks.txt", &["script", "-i", "stacks.data"][..]),
        ("stacks-hidden.txt", &["script", "-i", "stacks.data", "-G"]),
        ("flat.txt", &["script", "-i", "flat.data"]),
        ("events.txt", &["script", "-i", "events.data"]),
    ] {
        check(&dir, &format!("script/{name}"), args);
    }
}

/// `script`'s output folded by inferno's stackcollapse-perf: stack (without
/// the command, which it puts first) -> samples.
fn collapsed(dir: &Path, args: &[&str]) -> BTreeMap<String, u64> {
    let script = run_ok(dir, &[&["script"][..], args].concat()).stdout;
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::default()
        .collapse(&script[..], &mut folded)
        .unwrap();
    let mut stacks = BTreeMap::new();
    for line in String::from_utf8(folded).unwrap().lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let (_command, frames) = stack.split_once(';').unwrap_or((stack, ""));
        let count: u64 = count.parse().unwrap();
        assert_eq!(count % PERIOD, 0, "{line}: weighed by period");
        *stacks.entry(frames.to_owned()).or_default() += count / PERIOD;
    }
    stacks
}

/// The folded export: stack -> samples, with inlined functions named as
/// perf script names them, whose `(inlined)` stackcollapse-perf takes for
/// the module.
fn exported(dir: &Path, args: &[&str]) -> BTreeMap<String, u64> {
    let folded = run_ok(dir, &[&["export", "--format", "folded"][..], args].concat()).stdout;
    let mut stacks = BTreeMap::new();
    for line in String::from_utf8(folded).unwrap().lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let stack = stack.replace(" (inlined)", "");
        *stacks.entry(stack).or_default() += count.parse::<u64>().unwrap();
    }
    stacks
}

#[test]
fn script_folded_as_stackcollapse_perf_folds_is_the_folded_export() {
    let dir = scratch("script-folded");
    write_stacks(&dir, "stacks.data", 1);
    write_flat(&dir, "flat.data", 1);
    for (data, options) in [
        ("stacks.data", &[][..]),
        ("stacks.data", &["--no-inline"]),
        ("stacks.data", &["--time", "10%/2"]),
        ("stacks.data", &["--time", "0.0002,0.0005", "--no-inline"]),
        // Without stacks, perf script prints the function holding the code.
        ("flat.data", &["--no-inline"]),
    ] {
        let args = [&["-i", data][..], options].concat();
        let ours = exported(&dir, &args);
        assert!(!ours.is_empty(), "{args:?}");
        assert_eq!(collapsed(&dir, &args), ours, "{args:?}");
    }
    // The slice holds only what was sampled then: hot_a's samples.
    let slice = exported(&dir, &["-i", "stacks.data", "--time", "10%/2"]);
    assert!(
        slice.keys().all(|s| s.starts_with("main;hot_a")),
        "{slice:?}"
    );
}

#[test]
fn script_sorts_every_event_by_time_and_times_count_from_the_first_sample() {
    let dir = scratch("script-time");
    write_events(&dir);
    let script = String::from_utf8(run_ok(&dir, &["script", "-i", "events.data"]).stdout).unwrap();
    let times: Vec<f64> = (script.lines())
        .filter_map(|l| l.split(": ").next()?.rsplit(' ').next()?.parse().ok())
        .collect();
    assert_eq!(
        times.len(),
        700,
        "the samples of cpu-clock, page-faults and task-clock"
    );
    assert_eq!(times[0], 0.0);
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "not in time order");
    // A group member is read with its leader's samples, not listed.
    assert!(!script.contains("context-switches"), "{script}");
}

#[test]
fn script_refuses_what_it_cannot_list() {
    let dir = scratch("script-refused");
    write_histograms(&dir);
    write_stacks(&dir, "stacks.data", 1);
    for (args, reason) in [
        (&["script", "-i", "hist.data"][..], "profiler hist"),
        (
            &["script", "-i", "stacks.data", "--time", "5,6"],
            "samples from 0 to",
        ),
        (
            &["report", "-i", "hist.data", "--time", "1,2"],
            "keeps no times",
        ),
    ] {
        let output = run(&dir, args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
        assert!(message.contains(reason), "{args:?}: {message}");
    }
}

// A command that names itself with control characters (an escape sequence,
// a newline) is listed with them written out: each sample stays on its
// line, and nothing reaches the terminal raw.
live_test!(script_writes_control_characters_out, || {
    let dir = scratch("script-control");
    let rename = r#"printf 'x\033[31my\nz' > /proc/$$/comm; i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"#;
    record(&dir, "c.data", &["-e", "cpu-clock"], &["sh", "-c", rename]);
    let script = String::from_utf8(run_ok(&dir, &["script", "-i", "c.data"]).stdout).unwrap();
    assert!(!script.contains('\x1b'), "{script:?}");
    let renamed = (script.lines())
        .filter(|l| l.trim_start().starts_with("x\\x1b[31my\\x0az "))
        .count();
    assert!(renamed > 0, "{script}");
    // Every line is a sample's: command, pid/tid, [cpu], time...
    for line in script.lines() {
        assert!(
            line.contains("] ") && line.contains(" cpu-clock: "),
            "{line:?}"
        );
    }
});
