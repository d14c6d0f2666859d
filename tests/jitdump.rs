//! JIT code described in a jitdump file (`jit-PID.dump`, which the JIT
//! maps as a marker): named, with source lines, and unwound with its
//! unwinding info, at report time, with no inject step.

use std::path::Path;

use serde_json::Value;

use crate::util::*;

/// The `--sort line` rows of function `name`: (line, share).
fn lines_of(report: &Value, name: &str) -> Vec<(u64, f64)> {
    (report["lines"].as_array().unwrap().iter())
        .filter(|row| row["function"] == name)
        .map(|row| {
            assert_eq!(row["file"], "loops.jit", "{row}");
            let line = row["line"].as_u64().unwrap_or(0);
            (line, row["self_percent"].as_f64().unwrap())
        })
        .collect()
}

/// The share of `leaf`'s folded stacks whose frame below it is `caller`,
/// and the samples of `leaf`.
fn called_from(folded: &str, leaf: &str, caller: &str) -> (f64, u64) {
    let (mut from, mut all) = (0, 0);
    for line in folded.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let count: u64 = count.parse().unwrap();
        let frames: Vec<&str> = stack.split(';').collect();
        if frames.last() != Some(&leaf) {
            continue;
        }
        all += count;
        if frames.len() >= 2 && frames[frames.len() - 2] == caller {
            from += count;
        }
    }
    (from as f64 / all.max(1) as f64, all)
}

fn folded(dir: &Path, data: &str) -> String {
    let output = run_ok(
        dir,
        &["export", "--format", "folded", "-i", data, "-o", "-"],
    );
    String::from_utf8(output.stdout).unwrap()
}

live_test!(jit_code_is_named_with_its_lines_from_the_jitdump, || {
    let dir = scratch("jitdump");
    let program = fixture("jitdump");
    record(
        &dir,
        "jitdump.data",
        &["--call-graph", "dwarf"],
        &[program.to_str().unwrap(), "300"],
    );
    // No perf map: the names come from the jitdump alone.
    let report = report_json_with(&dir, "jitdump.data", &["--sort", "line"]);
    let pid = report["threads"][0]["pid"].as_u64().unwrap();
    assert!(!Path::new(&format!("/tmp/perf-{pid}.map")).exists());
    let (hot, warm) = (percent(&report, "jit_hot"), percent(&report, "jit_warm"));
    assert!(hot + warm >= 90.0, "{}", report["functions"]);
    // jit_hot runs three times as long as jit_warm, which was moved.
    assert_near(
        "jit_hot's part",
        100.0 * hot / (hot + warm),
        75.0,
        7.0,
        &report,
    );
    assert_eq!(function(&report, "jit_hot").unwrap()["module"], "[anon]");

    // Every sample of each has its source line, all in the loop (lines 4 to
    // 6 of loops.jit), none in the set-up or return (3 and 7).
    for (name, share) in [("jit_hot", hot), ("jit_warm", warm)] {
        let lines = lines_of(&report, name);
        let in_loop: f64 = (lines.iter())
            .filter(|(line, _)| (4..=6).contains(line))
            .map(|(_, share)| share)
            .sum();
        assert!(in_loop >= share - 0.5, "{name}: {lines:?} of {share}");
    }

    // Their unwinding info finds main below them, which no frame pointer
    // chain does: neither function keeps one.
    let stacks = folded(&dir, "jitdump.data");
    for name in ["jit_hot", "jit_warm"] {
        let (from_main, samples) = called_from(&stacks, name, "main");
        assert!(samples >= 50, "{stacks}");
        assert!(from_main >= 0.95, "{name}: {from_main}\n{stacks}");
    }
});

live_test!(
    jit_code_without_unwinding_info_is_walked_by_frame_pointers,
    || {
        // The same program writing no unwinding info: main is lost below the
        // JIT code, as the frame pointers skip it. This is what the unwinding
        // info of the test above makes the difference for.
        let dir = scratch("jitdump-no-unwind");
        let program = fixture("jitdump");
        let command = [program.to_str().unwrap(), "100", "no-unwind"];
        record(&dir, "plain.data", &["--call-graph", "dwarf"], &command);
        let report = report_json(&dir, "plain.data");
        assert!(
            percent(&report, "jit_hot") >= 50.0,
            "{}",
            report["functions"]
        );
        let (from_main, _) = called_from(&folded(&dir, "plain.data"), "jit_hot", "main");
        assert!(from_main <= 0.05, "{from_main}");
    }
);

live_test!(node_perf_prof_code_is_named_from_its_jitdump, || {
    if !profiler_testing::tool("node") {
        return;
    }
    let dir = scratch("jitdump-node");
    let script = dir.join("hot.js");
    std::fs::write(
        &script,
        "function hot(n) { let x = 1; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; \
         return x; }\nlet s = 0; for (let k = 0; k < 300; k++) s += hot(1e6);\nconsole.log(s);\n",
    )
    .unwrap();
    record(
        &dir,
        "node.data",
        &[],
        &["node", "--perf-prof", script.to_str().unwrap()],
    );
    let report = report_json(&dir, "node.data");
    // V8 names optimized JavaScript `JS:*NAME SCRIPT:LINE:COLUMN`.
    let hot: f64 = (report["functions"].as_array().unwrap().iter())
        .filter(|f| {
            let name = f["name"].as_str().unwrap();
            name.contains("hot ") && name.contains("hot.js:1:")
        })
        .map(|f| f["self_percent"].as_f64().unwrap())
        .sum();
    assert!(hot >= 50.0, "{}", report["functions"]);
});
