//! The harness: fixture programs built once, the profiler binary run in a
//! scratch directory. What a test does without a kernel that samples, root
//! or a tool is `profiler_testing`'s rule (skip with a reason outside CI,
//! fail under CI); live sampling tests are declared with [`live_test!`].

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

/// The fixture programs, built with their Makefile into the target
/// directory; a file lock keeps concurrent test processes from racing.
pub(crate) fn fixture(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| make_fixtures(&["all"])).join(name)
}

/// A fixture program that calls libprofiler, built (if need be) against
/// the library cargo built beside the test binary: the C library is a
/// dev-dependency for that.
pub(crate) fn capi_fixture(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap();
    assert!(
        lib.join("libprofiler.so").exists() && lib.join("libprofiler.a").exists(),
        "cargo left no libprofiler beside the tests in {}",
        lib.display()
    );
    make_fixtures(&[name, &format!("LIB={}", lib.display())]).join(name)
}

/// An MPI fixture program, built (if need be) with mpicc.
pub(crate) fn mpi_fixture(name: &str) -> PathBuf {
    make_fixtures(&[name]).join(name)
}

/// Runs the fixtures' Makefile with `args` into target/fixtures.
fn make_fixtures(args: &[&str]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join("target").join("fixtures");
    std::fs::create_dir_all(&out).unwrap();
    let lock = File::create(out.join(".lock")).unwrap();
    lock.lock().unwrap();
    let status = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(root.join("fixtures/programs"))
        .arg(format!("OUT={}", out.display()))
        .args(args)
        .status()
        .expect("make is needed to build the fixtures");
    assert!(status.success(), "building the fixtures ({args:?}) failed");
    out
}

/// A fresh directory for one test's files.
pub(crate) fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-scratch")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Where the profilers the tests run keep names between runs
/// (`XDG_CACHE_HOME`): the tests' own, never the user's cache. Shared by
/// all the tests, as a user's is by all their reports: the outputs are the
/// same with names kept or not.
pub(crate) fn cache_home() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-scratch/cache")
}

/// The profiler, its once-per-boot notices stamped under the tests' own
/// runtime directory rather than the user's, its names kept in the tests'
/// own cache.
pub(crate) fn profiler() -> Command {
    static RUNTIME: OnceLock<PathBuf> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-scratch/runtime");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    });
    let mut command = Command::new(env!("CARGO_BIN_EXE_profiler"));
    command.env("XDG_RUNTIME_DIR", runtime);
    command.env("XDG_CACHE_HOME", cache_home());
    command
}

/// Runs the profiler with `args` in `dir`.
pub(crate) fn run(dir: &Path, args: &[&str]) -> Output {
    profiler().current_dir(dir).args(args).output().unwrap()
}

/// Runs the profiler with `args` in `dir`, `input` on its standard input.
pub(crate) fn run_with_input(dir: &Path, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = profiler()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    output
}

/// Runs the profiler with `args` in `dir` and asserts success.
pub(crate) fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let output = run(dir, args);
    assert!(
        output.status.success(),
        "{args:?} failed: {}",
        stderr(&output)
    );
    output
}

/// Runs the profiler with `args` in `dir`, asserts success, and parses its
/// standard output as JSON.
pub(crate) fn run_json(dir: &Path, args: &[&str]) -> Value {
    serde_json::from_slice(&run_ok(dir, args).stdout).unwrap()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Records into `dir/data` with the extra `options`, and `command` after
/// `--` unless it is empty (a target of `-p`, `-t`, `-a` or `-C` alone);
/// asserts success and returns the output (the summary is on stderr).
pub(crate) fn record(dir: &Path, data: &str, options: &[&str], command: &[&str]) -> Output {
    let mut args = vec!["record", "-o", data];
    args.extend_from_slice(options);
    if !command.is_empty() {
        args.push("--");
        args.extend_from_slice(command);
    }
    run_ok(dir, &args)
}

/// Records `command` into `dir/name.data` and returns the JSON report.
pub(crate) fn record_and_report(
    dir: &Path,
    name: &str,
    options: &[&str],
    command: &[&str],
) -> Value {
    let data = format!("{name}.data");
    record(dir, &data, options, command);
    report_json(dir, &data)
}

pub(crate) fn report_json(dir: &Path, data: &str) -> Value {
    report_json_with(dir, data, &[])
}

/// The JSON report of `dir/data` with the extra `options`.
pub(crate) fn report_json_with(dir: &Path, data: &str, options: &[&str]) -> Value {
    let mut args = vec!["report", "-i", data, "--format", "json"];
    args.extend_from_slice(options);
    run_json(dir, &args)
}

/// The JSON report's row for function `name`, if any.
pub(crate) fn function<'a>(report: &'a Value, name: &str) -> Option<&'a Value> {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
}

/// The row of function `name` on rank `rank` in a JSON report sorted by
/// rank (`--sort rank,sym`), if any.
pub(crate) fn rank_function<'a>(report: &'a Value, name: &str, rank: u64) -> Option<&'a Value> {
    (report["functions"].as_array().unwrap().iter())
        .find(|row| row["name"] == name && row["rank"] == rank)
}

/// Function `name`'s share of its event, in percent (0 if absent).
pub(crate) fn percent(report: &Value, name: &str) -> f64 {
    function(report, name).map_or(0.0, |f| f["self_percent"].as_f64().unwrap())
}

/// Total samples of the first event.
pub(crate) fn samples(report: &Value) -> u64 {
    report["events"][0]["samples"].as_u64().unwrap()
}

/// Asserts that `value` is within `tolerance` of `expected`.
pub(crate) fn assert_near(what: &str, value: f64, expected: f64, tolerance: f64, report: &Value) {
    assert!(
        (value - expected).abs() <= tolerance,
        "{what}: {value:.2} is not within {tolerance} of {expected}; functions: {}",
        report["functions"]
    );
}

/// Whether this machine exposes the CPU's own PMU, as the kernel names it.
pub(crate) fn has_pmu() -> bool {
    Path::new("/sys/bus/event_source/devices/cpu").exists()
}

/// kernel.perf_event_paranoid, if it can be read.
pub(crate) fn perf_event_paranoid() -> Option<i64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Runs the profiler with `args` in `dir` as `nobody`, with no
/// capabilities, from a copy of the binary that `nobody` can reach; `None`
/// (and the test skipped, or failed under CI) where this process is not
/// root.
pub(crate) fn run_as_nobody(dir: &Path, args: &[&str]) -> Option<Output> {
    use std::os::unix::fs::PermissionsExt;
    if !profiler_testing::root("running the profiler as nobody")
        || !profiler_testing::tool("setpriv")
    {
        return None;
    }
    static COPY: OnceLock<PathBuf> = OnceLock::new();
    let binary = COPY.get_or_init(|| {
        // One place per build of the binary, replaced whole: test runs of
        // other checkouts use theirs.
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        env!("CARGO_BIN_EXE_profiler").hash(&mut hasher);
        let dir = std::env::temp_dir().join(format!("profiler-tests-{:x}", hasher.finish()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let partial = dir.join(format!("profiler.{}", std::process::id()));
        std::fs::copy(env!("CARGO_BIN_EXE_profiler"), &partial).unwrap();
        let copy = dir.join("profiler");
        std::fs::rename(&partial, &copy).unwrap();
        copy
    });
    let output = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(binary)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    Some(output)
}

/// A small file system mounted for one test, unmounted when it ends.
pub(crate) struct SmallDisk(pub PathBuf);

impl SmallDisk {
    /// Mounts a tmpfs of `size` (`256k`) on `dir/disk`.
    pub(crate) fn mount(dir: &Path, size: &str) -> SmallDisk {
        let path = dir.join("disk");
        std::fs::create_dir(&path).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "cannot mount a tmpfs on {}",
            path.display()
        );
        SmallDisk(path)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Starts the profiler with `args` in `dir`, its standard error piped.
pub(crate) fn spawn(dir: &Path, args: &[&str]) -> Child {
    profiler()
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends `signal` (`-INT`) to a process, or with a negative pid to a
/// process group.
pub(crate) fn kill(signal: &str, pid: i64) {
    let status = Command::new("kill")
        .args([signal, "--", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// The files in `dir` whose names end in `.tmp`: temporary files.
pub(crate) fn temporaries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect()
}
