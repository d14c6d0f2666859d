//! A second user, made for one test and removed when it ends: the other,
//! hostile user of a shared directory such as /tmp.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A user of this machine that exists while this value lives.
pub(crate) struct Stranger {
    name: String,
    pub uid: u32,
}

impl Stranger {
    /// Makes a new user, with a name no other test run uses; `None` (the
    /// test skipped, or failed under CI) where this process is not root or
    /// the machine lacks `useradd` or `setpriv`.
    pub(crate) fn new() -> Option<Stranger> {
        if !profiler_testing::root("making a second user") || !profiler_testing::tool("setpriv") {
            return None;
        }
        let has_useradd = Command::new("useradd")
            .arg("--help")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !has_useradd {
            profiler_testing::skip("useradd is not installed");
            return None;
        }
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "prof-t{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        // Other runs change the user database too: useradd fails while it
        // is locked, so it is tried again.
        let made = (0..50).any(|_| {
            let status = Command::new("useradd")
                .args(["-M", "-N", "-g", "65534", "-s", "/usr/sbin/nologin", &name])
                .stderr(Stdio::null())
                .status()
                .unwrap();
            status.success() || {
                std::thread::sleep(Duration::from_millis(100));
                false
            }
        });
        assert!(made, "useradd {name} failed");
        let id = Command::new("id").args(["-u", &name]).output().unwrap();
        let uid = String::from_utf8(id.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        Some(Stranger { name, uid })
    }

    /// `sh -c script` as this user in `dir`.
    pub(crate) fn command(&self, dir: &Path, script: &str) -> Command {
        let mut command = Command::new("setpriv");
        command
            .arg(format!("--reuid={}", self.uid))
            .args(["--regid=65534", "--clear-groups", "sh", "-c", script])
            .current_dir(dir);
        command
    }

    /// Runs `script` as this user in `dir`, and asserts it succeeded.
    pub(crate) fn sh(&self, dir: &Path, script: &str) -> Output {
        let output = self.command(dir, script).output().unwrap();
        assert!(
            output.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// Starts `script` as this user in `dir`.
    pub(crate) fn spawn(&self, dir: &Path, script: &str) -> Child {
        self.command(dir, script)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }
}

impl Drop for Stranger {
    fn drop(&mut self) {
        // The tests end what they started as this user first: userdel
        // refuses a user with processes.
        for _ in 0..50 {
            let removed = Command::new("userdel")
                .arg(&self.name)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if removed {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A directory in `parent` that every user may write, sticky as /tmp is
/// (`sticky`), or not.
pub(crate) fn shared_dir(parent: &Path, name: &str, sticky: bool) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = parent.join(name);
    std::fs::create_dir(&dir).unwrap();
    let mode = if sticky { 0o1777 } else { 0o777 };
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
    dir
}
