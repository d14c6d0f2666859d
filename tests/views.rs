//! The default views on recordings made by hand (no kernel needed): which
//! function a sample counts for when code is inlined, inlined functions as
//! frames of call stacks, commands and processes as sort keys and columns,
//! and what a view says when it has nothing to show.

use std::path::Path;

use serde_json::Value;

use crate::synthetic::*;
use crate::util::*;

/// The fixture whose hot_a, hot_b and hot_c share one inlined loop, and
/// for each an address in that loop; hot_a's own code besides.
struct Inlined {
    binary: std::path::PathBuf,
    a: u64,
    a_own: u64,
    b: u64,
    c: u64,
}

fn inlined() -> Inlined {
    let binary = fixture("inlinesplit");
    let (a, a_own) = inlined_and_own(&binary, "hot_a", "burn");
    let (b, _) = inlined_and_own(&binary, "hot_b", "burn");
    let (c, _) = inlined_and_own(&binary, "hot_c", "burn");
    Inlined {
        binary,
        a,
        a_own,
        b,
        c,
    }
}

/// 570 samples in hot_a's inlined burn and 30 in its own code, 300 in
/// hot_b's burn, 100 in hot_c's: 60/30/10 by function, 97% in burn. The
/// command was a script that executed the program, as a shim does.
fn write_60_30_10(dir: &Path, name: &str, stacks: bool) -> Inlined {
    let program = inlined();
    let mut recording = match stacks {
        true => Synthetic::with_stacks(),
        false => Synthetic::new(),
    };
    recording.program = Some("/usr/local/bin/inlinesplit-shim.sh".into());
    recording.process(100, 0, "inlinesplit", &program.binary);
    let main = own_address(&program.binary, "main");
    recording.samples(100, program.a, &[main], 570);
    recording.samples(100, program.a_own, &[main], 30);
    recording.samples(100, program.b, &[main], 300);
    recording.samples(100, program.c, &[main], 100);
    recording.write(&dir.join(name), &["inlinesplit"]);
    program
}

/// An address of `function`'s own code, past its first instruction (a
/// return address into it stays inside it).
fn own_address(binary: &Path, function: &str) -> u64 {
    let chains = inline_chains(binary, function);
    let own: Vec<u64> = (chains.iter())
        .filter(|(_, chain)| chain.len() == 1 && chain[0] == function)
        .map(|(address, _)| *address)
        .collect();
    own[own.len() / 2]
}

fn row<'a>(report: &'a Value, name: &str) -> &'a Value {
    function(report, name).unwrap_or_else(|| panic!("no row {name}: {}", report["functions"]))
}

fn text(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(run_ok(dir, args).stdout).unwrap()
}

#[test]
fn a_shared_inlined_helper_counts_for_the_functions_holding_it() {
    let dir = scratch("views-inlined");
    write_60_30_10(&dir, "inlined.data", false);

    let report = report_json(&dir, "inlined.data");
    for (name, share) in [("hot_a", 60.0), ("hot_b", 30.0), ("hot_c", 10.0)] {
        assert_eq!(percent(&report, name), share, "{}", report["functions"]);
    }
    assert!(
        function(&report, "burn").is_none(),
        "{}",
        report["functions"]
    );
    // What was inlined, per function, with its samples.
    let hot_a = row(&report, "hot_a");
    assert_eq!(hot_a["inlined_self"], 570);
    assert_eq!(hot_a["inlined"][0]["name"], "burn");
    assert_eq!(hot_a["inlined"][0]["samples"], 570);
    assert_eq!(hot_a["inlined"][0]["percent"], 95.0);

    let text = text(&dir, &["report", "-i", "inlined.data"]);
    assert!(text.contains("hot_a  (95% inlined: burn)"), "{text}");
    assert!(text.contains("hot_c  (100% inlined: burn)"), "{text}");

    let inline = report_json_with(&dir, "inlined.data", &["--inline"]);
    assert_eq!(percent(&inline, "burn"), 97.0, "{}", inline["functions"]);
    assert_eq!(percent(&inline, "hot_a"), 3.0);
    // Without stacks, hot_b's total is the code inlined into it.
    assert_eq!(row(&inline, "hot_b")["self"], 0);
    assert_eq!(row(&inline, "hot_b")["total"], 300);
    // The old spelling of the default is still taken.
    let folded = report_json_with(&dir, "inlined.data", &["--no-inline"]);
    assert_eq!(percent(&folded, "hot_a"), 60.0);
}

#[test]
fn histograms_gmon_and_diff_name_the_holding_function_too() {
    let dir = scratch("views-inlined-other");
    let program = write_60_30_10(&dir, "inlined.data", false);

    let hist = run_json(&dir, &["hist", "-i", "inlined.data", "--format", "json"]);
    let symbols: Vec<&str> = (hist["rows"].as_array().unwrap().iter())
        .map(|r| r["symbol"].as_str().unwrap())
        .collect();
    assert!(symbols.iter().all(|s| s.starts_with("hot_")), "{symbols:?}");

    let diff = run_json(
        &dir,
        &["diff", "inlined.data", "inlined.data", "--format", "json"],
    );
    let names: Vec<&str> = (diff["functions"].as_array().unwrap().iter())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"hot_a") && !names.contains(&"burn"),
        "{names:?}"
    );
    let diff = run_json(
        &dir,
        &[
            "diff",
            "inlined.data",
            "inlined.data",
            "--format",
            "json",
            "--inline",
        ],
    );
    assert!(diff["functions"][0]["name"] == "burn", "{diff}");

    // gprof reads the histogram with its own symbol table: 60/30/10.
    let export = run_ok(&dir, &["export", "--format", "gmon", "-i", "inlined.data"]);
    assert!(
        stderr(&export).contains("inlinesplit"),
        "{}",
        stderr(&export)
    );
    let gprof = std::process::Command::new("gprof")
        .args(["-p", "-b"])
        .arg(&program.binary)
        .arg(dir.join("gmon.out"))
        .output()
        .unwrap();
    let flat = String::from_utf8(gprof.stdout).unwrap();
    let share = |name: &str| -> f64 {
        (flat.lines())
            .find(|l| l.split_whitespace().last() == Some(name))
            .and_then(|l| l.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("gprof has no {name}: {flat}"))
    };
    assert!((share("hot_a") - 60.0).abs() < 0.1, "{flat}");
    assert!((share("hot_c") - 10.0).abs() < 0.1, "{flat}");
}

#[test]
fn call_stacks_keep_inlined_functions_as_frames_marked_inlined() {
    let dir = scratch("views-inlined-stacks");
    write_60_30_10(&dir, "stacks.data", true);

    let folded = text(&dir, &["export", "--format", "folded", "-i", "stacks.data"]);
    assert!(
        folded.contains("main;hot_a;burn (inlined) 570\n"),
        "{folded}"
    );
    assert!(folded.contains("main;hot_a 30\n"), "{folded}");
    let plain = text(
        &dir,
        &[
            "export",
            "--format",
            "folded",
            "-i",
            "stacks.data",
            "--no-inline",
        ],
    );
    assert!(plain.contains("main;hot_a 600\n"), "{plain}");

    let tree = text(
        &dir,
        &["report", "-i", "stacks.data", "--call-graph", "caller"],
    );
    assert!(tree.contains("    hot_a [inlinesplit]"), "{tree}");
    assert!(
        tree.contains("      burn (inlined) [inlinesplit]"),
        "{tree}"
    );

    // Every number ends where its heading does.
    let table = text(&dir, &["report", "-i", "stacks.data", "--children"]);
    let heading = table.lines().find(|l| l.starts_with("# Children")).unwrap();
    let main = table.lines().find(|l| l.ends_with(" main")).unwrap();
    for title in ["Children", "Self %", "Samples"] {
        let end = heading.find(title).unwrap() + title.len();
        let cell_end = main[..end].trim_end().len();
        assert_eq!(cell_end, end, "{title} misaligned:\n{heading}\n{main}");
        assert!(main[end..].starts_with("  "), "{heading}\n{main}");
    }
    let children = report_json_with(&dir, "stacks.data", &["--children"]);
    assert_eq!(row(&children, "main")["total_percent"], 100.0);
    assert_eq!(row(&children, "hot_a")["total_percent"], 60.0);
    assert!(function(&children, "burn").is_none());
    let inline = report_json_with(&dir, "stacks.data", &["--children", "--inline"]);
    assert_eq!(row(&inline, "burn")["total_percent"], 97.0);

    run_ok(
        &dir,
        &["flamegraph", "-i", "stacks.data", "-o", "flame.svg"],
    );
    let svg = std::fs::read_to_string(dir.join("flame.svg")).unwrap();
    assert!(
        svg.contains("<title>burn (inlined) ("),
        "no inlined burn frame"
    );
}

/// sh (pid 10) forks 11 and 12, which run in sh a while before executing
/// grep and sed: samples count for the command they were taken under.
fn write_pipeline(dir: &Path) {
    let binary = fixture("inlinesplit");
    let (address, _) = inlined_and_own(&binary, "hot_a", "burn");
    let mut recording = Synthetic::new();
    recording.process(10, 0, "sh", &binary);
    recording.samples(10, address, &[], 50);
    recording.fork(11, 10);
    recording.samples(11, address, &[], 20);
    recording.exec(11, "grep", &binary);
    recording.samples(11, address, &[], 630);
    recording.fork(12, 10);
    recording.samples(12, address, &[], 10);
    recording.exec(12, "sed", &binary);
    recording.samples(12, address, &[], 290);
    recording.write(&dir.join("pipeline.data"), &["sh", "-c", "grep | sed"]);
}

// A process whose main thread takes no sample (it waits for its workers)
// is still named as the process, not after a worker, by every view that
// names processes.
#[test]
fn a_process_is_named_after_its_main_thread_though_only_workers_ran() {
    let dir = scratch("views-process-names");
    let binary = fixture("inlinesplit");
    let (address, _) = inlined_and_own(&binary, "hot_a", "burn");
    let mut recording = Synthetic::with_stacks();
    recording.process(20, 0, "app", &binary);
    recording.thread(20, 21, "worker-a");
    recording.thread(20, 22, "worker-b");
    let base = load_base(&binary);
    for (tid, count) in [(21, 30), (22, 10)] {
        let at = At {
            pid: 20,
            tid,
            user: vec![base + address],
            ..At::default()
        };
        recording.take(&at, count);
    }
    recording.write(&dir.join("workers.data"), &["./app"]);

    let by_pid = report_json_with(&dir, "workers.data", &["--sort", "pid"]);
    assert_eq!(by_pid["tasks"][0]["process"], "app", "{by_pid}");
    let folded = text(
        &dir,
        &[
            "export",
            "-i",
            "workers.data",
            "--format",
            "folded",
            "--pid",
        ],
    );
    assert!(folded.lines().all(|l| l.starts_with("app-20;")), "{folded}");
    run_ok(
        &dir,
        &[
            "export",
            "-i",
            "workers.data",
            "--format",
            "firefox",
            "-o",
            "workers.json",
        ],
    );
    let firefox: Value =
        serde_json::from_slice(&std::fs::read(dir.join("workers.json")).unwrap()).unwrap();
    let threads = firefox["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for thread in threads {
        assert_eq!(thread["processName"], "app", "{thread}");
    }
}

#[test]
fn commands_and_processes_are_sort_keys_and_columns() {
    let dir = scratch("views-commands");
    write_pipeline(&dir);

    let by_command = report_json_with(&dir, "pipeline.data", &["--sort", "comm"]);
    let shares: Vec<(String, f64)> = (by_command["tasks"].as_array().unwrap().iter())
        .map(|t| {
            let name = t["comm"].as_str().unwrap().to_owned();
            (name, t["self_percent"].as_f64().unwrap())
        })
        .collect();
    let expected = [("grep", 63.0), ("sed", 29.0), ("sh", 8.0)];
    let expected: Vec<(String, f64)> = expected.iter().map(|(n, p)| (n.to_string(), *p)).collect();
    assert_eq!(shares, expected);
    assert_eq!(by_command["commands"].as_array().unwrap().len(), 3);

    let text = text(&dir, &["report", "-i", "pipeline.data", "--sort", "comm"]);
    assert!(text.contains("#  Self %  Samples  Command\n"), "{text}");
    assert!(text.contains("   63.00%      630  grep\n"), "{text}");

    // The default text report: a Command column, and each command's share.
    let text = self::text(&dir, &["report", "-i", "pipeline.data"]);
    assert!(
        text.contains("# Commands: grep 63.00%, sed 29.00%, sh 8.00%"),
        "{text}"
    );
    assert!(text.contains("Command  Module       Function"), "{text}");
    assert!(text.contains("  grep     inlinesplit  hot_a"), "{text}");

    let rows = report_json_with(&dir, "pipeline.data", &["--sort", "comm,dso,sym"]);
    let grep = (rows["functions"].as_array().unwrap().iter())
        .find(|f| f["comm"] == "grep")
        .unwrap();
    assert_eq!(
        (grep["name"].as_str(), grep["self"].as_u64()),
        (Some("hot_a"), Some(630))
    );

    let by_pid = report_json_with(&dir, "pipeline.data", &["-s", "pid"]);
    let first = &by_pid["tasks"][0];
    assert_eq!(
        (first["pid"].as_u64(), first["process"].as_str()),
        (Some(11), Some("grep"))
    );
    assert_eq!(first["self"], 650);

    let error = run(&dir, &["report", "-i", "pipeline.data", "--sort", "cpu"]);
    assert_eq!(error.status.code(), Some(2));
    let message = stderr(&error);
    assert!(message.contains("unknown sort key 'cpu'"), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
}

#[test]
fn views_say_why_they_have_nothing_to_show() {
    let dir = scratch("views-empty");
    write_60_30_10(&dir, "flat.data", false);

    // Trees and totals need stacks: one line says so, and how to get them.
    for option in ["--children", "--call-graph=caller"] {
        let text = text(&dir, &["report", "-i", "flat.data", option]);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("-g or --call-graph dwarf"))
            .collect();
        assert_eq!(lines.len(), 1, "{option}: {text}");
        assert!(lines[0].contains("inline chains"), "{text}");
    }

    let text = text(
        &dir,
        &["report", "-i", "flat.data", "--percent-limit", "70"],
    );
    assert!(
        text.contains("# Every row is below --percent-limit 70%"),
        "{text}"
    );

    for filter in [["--pid", "4242"], ["--tid", "4242"]] {
        let output = run(&dir, &["report", "-i", "flat.data", filter[0], filter[1]]);
        assert_eq!(output.status.code(), Some(1), "{filter:?}");
        let message = stderr(&output);
        assert!(
            message.contains("4242") && message.contains("100 (inlinesplit"),
            "{message}"
        );
        assert_eq!(message.lines().count(), 1, "{message}");
    }

    // perf's habit: the recording named without -i.
    let positional = report_json_with(&dir, "flat.data", &[]);
    let text = self::text(&dir, &["report", "flat.data", "--format", "json"]);
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), positional);
}

#[test]
fn annotate_takes_every_name_a_view_prints() {
    let dir = scratch("views-annotate");
    write_60_30_10(&dir, "inlined.data", false);

    // An inlined function: the places it was inlined, with their samples.
    for name in ["burn", "burn (inlined)"] {
        let text = text(&dir, &["annotate", "-i", "inlined.data", name]);
        assert!(text.contains("burn has no code of its own"), "{text}");
        assert!(text.contains("`profiler annotate hot_a`"), "{text}");
        let row = text.lines().find(|l| l.contains(" hot_a ")).unwrap();
        assert!(row.trim_start().starts_with("570 "), "{text}");
    }
    let sites = run_json(
        &dir,
        &["annotate", "-i", "inlined.data", "burn", "--format", "json"],
    );
    let sites: Vec<(&str, u64)> = (sites["sites"].as_array().unwrap().iter())
        .map(|s| {
            (
                s["function"].as_str().unwrap(),
                s["samples"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(sites, [("hot_a", 570), ("hot_b", 300), ("hot_c", 100)]);

    // A function, and a place in it as rows by address print it.
    let json = run_json(
        &dir,
        &[
            "annotate",
            "-i",
            "inlined.data",
            "hot_a+0x4",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        (json["symbol"].as_str(), json["samples"].as_u64()),
        (Some("hot_a"), Some(600))
    );

    let error = run(&dir, &["annotate", "-i", "inlined.data", "nothing"]);
    assert_eq!(error.status.code(), Some(1));
    assert!(
        stderr(&error).contains("the hottest: hot_a"),
        "{}",
        stderr(&error)
    );
}
