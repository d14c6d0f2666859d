//! Kernel time in the profile by default, as perf counts it: user space
//! and the kernel wherever this user may sample the kernel, user space only
//! otherwise with one line saying so; `--user-only` and `:u` as before.
//! The workload spends most of its time in system calls: one byte at a
//! time through `dd`.

use std::path::Path;

use serde_json::Value;

use crate::util::*;

const WORKLOAD: [&str; 5] = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=400000"];

/// The report's share of the kernel's module, and what its header says of
/// the event.
fn kernel_share(dir: &Path, data: &str) -> (f64, String) {
    let report = report_json_with(dir, data, &["--sort", "dso"]);
    let share = (report["modules"].as_array().unwrap().iter())
        .filter(|m| m["module"] == "[kernel]")
        .map(|m| m["self_percent"].as_f64().unwrap())
        .sum();
    let text = run_ok(dir, &["report", "-i", data]).stdout;
    let text = String::from_utf8(text).unwrap();
    let event = text
        .lines()
        .find(|l| l.starts_with("# Event:"))
        .unwrap_or("");
    (share, event.to_owned())
}

/// Whether this process may sample the kernel: as root, or at paranoid 1
/// or less.
fn may_sample_the_kernel() -> bool {
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        (status.lines())
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    });
    root || perf_event_paranoid().is_some_and(|p| p <= 1)
}

live_test!(kernel_time_is_counted_by_default_where_it_may_be, || {
    let dir = scratch("kernel-time");
    let output = record(&dir, "default.data", &["-e", "cpu-clock"], &WORKLOAD);
    let (share, event) = kernel_share(&dir, "default.data");
    if !may_sample_the_kernel() {
        assert!(
            stderr(&output).contains("kernel time is not shown"),
            "{}",
            stderr(&output)
        );
        assert!(event.ends_with(", user space"), "{event}");
        return;
    }
    assert!(
        !stderr(&output).contains("kernel time is not shown"),
        "{}",
        stderr(&output)
    );
    assert!(event.ends_with("user space and kernel"), "{event}");
    assert!(
        event.starts_with("# Event:    cpu-clock,"),
        "named as perf names it: {event}"
    );
    assert!(share > 30.0, "dd's system calls: {share:.1}% in the kernel");

    // --user-only, perf's --all-user and :u keep to user space, silently.
    for (name, options) in [
        ("user-only", &["-e", "cpu-clock", "--user-only"][..]),
        ("user", &["-e", "cpu-clock", "--user"]),
        ("all-user", &["-e", "cpu-clock", "--all-user"]),
        ("u", &["-e", "cpu-clock:u"]),
    ] {
        let data = format!("{name}.data");
        let output = record(&dir, &data, options, &WORKLOAD);
        assert!(
            !stderr(&output).contains("kernel time"),
            "{}",
            stderr(&output)
        );
        let (share, event) = kernel_share(&dir, &data);
        assert!(event.ends_with(", user space"), "{options:?}: {event}");
        assert_eq!(share, 0.0, "{options:?}");
    }
    let report: Value = report_json(&dir, "u.data");
    assert_eq!(report["events"][0]["name"], "cpu-clock:u");
});

// Where this user may not sample the kernel (nobody, at paranoid 2), the
// recording keeps to user space and says so in one line, with what would
// show the kernel; at paranoid 1 or less nobody may, and it is counted.
live_test!(
    kernel_time_is_left_out_with_one_line_where_it_may_not_be,
    || {
        let allowed = perf_event_paranoid().is_some_and(|p| p <= 1);
        let path =
            std::env::temp_dir().join(format!("kernel-time-nobody-{}.data", std::process::id()));
        let data = path.to_str().unwrap();
        let args = [
            &["record", "-e", "cpu-clock", "-o", data, "--"][..],
            &WORKLOAD,
        ]
        .concat();
        let Some(output) = run_as_nobody(&std::env::temp_dir(), &args) else {
            return;
        };
        let message = stderr(&output);
        assert!(output.status.success(), "{message}");
        let (_, event) = kernel_share(&std::env::temp_dir(), data);
        let _ = std::fs::remove_file(&path);
        let notices: Vec<&str> = message
            .lines()
            .filter(|l| l.contains("kernel time"))
            .collect();
        if allowed {
            assert!(notices.is_empty(), "{message}");
            assert!(event.ends_with("user space and kernel"), "{event}");
            return;
        }
        assert!(event.ends_with(", user space"), "{event}");
        assert_eq!(notices.len(), 1, "{message}");
        assert!(
            notices[0].contains("not shown")
                && notices[0].contains("perf_event_paranoid=1")
                && notices[0].contains("CAP_PERFMON"),
            "{message}"
        );
    }
);

live_test!(kernel_samples_are_named_from_kallsyms_in_the_report, || {
    if !may_sample_the_kernel() {
        profiler_testing::skip("this user may not sample the kernel");
        return;
    }
    let dir = scratch("kernel-time-names");
    record(&dir, "k.data", &["-e", "cpu-clock"], &WORKLOAD);
    let report = report_json(&dir, "k.data");
    let kernel: Vec<&Value> = (report["functions"].as_array().unwrap().iter())
        .filter(|f| f["module"] == "[kernel]")
        .collect();
    let named = kernel.iter().filter(|f| f["name"] != "[kernel]").count();
    // Where the kernel shows its addresses to this user (root), they are
    // named; where it hides them, one [kernel] row and a note say so.
    let restricted = std::fs::read_to_string("/proc/kallsyms")
        .is_ok_and(|k| k.lines().all(|l| l.starts_with("0000000000000000")));
    let text = String::from_utf8(run_ok(&dir, &["report", "-i", "k.data"]).stdout).unwrap();
    if restricted {
        assert_eq!(kernel.len(), 1, "{kernel:?}");
        assert!(
            text.contains("# Note:     kernel addresses are hidden"),
            "{text}"
        );
    } else {
        assert!(named >= 3, "kernel functions named: {kernel:?}");
        assert!(!text.contains("kernel addresses are hidden"), "{text}");
    }
});

// A reader from whom the kernel hides its addresses (nobody, unless
// kptr_restrict is 0 and perf_event_paranoid 1 or less) gets the kernel's
// samples of a root recording as one [kernel] row, and a note saying why
// and what would name them.
live_test!(kernel_addresses_hidden_from_the_reader_are_one_row, || {
    let read = |name: &str| std::fs::read_to_string(format!("/proc/sys/kernel/{name}"));
    let shown = read("kptr_restrict").is_ok_and(|l| l.trim() == "0")
        && perf_event_paranoid().is_some_and(|p| p <= 1);
    let tmp = std::env::temp_dir();
    let path = tmp.join(format!("kernel-time-hidden-{}.data", std::process::id()));
    let data = path.to_str().unwrap();
    let args = [
        &["record", "-e", "cpu-clock", "-o", data, "--"][..],
        &WORKLOAD,
    ]
    .concat();
    let recorded = run(&tmp, &args);
    assert!(recorded.status.success(), "{}", stderr(&recorded));
    let text = run_as_nobody(&tmp, &["report", "-i", data]);
    let json = run_as_nobody(&tmp, &["report", "-i", data, "--format", "json"]);
    let _ = std::fs::remove_file(&path);
    let (Some(text), Some(json)) = (text, json) else {
        return;
    };
    assert!(text.status.success(), "{}", stderr(&text));
    let text = String::from_utf8(text.stdout).unwrap();
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    let kernel: Vec<&Value> = (report["functions"].as_array().unwrap().iter())
        .filter(|f| f["module"] == "[kernel]")
        .collect();
    assert!(!kernel.is_empty(), "no kernel samples: {text}");
    if shown {
        assert!(!text.contains("kernel addresses are hidden"), "{text}");
        return;
    }
    assert_eq!(kernel.len(), 1, "{kernel:?}");
    assert_eq!(kernel[0]["name"], "[kernel]", "{kernel:?}");
    let notes: Vec<&str> = (text.lines())
        .filter(|l| l.contains("kernel addresses are hidden"))
        .collect();
    assert_eq!(notes.len(), 1, "{text}");
    assert!(
        notes[0].starts_with("# Note:") && notes[0].contains("to name kernel functions"),
        "{text}"
    );
});
