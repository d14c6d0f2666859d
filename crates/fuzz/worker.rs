//! The worker: runs inputs one after another for the fuzzer, in a process
//! of its own whose address space is capped, so that a reader's panic,
//! abort or runaway allocation ends the worker, not the fuzzer.
//!
//! Protocol: each input comes on stdin as a little-endian u64 length and
//! its bytes; once it ran to its end, its peak of resident memory (KiB, a
//! little-endian u64) goes to stdout, and the peak is reset for the next.

use std::io::{self, Read, Write};

use anyhow::{Context, Result};
use rustix::process::{Resource, Rlimit, setrlimit};

use crate::target::{Scratch, Target};

pub(crate) fn serve(target: &Target, memory_mib: u64) -> Result<()> {
    let scratch = Scratch {
        dir: scratch_dir(std::process::id()),
    };
    std::fs::create_dir_all(&scratch.dir)
        .with_context(|| format!("cannot create {}", scratch.dir.display()))?;
    let limit = memory_mib << 20;
    setrlimit(
        Resource::As,
        Rlimit {
            current: Some(limit),
            maximum: Some(limit),
        },
    )
    .context("cannot cap the worker's address space")?;
    reset_peak();
    let mut stdin = io::stdin().lock();
    let mut stdout = io::stdout().lock();
    let result = loop {
        let mut len = [0; 8];
        match stdin.read_exact(&mut len) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break Ok(()),
            other => other?,
        }
        let mut input = vec![0; u64::from_le_bytes(len) as usize];
        stdin.read_exact(&mut input)?;
        (target.run)(&input, &scratch);
        stdout.write_all(&peak_kib().to_le_bytes())?;
        stdout.flush()?;
        reset_peak();
    };
    let _ = std::fs::remove_dir_all(&scratch.dir);
    result
}

/// This process's peak of resident memory since it was last reset, in KiB
/// (`VmHWM`); 0 where /proc does not say.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    (status.lines())
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Makes the peak of resident memory what is resident now, so that the
/// next input's peak is its own.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The directory of the worker with process id `pid`, which the fuzzer
/// removes when it had to kill the worker.
pub(crate) fn scratch_dir(pid: u32) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("profiler-fuzz-{pid}"))
}
