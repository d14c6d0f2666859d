//! Annotated listings end to end: where inside a function the samples fell,
//! by source line and by instruction, for C, C++, Rust, a shared library and
//! stripped code; and flat profiles by line and by address.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::*;

/// The number of the line of `source` that holds `marker`.
fn line_of(source: &Path, marker: &str) -> u64 {
    let text = std::fs::read_to_string(source).unwrap();
    let index = text.lines().position(|l| l.contains(marker));
    index.expect("marker not in the source") as u64 + 1
}

fn annotate_source() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/programs/annotate.c")
}

/// Runs `annotate` with `args` and returns its standard output.
fn annotate(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(run_ok(dir, &[&["annotate"], args].concat()).stdout).unwrap()
}

fn annotate_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--format", "json"]);
    serde_json::from_str(&annotate(dir, &all)).unwrap()
}

fn u64_of(value: &Value) -> u64 {
    value.as_u64().unwrap()
}

/// The JSON `lines` entry of line `number`.
fn line_entry(annotation: &Value, number: u64) -> &Value {
    annotation["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line"] == number)
        .unwrap_or_else(|| panic!("no line {number} in {}", annotation["lines"]))
}

/// The instructions of line `number`.
fn instructions_of_line(annotation: &Value, number: u64) -> Vec<&Value> {
    let all = annotation["instructions"].as_array().unwrap();
    all.iter().filter(|i| i["line"] == number).collect()
}

fn hottest_instruction(annotation: &Value) -> &Value {
    let all = annotation["instructions"].as_array().unwrap();
    all.iter().max_by_key(|i| u64_of(&i["samples"])).unwrap()
}

/// Asserts that the hot loop's line carries at least 80% of the function's
/// samples, and that the hottest instruction lies in that line's addresses.
fn assert_hot_line(annotation: &Value, hot: u64) {
    let samples = u64_of(&annotation["samples"]);
    assert!(samples >= 200, "too few samples: {annotation}");
    let line = line_entry(annotation, hot);
    let share = u64_of(&line["samples"]) as f64 / samples as f64;
    assert!(share >= 0.8, "the hot line has {share:.2} of the samples");
    let addresses: Vec<u64> = instructions_of_line(annotation, hot)
        .iter()
        .map(|i| u64_of(&i["address"]))
        .collect();
    let (low, high) = (addresses.iter().min(), addresses.iter().max());
    let hottest = u64_of(&hottest_instruction(annotation)["address"]);
    assert!(
        (*low.unwrap()..=*high.unwrap()).contains(&hottest),
        "hottest {hottest:#x} outside line {hot}'s {addresses:x?}"
    );
}

live_test!(
    the_hot_loop_line_and_its_instructions_carry_the_function,
    || {
        let dir = scratch("annotate-hot-line");
        let program = fixture("annotate");
        record(&dir, "a.data", &[], &[program.to_str().unwrap()]);
        let source = annotate_source();
        let (hot, cold, inlined) = (
            line_of(&source, "/* hot line */"),
            line_of(&source, "/* cold line */"),
            line_of(&source, "/* inlined line */"),
        );

        let annotation = annotate_json(&dir, &["-i", "a.data", "hot_and_cold"]);
        assert_eq!(annotation["symbol"], "hot_and_cold");
        assert!(
            annotation["module"]
                .as_str()
                .unwrap()
                .ends_with("/annotate")
        );
        assert_hot_line(&annotation, hot);
        // The hottest instruction is on the hot line by binutils' reading too.
        let hottest = u64_of(&hottest_instruction(&annotation)["address"]);
        let addr2line = Command::new("addr2line")
            .arg("-e")
            .arg(&program)
            .arg(format!("{hottest:x}"))
            .output()
            .expect("addr2line (binutils) is needed");
        let said = String::from_utf8_lossy(&addr2line.stdout);
        assert!(
            said.trim().ends_with(&format!("annotate.c:{hot}"))
                || said.contains(&format!("annotate.c:{hot} ")),
            "addr2line says {said}"
        );
        // The cold loop's work is inlined from `mix`: its line counts, marked.
        let mix = line_entry(&annotation, inlined);
        assert_eq!(mix["inlined"], "mix");
        let cold_share = (u64_of(&mix["samples"])
            + u64_of(&line_entry(&annotation, cold)["samples"])) as f64
            / u64_of(&annotation["samples"]) as f64;
        assert!(
            (0.03..0.2).contains(&cold_share),
            "cold loop: {cold_share:.3}"
        );
        // Every instruction is listed once, in order, with its text.
        let addresses: Vec<u64> = (annotation["instructions"].as_array().unwrap())
            .iter()
            .map(|i| u64_of(&i["address"]))
            .collect();
        assert!(addresses.windows(2).all(|w| w[0] < w[1]));
        assert!(
            annotation["instructions"][0]["text"]
                .as_str()
                .unwrap()
                .len()
                > 2
        );

        // The text views: source with the inlined line marked, the disassembly
        // with jump targets and source interleaved, no colour when piped.
        let both = annotate(&dir, &["-i", "a.data", "hot_and_cold"]);
        assert!(both.contains("# Source:"), "{both}");
        assert!(both.contains("# Disassembly"), "{both}");
        assert!(both.contains("[inlined: mix]"), "{both}");
        assert!(both.contains("<hot_and_cold+0x"), "{both}");
        assert!(
            both.lines().any(|l| l.contains(" > ")),
            "no jump target: {both}"
        );
        assert!(!both.contains('\x1b'), "colour on a pipe: {both}");
        let hot_row = both
            .lines()
            .find(|l| l.contains("/* hot line */") && l.contains('%'))
            .expect("the hot line with its share");
        let hot_percent: f64 = hot_row.split('%').next().unwrap().trim().parse().unwrap();
        assert!(hot_percent >= 80.0, "{hot_row}");
        let source = annotate(&dir, &["-i", "a.data", "hot_and_cold", "--source"]);
        assert!(source.contains("# Source:") && !source.contains("# Disassembly"));
        let asm = annotate(
            &dir,
            &["-i", "a.data", "hot_and_cold", "--asm", "-M", "intel"],
        );
        assert!(!asm.contains("# Source:") && asm.contains("# Disassembly"));
        assert!(
            asm.contains("imul") && !asm.contains("%r"),
            "not Intel syntax: {asm}"
        );
        let colored = annotate(&dir, &["-i", "a.data", "hot_and_cold", "--color", "always"]);
        assert!(colored.contains("\x1b[1;31m"), "no highlight: {colored}");
        let near = annotate(
            &dir,
            &["-i", "a.data", "hot_and_cold", "--context", "0", "--asm"],
        );
        assert!(near.lines().count() < asm.lines().count(), "{near}");
        assert!(near.contains("..."), "{near}");

        // Flat profiles by line and by address agree.
        let by_line = report_json_with(&dir, "a.data", &["--sort", "line"]);
        let top = &by_line["lines"][0];
        assert_eq!(top["line"], hot, "{by_line}");
        assert_eq!(top["function"], "hot_and_cold");
        assert!(top["self_percent"].as_f64().unwrap() >= 80.0, "{top}");
        let by_address = report_json_with(&dir, "a.data", &["--sort", "address"]);
        let top = &by_address["addresses"][0];
        assert_eq!(top["function"], "hot_and_cold");
        let hot_addresses: Vec<u64> = instructions_of_line(&annotation, hot)
            .iter()
            .map(|i| u64_of(&i["address"]))
            .collect();
        assert!(hot_addresses.contains(&u64_of(&top["address"])), "{top}");
        let text = run(&dir, &["report", "-i", "a.data", "--sort", "line"]);
        let text = String::from_utf8(text.stdout).unwrap();
        assert!(text.contains(&format!("annotate.c:{hot}")), "{text}");
    }
);

live_test!(
    a_histogram_recording_is_annotated_at_its_bucket_width,
    || {
        let dir = scratch("annotate-histogram");
        let program = fixture("annotate");
        record(
            &dir,
            "h.data",
            &["--histogram", "--scale", "16384"],
            &[program.to_str().unwrap()],
        );
        let annotation = annotate_json(&dir, &["-i", "h.data", "hot_and_cold"]);
        assert_eq!(annotation["bucket_bytes"], 8.0);
        assert_hot_line(&annotation, line_of(&annotate_source(), "/* hot line */"));
        let text = annotate(&dir, &["-i", "h.data", "hot_and_cold", "--asm"]);
        assert!(text.contains("each bucket spans 8 bytes"), "{text}");
    }
);

live_test!(
    cpp_rust_library_and_stripped_functions_are_annotated,
    || {
        let dir = scratch("annotate-languages");
        let cases: [(&str, &[&str], &str); 3] = [
            ("cppwork", &["200"], "work::Engine::spin"),
            ("rusthot", &["200"], "rusthot::kernels::hot_loop"),
            ("rusthot", &["200"], "rusthot::kernels::Mixer::churn"),
        ];
        for (program, program_args, symbol) in cases {
            let data = format!("{program}.data");
            let mut command = vec![fixture(program).to_str().unwrap().to_owned()];
            command.extend(program_args.iter().map(|a| a.to_string()));
            let command: Vec<&str> = command.iter().map(String::as_str).collect();
            if !dir.join(&data).exists() {
                record(&dir, &data, &[], &command);
            }
            let annotation = annotate_json(&dir, &["-i", &data, symbol]);
            assert_listing(&annotation, symbol, true);
        }
        // A unique prefix finds the template instance; a name without its
        // path, the method.
        let annotation = annotate_json(&dir, &["-i", "cppwork.data", "work::cr"]);
        assert_listing(&annotation, "work::crunch<unsigned long>", true);
        let annotation = annotate_json(&dir, &["-i", "cppwork.data", "spin"]);
        assert_listing(&annotation, "work::Engine::spin", true);

        // A function of a dlopen'ed library.
        let (program, library) = (fixture("dlmain"), fixture("libhot.so"));
        record(
            &dir,
            "lib.data",
            &[],
            &[program.to_str().unwrap(), library.to_str().unwrap(), "300"],
        );
        let annotation = annotate_json(&dir, &["-i", "lib.data", "hot_in_library"]);
        assert_listing(&annotation, "hot_in_library", true);
        assert!(
            annotation["module"]
                .as_str()
                .unwrap()
                .ends_with("libhot.so")
        );

        // Stripped code: named by its module and start, disassembly only.
        let program = fixture("split-stripped");
        let report = record_and_report(&dir, "stripped", &[], &[program.to_str().unwrap(), "3"]);
        let hottest = report["functions"][0]["name"].as_str().unwrap().to_owned();
        assert!(hottest.starts_with("split-stripped+0x"), "{hottest}");
        let annotation = annotate_json(&dir, &["-i", "stripped.data", &hottest]);
        assert_listing(&annotation, &hottest, false);
        let notes = annotation["notes"].to_string();
        assert!(notes.contains("no debug info"), "{notes}");
        let text = annotate(&dir, &["-i", "stripped.data", &hottest, "--source"]);
        assert!(text.contains("# Disassembly"), "{text}");
        // The same function by MODULE:ADDRESS, the address as objdump states it.
        let start = u64_of(&annotation["start"]);
        let by_address = format!("split-stripped:{start:#x}");
        let again = annotate_json(&dir, &["-i", "stripped.data", &by_address]);
        assert_eq!(again["instructions"], annotation["instructions"]);
    }
);

/// Asserts a listing of `symbol` with samples in it, and source lines when
/// `lines`.
fn assert_listing(annotation: &Value, symbol: &str, lines: bool) {
    assert_eq!(annotation["symbol"], symbol, "{annotation}");
    let samples = u64_of(&annotation["samples"]);
    assert!(samples >= 50, "{symbol}: {samples} samples");
    let instructions = annotation["instructions"].as_array().unwrap();
    assert!(instructions.len() >= 4, "{symbol}: {instructions:?}");
    let in_instructions: u64 = instructions.iter().map(|i| u64_of(&i["samples"])).sum();
    assert_eq!(in_instructions, samples, "{symbol}");
    let line_samples: u64 = (annotation["lines"].as_array().unwrap())
        .iter()
        .map(|l| u64_of(&l["samples"]))
        .sum();
    match lines {
        true => assert_eq!(line_samples, samples, "{symbol}: {}", annotation["lines"]),
        false => assert_eq!(annotation["lines"], Value::Array(Vec::new())),
    }
}

live_test!(moved_sources_are_noted_and_found_with_source_dir, || {
    let dir = scratch("annotate-moved-sources");
    let built = dir.join("built");
    std::fs::create_dir_all(&built).unwrap();
    std::fs::copy(annotate_source(), built.join("annotate.c")).unwrap();
    let status = Command::new("cc")
        .current_dir(&built)
        .args(["-O2", "-g", "-o", "../annotate", "annotate.c"])
        .status()
        .expect("cc is needed");
    assert!(status.success());
    std::fs::rename(&built, dir.join("moved")).unwrap();
    record(&dir, "m.data", &[], &["./annotate", "100"]);

    let text = annotate(&dir, &["-i", "m.data", "hot_and_cold", "--source"]);
    assert!(text.contains("cannot read source file"), "{text}");
    assert!(text.contains("--source-dir"), "{text}");
    assert!(text.contains("# Disassembly"), "{text}");
    let remap = format!("{}={}", built.display(), dir.join("moved").display());
    let text = annotate(
        &dir,
        &[
            "-i",
            "m.data",
            "hot_and_cold",
            "--source",
            "--source-dir",
            &remap,
        ],
    );
    assert!(text.contains("/* hot line */"), "{text}");
    assert!(!text.contains("# Disassembly"), "{text}");
});

live_test!(unknown_and_ambiguous_symbols_are_explained, || {
    let dir = scratch("annotate-bad-symbols");
    let program = fixture("split");
    record(&dir, "s.data", &[], &[program.to_str().unwrap(), "2"]);
    let output = run(&dir, &["annotate", "-i", "s.data", "burn_"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("matches several functions"), "{message}");
    assert!(
        message.contains("burn_60") && message.contains("burn_10"),
        "{message}"
    );

    let output = run(&dir, &["annotate", "-i", "s.data", "no_such_function"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("burn_60 (split,"), "{message}");

    let output = run(&dir, &["annotate", "-i", "s.data", "nosuchmodule:0x1139"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert!(message.contains("no module 'nosuchmodule'"), "{message}");

    let output = run(&dir, &["annotate", "-i", "s.data", "split:0x10"]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");

    let output = run(
        &dir,
        &["annotate", "-i", "s.data", "burn_60", "--source-dir", "x"],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("OLD=NEW"), "{}", stderr(&output));
});
