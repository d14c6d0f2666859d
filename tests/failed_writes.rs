//! When an output cannot be written whole (a full disk, a file-size limit):
//! the file it would replace stays as it was; what was written of a
//! recording stays under its temporary name, named in the message with a
//! way to read it; `record` lets the command run to its end, then exits
//! with 125, the command's own status in its messages; and every message
//! names the file.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::salvage::{report, samples_read};
use crate::util::*;

/// A place where writing stops after about `bytes`: a small tmpfs where
/// this process may mount one, and in any case a file-size limit on the
/// profiler (`prlimit --fsize`), which every machine allows.
enum Limit {
    Disk(SmallDisk),
    FileSize(PathBuf, u64),
}

impl Limit {
    /// The limits this machine can set, in directories under `dir`.
    fn all(dir: &Path, bytes: u64) -> Vec<Limit> {
        let mut limits = Vec::new();
        if profiler_testing::tool("prlimit") {
            let place = dir.join("limited");
            std::fs::create_dir(&place).unwrap();
            limits.push(Limit::FileSize(place, bytes));
        }
        // Mounting needs root; without it the file-size limit stands in.
        if rustix::process::geteuid().is_root() {
            limits.push(Limit::Disk(SmallDisk::mount(
                dir,
                &format!("{}k", bytes / 1024),
            )));
        }
        limits
    }

    fn dir(&self) -> &Path {
        match self {
            Limit::Disk(disk) => &disk.0,
            Limit::FileSize(place, _) => place,
        }
    }

    /// The profiler, run in the limited place.
    fn profiler(&self) -> Command {
        match self {
            Limit::Disk(_) => profiler_in(self.dir(), None),
            Limit::FileSize(_, bytes) => profiler_in(self.dir(), Some(*bytes)),
        }
    }

    /// The profiler, run in the limited place with room for less than
    /// `bytes` more.
    fn nearly_full(&self, bytes: u64) -> Command {
        let Limit::Disk(disk) = self else {
            return profiler_in(self.dir(), Some(bytes));
        };
        let free = rustix::fs::statvfs(&disk.0).unwrap();
        let left = free.f_bavail * free.f_frsize;
        // Written as far as it goes: the disk is full then.
        let fill = disk.0.join(format!("fill-{left}"));
        let _ = std::fs::write(fill, vec![0u8; left as usize]);
        profiler_in(self.dir(), None)
    }
}

/// The profiler in `dir`, under a file-size limit of `bytes` if given.
fn profiler_in(dir: &Path, bytes: Option<u64>) -> Command {
    let mut command = match bytes {
        Some(bytes) => {
            let mut command = Command::new("prlimit");
            command
                .arg(format!("--fsize={bytes}"))
                .arg(env!("CARGO_BIN_EXE_profiler"))
                .env("XDG_CACHE_HOME", cache_home());
            command
        }
        None => profiler(),
    };
    command.current_dir(dir);
    command
}

/// The temporary file named in `message` as keeping what was written.
fn kept(message: &str) -> String {
    let rest = message
        .split("are kept in ")
        .nth(1)
        .unwrap_or_else(|| panic!("nothing is said to be kept: {message}"));
    rest.split(", which").next().unwrap().to_owned()
}

live_test!(
    a_recording_that_cannot_be_finished_leaves_the_old_one_and_keeps_itself_aside,
    || {
        let dir = scratch("failed-record");
        let split = fixture("split");
        record(
            &dir,
            "old.data",
            &["-e", "cpu-clock"],
            &[split.to_str().unwrap(), "1"],
        );
        let old = std::fs::read(dir.join("old.data")).unwrap();
        // A compressed recording of `split 40` takes about 90 KB, written a
        // chunk of some 20 KB a second: the limit stops it after a few.
        for limit in Limit::all(&dir, 48 * 1024) {
            let place = limit.dir();
            std::fs::write(place.join("old.data"), &old).unwrap();
            let _ = std::fs::remove_file(dir.join("done"));
            let script = format!(
                "{} 40; echo done > {}; exit 3",
                split.display(),
                dir.join("done").display()
            );
            let output = limit
                .profiler()
                .args([
                    "record",
                    "-e",
                    "cpu-clock",
                    "-o",
                    "old.data",
                    "--",
                    "sh",
                    "-c",
                    &script,
                ])
                .output()
                .unwrap();
            let message = stderr(&output);
            assert_eq!(output.status.code(), Some(125), "{message}");
            assert!(
                dir.join("done").exists(),
                "the command did not run to its end"
            );
            assert!(
                message.contains("cannot write old.data: ")
                    && message.contains("the command runs on")
                    && message.contains("the recording is incomplete (")
                    && message.contains("; old.data is as it was")
                    && message.contains("command exited with status 3")
                    && message.contains("the recording failed: exit status 125"),
                "{message}"
            );
            assert!(
                std::fs::read(place.join("old.data")).unwrap() == old,
                "old.data changed"
            );
            let kept = kept(&message);
            assert!(
                kept.starts_with(".old.data.") && kept.ends_with(".tmp"),
                "{kept}"
            );
            let (counted, warnings, _) = report(place, &kept);
            assert!(counted > 500, "only {counted} samples kept");
            assert_eq!(samples_read(&warnings[0]), counted);
            let names: Vec<_> = std::fs::read_dir(place).unwrap().collect();
            assert_eq!(names.len(), 2, "{names:?}");

            // Now not even the header fits: refused before the command runs.
            let output = limit
                .nearly_full(16)
                .args([
                    "record",
                    "-e",
                    "cpu-clock",
                    "-o",
                    "more.data",
                    "--",
                    "touch",
                ])
                .arg(dir.join("ran"))
                .output()
                .unwrap();
            let message = stderr(&output);
            assert_eq!(output.status.code(), Some(125), "{message}");
            assert_eq!(message.lines().count(), 1, "{message}");
            assert!(
                message.contains("cannot write the recording to more.data: "),
                "{message}"
            );
            assert!(!dir.join("ran").exists());
            assert!(!place.join("more.data").exists());
        }
    }
);

live_test!(
    a_flame_graph_or_export_that_cannot_be_written_names_the_file_and_keeps_the_old_one,
    || {
        let dir = scratch("failed-export");
        let split = fixture("split");
        record(
            &dir,
            "in.data",
            &["-e", "cpu-clock"],
            &[split.to_str().unwrap(), "1"],
        );
        let input = dir.join("in.data");
        let input = input.to_str().unwrap();
        let writers = [
            ("g.svg", vec!["flamegraph", "-i", input, "-o", "g.svg"]),
            (
                "p.json",
                vec![
                    "export",
                    "--format",
                    "speedscope",
                    "-i",
                    input,
                    "-o",
                    "p.json",
                ],
            ),
            ("d.svg", vec!["diff", input, input, "--flamegraph", "d.svg"]),
        ];
        for limit in Limit::all(&dir, 64 * 1024) {
            let place = limit.dir();
            for (name, _) in &writers {
                std::fs::write(place.join(name), "old").unwrap();
            }
            for (name, args) in &writers {
                let output = limit.nearly_full(256).args(args).output().unwrap();
                let message = stderr(&output);
                assert_eq!(output.status.code(), Some(1), "{args:?}: {message}");
                assert!(
                    message.starts_with(&format!("profiler: cannot write {name}: "))
                        && message
                            .trim_end()
                            .ends_with(&format!("; {name} is as it was")),
                    "{args:?}: {message}"
                );
                assert_eq!(std::fs::read_to_string(place.join(name)).unwrap(), "old");
            }
        }
    }
);
