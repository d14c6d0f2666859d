//! Call stacks end to end: recorded by frame pointers and by stack copies,
//! unwound, and shown as inclusive shares, call trees, folded stacks, flame
//! graphs and diffs.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use inferno::collapse::Collapse;

use crate::util::*;

/// The folded stacks of a recording: `root;...;leaf` -> samples.
fn folded(dir: &Path, data: &str, extra: &[&str]) -> Vec<(Vec<String>, u64)> {
    let mut args = vec!["export", "--format", "folded", "-i", data];
    args.extend_from_slice(extra);
    let output = run_ok(dir, &args);
    parse_folded(&String::from_utf8(output.stdout).unwrap())
}

fn parse_folded(text: &str) -> Vec<(Vec<String>, u64)> {
    text.lines()
        .map(|line| {
            let (stack, count) = line.rsplit_once(' ').expect("a count after the stack");
            let frames = stack.split(';').map(str::to_owned).collect();
            (frames, count.parse().expect("a numeric count"))
        })
        .collect()
}

/// Of the samples taken in `leaf`, the share whose stack is whole: main,
/// then at least 65 nested `descend`, then `leaf`.
fn whole_leaf_stacks(stacks: &[(Vec<String>, u64)]) -> (f64, u64) {
    let in_leaf: Vec<&(Vec<String>, u64)> = stacks
        .iter()
        .filter(|(frames, _)| frames.last().map(String::as_str) == Some("leaf"))
        .collect();
    let total: u64 = in_leaf.iter().map(|(_, n)| n).sum();
    let whole: u64 = in_leaf
        .iter()
        .filter(|(frames, _)| {
            let main = frames.iter().position(|f| f == "main");
            let descends = frames.iter().filter(|f| *f == "descend").count();
            main.is_some_and(|m| {
                frames[m + 1..frames.len() - 1]
                    .iter()
                    .all(|f| f == "descend")
            }) && descends >= 65
        })
        .map(|(_, n)| n)
        .sum();
    (whole as f64 / total.max(1) as f64, total)
}

fn all_samples(stacks: &[(Vec<String>, u64)]) -> u64 {
    stacks.iter().map(|(_, n)| n).sum()
}

fn check_recursion_unwinds(program: &str, call_graph: &[&str]) {
    let dir = scratch(&format!("stacks-{program}-{}", call_graph.join("")));
    let fixture = fixture(program);
    let output = record(
        &dir,
        "recurse.data",
        &[&["-e", "cpu-clock"], call_graph].concat(),
        &[fixture.to_str().unwrap(), "6"],
    );
    let summary = stderr(&output);
    assert!(
        summary.contains("reached the start of their program or thread"),
        "record says nothing of the stacks: {summary}"
    );
    let stacks = folded(&dir, "recurse.data", &[]);
    let (whole, in_leaf) = whole_leaf_stacks(&stacks);
    let total = all_samples(&stacks);
    assert!(total >= 1000, "too few samples: {total}");
    let leaf_share = in_leaf as f64 * 100.0 / total as f64;
    assert!(
        (leaf_share - 90.0).abs() < 4.0,
        "leaf has {leaf_share:.1}% of the samples, expected 90%"
    );
    assert!(
        whole >= 0.97,
        "only {:.1}% of leaf's stacks unwound to main through 65 descend frames; e.g. {:?}",
        whole * 100.0,
        stacks.iter().max_by_key(|(_, n)| *n)
    );
    // `leaf` sets up a frame: nothing may add its caller a second time.
    let doubled = stacks.iter().find(|(frames, _)| {
        frames.last().is_some_and(|f| f == "leaf")
            && frames.iter().filter(|f| *f == "descend").count() > 65
    });
    assert_eq!(doubled, None, "a stack with more than 65 descend frames");

    // Inclusive time: descend recurses 65 deep but each sample counts once.
    let report = report_json(&dir, "recurse.data");
    let descend = function(&report, "descend").expect("descend in the report");
    let total_percent = descend["total_percent"].as_f64().unwrap();
    assert!(
        (total_percent - 90.0).abs() < 4.0,
        "descend's total is {total_percent}%, expected 90%"
    );
    assert!(descend["self_percent"].as_f64().unwrap() < 1.0);
    let main = function(&report, "main").expect("main in the report");
    assert!(main["total_percent"].as_f64().unwrap() > 97.0);
    let stacks = &report["events"][0]["stacks"];
    assert!(stacks["rooted"].as_u64().unwrap() * 100 >= stacks["samples"].as_u64().unwrap() * 97);
}

live_test!(a_64_deep_recursion_unwinds_by_frame_pointers, || {
    check_recursion_unwinds("recurse", &["-g"]);
});

live_test!(a_64_deep_recursion_unwinds_from_stack_copies, || {
    check_recursion_unwinds("recurse", &["--call-graph", "dwarf"]);
});

live_test!(
    code_without_frame_pointers_unwinds_from_stack_copies,
    || {
        check_recursion_unwinds("recurse-nofp", &["--call-graph", "dwarf"]);
    }
);

/// `main`'s total share in a `-e cpu-clock --call-graph MODE` recording of
/// `command`, and its folded stacks.
fn main_total(dir: &Path, call_graph: &str, command: &[&str]) -> (f64, Vec<(Vec<String>, u64)>) {
    let options = ["-e", "cpu-clock", "--call-graph", call_graph];
    record(dir, "main.data", &options, command);
    let report = report_json(dir, "main.data");
    let main = function(&report, "main").map_or(0.0, |f| f["total_percent"].as_f64().unwrap());
    (main, folded(dir, "main.data", &[]))
}

// `split`'s three functions set up no frame (GCC builds leaf functions
// without one, even with -fno-omit-frame-pointer), so the kernel's
// frame-pointer chain goes from each straight to main's caller; the
// recorder finds main again from the top of the stack.
live_test!(a_frameless_leaf_keeps_its_caller_by_frame_pointers, || {
    let dir = scratch("stacks-frameless-leaf");
    let program = fixture("split");
    let split = [program.to_str().unwrap(), "4"];
    let (main, stacks) = main_total(&dir, "fp", &split);
    assert!(
        main >= 99.0,
        "main's total is {main}%, expected 99% or more"
    );
    let total = all_samples(&stacks);
    assert!(total >= 1000, "too few samples: {total}");
    for (frames, count) in &stacks {
        let Some(leaf) = frames.last().filter(|f| f.starts_with("burn_")) else {
            continue;
        };
        assert_eq!(
            frames[frames.len() - 2],
            "main",
            "{count} samples of {leaf} under {frames:?}"
        );
        assert!(
            frames.windows(2).all(|pair| pair[0] != pair[1]),
            "{frames:?}"
        );
    }
    // The kernel's chain alone skips main: the fixture has what is fixed.
    let (main, _) = main_total(&dir, "fp,0", &split);
    assert!(
        main < 50.0,
        "main's total is {main}% without the stack's top"
    );
});

// libc's strlen, called through the PLT, has no frame but has unwind
// tables in libc: its caller is found in another module's tables, and so
// is that of a sample in the PLT stub.
live_test!(a_library_function_without_a_frame_keeps_its_caller, || {
    let dir = scratch("stacks-libcall");
    let program = fixture("libcall");
    let libcall = [program.to_str().unwrap(), "100"];
    let (main, stacks) = main_total(&dir, "fp", &libcall);
    assert!(main >= 99.0, "main's total is {main}%: {stacks:?}");
    let in_libc: u64 = stacks
        .iter()
        .filter(|(frames, _)| frames.last().is_some_and(|f| f.contains("strlen")))
        .map(|(_, n)| n)
        .sum();
    assert!(in_libc * 2 >= all_samples(&stacks), "{stacks:?}");
    let (main, _) = main_total(&dir, "fp,0", &libcall);
    assert!(
        main < 50.0,
        "main's total is {main}% without the stack's top"
    );
});

// JIT code with no jitdump has no unwind tables: its samples keep the
// kernel's chain, with nothing guessed into it.
live_test!(code_without_unwind_tables_keeps_the_kernels_chain, || {
    let dir = scratch("stacks-jit");
    let program = fixture("jit");
    let (_, stacks) = main_total(&dir, "fp", &[program.to_str().unwrap()]);
    let (_, kernel_chain) = main_total(&dir, "fp,0", &[program.to_str().unwrap()]);
    let in_jit = |stacks: &[(Vec<String>, u64)]| -> (u64, u64) {
        let jit: Vec<&(Vec<String>, u64)> = stacks
            .iter()
            .filter(|(frames, _)| frames.last().is_some_and(|f| f == "jit_hot_loop"))
            .collect();
        let under_libc_start = jit
            .iter()
            .filter(|(frames, _)| frames.len() == 2 && frames[0] == "__libc_start_call_main")
            .map(|(_, n)| n)
            .sum();
        (jit.iter().map(|(_, n)| n).sum(), under_libc_start)
    };
    for stacks in [&stacks, &kernel_chain] {
        let (jit, as_the_kernel_has_it) = in_jit(stacks);
        assert!(jit >= 500, "{stacks:?}");
        assert!(as_the_kernel_has_it * 100 >= jit * 99, "{stacks:?}");
    }
});

live_test!(
    go_stacks_reach_go_s_own_start_and_get_no_frame_pointer_advice,
    || {
        if !profiler_testing::tool("go") {
            return;
        }
        let dir = scratch("stacks-go");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs/gohot.go");
        let build = Command::new("go")
            .args(["build", "-o", "gohot"])
            .arg(&source)
            .current_dir(&dir)
            .env("HOME", &dir)
            .env("GOCACHE", dir.join("cache"))
            .env("GOPATH", dir.join("gopath"))
            .env("GO111MODULE", "off")
            .output()
            .unwrap();
        assert!(build.status.success(), "{}", stderr(&build));
        let output = record(&dir, "go.data", &["-g"], &["./gohot"]);
        // Go keeps frame pointers; its stacks end at runtime.goexit (the
        // goroutines) and runtime.main (the main one), which count as starts.
        let said = stderr(&output);
        assert!(!said.contains("-fno-omit-frame-pointer"), "{said}");
        let report = report_json(&dir, "go.data");
        let stacks = &report["events"][0]["stacks"];
        let (rooted, all) = (
            stacks["rooted"].as_u64().unwrap(),
            stacks["samples"].as_u64().unwrap(),
        );
        assert!(all >= 1000 && rooted * 100 >= all * 95, "{stacks}");
        let bottoms = folded(&dir, "go.data", &[]);
        let from_goexit: u64 = (bottoms.iter())
            .filter(|(frames, _)| {
                frames
                    .first()
                    .is_some_and(|f| f.starts_with("runtime.goexit"))
            })
            .map(|(_, n)| n)
            .sum();
        assert!(from_goexit * 2 >= all_samples(&bottoms), "{bottoms:?}");
    }
);

// Many threads at once, each sample with 8 KiB of stack: the rings must
// hold what comes while the recorder waits its turn for a CPU. The exact
// losses, beside perf's, are in BENCHMARKS.md; this only bounds them.
live_test!(stack_copies_of_many_threads_are_kept, || {
    let dir = scratch("stacks-many-threads");
    let program = fixture("manythreads");
    let options = ["-e", "cpu-clock", "-F", "4000", "--call-graph", "dwarf"];
    record(
        &dir,
        "many.data",
        &options,
        &[program.to_str().unwrap(), "100", "8"],
    );
    let report = report_json(&dir, "many.data");
    let event = &report["events"][0];
    let (samples, lost) = (
        event["samples"].as_u64().unwrap(),
        event["lost"].as_u64().unwrap(),
    );
    assert!(samples >= 1000, "too few samples: {samples}");
    let lost_share = lost as f64 / (samples + lost) as f64;
    assert!(
        lost_share < 0.2,
        "{lost} of {} samples lost",
        samples + lost
    );
    let stacks = &event["stacks"];
    assert!(
        stacks["rooted"].as_u64().unwrap() * 10 >= samples * 9,
        "{stacks}"
    );
    assert!(percent(&report, "work") > 90.0, "{report}");
});

live_test!(call_trees_children_and_threads_in_text, || {
    let dir = scratch("stacks-text");
    let program = fixture("recurse");
    record(&dir, "r.data", &["-g"], &[program.to_str().unwrap(), "3"]);
    let report = |args: &[&str]| {
        let output = run_ok(&dir, &[&["report", "-i", "r.data"], args].concat());
        String::from_utf8(output.stdout).unwrap()
    };

    let children = report(&["--children"]);
    assert!(children.contains("# Children"), "{children}");
    assert!(
        children.contains("# Stacks:   frame pointers:"),
        "{children}"
    );
    let first_row = children.lines().find(|l| !l.starts_with('#')).unwrap();
    assert!(
        [
            "main",
            "_start",
            "__libc_start_main",
            "__libc_start_call_main"
        ]
        .iter()
        .any(|root| first_row.ends_with(root)),
        "the first row by total should be a root: {first_row}"
    );

    // Callers first: main, then descend under it, leaf deepest.
    let caller = report(&["--call-graph", "caller", "--percent-limit", "5"]);
    let tree: Vec<&str> = caller
        .lines()
        .skip_while(|l| !l.starts_with("# Call tree"))
        .filter(|l| !l.starts_with('#'))
        .collect();
    // Two spaces a level, and past the indentation's limit `(depth N)`,
    // counting the roots as 1.
    let depth = |name: &str| {
        tree.iter()
            .filter(|l| l.trim_end().ends_with(&format!("{name} [recurse]")))
            .map(|l| {
                let row = l.split('%').nth(1).unwrap();
                match row.split_once("(depth ") {
                    Some((_, n)) => n.split(')').next().unwrap().parse::<usize>().unwrap() - 1,
                    None => (row.len() - row.trim_start().len() - 2) / 2,
                }
            })
            .max()
    };
    let (main, leaf) = (depth("main").unwrap(), depth("leaf").unwrap());
    assert!(
        leaf >= main + 65,
        "leaf at depth {leaf}, main at {main}:\n{caller}"
    );
    assert!(!tree.iter().any(|l| l.contains("side [")) || caller.contains("side [recurse]"));

    // Callees first: leaf at the top level, its callers below.
    let callee = report(&["--call-graph", "callee", "--percent-limit", "5"]);
    let top: Vec<&str> = callee
        .lines()
        .skip_while(|l| !l.starts_with("# Call tree"))
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.split('%')
                .nth(1)
                .is_some_and(|rest| rest.starts_with("  ") && !rest.starts_with("   "))
        })
        .collect();
    assert!(top.iter().any(|l| l.contains("leaf [recurse]")), "{callee}");
    assert!(!top.iter().any(|l| l.contains("main [")), "{callee}");

    // Per thread, and filtered by a pid that is not there.
    let threads = report(&["--threads"]);
    assert!(threads.contains("# Thread:   recurse (pid"), "{threads}");
    let none = run(&dir, &["report", "-i", "r.data", "--pid", "1"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(
        stderr(&none).contains("no samples of pid 1;"),
        "{}",
        stderr(&none)
    );
});

live_test!(
    the_flame_graph_is_well_formed_svg_with_the_expected_frames,
    || {
        let dir = scratch("stacks-svg");
        let program = fixture("recurse");
        record(&dir, "r.data", &["-g"], &[program.to_str().unwrap(), "3"]);
        run_ok(
            &dir,
            &[
                "flamegraph",
                "-i",
                "r.data",
                "-o",
                "flame.svg",
                "--title",
                "Recursion",
            ],
        );
        let svg = std::fs::read_to_string(dir.join("flame.svg")).unwrap();
        let mut reader = quick_xml::Reader::from_str(&svg);
        let mut titles = Vec::new();
        let mut in_title = false;
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(quick_xml::events::Event::Start(e)) => in_title = e.name().as_ref() == b"title",
                Ok(quick_xml::events::Event::Text(t)) if in_title => {
                    titles.push(String::from_utf8_lossy(&t).into_owned())
                }
                Ok(_) => {}
                Err(error) => panic!("flame.svg is not well-formed XML: {error}"),
            }
        }
        for frame in ["main", "descend", "leaf", "side"] {
            assert!(
                titles.iter().any(|t| t.starts_with(&format!("{frame} ("))),
                "no frame {frame} in the SVG; titles: {:?}",
                &titles[..titles.len().min(10)]
            );
        }
        assert!(svg.contains("Recursion"));
        assert!(svg.contains("<script"), "the SVG should be interactive");
    }
);

// `perf script` through inferno's perf collapser, on the same workload:
// the leaf functions' shares and their callers agree, once `main` is put
// back where perf's frame-pointer chains skip it (`split`'s functions set
// up no frame).
live_test!(
    folded_stacks_agree_with_perf_script_collapsed_by_inferno,
    || {
        if !profiler_testing::perf_reads_its_own() {
            return;
        }
        let dir = scratch("stacks-perf");
        let program = fixture("split");
        let program = program.to_str().unwrap();
        record(
            &dir,
            "ours.data",
            &["-e", "cpu-clock", "-g"],
            &[program, "10"],
        );
        let ours = folded(&dir, "ours.data", &[]);

        let perf = Command::new("perf")
            .args([
                "record",
                "-q",
                "-e",
                "cpu-clock:u",
                "-F",
                "4000",
                "-g",
                "-o",
            ])
            .arg(dir.join("perf.data"))
            .args([program, "10"])
            .output()
            .unwrap();
        assert!(perf.status.success(), "perf record: {}", stderr(&perf));
        let script = Command::new("perf")
            .args(["script", "-i"])
            .arg(dir.join("perf.data"))
            .output()
            .unwrap();
        assert!(script.status.success(), "perf script: {}", stderr(&script));
        let mut collapsed = Vec::new();
        inferno::collapse::perf::Folder::default()
            .collapse(&script.stdout[..], &mut collapsed)
            .unwrap();
        let mut theirs = parse_folded(&String::from_utf8(collapsed).unwrap());
        for (frames, _) in &mut theirs {
            let leaf = frames.len() - 1;
            if frames[leaf].starts_with("burn_") && leaf > 0 && frames[leaf - 1] != "main" {
                frames.insert(leaf, "main".to_owned());
            }
        }

        // By the last three frames (main's caller;main;leaf), where both tools
        // agree on names.
        let shares = |stacks: &[(Vec<String>, u64)]| -> HashMap<String, f64> {
            let total = all_samples(stacks) as f64;
            let mut shares = HashMap::new();
            for (frames, n) in stacks {
                let tail = frames[frames.len().saturating_sub(3)..].join(";");
                *shares.entry(tail).or_insert(0.0) += *n as f64 * 100.0 / total;
            }
            shares
        };
        let (ours, theirs) = (shares(&ours), shares(&theirs));
        for leaf in ["burn_60", "burn_30", "burn_10"] {
            let tail = format!("__libc_start_call_main;main;{leaf}");
            let (a, b) = (
                ours.get(&tail).copied().unwrap_or(0.0),
                theirs.get(&tail).copied().unwrap_or(0.0),
            );
            assert!(
                b > 5.0 && (a - b).abs() < 4.0,
                "{tail}: {a:.1}% here, {b:.1}% by perf script + inferno-collapse-perf"
            );
        }
    }
);

live_test!(diff_shows_what_grew_and_what_shrank, || {
    let dir = scratch("stacks-diff");
    let program = fixture("split");
    let program = program.to_str().unwrap();
    record(
        &dir,
        "base.data",
        &["-g"],
        &[program, "10", "60", "30", "10"],
    );
    record(
        &dir,
        "new.data",
        &["-g"],
        &[program, "10", "10", "30", "60"],
    );
    let diff = run_json(
        &dir,
        &[
            "diff",
            "base.data",
            "new.data",
            "--format",
            "json",
            "--flamegraph",
            "diff.svg",
        ],
    );
    let delta = |name: &str| {
        diff["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing from {diff}"))["self_delta"]
            .as_f64()
            .unwrap()
    };
    assert!((delta("burn_60") + 50.0).abs() < 5.0, "{diff}");
    assert!((delta("burn_10") - 50.0).abs() < 5.0, "{diff}");
    assert!(delta("burn_30").abs() < 4.0, "{diff}");
    let first = &diff["functions"][0]["name"];
    assert!(
        first == "burn_60" || first == "burn_10",
        "most changed first: {diff}"
    );
    let svg = std::fs::read_to_string(dir.join("diff.svg")).unwrap();
    assert!(svg.contains("burn_60") && svg.trim_end().ends_with("</svg>"));

    let text = run(&dir, &["diff", "base.data", "new.data"]);
    let text = String::from_utf8(text.stdout).unwrap();
    let row = text.lines().find(|l| l.ends_with(" burn_10")).unwrap();
    assert!(row.contains("+"), "{text}");
});

live_test!(diff_pairs_renamed_builds_and_says_how, || {
    let dir = scratch("diff-renamed");
    let (split, nopie) = (fixture("split"), fixture("split-nopie"));
    // Each pair of names: the same binary (build-id), two builds whose names
    // differ by their version, two builds named apart (the programs run).
    let cases = [
        ("alpha", &split, "beta", &split, "the same build-id"),
        (
            "app-v1",
            &split,
            "app-v2",
            &nopie,
            "the same name but for version digits",
        ),
        (
            "old-server",
            &split,
            "fresh",
            &nopie,
            "the main executables",
        ),
    ];
    for (base_name, base_binary, new_name, new_binary, how) in cases {
        for (name, binary) in [(base_name, base_binary), (new_name, new_binary)] {
            std::fs::copy(binary, dir.join(name)).unwrap();
            record(
                &dir,
                &format!("{name}.data"),
                &["-e", "cpu-clock"],
                &[&format!("./{name}"), "2"],
            );
        }
        let (base, new) = (format!("{base_name}.data"), format!("{new_name}.data"));
        let diff = run_json(&dir, &["diff", &base, &new, "--format", "json"]);
        let row = |function: &str| {
            (diff["functions"].as_array().unwrap().iter())
                .find(|f| f["name"] == function)
                .unwrap_or_else(|| panic!("{function} missing from {diff}"))
        };
        // The same program: the shares hardly move, rather than each going
        // from its share to nothing and from nothing to its share.
        for function in ["burn_60", "burn_30", "burn_10"] {
            let row = row(function);
            assert!(row["self_delta"].as_f64().unwrap().abs() < 5.0, "{row}");
            assert_eq!(row["module"], new_name, "{row}");
            assert_eq!(row["base_module"], base_name, "{row}");
        }
        let pairs = diff["modules"].as_array().unwrap();
        let pair = (pairs.iter())
            .find(|p| p["base"] == base_name)
            .unwrap_or_else(|| panic!("{diff}"));
        assert_eq!(pair["new"], new_name);
        assert_eq!(pair["paired_by"], how);
        let text = String::from_utf8(run_ok(&dir, &["diff", &base, &new]).stdout).unwrap();
        let said = format!("# Module:  {base_name} in the base is {new_name} ({how})");
        assert!(text.contains(&said), "{text}");
    }
});

live_test!(histogram_mode_keeps_working_without_stacks, || {
    let dir = scratch("stacks-histogram");
    let program = fixture("split");
    let output = record(
        &dir,
        "h.data",
        &["--histogram", "-g"],
        &[program.to_str().unwrap(), "3"],
    );
    assert!(stderr(&output).contains("keeps no call stacks"));
    let stacks = folded(&dir, "h.data", &[]);
    assert!(
        stacks
            .iter()
            .any(|(frames, _)| frames == &["burn_60".to_owned()])
    );
});

#[test]
fn a_bad_call_graph_mode_is_one_line_naming_it() {
    let dir = scratch("stacks-bad");
    for (mode, says) in [
        ("lbr", "unknown mode 'lbr'"),
        ("dwarf,13", "multiple of 8"),
        ("dwarf,lots", "'lots' is not a number"),
        (
            "fp,7",
            "--call-graph fp,7: the copy of the stack's top must be a multiple of 8",
        ),
        ("fp,x", "'x' is not a number of bytes; e.g. fp,256"),
    ] {
        let output = run(&dir, &["record", "--call-graph", mode, "--", "true"]);
        let message = stderr(&output);
        assert!(!output.status.success());
        assert!(message.contains(says), "{mode}: {message}");
        assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    }
}
