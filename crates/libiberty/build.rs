//! Finds GNU libiberty, the C++ demangler of c++filt, gdb and perf: its
//! `demangle.h` (Debian and Ubuntu's libiberty-dev put it in
//! /usr/include/libiberty, other systems in /usr/include) and its static
//! library where the C compiler finds it. With both, compiles the wrapper
//! and sets `cfg(libiberty)`; without them the crate builds all the same,
//! and says it has no demangler. `PROFILER_NO_LIBIBERTY=1` builds as if
//! they were absent.

use std::path::{Path, PathBuf};
use std::process::Command;

const HEADER_DIRS: [&str; 2] = ["/usr/include/libiberty", "/usr/include"];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(libiberty)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/demangle.c");
    println!("cargo::rerun-if-env-changed=PROFILER_NO_LIBIBERTY");
    if std::env::var_os("PROFILER_NO_LIBIBERTY").is_some_and(|v| v == "1") {
        return;
    }
    // The system's headers and library are the host's: of no use to a
    // build for another target.
    if std::env::var("TARGET").ok() != std::env::var("HOST").ok() {
        return;
    }
    let Some(header_dir) = HEADER_DIRS
        .iter()
        .map(Path::new)
        .find(|dir| dir.join("demangle.h").is_file())
    else {
        return;
    };
    let mut build = cc::Build::new();
    build.file("src/demangle.c").include(header_dir);
    let Some(library) = static_library(&build) else {
        return;
    };
    if let Err(e) = build.try_compile("profiler_cplus_demangle") {
        println!(
            "cargo::warning=libiberty's {} is there but the wrapper does not compile \
             ({e}); C++ names are demangled without it",
            header_dir.join("demangle.h").display()
        );
        return;
    }
    // Rebuilt when libiberty-dev is upgraded or removed.
    println!(
        "cargo::rerun-if-changed={}",
        header_dir.join("demangle.h").display()
    );
    println!("cargo::rerun-if-changed={}", library.display());
    if let Some(dir) = library.parent() {
        println!("cargo::rustc-link-search=native={}", dir.display());
    }
    // After the wrapper, which needs it.
    println!("cargo::rustc-link-lib=static=iberty");
    println!("cargo::rustc-cfg=libiberty");
}

/// `libiberty.a` where the C compiler finds it (`-print-file-name` answers
/// with the bare name when it does not).
fn static_library(build: &cc::Build) -> Option<PathBuf> {
    let compiler = build.try_get_compiler().ok()?;
    let output = Command::new(compiler.path())
        .args(compiler.args())
        .arg("-print-file-name=libiberty.a")
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}
