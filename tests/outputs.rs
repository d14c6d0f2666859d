//! `-o`: a regular file is replaced whole, and only if it can be, checked
//! before any work; anything else the user names is written in place and
//! never replaced; `-` is the standard output.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread::JoinHandle;

use crate::util::*;

fn shell(dir: &Path, script: &str) {
    let status = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}

/// A small recording of `split` in `dir/in.data`.
fn recording(dir: &Path) {
    let split = fixture("split");
    record(
        dir,
        "in.data",
        &["-e", "cpu-clock"],
        &[split.to_str().unwrap(), "1"],
    );
}

/// Every way the reading subcommands write a file, to `target`.
fn writers(target: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["flamegraph", "-i", "in.data", "-o", target],
        vec![
            "export", "--format", "folded", "-i", "in.data", "-o", target,
        ],
        vec!["export", "--format", "gmon", "-i", "in.data", "-o", target],
        vec!["diff", "in.data", "in.data", "--flamegraph", target],
    ]
}

/// Reads everything from `reader` until its writer closes it.
fn read_all(mut reader: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).unwrap();
        bytes
    })
}

live_test!(a_device_is_written_through_and_stays_a_device, || {
    if !profiler_testing::root("making a device node with mknod") {
        return;
    }
    let dir = scratch("output-device");
    recording(&dir);
    // A private null device: the real /dev/null is never put at risk.
    shell(&dir, "mknod null c 1 3");
    let before = std::fs::metadata(dir.join("null")).unwrap();
    for args in writers("null") {
        run_ok(&dir, &args);
        let after = std::fs::metadata(dir.join("null")).unwrap();
        assert!(after.file_type().is_char_device(), "{args:?} replaced it");
        assert_eq!((after.ino(), after.rdev()), (before.ino(), before.rdev()));
    }
    assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());

    shell(&dir, "mknod disk b 7 0");
    let output = run(&dir, &writers("disk")[0]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("disk: it is a block device"),
        "{}",
        stderr(&output)
    );
});

live_test!(a_fifo_gives_its_reader_the_whole_output, || {
    let dir = scratch("output-fifo");
    recording(&dir);
    shell(&dir, "mkfifo fifo");
    let fifo = dir.join("fifo");
    for args in writers("fifo") {
        let path = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read(path).unwrap());
        run_ok(&dir, &args);
        let bytes = reader.join().unwrap();
        let expected: &[u8] = match args[0] {
            "export" if args[2] == "gmon" => b"gmon",
            "export" => b"",
            _ => b"<?xml",
        };
        assert!(!bytes.is_empty() && bytes.starts_with(expected), "{args:?}");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }
    assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());
});

live_test!(a_socket_is_connected_to_and_written, || {
    let dir = scratch("output-socket");
    recording(&dir);
    let listener = UnixListener::bind(dir.join("socket")).unwrap();
    let reader = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        read_all(stream).join().unwrap()
    });
    run_ok(&dir, &writers("socket")[0]);
    assert!(reader.join().unwrap().starts_with(b"<?xml"));
});

live_test!(dash_and_dev_stdout_are_the_standard_output, || {
    let dir = scratch("output-stdout");
    recording(&dir);
    for target in ["-", "/dev/stdout"] {
        let output = run_ok(&dir, &writers(target)[0]);
        assert!(output.stdout.starts_with(b"<?xml"), "{target}");
        assert!(stderr(&output).contains("wrote the standard output"));
        let output = run_ok(&dir, &writers(target)[2]);
        assert!(output.stdout.starts_with(b"gmon"), "{target}");
    }
    // The table makes way for the flame graph on the standard output.
    let output = run_ok(&dir, &writers("-")[3]);
    assert!(output.stdout.starts_with(b"<?xml"));
    assert!(stderr(&output).contains("burn_60"), "{}", stderr(&output));
    assert!(!dir.join("-").exists());
});

live_test!(a_symbolic_link_to_a_file_is_followed_and_kept, || {
    let dir = scratch("output-symlink");
    recording(&dir);
    std::fs::create_dir(dir.join("svgs")).unwrap();
    std::fs::write(dir.join("svgs/graph.svg"), "old").unwrap();
    std::os::unix::fs::symlink("svgs/graph.svg", dir.join("latest.svg")).unwrap();
    run_ok(&dir, &writers("latest.svg")[0]);
    let link = std::fs::symlink_metadata(dir.join("latest.svg")).unwrap();
    assert!(link.file_type().is_symlink());
    let svg = std::fs::read_to_string(dir.join("svgs/graph.svg")).unwrap();
    assert!(svg.starts_with("<?xml"));
    assert_eq!(temporaries(&dir.join("svgs")), Vec::<PathBuf>::new());

    std::os::unix::fs::symlink("nowhere.svg", dir.join("dangling.svg")).unwrap();
    let output = run(&dir, &writers("dangling.svg")[0]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output)
            .contains("dangling.svg: it is a symbolic link to nowhere.svg, which does not exist"),
        "{}",
        stderr(&output)
    );
    assert!(!dir.join("nowhere.svg").exists());
});

live_test!(
    an_immutable_file_is_refused_before_anything_is_written,
    || {
        if !profiler_testing::root("making a file immutable with chattr") {
            return;
        }
        let dir = scratch("output-immutable");
        recording(&dir);
        std::fs::write(dir.join("kept.svg"), "old").unwrap();
        shell(&dir, "chattr +i kept.svg");
        let output = run(&dir, &writers("kept.svg")[0]);
        shell(&dir, "chattr -i kept.svg");
        assert_eq!(output.status.code(), Some(1));
        assert!(
            stderr(&output).contains("cannot write kept.svg: it cannot be replaced"),
            "{}",
            stderr(&output)
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("kept.svg")).unwrap(),
            "old"
        );
        assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());
    }
);

/// `record -o TARGET` of a command that leaves `ran` behind if it runs.
pub(crate) fn record_args(target: &str) -> Vec<&str> {
    vec![
        "record",
        "-e",
        "cpu-clock",
        "-o",
        target,
        "--",
        "sh",
        "-c",
        "touch ran; exit 3",
    ]
}

live_test!(
    record_writes_a_device_or_fifo_in_place_and_keeps_the_commands_status,
    || {
        let dir = scratch("record-in-place");
        shell(&dir, "mkfifo fifo");
        let fifo = dir.join("fifo");
        let reader = std::thread::spawn(move || std::fs::read(fifo).unwrap());
        let output = run(&dir, &record_args("fifo"));
        assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
        std::fs::write(dir.join("from-fifo.data"), reader.join().unwrap()).unwrap();
        let report = run_ok(&dir, &["report", "-i", "from-fifo.data"]);
        assert_eq!(
            stderr(&report),
            "",
            "the recording through the FIFO is not whole"
        );
        assert!(
            std::fs::metadata(dir.join("fifo"))
                .unwrap()
                .file_type()
                .is_fifo()
        );

        if profiler_testing::root("making a device node with mknod") {
            shell(&dir, "mknod null c 1 3");
            let output = run(&dir, &record_args("null"));
            assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
            let null = std::fs::metadata(dir.join("null")).unwrap();
            assert!(null.file_type().is_char_device());
        }
        assert_eq!(temporaries(&dir), Vec::<PathBuf>::new());
    }
);

live_test!(
    record_to_the_standard_output_sends_the_commands_output_to_the_standard_error,
    || {
        let dir = scratch("record-stdout");
        let output = run(
            &dir,
            &[
                "record",
                "-e",
                "cpu-clock",
                "-o",
                "-",
                "--",
                "sh",
                "-c",
                "echo from-the-command",
            ],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(output.stdout.starts_with(b"PROFILER"));
        assert!(
            stderr(&output).contains("from-the-command\n"),
            "{}",
            stderr(&output)
        );
        assert!(stderr(&output).contains("wrote the standard output"));
        std::fs::write(dir.join("piped.data"), &output.stdout).unwrap();
        let report = run_ok(&dir, &["report", "-i", "piped.data"]);
        assert_eq!(stderr(&report), "");
        assert!(!dir.join("-").exists());
    }
);

live_test!(
    record_refuses_an_output_it_could_not_put_in_place_before_the_command_runs,
    || {
        let dir = scratch("record-refuse");
        let refused = |dir: &Path, args: &[&str], needle: &str| {
            let output = run(dir, args);
            // An immutable file would outlive a failed test.
            if dir.join("old.data").exists() {
                shell(dir, "chattr -i old.data");
            }
            let message = stderr(&output);
            assert_eq!(output.status.code(), Some(125), "{message}");
            assert_eq!(message.lines().count(), 1, "{message}");
            assert!(message.contains(needle), "{message}");
            assert!(!dir.join("ran").exists(), "the command ran: {message}");
        };
        refused(
            &dir,
            &record_args("missing-dir/"),
            "cannot write the recording to missing-dir/: there is no such directory",
        );
        refused(
            &dir,
            &record_args("."),
            "cannot write the recording to .: it is a directory",
        );
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

        if !profiler_testing::root("making a file immutable, and acting as another user") {
            return;
        }
        std::fs::write(dir.join("old.data"), "old").unwrap();
        shell(&dir, "chattr +i old.data");
        refused(
            &dir,
            &record_args("old.data"),
            "cannot write the recording to old.data: it cannot be replaced",
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("old.data")).unwrap(),
            "old"
        );

        // Root's file in a sticky directory, as another user: never
        // replaced, whatever its mode.
        shell(
            &dir,
            "mkdir -m 1777 sticky && echo root > sticky/root.data && chmod 666 sticky/root.data",
        );
        let output = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_profiler"))
            .args(record_args("sticky/root.data"))
            .current_dir(&dir)
            .output()
            .unwrap();
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(125), "{message}");
        assert!(
            message.contains(
                "cannot write the recording to sticky/root.data: it is another user's file \
                 (uid 0), and is not replaced"
            ),
            "{message}"
        );
        assert!(!dir.join("ran").exists());
        assert_eq!(
            std::fs::read_to_string(dir.join("sticky/root.data")).unwrap(),
            "root\n"
        );
        assert_eq!(temporaries(&dir.join("sticky")), Vec::<PathBuf>::new());
    }
);

live_test!(
    leftovers_of_killed_runs_are_named_with_a_way_to_read_them,
    || {
        let dir = scratch("record-temporaries");
        // What a profiler that was PID 1 of a container left when it was
        // killed, before temporary names were random.
        std::fs::write(dir.join(".out.data.1.tmp"), "killed").unwrap();
        // Killed before it wrote anything: nothing to read.
        std::fs::write(dir.join(".out.data.2.tmp"), "").unwrap();
        // Another user's: not this user's to read.
        std::fs::write(dir.join(".out.data.3.tmp"), "theirs").unwrap();
        if profiler_testing::root("giving a file to another user") {
            std::os::unix::fs::chown(dir.join(".out.data.3.tmp"), Some(65534), None).unwrap();
        }
        for _ in 0..2 {
            let output = run_ok(
                &dir,
                &["record", "-e", "cpu-clock", "-o", "out.data", "--", "true"],
            );
            let message = stderr(&output);
            assert!(
                message.contains(
                    ".out.data.1.tmp was left by an earlier recording that was killed; read what \
                     it holds with `profiler report -i .out.data.1.tmp`"
                ),
                "{message}"
            );
            assert!(!message.contains(".out.data.2.tmp"), "{message}");
            assert!(!message.contains(".out.data.3.tmp"), "{message}");
        }
        assert_eq!(temporaries(&dir).len(), 3);
        run_ok(&dir, &["report", "-i", "out.data"]);
    }
);
