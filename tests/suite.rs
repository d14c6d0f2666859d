//! The test suite's own rules, checked on its sources: every test file is
//! compiled into a test binary that `cargo test --workspace` runs, every
//! test that does without something does so through `profiler_testing`
//! (which fails under `CI=true`), and CI runs the README's test command.

use std::path::{Path, PathBuf};

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `path` from the repository's root, as messages name it.
fn relative(path: &Path) -> String {
    path.strip_prefix(repository())
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `.rs` files directly in `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a test directory lists").path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
}

/// Every package's directory: the root's and each crate's with a manifest.
fn packages() -> Vec<PathBuf> {
    let mut packages = vec![repository().to_path_buf()];
    let crates = std::fs::read_dir(repository().join("crates")).expect("crates/ lists");
    let mut crates: Vec<PathBuf> = crates
        .map(|entry| entry.expect("crates/ lists").path())
        .filter(|dir| dir.join("Cargo.toml").exists())
        .collect();
    crates.sort();
    packages.extend(crates);
    packages
}

/// The value of `key = "value"` on a line of a manifest's text.
fn manifest_values<'a>(manifest: &'a str, key: &str) -> Vec<&'a str> {
    manifest
        .lines()
        .filter_map(|line| line.split_once('='))
        .filter(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().trim_matches('"'))
        .collect()
}

// A file in a `tests/` directory that no test target compiles is a test
// that never runs: with `autotests = false` (the root package, one
// `integration` binary) each must be a module of a declared target or a
// target itself; elsewhere cargo makes a binary of each file.
#[test]
fn every_test_file_is_compiled_into_a_test_binary() {
    let mut lost = Vec::new();
    for package in packages() {
        let manifest = read(&package.join("Cargo.toml"));
        let files = rust_files(&package.join("tests"));
        if !manifest_values(&manifest, "autotests").contains(&"false") {
            continue;
        }
        let targets: Vec<PathBuf> = manifest_values(&manifest, "path")
            .into_iter()
            .map(|p| package.join(p))
            .filter(|p| p.starts_with(package.join("tests")))
            .collect();
        let mut declared = Vec::new();
        for target in &targets {
            for line in read(target).lines() {
                let words: Vec<&str> = line.split_whitespace().collect();
                if let [.., "mod", name] = words.as_slice() {
                    declared.push(
                        package
                            .join("tests")
                            .join(format!("{}.rs", name.trim_end_matches(';'))),
                    );
                }
            }
        }
        for file in files {
            if !targets.contains(&file) && !declared.contains(&file) {
                lost.push(relative(&file));
            }
        }
    }
    assert!(
        lost.is_empty(),
        "test files no test target compiles (declare each as a module of tests/integration.rs):\n{}",
        lost.join("\n")
    );
}

// A test runs under libtest, whose harness reports each test by name:
// with `harness = false` a test binary could pass without running a test.
// (The benches, which have their own, are not tests.)
#[test]
fn every_test_target_runs_under_the_test_harness() {
    for package in packages() {
        let manifest = read(&package.join("Cargo.toml"));
        for section in manifest.split("\n[").filter(|s| s.starts_with("[test]]")) {
            assert!(
                !section.contains("harness = false"),
                "{}: a test target without libtest's harness:\n[{section}",
                relative(&package)
            );
        }
    }
}

// Only `profiler_testing` decides that a test cannot run here: it fails
// under `CI=true`. A test that ignored itself, read `CI` itself or said
// "skipped" on its own would pass in CI without running.
#[test]
fn tests_do_without_something_only_through_profiler_testing() {
    let mut sources = Vec::new();
    for package in packages() {
        sources.extend(rust_files(&package.join("tests")));
        sources.extend(source_files(&package.join("src")));
        if package != repository() {
            sources.extend(rust_files(&package));
        }
    }
    sources.extend(source_files(&repository().join("crates/cli")));
    let this = repository().join("tests/suite.rs");
    let mut found = Vec::new();
    for source in sources.iter().filter(|s| **s != this) {
        if source.starts_with(repository().join("crates/testing")) {
            continue;
        }
        for (number, line) in read(source).lines().enumerate() {
            let lower = line.to_lowercase();
            let prints = lower.contains("println!(") || lower.contains("eprintln!(");
            let own_skip = line.contains("#[ignore")
                || line.contains("var(\"CI\")")
                || line.contains("var_os(\"CI\")")
                || (prints && (lower.contains("skip") || lower.contains("cannot run")));
            if own_skip {
                found.push(format!(
                    "{}:{}: {}",
                    source.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "tests that do without something on their own (use profiler_testing::skip, tool, \
         root or live_test!):\n{}",
        found.join("\n")
    );
}

/// The `.rs` files under `dir`, at any depth.
fn source_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = rust_files(dir);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries {
        let path = entry.expect("a source directory lists").path();
        if path.is_dir() {
            files.extend(source_files(&path));
        }
    }
    files
}

// CI runs the very command the README gives, under `CI=true`, so that what
// passes in CI passes for a reader who types it, and no skip goes unseen.
#[test]
fn ci_runs_the_readmes_test_command_under_ci_true() {
    let readme = read(&repository().join("README.md"));
    let command = readme
        .lines()
        .find(|l| l.starts_with("cargo test "))
        .expect("the README gives a test command");
    assert!(
        command.contains("--no-fail-fast"),
        "{command}: one failing binary hides the rest"
    );
    let ci = read(&repository().join(".ci/run"));
    assert!(
        ci.lines().any(|l| l.trim() == command),
        ".ci/run does not run the README's `{command}`"
    );
    assert!(
        ci.lines().any(|l| l.trim() == "export CI=true"),
        ".ci/run does not set CI=true"
    );
}

// The README's minimum Rust is Cargo.toml's `rust-version`, which clippy's
// `incompatible_msrv` lint (on with `clippy::all`, denied in CI) checks our
// code against, and which no dependency exceeds: a build with only that
// toolchain would compile what it is given.
#[test]
fn the_stated_msrv_is_every_dependencys_at_most() {
    let manifest = read(&repository().join("Cargo.toml"));
    let msrv = manifest_values(&manifest, "rust-version");
    let msrv = *msrv.first().expect("Cargo.toml states rust-version");
    let readme = read(&repository().join("README.md"));
    assert!(
        readme.contains(&format!("rustc {msrv} or newer")),
        "README: rustc {msrv}"
    );
    let version = |v: &str| -> Vec<u32> { v.split('.').map(|n| n.parse().unwrap_or(0)).collect() };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .current_dir(repository())
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let newer: Vec<String> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| {
            let wants = p["rust_version"].as_str()?;
            let mut wants_parts = version(wants);
            wants_parts.resize(3, 0);
            let mut ours = version(msrv);
            ours.resize(3, 0);
            (wants_parts > ours).then(|| format!("{} {} needs {wants}", p["name"], p["version"]))
        })
        .collect();
    assert!(
        newer.is_empty(),
        "dependencies newer than rust-version {msrv}: {newer:?}"
    );
    let lints = manifest
        .split("[workspace.lints.clippy]")
        .nth(1)
        .unwrap_or("");
    assert!(
        !lints.contains("incompatible_msrv"),
        "clippy::incompatible_msrv is not to be turned off"
    );
}
