//! gprof interop: `profiler export --format gmon` read by GNU gprof.

use std::path::Path;
use std::process::Command;

use crate::util::*;

/// gprof's flat profile as (function, percent) pairs.
fn gprof_flat_profile(program: &Path, gmon: &Path) -> Vec<(String, f64)> {
    let output = Command::new("gprof")
        .arg("-p")
        .arg("-b")
        .arg(program)
        .arg(gmon)
        .output();
    let output = output.expect("gprof (from binutils) is needed");
    assert!(
        output.status.success(),
        "gprof failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let percent = fields.first()?.parse::<f64>().ok()?;
            Some((fields.last()?.to_string(), percent))
        })
        .collect()
}

live_test!(
    gprof_reads_the_exported_histogram_and_agrees_with_report,
    || {
        let dir = scratch("gprof");
        for (program, options) in [
            ("split", &["-e", "cpu-clock"][..]),
            ("split-nopie", &["--histogram"][..]),
        ] {
            let path = fixture(program);
            let data = format!("{program}.data");
            record(&dir, &data, options, &[path.to_str().unwrap(), "4"]);
            let gmon = dir.join(format!("{program}.gmon"));
            let output = run(
                &dir,
                &[
                    "export",
                    "--format",
                    "gmon",
                    "-i",
                    &data,
                    "-o",
                    gmon.to_str().unwrap(),
                ],
            );
            assert!(output.status.success(), "{}", stderr(&output));
            assert!(
                stderr(&output).contains("gprof -p -b"),
                "{}",
                stderr(&output)
            );

            let flat = gprof_flat_profile(&path, &gmon);
            let report = report_json(&dir, &data);
            for name in ["burn_60", "burn_30", "burn_10"] {
                let gprof = flat.iter().find(|(f, _)| f == name).map(|(_, p)| *p);
                let gprof =
                    gprof.unwrap_or_else(|| panic!("{program}: gprof lacks {name}: {flat:?}"));
                let ours = percent(&report, name);
                assert!(
                    (gprof - ours).abs() <= 1.0,
                    "{program} {name}: gprof {gprof}%, report {ours}%"
                );
            }
        }
    }
);

// Without --module, the export is of the module with the most samples,
// here a library loaded with dlopen rather than the program, and says so.
live_test!(gmon_export_picks_the_module_with_the_most_samples, || {
    let dir = scratch("gprof-library");
    let (program, library) = (fixture("dlmain"), fixture("libhot.so"));
    let args = [program.to_str().unwrap(), library.to_str().unwrap(), "400"];
    record(&dir, "dlmain.data", &["-e", "cpu-clock"], &args);
    let output = run(
        &dir,
        &[
            "export",
            "--format",
            "gmon",
            "-i",
            "dlmain.data",
            "-o",
            "dlmain.gmon",
        ],
    );
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("in libhot.so (the module with the most samples"),
        "{said}"
    );
    assert!(said.contains("libhot.so dlmain.gmon`"), "{said}");
    let flat = gprof_flat_profile(&library, &dir.join("dlmain.gmon"));
    let hot = flat.iter().find(|(f, _)| f == "hot_in_library");
    assert!(hot.is_some_and(|(_, percent)| *percent >= 95.0), "{flat:?}");
});

live_test!(gmon_export_refuses_what_gprof_cannot_read, || {
    let dir = scratch("gprof-refusals");
    let split = fixture("split");
    record(
        &dir,
        "full.data",
        &["-e", "cpu-clock"],
        &[split.to_str().unwrap(), "1"],
    );
    let fails = |args: &[&str], needle: &str| {
        let output = run(&dir, args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
        assert!(
            message.contains(needle),
            "{args:?}: '{needle}' not in {message}"
        );
    };
    fails(
        &[
            "export",
            "--format",
            "gmon",
            "-i",
            "full.data",
            "--scale",
            "65535",
        ],
        "power of two",
    );
    fails(
        &[
            "export",
            "--format",
            "gmon",
            "-i",
            "full.data",
            "--module",
            "nope",
        ],
        "no module 'nope'",
    );
    fails(
        &[
            "export",
            "--format",
            "gmon",
            "-i",
            "full.data",
            "-o",
            "no/dir/gmon.out",
        ],
        "cannot write no/dir/gmon.out",
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers, ["full.data"]);
});

live_test!(
    gprof_agrees_with_report_on_every_row_despite_gccs_copies,
    || {
        if !profiler_testing::tool("gprof") {
            return;
        }
        let dir = scratch("gprof-clones");
        let program = fixture("clones");
        let command = [program.to_str().unwrap(), "300"];
        record(&dir, "clones.data", &["-e", "cpu-clock"], &command);
        let args = [
            "export",
            "--format",
            "gmon",
            "-i",
            "clones.data",
            "-o",
            "clones.gmon",
        ];
        let said = stderr(&run_ok(&dir, &args));
        let flat = gprof_flat_profile(&program, &dir.join("clones.gmon"));
        let report = report_json(&dir, "clones.data");
        let ours = |name: &str| percent(&report, name);
        let theirs = |name: &str| {
            flat.iter()
                .find(|(f, _)| f == name)
                .map_or(0.0, |(_, p)| *p)
        };
        let copies = ["hash_key.isra.0", "lookup.part.0"];
        // Their samples are where report has them, not in the function
        // gprof would have given them to.
        assert!(
            ours(copies[0]) + ours(copies[1]) >= 60.0,
            "{}",
            report["functions"]
        );
        for copy in copies {
            assert!(
                said.contains(&format!("{copy} ")),
                "{copy} is not named: {said}"
            );
            assert_eq!(theirs(copy), 0.0, "{flat:?}");
        }
        for row in report["functions"].as_array().unwrap() {
            let (name, share) = (
                row["name"].as_str().unwrap(),
                row["self_percent"].as_f64().unwrap(),
            );
            if share >= 1.0 && !copies.contains(&name) {
                let gprof = theirs(name);
                assert!(
                    (gprof - share).abs() <= 0.5,
                    "{name}: gprof {gprof}%, report {share}%"
                );
            }
        }
        for (name, gprof) in &flat {
            assert!(
                (gprof - ours(name)).abs() <= 0.5,
                "{name}: gprof {gprof}%, report {}%",
                ours(name)
            );
        }
    }
);

live_test!(
    gmon_export_says_before_gprof_that_a_stripped_file_has_no_symbols,
    || {
        if !profiler_testing::tool("gprof") {
            return;
        }
        let dir = scratch("gprof-stripped");
        let program = fixture("split-stripped");
        record(
            &dir,
            "stripped.data",
            &["-e", "cpu-clock"],
            &[program.to_str().unwrap(), "1"],
        );
        let args = [
            "export",
            "--format",
            "gmon",
            "-i",
            "stripped.data",
            "-o",
            "stripped.gmon",
        ];
        let said = stderr(&run_ok(&dir, &args));
        assert!(
            said.contains("split-stripped has no symbol table"),
            "{said}"
        );
        // As gprof itself then says.
        let gprof = Command::new("gprof")
            .args(["-p", "-b"])
            .arg(&program)
            .arg(dir.join("stripped.gmon"))
            .output()
            .unwrap();
        let gprof_said = String::from_utf8_lossy(&gprof.stderr);
        assert!(gprof_said.contains("no symbols"), "{gprof_said}");
    }
);
