//! Symbolization in reports: inlined functions, PLT stubs, code without a
//! file (JIT, vdso, kernel), debug info in a separate file, and a binary
//! that changed since the recording.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::*;

/// The function rows of `report` in module `module`, with their shares.
fn rows(report: &Value, module: &str) -> Vec<(String, f64)> {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["module"] == module)
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["self_percent"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// `profiler symbolize` of `addresses` of `binary`, with `extra` options:
/// its lines.
fn symbolize(dir: &Path, binary: &Path, addresses: &[u64], extra: &[&str]) -> Vec<String> {
    let input: String = addresses.iter().map(|a| format!("{a:#x}\n")).collect();
    let binary = binary.to_str().unwrap();
    let args = [&["symbolize", "--exe", binary], extra].concat();
    let output = run_with_input(dir, &args, &input);
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The function symbols of a binary, demangled, as nm lists them.
fn symbols_of(binary: &Path) -> Vec<String> {
    let output = Command::new("nm")
        .args(["-C", "--defined-only"])
        .arg(binary)
        .output()
        .unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.splitn(3, ' ').nth(2).map(str::to_owned))
        .collect()
}

live_test!(
    code_counts_for_its_function_and_for_the_inlined_one_with_inline,
    || {
        let dir = scratch("inline-attribution");
        let program = fixture("inlining");
        record(
            &dir,
            "inlining.data",
            &["-F", "10000"],
            &[program.to_str().unwrap(), "400000"],
        );
        let symbols = symbols_of(&program);
        // Symbols, their .cold/.part copies, and PLT stubs (objdump's names).
        let is_symbol = |name: &str| {
            name.ends_with("@plt")
                || symbols
                    .iter()
                    .any(|s| s == name || s.starts_with(&format!("{name}.")))
        };

        let report = report_json(&dir, "inlining.data");
        let holders = rows(&report, "inlining");
        assert!(holders.len() >= 5, "{holders:?}");
        for (name, _) in &holders {
            assert!(
                is_symbol(name),
                "the report names {name}, which is no function symbol"
            );
        }
        // What was inlined is told on the rows of the functions holding it.
        let inlined_self: u64 = (report["functions"].as_array().unwrap().iter())
            .map(|f| f["inlined_self"].as_u64().unwrap())
            .sum();
        assert!(
            inlined_self * 10 >= samples(&report),
            "{inlined_self} of {} samples in inlined code",
            samples(&report)
        );

        let inlined = rows(
            &report_json_with(&dir, "inlining.data", &["--inline"]),
            "inlining",
        );
        let only_inlined: Vec<&(String, f64)> = inlined
            .iter()
            .filter(|(name, _)| !is_symbol(name))
            .collect();
        let share: f64 = only_inlined.iter().map(|(_, p)| p).sum();
        assert!(
            share >= 10.0,
            "inlined functions get {share}% of the samples: {inlined:?}"
        );
        let total = |rows: &[(String, f64)]| rows.iter().map(|(_, p)| p).sum::<f64>();
        assert!(
            (total(&holders) - total(&inlined)).abs() < 0.01,
            "the module's share changed"
        );
    }
);

#[test]
fn plt_stubs_are_named_func_at_plt() {
    let dir = scratch("plt");
    let split = fixture("split");
    let disassembly = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(&split)
        .output()
        .unwrap();
    let disassembly = String::from_utf8(disassembly.stdout).unwrap();
    let stub = disassembly
        .lines()
        .find_map(|l| {
            l.strip_suffix(" <printf@plt>:")
                .map(|a| u64::from_str_radix(a, 16).unwrap())
        })
        .expect("split calls printf through the PLT");
    let output = symbolize(&dir, &split, &[stub + 4], &[]);
    assert_eq!(output[0], "printf@plt");
}

/// Every PLT stub of libc, named as objdump names it, and the stubs of its
/// calls to its own ifuncs (objdump's `*ABS*+0x9f550@plt`, perf's
/// `strnlen@plt`) after the ifunc the relocation resolves.
#[test]
fn libc_plt_stubs_are_named_as_perf_names_them() {
    let dir = scratch("plt-libc");
    let libc = Path::new("/usr/lib/x86_64-linux-gnu/libc.so.6");
    if !libc.exists() {
        profiler_testing::skip(format_args!("there is no {}", libc.display()));
        return;
    }
    let disassembly = Command::new("objdump")
        .args([
            "-d",
            "--no-show-raw-insn",
            "-j",
            ".plt",
            "-j",
            ".plt.sec",
            "-j",
            ".plt.got",
        ])
        .arg(libc)
        .output()
        .unwrap();
    let stubs: Vec<(u64, String)> = String::from_utf8(disassembly.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (address, name) = l.strip_suffix(">:")?.split_once(" <")?;
            let name = name.strip_suffix("@plt")?;
            Some((u64::from_str_radix(address, 16).ok()?, name.to_owned()))
        })
        .collect();
    assert!(stubs.len() > 20, "{stubs:?}");
    // The ifuncs, by address, as nm -D lists them (type i).
    let nm = Command::new("nm").arg("-D").arg(libc).output().unwrap();
    let ifuncs: Vec<(u64, String)> = String::from_utf8(nm.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [address, "i", name] => Some((
                u64::from_str_radix(address, 16).ok()?,
                name.split('@').next()?.to_owned(),
            )),
            _ => None,
        })
        .collect();
    let addresses: Vec<u64> = stubs.iter().map(|(a, _)| a + 4).collect();
    let output = symbolize(&dir, libc, &addresses, &[]);
    let ours: Vec<&str> = output.iter().step_by(2).map(String::as_str).collect();
    assert_eq!(ours.len(), stubs.len());
    let mut irelative = 0;
    for ((address, theirs), ours) in stubs.iter().zip(ours) {
        match theirs.strip_prefix("*ABS*+0x") {
            Some(resolver) => {
                let resolver = u64::from_str_radix(resolver, 16).unwrap();
                let name = ours.strip_suffix("@plt").unwrap_or(ours);
                assert!(
                    ifuncs.iter().any(|(a, n)| *a == resolver && n == name),
                    "{address:#x}: {ours}, which is no ifunc at {resolver:#x}"
                );
                irelative += 1;
            }
            None => assert_eq!(ours, format!("{theirs}@plt"), "{address:#x}"),
        }
    }
    assert!(
        irelative > 0,
        "libc calls no ifunc of its own through its PLT"
    );
}

live_test!(jit_code_is_named_from_the_perf_map, || {
    let dir = scratch("jit");
    let jit = fixture("jit");
    record(&dir, "jit.data", &[], &[jit.to_str().unwrap()]);
    let report = report_json(&dir, "jit.data");
    let pid = report["threads"][0]["pid"].as_u64().unwrap();
    let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    let row =
        function(&report, "jit_hot_loop").unwrap_or_else(|| panic!("{}", report["functions"]));
    assert_eq!(row["module"], "[anon]");
    assert!(row["self_percent"].as_f64().unwrap() >= 90.0, "{row}");
});

live_test!(vdso_code_is_named_from_this_kernels_vdso, || {
    let dir = scratch("vdso");
    let program = fixture("vdsoclock");
    record(&dir, "vdso.data", &[], &[program.to_str().unwrap()]);
    let report = report_json(&dir, "vdso.data");
    let vdso = rows(&report, "[vdso]");
    let named: f64 = vdso
        .iter()
        .filter(|(n, _)| n.contains("clock_gettime"))
        .map(|(_, p)| p)
        .sum();
    assert!(named >= 50.0, "{vdso:?}");
});

live_test!(kernel_code_is_named_from_kallsyms, || {
    let dir = scratch("kernel");
    let args = [
        "record",
        "-e",
        "cpu-clock:uk",
        "-o",
        "kernel.data",
        "--",
        "dd",
        "if=/dev/zero",
        "of=/dev/null",
        "bs=1",
        "count=300000",
    ];
    let output = run(&dir, &args);
    if !output.status.success() {
        profiler_testing::skip(format_args!(
            "kernel samples are refused here: {}",
            stderr(&output)
        ));
        return;
    }
    let kernel = rows(&report_json(&dir, "kernel.data"), "[kernel]");
    let share: f64 = kernel.iter().map(|(_, p)| p).sum();
    let named: f64 = kernel
        .iter()
        .filter(|(n, _)| n != "[kernel]")
        .map(|(_, p)| p)
        .sum();
    assert!(
        share >= 20.0,
        "a syscall loop spends {share}% in the kernel: {kernel:?}"
    );
    if std::fs::read_to_string("/proc/kallsyms").is_ok_and(|k| !k.starts_with("0000000000000000")) {
        assert!(named >= 0.9 * share, "kernel functions unnamed: {kernel:?}");
    }
});

live_test!(
    debug_info_in_a_separate_file_names_a_stripped_program,
    || {
        let dir = scratch("debuglink-report");
        let program = fixture("inlining-debuglink");
        record(
            &dir,
            "debuglink.data",
            &["-F", "10000"],
            &[program.to_str().unwrap(), "400000"],
        );
        let report = report_json(&dir, "debuglink.data");
        let named = rows(&report, "inlining-debuglink");
        let unnamed: f64 = named
            .iter()
            .filter(|(n, _)| n.starts_with("inlining-debuglink+"))
            .map(|(_, p)| p)
            .sum();
        assert!(named.iter().any(|(n, _)| n == "generate_expr"), "{named:?}");
        assert!(unnamed < 1.0, "{unnamed}% unnamed: {named:?}");
    }
);

live_test!(
    a_binary_changed_since_the_recording_is_noted_not_misnamed,
    || {
        let dir = scratch("changed-binary");
        let app = dir.join("app");
        std::fs::copy(fixture("split"), &app).unwrap();
        record(&dir, "app.data", &[], &[app.to_str().unwrap(), "2"]);
        std::fs::copy(fixture("split-nopie"), &app).unwrap();
        // With no copy of the old binary in perf's build-id cache (under
        // ~/.debug), which would name it.
        let report_as = |format: &str| {
            let output = profiler()
                .env("HOME", &dir)
                .current_dir(&dir)
                .args(["report", "-i", "app.data", "--format", format])
                .output()
                .unwrap();
            String::from_utf8(output.stdout).unwrap()
        };
        let report: Value = serde_json::from_str(&report_as("json")).unwrap();
        let problems = report["problems"].to_string();
        assert!(
            problems.contains("has changed since the recording"),
            "{problems}"
        );
        let app_rows = rows(&report, "app");
        assert!(
            app_rows.iter().all(|(name, _)| name.starts_with("app+0x")),
            "{app_rows:?}"
        );
        let text = report_as("text");
        assert!(
            text.contains("# Note:") && text.contains("app has changed"),
            "{text}"
        );
    }
);

#[test]
fn symbolize_refuses_bad_input_in_one_line() {
    let dir = scratch("symbolize-bad-input");
    let fails = |args: &[&str], input: &str, needle: &str| {
        use std::io::Write;
        let mut child = profiler()
            .current_dir(&dir)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.contains(needle),
            "{args:?}: '{needle}' not in {message}"
        );
    };
    let split = fixture("split");
    let split = split.to_str().unwrap();
    fails(
        &["symbolize", "--exe", "no-such-file"],
        "0x1000\n",
        "cannot read no-such-file",
    );
    fails(
        &["symbolize", "--exe", split],
        "0x1000\nmain\n",
        "line 2 of the input: 'main' is not a hexadecimal address",
    );
    fails(
        &["symbolize", "--exe", "/etc/passwd"],
        "0x1000\n",
        "not a readable ELF file",
    );
}

/// Without --inlines, an address in inlined code is named after the
/// function holding it, with the instruction's own line, as
/// `llvm-symbolizer --no-inlines` names it; with --inlines, the chain.
#[test]
fn symbolize_names_the_holding_function_unless_asked_for_inlines() {
    let dir = scratch("symbolize-holder");
    let binary = fixture("inlinesplit");
    let (address, _) = crate::synthetic::inlined_and_own(&binary, "hot_a", "burn");
    let llvm = Command::new("llvm-symbolizer")
        .arg("--no-inlines")
        .arg(format!("--obj={}", binary.display()))
        .arg(format!("{address:#x}"))
        .output()
        .unwrap();
    let llvm: Vec<String> = String::from_utf8(llvm.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let ours = symbolize(&dir, &binary, &[address], &[]);
    assert_eq!(ours[0], "hot_a");
    assert_eq!(ours[0], llvm[0]);
    // llvm-symbolizer adds the column: `file:line:column`.
    assert!(
        llvm[1].starts_with(&format!("{}:", ours[1])),
        "{ours:?} {llvm:?}"
    );
    let chain = symbolize(&dir, &binary, &[address], &["--inlines"]);
    assert_eq!(
        (chain[0].as_str(), chain[2].as_str()),
        ("burn", "hot_a"),
        "{chain:?}"
    );
}
