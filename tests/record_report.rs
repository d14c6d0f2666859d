//! Live sampling of the fixtures: shares within a tolerance, lower bounds on
//! counts, names and modules as a user would read them.

use crate::util::*;

live_test!(three_functions_split_60_30_10, || {
    let dir = scratch("split");
    let split = fixture("split");
    let report = record_and_report(
        &dir,
        "split",
        &["-e", "cpu-clock"],
        &[split.to_str().unwrap()],
    );
    assert!(
        samples(&report) >= 2000,
        "too few samples: {}",
        samples(&report)
    );
    for (name, share) in [("burn_60", 60.0), ("burn_30", 30.0), ("burn_10", 10.0)] {
        assert_near(name, percent(&report, name), share, 3.0, &report);
        assert_eq!(function(&report, name).unwrap()["module"], "split");
    }
    let event = &report["events"][0];
    assert_eq!(event["name"], "cpu-clock");
    assert_eq!(event["lost"], 0);
    // Without call stacks, a function's total is its own samples, and those
    // of code inlined into it (a sample in the loader's inlined code may
    // give its caller a total without a self).
    for row in report["functions"].as_array().unwrap() {
        assert!(row["total"].as_u64() >= row["self"].as_u64(), "{row}");
        if row["module"] == "split" {
            assert_eq!(row["total"], row["self"], "{row}");
        }
    }
});

live_test!(
    a_non_pie_binary_is_named_through_its_own_address_space,
    || {
        let dir = scratch("nopie");
        let program = fixture("split-nopie");
        let report = record_and_report(
            &dir,
            "nopie",
            &["-F", "2000"],
            &[program.to_str().unwrap(), "4"],
        );
        assert!(
            samples(&report) >= 500,
            "too few samples: {}",
            samples(&report)
        );
        assert_near("burn_60", percent(&report, "burn_60"), 60.0, 5.0, &report);
        assert_eq!(
            function(&report, "burn_60").unwrap()["module"],
            "split-nopie"
        );
    }
);

live_test!(
    a_stripped_binary_is_attributed_to_its_module_by_function,
    || {
        let dir = scratch("stripped");
        let program = fixture("split-stripped");
        let report = record_and_report(&dir, "stripped", &[], &[program.to_str().unwrap(), "5"]);
        let module = report["modules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["module"] == "split-stripped");
        let module_share = module.expect("no samples in the stripped module")["self_percent"]
            .as_f64()
            .unwrap();
        assert!(
            module_share >= 95.0,
            "only {module_share}% in the stripped module"
        );
        // Without symbols, the unwind tables still tell its functions apart.
        let mut shares: Vec<(f64, &str)> = report["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["module"] == "split-stripped")
            .map(|f| {
                (
                    f["self_percent"].as_f64().unwrap(),
                    f["name"].as_str().unwrap(),
                )
            })
            .collect();
        shares.sort_by(|a, b| b.0.total_cmp(&a.0));
        assert!(shares.len() >= 3, "{shares:?}");
        for ((share, name), expected) in shares.iter().zip([60.0, 30.0, 10.0]) {
            assert!(name.starts_with("split-stripped+0x"), "{name}");
            assert_near(name, *share, expected, 3.0, &report);
        }
    }
);

live_test!(two_threads_are_sampled_and_attributed, || {
    let dir = scratch("threads");
    let program = fixture("threads");
    let report = record_and_report(&dir, "threads", &[], &[program.to_str().unwrap()]);
    assert!(
        samples(&report) >= 2000,
        "too few samples: {}",
        samples(&report)
    );
    assert_near(
        "thread_a_work",
        percent(&report, "thread_a_work"),
        66.7,
        4.0,
        &report,
    );
    assert_near(
        "thread_b_work",
        percent(&report, "thread_b_work"),
        33.3,
        4.0,
        &report,
    );
    let threads = report["threads"].as_array().unwrap();
    let thread = |name: &str| {
        threads
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no thread {name}: {threads:?}"))
    };
    let (a, b) = (thread("worker-a"), thread("worker-b"));
    assert_ne!(a["tid"], b["tid"]);
    assert_eq!(a["pid"], b["pid"]);
    let ratio = a["samples"].as_f64().unwrap() / b["samples"].as_f64().unwrap();
    assert!((1.6..=2.5).contains(&ratio), "worker-a/worker-b = {ratio}");
});

live_test!(
    forked_and_executed_children_are_sampled_and_attributed,
    || {
        let dir = scratch("forkexec");
        let (program, child) = (fixture("forkexec"), fixture("split"));
        let report = record_and_report(
            &dir,
            "forkexec",
            &[],
            &[program.to_str().unwrap(), child.to_str().unwrap(), "2"],
        );
        // 300 units in the parent, 300 in the forked child, 120 of 200 in burn_60.
        assert_near(
            "parent_work",
            percent(&report, "parent_work"),
            37.5,
            6.0,
            &report,
        );
        assert_near(
            "forked_child_work",
            percent(&report, "forked_child_work"),
            37.5,
            6.0,
            &report,
        );
        assert_near("burn_60", percent(&report, "burn_60"), 15.0, 4.0, &report);
        assert_eq!(
            function(&report, "forked_child_work").unwrap()["module"],
            "forkexec"
        );
        assert_eq!(function(&report, "burn_60").unwrap()["module"], "split");
        let pids: std::collections::BTreeSet<u64> = report["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["pid"].as_u64().unwrap())
            .collect();
        assert!(pids.len() >= 3, "processes sampled: {pids:?}");
    }
);

live_test!(
    a_function_in_a_dlopened_library_is_named_with_its_file,
    || {
        let dir = scratch("dlopen");
        let (program, library) = (fixture("dlmain"), fixture("libhot.so"));
        let report = record_and_report(
            &dir,
            "dlopen",
            &[],
            &[program.to_str().unwrap(), library.to_str().unwrap(), "500"],
        );
        let row = function(&report, "hot_in_library").expect("hot_in_library not reported");
        assert_eq!(row["module"], "libhot.so");
        assert!(row["self_percent"].as_f64().unwrap() >= 90.0, "{row}");
    }
);

live_test!(cpp_and_rust_names_are_demangled, || {
    let dir = scratch("demangle");
    let cases = [
        (
            "cppwork",
            ["work::Engine::spin", "work::crunch<unsigned long>"],
        ),
        (
            "rusthot",
            [
                "rusthot::kernels::hot_loop",
                "rusthot::kernels::Mixer::churn",
            ],
        ),
        (
            "rusthot-v0",
            [
                "rusthot::kernels::hot_loop",
                "<rusthot::kernels::Mixer>::churn",
            ],
        ),
    ];
    for (program, names) in cases {
        let path = fixture(program);
        let report = record_and_report(&dir, program, &[], &[path.to_str().unwrap(), "200"]);
        for name in names {
            assert_near(name, percent(&report, name), 50.0, 8.0, &report);
        }
    }
});

live_test!(a_threshold_takes_one_sample_every_n_events, || {
    let dir = scratch("threshold");
    let split = fixture("split");
    let report = record_and_report(
        &dir,
        "threshold",
        &["-e", "cpu-clock", "-c", "1000000"],
        &[split.to_str().unwrap(), "3"],
    );
    let event = &report["events"][0];
    assert_eq!(event["sampling"]["period"], 1_000_000);
    let count = event["samples"].as_u64().unwrap();
    assert!(
        count >= 200,
        "{count} samples of a 1 ms period over ~0.4 s of CPU"
    );
    assert_eq!(event["period"].as_u64().unwrap(), count * 1_000_000);

    let report = record_and_report(
        &dir,
        "faults",
        &["-e", "page-faults", "-c", "1"],
        &[split.to_str().unwrap(), "1"],
    );
    assert_eq!(report["events"][0]["name"], "page-faults");
    assert!(
        samples(&report) >= 10,
        "page faults sampled: {}",
        samples(&report)
    );
});

live_test!(
    the_default_event_is_cycles_or_cpu_clock_with_a_notice_once_per_boot,
    || {
        let dir = scratch("default-event");
        // A runtime directory of its own: nothing said yet this boot.
        let runtime = dir.join("runtime");
        std::fs::create_dir(&runtime).unwrap();
        let record = |data: &str| {
            let args = ["record", "-o", data, "--", "true"];
            let output = profiler()
                .current_dir(&dir)
                .env("XDG_RUNTIME_DIR", &runtime)
                .args(args)
                .output()
                .unwrap();
            assert!(output.status.success(), "{}", stderr(&output));
            stderr(&output)
        };
        let first = record("default.data");
        let report = report_json(&dir, "default.data");
        // Ten records more, as a script makes them: none says it again.
        let again: Vec<String> = (0..10)
            .map(|i| record(&format!("again-{i}.data")))
            .collect();
        let said = |text: &str| text.contains("sampling cpu-clock instead");
        assert!(!again.iter().any(|text| said(text)), "{again:?}");
        if has_pmu() {
            assert_eq!(report["events"][0]["name"], "cycles");
            assert!(!said(&first), "{first}");
        } else {
            assert_eq!(report["events"][0]["name"], "cpu-clock");
            assert!(said(&first), "{first}");
            assert_eq!(report["events"][0]["sampling"]["frequency"], 4000);
            let stamp = std::fs::read_to_string(runtime.join("profiler/no-pmu")).unwrap();
            let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
            assert_eq!(stamp.trim(), boot.trim());
        }
    }
);

live_test!(the_text_report_reads_like_perf_report, || {
    let dir = scratch("text");
    let split = fixture("split");
    let output = record(
        &dir,
        "text.data",
        &["-e", "cpu-clock"],
        &[split.to_str().unwrap(), "3"],
    );
    let summary = stderr(&output);
    assert_eq!(summary.lines().count(), 1, "{summary}");
    for part in [
        "samples (0 lost, 0 throttled)",
        "1 process",
        "exited with status 0",
        "text.data",
    ] {
        assert!(summary.contains(part), "summary lacks '{part}': {summary}");
    }

    let text = String::from_utf8(run(&dir, &["report", "-i", "text.data"]).stdout).unwrap();
    assert!(
        text.contains("# Event:    cpu-clock, 4000 Hz, user space"),
        "{text}"
    );
    assert!(text.contains("# Samples:  "), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let first: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(first[2..], ["split", "burn_60"], "{text}");

    let limited = String::from_utf8(
        run(
            &dir,
            &["report", "-i", "text.data", "--percent-limit", "20"],
        )
        .stdout,
    )
    .unwrap();
    let names: Vec<&str> = limited
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert_eq!(names, ["burn_60", "burn_30"], "{limited}");

    let modules =
        String::from_utf8(run(&dir, &["report", "-i", "text.data", "--sort", "module"]).stdout)
            .unwrap();
    let first = modules.lines().find(|l| !l.starts_with('#')).unwrap();
    assert!(
        first.trim_end().ends_with(split.to_str().unwrap()),
        "{modules}"
    );
});

live_test!(several_events_are_sampled_side_by_side, || {
    let dir = scratch("two-events");
    let split = fixture("split");
    let report = record_and_report(
        &dir,
        "two",
        &[
            "-e",
            "cpu-clock",
            "-F",
            "1000",
            "-e",
            "page-faults",
            "-c",
            "1",
        ],
        &[split.to_str().unwrap(), "2"],
    );
    let events = report["events"].as_array().unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["sampling"]["frequency"], 1000);
    assert_eq!(events[1]["sampling"]["period"], 1);
    assert!(events[0]["samples"].as_u64().unwrap() >= 100, "{events:?}");
    assert!(events[1]["samples"].as_u64().unwrap() >= 10, "{events:?}");
    let burn = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "burn_60")
        .unwrap();
    assert_eq!(burn["event"], "cpu-clock");
});

// hot_a, hot_b and hot_c spend 60/30/10 of the time in one `static
// inline` loop inlined into each: the report gives the functions holding
// the code their shares, as perf report and gprof do, and `--inline` the
// helper.
live_test!(a_shared_inlined_loop_splits_60_30_10_by_function, || {
    let dir = scratch("inlinesplit");
    let program = fixture("inlinesplit");
    let report = record_and_report(
        &dir,
        "inlinesplit",
        &["-e", "cpu-clock"],
        &[program.to_str().unwrap()],
    );
    assert!(
        samples(&report) >= 2000,
        "too few samples: {}",
        samples(&report)
    );
    for (name, share) in [("hot_a", 60.0), ("hot_b", 30.0), ("hot_c", 10.0)] {
        assert_near(name, percent(&report, name), share, 3.0, &report);
        let row = function(&report, name).unwrap();
        assert_eq!(row["inlined"][0]["name"], "burn", "{row}");
        assert!(
            row["inlined"][0]["percent"].as_f64().unwrap() >= 90.0,
            "{row}"
        );
    }
    assert!(
        function(&report, "burn").is_none(),
        "{}",
        report["functions"]
    );

    let inline = report_json_with(&dir, "inlinesplit.data", &["--inline"]);
    assert!(percent(&inline, "burn") >= 95.0, "{}", inline["functions"]);
});

// A shell loop of 600 short processes: who spent the time is told by
// command, as `perf report --sort comm` tells it.
live_test!(a_loop_of_short_processes_is_split_by_command, || {
    let dir = scratch("shell-loop");
    let services = dir.join("words");
    let words: String = (0..20_000)
        .map(|i| format!("word{i} line {}\n", i * 7))
        .collect();
    std::fs::write(&services, words).unwrap();
    let script = format!(
        "for i in $(seq 300); do grep -c 1 {0} | sed s/1/2/ >/dev/null; done",
        services.display()
    );
    record(
        &dir,
        "loop.data",
        &["-e", "cpu-clock:u"],
        &["sh", "-c", &script],
    );
    let report = report_json_with(&dir, "loop.data", &["--sort", "comm"]);
    assert!(
        report["processes"].as_u64() >= Some(600),
        "{}",
        report["processes"]
    );
    let share = |name: &str| {
        (report["tasks"].as_array().unwrap().iter())
            .find(|t| t["comm"] == name)
            .map_or(0.0, |t| t["self_percent"].as_f64().unwrap())
    };
    for name in ["grep", "sed", "sh"] {
        assert!(
            share(name) > 0.0,
            "no samples of {name}: {}",
            report["tasks"]
        );
    }
    assert!(
        share("grep") + share("sed") + share("sh") > 95.0,
        "{}",
        report["tasks"]
    );
    // perf, on another run of the same loop in user space, splits it alike:
    // grep, then sed, then sh.
    if profiler_testing::perf_reads_its_own() {
        let perf = |args: &[&str]| {
            let output = std::process::Command::new("perf")
                .current_dir(&dir)
                .args(args)
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "perf {args:?}: {}",
                stderr(&output)
            );
            String::from_utf8(output.stdout).unwrap()
        };
        perf(&[
            "record",
            "-q",
            "-e",
            "cpu-clock:u",
            "-o",
            "loop.perf",
            "--",
            "sh",
            "-c",
            &script,
        ]);
        let theirs = perf(&[
            "report",
            "-i",
            "loop.perf",
            "--stdio",
            "-q",
            "--sort",
            "comm",
        ]);
        for name in ["grep", "sed", "sh"] {
            // "    67.71%  grep"
            let perf_share: f64 = (theirs.lines())
                .find_map(|l| {
                    let (percent, comm) = l.trim().split_once("%  ")?;
                    (comm.trim() == name).then(|| percent.parse().ok())?
                })
                .unwrap_or(0.0);
            // Two runs of a pipeline on two busy CPUs: about 7 points
            // apart at worst here.
            assert!(
                (share(name) - perf_share).abs() < 12.0,
                "{name}: {:.1}% here, {perf_share:.1}% in perf's\n{theirs}",
                share(name)
            );
        }
        assert!(share("grep") > share("sed") && share("sed") > share("sh"));
    }

    // The text report names the command on every row, and their shares.
    let text = run_ok(&dir, &["report", "-i", "loop.data"]);
    let text = String::from_utf8(text.stdout).unwrap();
    let commands = text
        .lines()
        .find(|l| l.starts_with("# Commands: "))
        .unwrap_or("");
    for name in ["grep ", "sed ", "sh "] {
        assert!(commands.contains(name), "{text}");
    }
    assert!(text.contains("Command  Module"), "{text}");
});

// Without CAP_IPC_LOCK, ring buffers are charged to the locked-memory
// budget (kernel.perf_event_mlock_kb per CPU, then `ulimit -l`): a bigger
// --mmap-pages is cut to fit, and said, rather than halved in silence.
live_test!(
    a_ring_beyond_the_locked_memory_budget_is_cut_with_a_notice,
    || {
        if !profiler_testing::root("dropping CAP_IPC_LOCK with setpriv")
            || !profiler_testing::tool("setpriv")
        {
            return;
        }
        let dir = scratch("ring-budget");
        let profiler = env!("CARGO_BIN_EXE_profiler");
        // As this user without CAP_IPC_LOCK, with an 8 MiB `ulimit -l`.
        let script = format!(
            "ulimit -l 8192 && exec {profiler} record -e cpu-clock --mmap-pages 65536 -o ring.data -- true"
        );
        let output = std::process::Command::new("setpriv")
            .args([
                "--bounding-set",
                "-ipc_lock",
                "--inh-caps",
                "-ipc_lock",
                "--",
                "sh",
                "-c",
            ])
            .arg(&script)
            .current_dir(&dir)
            .output()
            .expect("setpriv (util-linux) runs a command without a capability");
        let text = stderr(&output);
        assert!(output.status.success(), "{text}");
        let notice = text
            .lines()
            .find(|line| line.contains("instead of 256 MiB"))
            .unwrap_or_else(|| panic!("no notice of the cut: {text}"));
        assert!(notice.starts_with("profiler: ring buffers of "), "{notice}");
        assert!(notice.contains("ulimit -l"), "{notice}");
        report_json(&dir, "ring.data");
    }
);
