//! The workload the symbolization and report benchmarks share: a debug
//! build of this profiler, and its instruction addresses in a fixed random
//! order.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The debug build of the profiler, copied so that it holds still.
pub(crate) fn debug_build(dir: &Path) -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--bin", "profiler"])
        .status()
        .unwrap();
    assert!(status.success(), "cargo build failed");
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/debug/profiler");
    let copy = dir.join("profiler-debug");
    std::fs::copy(built, &copy).unwrap();
    copy
}

/// Every instruction address inside functions, in a fixed random order (a
/// linear congruential shuffle): the first N are the set of size N.
pub(crate) fn address_set(binary: &Path) -> Vec<u64> {
    let disassembly = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(binary)
        .output()
        .unwrap();
    let mut all: Vec<u64> = String::from_utf8_lossy(&disassembly.stdout)
        .lines()
        .filter(|l| l.starts_with(' '))
        .filter_map(|l| u64::from_str_radix(l.trim_start().split(':').next()?, 16).ok())
        .collect();
    let mut state = 0x853c_49e6_748f_ea9b_u64;
    for i in (1..all.len()).rev() {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        all.swap(i, (state >> 33) as usize % (i + 1));
    }
    all
}
