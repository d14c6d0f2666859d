//! Root writing outputs in a directory another user can write, as /tmp is:
//! a symbolic link or a file that user planted at the output's name is
//! refused in one line before the command runs, and left as it was; the
//! temporary files of earlier runs are only looked at, never opened; a new
//! file's mode is `0666 & ~umask`.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use crate::outputs::record_args;
use crate::stranger::{Stranger, shared_dir};
use crate::util::*;

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

/// A file only root may read or write, as /etc/shadow is.
fn secret(dir: &Path) -> PathBuf {
    let secret = dir.join("secret");
    std::fs::write(&secret, "root's secret\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    secret
}

/// Every way the profiler writes `target` from `in.data` (in the parent
/// of the shared directory).
fn writers(target: &str) -> Vec<Vec<&str>> {
    vec![
        record_args(target),
        vec!["flamegraph", "-i", "in.data", "-o", target],
        vec!["export", "--format", "pprof", "-i", "in.data", "-o", target],
        vec![
            "export", "--format", "folded", "-i", "in.data", "-o", target,
        ],
        vec!["diff", "in.data", "in.data", "--flamegraph", target],
    ]
}

/// Asserts `output` is a one-line refusal containing `needle`, with
/// `record`'s 125 or the other subcommands' 1, and that nothing ran.
fn refused(dir: &Path, args: &[&str], output: &Output, needle: &str) {
    let message = stderr(output);
    let code = if args[0] == "record" { 125 } else { 1 };
    assert_eq!(output.status.code(), Some(code), "{args:?}: {message}");
    assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
    assert!(message.contains(needle), "{args:?}: {message}");
    assert!(!dir.join("ran").exists(), "{args:?}: the command ran");
}

live_test!(
    a_link_or_file_another_user_planted_in_a_shared_directory_is_refused,
    || {
        let Some(stranger) = Stranger::new() else {
            return;
        };
        let dir = scratch("shared-planted");
        recording(&dir);
        let secret = secret(&dir);
        for (name, sticky) in [("sticky", true), ("open", false)] {
            let shared = shared_dir(&dir, name, sticky);
            let target = format!("{name}/out");
            stranger.sh(&shared, "ln -s ../secret out");
            for args in writers(&target) {
                let output = run(&dir, &args);
                refused(
                    &dir,
                    &args,
                    &output,
                    "it is a symbolic link, which is not followed",
                );
                assert!(message_names(&output, &target));
            }
            // root's own link there is no better: anyone may have swapped it.
            std::fs::remove_file(shared.join("out")).unwrap();
            std::os::unix::fs::symlink("../secret", shared.join("out")).unwrap();
            let output = run(&dir, &record_args(&target));
            refused(&dir, &record_args(&target), &output, "symbolic link");
            std::fs::remove_file(shared.join("out")).unwrap();

            // The default name, in a shared directory as the current one.
            stranger.sh(&shared, "ln -s ../secret profiler.data");
            let output = run(
                &shared,
                &["record", "-e", "cpu-clock", "--", "touch", "../ran"],
            );
            refused(
                &dir,
                &["record"],
                &output,
                "profiler.data: it is a symbolic link",
            );

            // A file the other user made, readable and writable by all.
            stranger.sh(&shared, "echo theirs > file; chmod 666 file");
            let target = format!("{name}/file");
            for args in writers(&target) {
                let output = run(&dir, &args);
                refused(&dir, &args, &output, "it is another user's file");
            }
            let file = std::fs::metadata(shared.join("file")).unwrap();
            assert_eq!(file.uid(), stranger.uid);
            assert_eq!(file.mode() & 0o777, 0o666);
            assert_eq!(
                std::fs::read_to_string(shared.join("file")).unwrap(),
                "theirs\n"
            );
            assert_eq!(temporaries(&shared), Vec::<PathBuf>::new());
        }
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root's secret\n");
        assert_eq!(std::fs::metadata(&secret).unwrap().mode() & 0o777, 0o600);
    }
);

/// Whether the one line of `output` names `target` as the user gave it.
fn message_names(output: &Output, target: &str) -> bool {
    stderr(output).contains(&format!("{target}: "))
}

live_test!(
    root_replaces_its_own_file_in_a_shared_directory_and_follows_links_only_in_its_own,
    || {
        let Some(stranger) = Stranger::new() else {
            return;
        };
        let dir = scratch("shared-own");
        recording(&dir);
        let shared = shared_dir(&dir, "tmp", true);
        // root's own file there is replaced, its mode kept.
        std::fs::write(shared.join("mine.svg"), "old").unwrap();
        std::fs::set_permissions(
            shared.join("mine.svg"),
            std::fs::Permissions::from_mode(0o640),
        )
        .unwrap();
        run_ok(&dir, &writers("tmp/mine.svg")[1]);
        let svg = std::fs::read_to_string(shared.join("mine.svg")).unwrap();
        assert!(svg.starts_with("<?xml"));
        let mode = std::fs::metadata(shared.join("mine.svg")).unwrap().mode();
        assert_eq!(mode & 0o777, 0o640);

        // In root's own directory, a link to root's own file is followed
        // (the link kept), as it always was; one to the other user's file
        // is refused.
        std::os::unix::fs::symlink("tmp/mine.svg", dir.join("latest.svg")).unwrap();
        run_ok(&dir, &writers("latest.svg")[1]);
        assert!(
            std::fs::symlink_metadata(dir.join("latest.svg"))
                .unwrap()
                .is_symlink()
        );
        stranger.sh(&shared, "echo theirs > theirs.svg");
        std::os::unix::fs::symlink("tmp/theirs.svg", dir.join("theirs.svg")).unwrap();
        let output = run(&dir, &writers("theirs.svg")[1]);
        refused(&dir, &["flamegraph"], &output, "it is another user's file");
        assert_eq!(
            std::fs::read_to_string(shared.join("theirs.svg")).unwrap(),
            "theirs\n"
        );
    }
);

live_test!(new_outputs_get_the_umask_and_no_other_users_mode, || {
    let Some(stranger) = Stranger::new() else {
        return;
    };
    let dir = scratch("shared-modes");
    recording(&dir);
    let shared = shared_dir(&dir, "tmp", true);
    // The other user made the names first, open to all.
    stranger.sh(
        &shared,
        "for f in a.data a.svg; do echo x > $f; chmod 666 $f; done",
    );
    let profiler = env!("CARGO_BIN_EXE_profiler");
    let with_umask = |args: &str| {
        let script = format!("umask 077; exec {profiler} {args}");
        std::process::Command::new("sh")
            .args(["-c", &script])
            .env("XDG_CACHE_HOME", cache_home())
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    for (args, file) in [
        ("record -e cpu-clock -o tmp/a.data -- true", "a.data"),
        ("flamegraph -i in.data -o tmp/a.svg", "a.svg"),
    ] {
        let output = with_umask(args);
        assert!(!output.status.success(), "{args}: {}", stderr(&output));
        let theirs = std::fs::metadata(shared.join(file)).unwrap();
        assert_eq!((theirs.uid(), theirs.mode() & 0o777), (stranger.uid, 0o666));
    }
    // New names: 0666 & ~umask, for every writer.
    for (args, file) in [
        ("record -e cpu-clock -o tmp/b.data -- true", "b.data"),
        ("flamegraph -i in.data -o tmp/b.svg", "b.svg"),
        ("export --format pprof -i in.data -o tmp/b.pb.gz", "b.pb.gz"),
        (
            "record -e cpu-clock --archive -o tmp/c.data -- true",
            "c.data",
        ),
    ] {
        let output = with_umask(args);
        assert!(output.status.success(), "{args}: {}", stderr(&output));
        let mode = std::fs::metadata(shared.join(file)).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600, "{args}");
    }
});

/// Waits for `child` up to `limit`; kills it and returns `None` if it has
/// not ended by then.
fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

live_test!(
    the_leftover_scan_opens_nothing_another_user_swaps_in,
    || {
        let Some(stranger) = Stranger::new() else {
            return;
        };
        let dir = scratch("shared-fifo-swap");
        let shared = shared_dir(&dir, "tmp", true);
        // A name like a killed recording's temporary file, that is a
        // regular file when the directory is listed and a FIFO without a
        // writer when it is opened, as often as the other user can swap.
        let leftover = ".x.data.abcdefghij.tmp";
        let swapper = fixture("swapper");
        let mut swapper = stranger.spawn(
            &shared,
            &format!(
                "echo x > {leftover}; mkfifo fifo; exec {} {leftover} fifo",
                swapper.display()
            ),
        );
        let mut hung = 0;
        let mut named = Vec::new();
        for _ in 0..20 {
            let args = [
                "record",
                "-e",
                "cpu-clock",
                "-o",
                "tmp/x.data",
                "--",
                "true",
            ];
            let mut child = spawn(&dir, &args);
            let mut error = child.stderr.take().unwrap();
            match wait_for(&mut child, Duration::from_secs(10)) {
                Some(status) => {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut error, &mut text).unwrap();
                    assert!(status.success(), "{text}");
                    if text.contains(leftover) {
                        named.push(text);
                    }
                }
                None => hung += 1,
            }
        }
        swapper.kill().unwrap();
        swapper.wait().unwrap();
        assert_eq!(hung, 0, "{hung} of 20 recordings hung on the FIFO");
        // Not this user's: never named as a recording to read.
        assert_eq!(named, Vec::<String>::new());
    }
);
