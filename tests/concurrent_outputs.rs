//! Outputs while others look on or write too: a reader of the old file
//! never sees it empty or partial while it is replaced; a second `record`
//! into a name a live one is writing is refused at start; a directory
//! moved while a recording is written keeps it, and the messages say where.

use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::util::*;

/// A thread that reads `path` over and over until stopped, counting the
/// times it found it empty, or not starting with `magic`.
struct Watcher {
    stop: Arc<AtomicBool>,
    bad: Arc<AtomicUsize>,
    reads: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

impl Watcher {
    fn start(path: &Path, magic: Vec<u8>) -> Watcher {
        let (stop, bad, reads): (Arc<AtomicBool>, Arc<AtomicUsize>, Arc<AtomicUsize>) =
            Default::default();
        let (path, flag, count, total) = (
            path.to_owned(),
            Arc::clone(&stop),
            Arc::clone(&bad),
            Arc::clone(&reads),
        );
        let thread = std::thread::spawn(move || {
            let mut start = vec![0; magic.len()];
            while !flag.load(Ordering::Relaxed) {
                let whole = std::fs::File::open(&path).and_then(|mut file| {
                    std::io::Read::read_exact(&mut file, &mut start)?;
                    Ok(start == *magic)
                });
                if !whole.unwrap_or(false) {
                    count.fetch_add(1, Ordering::Relaxed);
                }
                total.fetch_add(1, Ordering::Relaxed);
            }
        });
        Watcher {
            stop,
            bad,
            reads,
            thread,
        }
    }

    /// Stops the thread; returns how many reads went wrong, of how many.
    fn stop(self) -> (usize, usize) {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap();
        (
            self.bad.load(Ordering::Relaxed),
            self.reads.load(Ordering::Relaxed),
        )
    }
}

live_test!(
    a_reader_never_sees_the_old_output_empty_while_it_is_replaced,
    || {
        let dir = scratch("concurrent-reader");
        let split = fixture("split");
        let split = split.to_str().unwrap();
        record(&dir, "victim.data", &["-e", "cpu-clock"], &[split, "1"]);
        let record = [
            "record",
            "-e",
            "cpu-clock",
            "-o",
            "victim.data",
            "--",
            "true",
        ];
        let archive = [
            "record",
            "-e",
            "cpu-clock",
            "--archive",
            "-o",
            "victim.data",
            "--",
            "true",
        ];
        let flamegraph = ["flamegraph", "-i", "victim.data", "-o", "victim.svg"];
        let export = [
            "export",
            "--format",
            "folded",
            "-i",
            "victim.data",
            "-o",
            "victim.txt",
        ];
        // The exports first, of the recording of split, which the recordings
        // of `true` replace after.
        let cases: [(&str, &[&str]); 4] = [
            ("victim.svg", &flamegraph),
            ("victim.txt", &export),
            ("victim.data", &record),
            ("victim.data", &archive),
        ];
        for (file, args) in cases {
            // Each run writes a file that starts the same way: a recording's
            // signature, an SVG's XML declaration, the same folded stacks.
            run_ok(&dir, args);
            let start = std::fs::read(dir.join(file)).unwrap()[..8].to_vec();
            let watcher = Watcher::start(&dir.join(file), start);
            for _ in 0..20 {
                run_ok(&dir, args);
            }
            let (bad, reads) = watcher.stop();
            assert_eq!(
                bad, 0,
                "{args:?}: {bad} of {reads} reads found {file} empty or partial"
            );
        }
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.starts_with('.'))
            .collect();
        assert_eq!(names, Vec::<String>::new());
    }
);

/// Starts `record -o name` of `split 8` in `dir`, and waits until its
/// temporary file is there.
fn start_recording(dir: &Path, name: &str) -> Child {
    let split = fixture("split");
    let mut child = profiler()
        .current_dir(dir)
        .args(["record", "-e", "cpu-clock", "-o", name, "--"])
        .arg(&split)
        .arg("8")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (parent, file) = match name.rsplit_once('/') {
        Some((parent, file)) => (dir.join(parent), file),
        None => (dir.to_owned(), name),
    };
    let prefix = format!(".{file}.");
    for _ in 0..400 {
        let started = std::fs::read_dir(&parent).unwrap().any(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.starts_with(&prefix) && name.ends_with(".tmp")
        });
        if started {
            return child;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    panic!(
        "no temporary file for {name} after 10 s: {}",
        stderr(&output)
    );
}

live_test!(
    a_second_record_into_a_name_being_written_is_refused_at_start,
    || {
        let dir = scratch("concurrent-record");
        let first = start_recording(&dir, "out.data");
        let output = run(
            &dir,
            &[
                "record",
                "-e",
                "cpu-clock",
                "-o",
                "out.data",
                "--",
                "touch",
                "ran",
            ],
        );
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(125), "{message}");
        assert_eq!(message.lines().count(), 1, "{message}");
        let pid = first.id();
        assert!(
            message.contains(&format!(
                "cannot write the recording to out.data: another `profiler record` (pid {pid}) \
                 is writing it"
            )),
            "{message}"
        );
        assert!(!dir.join("ran").exists(), "the second command ran");
        let output = first.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        // The first one's recording, of split, is what is there.
        let report = report_json(&dir, "out.data");
        assert!(percent(&report, "burn_60") > 40.0, "{report}");
        // Another name beside it is no conflict.
        let first = start_recording(&dir, "out.data");
        run_ok(
            &dir,
            &[
                "record",
                "-e",
                "cpu-clock",
                "-o",
                "other.data",
                "--",
                "true",
            ],
        );
        assert!(first.wait_with_output().unwrap().status.success());
    }
);

live_test!(
    records_started_together_into_one_name_leave_one_recording_and_say_so,
    || {
        let dir = scratch("concurrent-start");
        let runs: Vec<_> = (0..4)
            .map(|_| {
                let command = ["sh", "-c", "echo $$ >> ran; sleep 0.5"];
                let mut args = vec!["record", "-e", "cpu-clock", "-o", "out.data", "--"];
                args.extend(command);
                spawn(&dir, &args)
            })
            .collect();
        let mut wrote = 0;
        for child in runs {
            let output = child.wait_with_output().unwrap();
            let message = stderr(&output);
            match output.status.code() {
                Some(0) => wrote += 1,
                Some(125) => assert!(
                    message.lines().count() == 1 && message.contains("is writing it"),
                    "{message}"
                ),
                _ => panic!("{message}"),
            }
        }
        // Each refused run was refused before its command ran.
        let ran = std::fs::read_to_string(dir.join("ran")).unwrap();
        assert_eq!(ran.lines().count(), wrote, "{ran}");
        assert!(wrote >= 1);
        run_ok(&dir, &["report", "-i", "out.data"]);
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
);

live_test!(
    a_directory_moved_while_recording_keeps_the_recording_where_it_went,
    || {
        let dir = scratch("concurrent-moved");
        std::fs::create_dir(dir.join("out")).unwrap();
        let child = start_recording(&dir, "out/moved.data");
        std::fs::rename(dir.join("out"), dir.join("elsewhere")).unwrap();
        let output = child.wait_with_output().unwrap();
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(0), "{message}");
        let now = dir.join("elsewhere/moved.data");
        assert!(
            message.contains(&format!(
                "the directory of out/moved.data was moved while recording: the recording is {}",
                now.display()
            )) && message.contains(&format!("wrote {}", now.display())),
            "{message}"
        );
        let report = report_json(&dir, "elsewhere/moved.data");
        assert!(samples(&report) > 1000, "{report}");

        // Removed: what was written went with it, which is said, with the
        // command's status and without naming a file that is not there.
        std::fs::create_dir(dir.join("gone")).unwrap();
        let child = start_recording(&dir, "gone/lost.data");
        std::fs::remove_dir_all(dir.join("gone")).unwrap();
        let output = child.wait_with_output().unwrap();
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(125), "{message}");
        assert!(
            message.contains("its directory was removed while it was written")
                && message.contains("command exited with status 0"),
            "{message}"
        );
        assert!(!message.contains(".tmp"), "{message}");
    }
);
