//! What the readers open, and whose files they believe: nothing that is not
//! a regular file is opened (a recording, a module, a debug file found by
//! debuglink or build-id, perf's build-id cache, a source file, a JIT
//! map), seen by a FIFO's writer waiting for a reader; a JIT map is believed only from the
//! process's user or root; `--source-dir` never leads out of NEW, and the
//! listing names the file it read.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use profiler_model::{Avma, BuildId, FileOffset, Mmap, Record};

use crate::hostile::mkfifo;
use crate::synthetic::*;
use crate::util::*;

/// Watches a FIFO for being opened to read: a writer waits in `open` until
/// a reader opens it, however briefly. (fanotify would watch a device too,
/// but recent kernels report no opens of FIFOs and devices to it.)
struct OpenWatch {
    fifo: PathBuf,
    stop: Arc<AtomicBool>,
    opens: Arc<Mutex<Vec<Instant>>>,
    writer: Option<std::thread::JoinHandle<()>>,
}

impl OpenWatch {
    fn new(fifo: &Path) -> OpenWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let opens = Arc::new(Mutex::new(Vec::new()));
        let writer = {
            let (fifo, stop, opens) = (fifo.to_owned(), stop.clone(), opens.clone());
            std::thread::spawn(move || {
                loop {
                    let opened = std::fs::OpenOptions::new().write(true).open(&fifo);
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    opens.lock().unwrap().push(Instant::now());
                    drop(opened);
                }
            })
        };
        OpenWatch {
            fifo: fifo.to_owned(),
            stop,
            opens,
            writer: Some(writer),
        }
    }

    /// When the FIFO was opened to read, until now.
    fn stop(mut self) -> Vec<Instant> {
        self.stop.store(true, Ordering::SeqCst);
        // Lets the writer out of its `open`, without waiting for one.
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&self.fifo);
        if let Some(writer) = self.writer.take() {
            writer.join().unwrap();
        }
        drop(reader);
        self.opens.lock().unwrap().clone()
    }
}

/// Makes `link` another name of `node` (a hard link: the same inode).
fn link(node: &Path, link: &Path) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::fs::hard_link(node, link).unwrap();
}

/// Compiles `source` (C) in `dir` into `dir/name` with debug info, from
/// `from` (a directory of `dir`) so that the debug info names the source
/// as `source` is given.
fn compile(dir: &Path, from: &str, source: &str, name: &str) -> PathBuf {
    let output = Command::new("cc")
        .current_dir(dir.join(from))
        .args(["-g", "-O1", "-fno-inline", "-o"])
        .arg(dir.join(name))
        .arg(source)
        .output()
        .unwrap();
    assert!(output.status.success(), "cc: {}", stderr(&output));
    dir.join(name)
}

const PROGRAM: &str = "\
#include <stdlib.h>
volatile unsigned long sink;
__attribute__((noinline)) void hot(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * i; /* the hot line */
}
int main(int argc, char **argv)
{
    hot(argc > 1 ? strtoul(argv[1], 0, 10) : 1000);
    return 0;
}
";

/// A recording of process `pid` running `binary`, sampled in `hot`.
fn hot_recording(path: &Path, pid: u32, binary: &Path) {
    let (hot, size) = function_range(binary, "hot");
    let mut recording = Synthetic::new();
    recording.process(pid, 0, "prog", binary);
    recording.samples(pid, hot + size / 2, &[], 20);
    recording.write(path, &["./prog"]);
}

/// Runs the profiler with `args` in `dir` and `env`, within 1 GiB and a
/// minute.
fn run_with(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new("sh");
    command
        .current_dir(dir)
        .arg("-c")
        .arg("ulimit -v 1048576; exec timeout 60 \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_profiler"))
        .args(args)
        .env("XDG_CACHE_HOME", cache_home())
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn no_reader_opens_a_path_that_is_not_a_regular_file() {
    if !profiler_testing::root("making a device node") {
        return;
    }
    let dir = scratch("reading-not-regular");
    // A FIFO no one writes to and a character device (a twin of /dev/null),
    // each reached by several names.
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let device = dir.join("device");
    let made = Command::new("mknod")
        .arg(&device)
        .args(["c", "1", "3"])
        .status()
        .unwrap();
    assert!(made.success());
    // A JIT map of a process of the recording; /tmp may be another file
    // system than the scratch directory.
    let jit_pid = 0x7000_0000 + std::process::id() % 0x1000_0000;
    let jit_map = PathBuf::from(format!("/tmp/perf-{jit_pid}.map"));
    let _ = std::fs::remove_file(&jit_map);
    mkfifo(&jit_map);

    // Modules: a program that became the FIFO, one that became the device.
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/prog.c"), PROGRAM).unwrap();
    let prog = compile(&dir, "src", "prog.c", "prog");
    for (name, node) in [("as-fifo", &fifo), ("as-device", &device)] {
        let copy = dir.join(name);
        std::fs::copy(&prog, &copy).unwrap();
        hot_recording(&dir.join(format!("{name}.data")), 100, &copy);
        std::fs::remove_file(&copy).unwrap();
        link(node, &copy);
    }
    // A module whose file is gone, whose copy in perf's build-id cache is
    // the device.
    let mut gone = Synthetic::new();
    gone.process(100, 0, "prog", &prog);
    let id = BuildId(vec![0xab; 20]);
    gone.push_raw(Record::Mmap(Mmap {
        time: 1,
        pid: 100,
        tid: 100,
        start: Avma(0x7000_0000_0000),
        len: 0x1000,
        offset: FileOffset(0),
        path: dir.join("gone").display().to_string(),
        build_id: Some(id.clone()),
    }));
    gone.take(
        &At {
            pid: 100,
            user: vec![0x7000_0000_0010],
            ..At::default()
        },
        5,
    );
    // JIT code in process `jit_pid`, named by the FIFO at /tmp.
    gone.push_raw(jit_mapping(2, jit_pid));
    gone.take(
        &At {
            pid: jit_pid,
            user: vec![0x7100_0000_0010],
            ..At::default()
        },
        5,
    );
    gone.write(&dir.join("gone.data"), &["./prog"]);
    let cache = dir.join("cache");
    let hex = id.to_string();
    link(
        &device,
        &cache.join(".build-id").join(&hex[..2]).join(&hex[2..]),
    );

    // Sources: where the debug info says, the FIFO; moved (--source-dir),
    // the device.
    std::fs::remove_file(dir.join("src/prog.c")).unwrap();
    link(&fifo, &dir.join("src/prog.c"));
    link(&device, &dir.join("moved/prog.c"));
    let remap = format!(
        "{}={}",
        dir.join("src").display(),
        dir.join("moved").display()
    );
    hot_recording(&dir.join("prog.data"), 100, &prog);

    // Debug files: by debuglink beside the binary and in .debug/, by
    // build-id under --debug-dir.
    std::fs::copy(
        fixture("inlining-debuglink"),
        dir.join("inlining-debuglink"),
    )
    .unwrap();
    link(&fifo, &dir.join("inlining-debuglink.debug"));
    link(&device, &dir.join(".debug/inlining-debuglink.debug"));
    std::fs::copy(fixture("inlining-buildid"), dir.join("inlining-buildid")).unwrap();
    let debug = fixture("debug");
    let by_id = walk(&debug)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "debug"))
        .expect("inlining-buildid's debug file");
    let relative = by_id.strip_prefix(&debug).unwrap();
    link(&fifo, &dir.join("debug").join(relative));
    std::fs::write(dir.join("addresses"), "0x1000\n0x1100\n").unwrap();

    let watches = [OpenWatch::new(&fifo), OpenWatch::new(&jit_map)];
    let mut runs: Vec<(Vec<String>, Instant, Instant, Output)> = Vec::new();
    let mut run = |args: &[&str], env: &[(&str, &Path)]| {
        let started = Instant::now();
        let output = run_with(&dir, args, env);
        let args = args.iter().map(|a| a.to_string()).collect();
        runs.push((args, started, Instant::now(), output));
    };
    for input in ["fifo", "device"] {
        for view in [
            &["report", "-i"][..],
            &["hist", "-i"],
            &["annotate", "hot", "-i"],
        ] {
            run(&[view, &[input]].concat(), &[]);
        }
        run(&["diff", input, "prog.data"], &[]);
    }
    for data in ["as-fifo.data", "as-device.data", "gone.data"] {
        for view in [
            &["report"][..],
            &["hist"],
            &["annotate", "hot"],
            &["export", "--format", "gmon", "-o", "gmon.out"],
            &["flamegraph", "-o", "flame.svg"],
        ] {
            run(
                &[view, &["-i", data]].concat(),
                &[("PERF_BUILDID_DIR", &cache)],
            );
        }
    }
    run(&["annotate", "hot", "-i", "prog.data"], &[]);
    run(
        &["annotate", "hot", "-i", "prog.data", "--source-dir", &remap],
        &[],
    );
    for binary in ["inlining-debuglink", "inlining-buildid"] {
        let started = Instant::now();
        let input = std::fs::File::open(dir.join("addresses")).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_profiler"))
            .current_dir(&dir)
            .args([
                "symbolize",
                "--inlines",
                "--debug-dir",
                "debug",
                "--exe",
                binary,
            ])
            .stdin(input)
            .output()
            .unwrap();
        let args = vec!["symbolize".into(), binary.into()];
        runs.push((args, started, Instant::now(), output));
    }
    let opens: Vec<Instant> = watches.into_iter().flat_map(OpenWatch::stop).collect();
    let _ = std::fs::remove_file(&jit_map);
    for (args, _, _, output) in &runs {
        let message = stderr(output);
        assert!(
            !message.contains("panicked") && output.status.code() != Some(124),
            "{args:?}: {message}"
        );
    }
    let opened_by: Vec<&Vec<String>> = (runs.iter())
        .filter(|(_, started, ended, _)| opens.iter().any(|t| (started..=ended).contains(&t)))
        .map(|(args, ..)| args)
        .collect();
    assert!(
        opens.is_empty(),
        "{} opens of a FIFO, by {opened_by:?}",
        opens.len()
    );
    // Each refusal says what the path is.
    assert!(
        stderr(&runs[0].3).contains("a FIFO, not a regular file"),
        "{}",
        stderr(&runs[0].3)
    );
    assert!(
        stderr(&runs[4].3).contains("a character device, not a regular file"),
        "{}",
        stderr(&runs[4].3)
    );
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        match path.is_dir() {
            true => files.extend(walk(&path)),
            false => files.push(path),
        }
    }
    files
}

/// An anonymous executable mapping of a page at 0x7100_0000_0000 in
/// process `pid` at `time`, where a JIT map names its code.
pub(crate) fn jit_mapping(time: u64, pid: u32) -> Record {
    Record::Mmap(Mmap {
        time,
        pid,
        tid: pid,
        start: Avma(0x7100_0000_0000),
        len: 0x1000,
        offset: FileOffset(0x7100_0000_0000),
        path: "//anon".into(),
        build_id: None,
    })
}

/// A recording of JIT code in process `pid` at 0x7100_0000_0000, made by
/// processes of `user`.
pub(crate) fn jit_recording(path: &Path, pid: u32, user: Option<u32>) {
    let mut recording = Synthetic::new();
    recording.user = user;
    recording.push_raw(jit_mapping(1, pid));
    let at = At {
        pid,
        user: vec![0x7100_0000_0010],
        ..At::default()
    };
    recording.take(&at, 10);
    recording.write(path, &["./jit"]);
}

#[test]
fn a_jit_map_is_believed_only_from_the_processes_user_or_root() {
    if !profiler_testing::root("giving a JIT map to another user") {
        return;
    }
    let dir = scratch("reading-jit-owner");
    let pid = 0x6000_0000 + std::process::id() % 0x1000_0000;
    let map = PathBuf::from(format!("/tmp/perf-{pid}.map"));
    std::fs::write(&map, "710000000000 40 planted_name\n").unwrap();
    let nobody = 65534;
    // (the map's owner, the recording's user, believed)
    let cases = [
        (nobody, None, false),
        (nobody, Some(1000), false),
        (nobody, Some(nobody), true),
        (0, Some(1000), true),
        (0, None, true),
    ];
    for (owner, user, believed) in cases {
        std::os::unix::fs::chown(&map, Some(owner), Some(owner)).unwrap();
        jit_recording(&dir.join("jit.data"), pid, user);
        let report = report_json(&dir, "jit.data");
        let named = function(&report, "planted_name").is_some();
        let problems = report["problems"].to_string();
        let said = problems.contains(&format!(
            "/tmp/perf-{pid}.map belongs to user {owner}, neither the process's user nor root"
        ));
        assert_eq!(
            (named, said),
            (believed, !believed),
            "owner {owner}, user {user:?}: {problems}"
        );
    }
    let _ = std::fs::remove_file(&map);
}

/// Builds `hot` from `app/src/prog.c` in `app/build` (the debug info names
/// the source `app/build/../src/prog.c`) and records it; returns the
/// annotation of `hot` with `--source-dir remap`.
fn annotate_remapped(dir: &Path, remap: &str) -> String {
    let output = run(
        dir,
        &[
            "annotate",
            "hot",
            "--source",
            "-i",
            "prog.data",
            "--source-dir",
            remap,
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn source_dir_resolves_dot_dot_first_and_never_leads_out_of_new() {
    let dir = scratch("reading-source-dir");
    let app = dir.join("app");
    std::fs::create_dir_all(app.join("build")).unwrap();
    std::fs::create_dir_all(app.join("src")).unwrap();
    std::fs::write(app.join("src/prog.c"), PROGRAM).unwrap();
    let prog = compile(&dir, "app/build", "../src/prog.c", "prog");
    hot_recording(&dir.join("prog.data"), 100, &prog);
    let source_line = |text: &str| -> String {
        (text.lines())
            .find(|l| l.starts_with("# Source:"))
            .unwrap_or_else(|| panic!("no source: {text}"))
            .to_owned()
    };

    // Moved with the whole of app: found under NEW, and named there.
    let new = dir.join("new");
    std::fs::create_dir_all(new.join("src")).unwrap();
    std::fs::write(
        new.join("src/prog.c"),
        PROGRAM.replace("the hot line", "the moved hot line"),
    )
    .unwrap();
    let text = annotate_remapped(&dir, &format!("{}={}", app.display(), new.display()));
    assert!(text.contains("the moved hot line"), "{text}");
    let header = source_line(&text);
    assert_eq!(
        header,
        format!("# Source:   {}", new.join("src/prog.c").display())
    );

    // app/build=NEW: `..` would lead from NEW to a file beside it. The file
    // is not under app/build once `..` is resolved, so it is read where
    // the debug info says.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(elsewhere.join("build")).unwrap();
    std::fs::create_dir_all(elsewhere.join("src")).unwrap();
    std::fs::write(elsewhere.join("src/prog.c"), "/* not NEW's */\n".repeat(20)).unwrap();
    let remap = format!(
        "{}={}",
        app.join("build").display(),
        elsewhere.join("build").display()
    );
    let text = annotate_remapped(&dir, &remap);
    assert!(!text.contains("not NEW's"), "{text}");
    assert!(text.contains("the hot line"), "{text}");
    assert!(
        source_line(&text).ends_with("app/build/../src/prog.c"),
        "{text}"
    );
}
