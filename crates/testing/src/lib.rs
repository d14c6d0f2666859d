//! What the tests need from the machine, and the one rule for doing
//! without it.
//!
//! Some tests need what a machine may lack: a kernel that lets this process
//! sample (`perf_event_open`), root, a tool such as `perf` or `gfortran`.
//! They ask here first. Outside CI a test that cannot run says so on the
//! terminal, with its name and why, and passes; under CI (`CI=true`, which
//! `.ci/run` sets) it fails instead: a check that cannot fail is worth
//! nothing.
//!
//! A machine that cannot sample at all (a container, `perf_event_paranoid`
//! 3 without privileges, a seccomp filter) can say so once, when the tests
//! are built: `PROFILER_TESTS=no-sampling cargo test`. The tests declared
//! with [`live_test!`] are then ignored, and libtest lists each by name
//! with the reason, while every other test runs, under CI too.
//!
//! ```text
//! use profiler_testing::live_test;
//!
//! // Samples the split fixture: needs a kernel that lets it sample.
//! live_test!(three_functions_split_60_30_10, || {
//!     let report = record_and_report(/* ... */);
//!     assert!(samples(&report) >= 2000);
//! });
//!
//! #[test]
//! fn folded_stacks_agree_with_perf() {
//!     if !profiler_testing::tool("perf") {
//!         return;
//!     }
//!     // ...
//! }
//! ```

use std::fmt::Display;
use std::io::Write;
use std::process::Command;
use std::sync::OnceLock;

/// Whether the tests run under CI (`CI=true`), where nothing may be skipped
/// for want of something.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Gives up on the running test for want of something (`why`): under CI
/// the test fails; elsewhere it says so on the terminal, past the test
/// harness's capture, and the caller returns.
pub fn skip(why: impl Display) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if ci() {
        panic!("CI=true and {test} cannot run: {why}");
    }
    // Written to the terminal itself: the harness keeps what `eprintln!`
    // writes until a test fails.
    let _ = writeln!(std::io::stderr(), "skipped {test}: {why}");
}

/// Whether this process may sample with the kernel; if not, [`skip`]s the
/// running test with the kernel's answer.
pub fn can_sample() -> bool {
    match sampling_refusal() {
        None => true,
        Some(why) => {
            skip(format_args!(
                "{why} (PROFILER_TESTS=no-sampling declares a machine that cannot sample)"
            ));
            false
        }
    }
}

/// Why the kernel will not let this process sample, if it will not: a
/// user-space cpu-clock counter with a ring buffer is what `profiler
/// record` opens by default.
pub fn sampling_refusal() -> Option<&'static str> {
    static REFUSAL: OnceLock<Option<String>> = OnceLock::new();
    let refusal = REFUSAL.get_or_init(|| {
        let counter = perf_event::Builder::new(perf_event::events::Software::CPU_CLOCK)
            .exclude_kernel(true)
            .sample_period(1_000_000)
            .build();
        match counter.map(|counter| counter.sampled(1 << 16)) {
            Ok(Ok(_)) => None,
            Err(e) => Some(format!("perf_event_open refuses a cpu-clock counter: {e}")),
            Ok(Err(e)) => Some(format!("the kernel refuses a ring buffer: {e}")),
        }
    });
    refusal.as_deref()
}

/// Whether this process runs as root (effective user id 0), which `what`
/// needs; if not, [`skip`]s the running test.
pub fn root(what: &str) -> bool {
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    });
    if !root {
        skip(format_args!("{what} needs root"));
    }
    root
}

/// Whether `program --version` (or, as go has it, `program version`, or as
/// tmux has it, `program -V`) runs;
/// if not, [`skip`]s the running test (`.ci/run` installs every tool a test
/// asks for).
pub fn tool(program: &str) -> bool {
    let runs = ["--version", "version", "-V"].iter().any(|arg| {
        Command::new(program)
            .arg(arg)
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !runs {
        skip(format_args!("{program} is not installed"));
    }
    runs
}

/// Whether `perf record` and `perf report` work here, so that a test can
/// compare with them; if perf is missing, [`skip`]s the running test. Where
/// perf is installed but dies of a signal reading what it recorded of
/// `true` (perf 6.1 aborts in its build-id pass on kernels whose mapping
/// records it misreads), says so and returns false, under CI too: a tool
/// that cannot read its own recording cannot be compared with.
pub fn perf_reads_its_own() -> bool {
    static BROKEN: OnceLock<Option<String>> = OnceLock::new();
    if !tool("perf") {
        return false;
    }
    let broken = BROKEN.get_or_init(|| {
        let data = std::env::temp_dir().join(format!("perf-check-{}.data", std::process::id()));
        let data_arg = data.to_string_lossy().into_owned();
        let steps: [&[&str]; 2] = [
            &[
                "record",
                "-q",
                "-e",
                "cpu-clock",
                "-o",
                &data_arg,
                "--",
                "true",
            ],
            &["report", "-i", &data_arg, "--stdio", "-q"],
        ];
        let died = steps.iter().find_map(|args| {
            let output = Command::new("perf").args(*args).output().ok()?;
            let signal = std::os::unix::process::ExitStatusExt::signal(&output.status)?;
            let said = String::from_utf8_lossy(&output.stderr);
            let last = said
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            Some(format!(
                "perf {} died of signal {signal} ({})",
                args[0],
                last.trim()
            ))
        });
        let _ = std::fs::remove_file(&data);
        died
    });
    if let Some(why) = broken {
        let thread = std::thread::current();
        let test = thread.name().unwrap_or("a test");
        let _ = writeln!(
            std::io::stderr(),
            "skipped {test}: {why} on a recording of `true`: nothing to compare with"
        );
    }
    broken.is_none()
}

/// Declares a test that samples with the kernel, ripgrep's `rgtest!` way:
/// `live_test!(name, || { body })`.
///
/// Where the kernel refuses to sample, the test is skipped outside CI and
/// fails under CI (see [`can_sample`]); where `PROFILER_TESTS=no-sampling`
/// was set when the tests were built, it is ignored, and listed as such.
#[cfg(not(no_sampling))]
#[macro_export]
macro_rules! live_test {
    ($name:ident, $body:expr) => {
        #[test]
        fn $name() {
            if !$crate::can_sample() {
                return;
            }
            $body()
        }
    };
}

/// Declares a test that samples with the kernel: ignored, as
/// `PROFILER_TESTS=no-sampling` declares this machine cannot sample.
#[cfg(no_sampling)]
#[macro_export]
macro_rules! live_test {
    ($name:ident, $body:expr) => {
        #[test]
        #[ignore = "needs a kernel that samples (PROFILER_TESTS=no-sampling)"]
        fn $name() {
            if !$crate::can_sample() {
                return;
            }
            $body()
        }
    };
}
