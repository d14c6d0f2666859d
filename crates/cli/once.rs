//! Notices that are the same on every run (the machine has no PMU, so
//! cpu-clock is sampled): said once per boot of the machine, not by each
//! of a script's ten records. A stamp under `$XDG_RUNTIME_DIR/profiler`
//! (or `~/.cache/profiler` where there is none) holds the boot id of the
//! boot it was said in.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;

/// Whether the notice `key` is to be said now: not yet said since the
/// machine booted. Where no stamp can be kept, always.
pub(crate) fn first_since_boot(key: &str) -> bool {
    let Some(boot) = boot_id() else {
        return true;
    };
    let Some(dir) = stamp_dir() else {
        return true;
    };
    let stamp = dir.join(key);
    if read_stamp(&stamp).is_some_and(|said| said == boot) {
        return false;
    }
    // A stamp that cannot be written is no reason to fail: the notice is
    // said again next time.
    let _ = write_stamp(&stamp, &boot);
    true
}

/// This boot of the machine, as the kernel names it.
fn boot_id() -> Option<String> {
    let id = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_owned()).filter(|id| !id.is_empty())
}

/// Where stamps are kept: a directory of this user's own, made if need be.
fn stamp_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| owned_directory(dir))
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from);
            let home = std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache"));
            cache.or(home).filter(|dir| owned_directory(dir))
        })?;
    let dir = base.join("profiler");
    let _ = DirBuilder::new().mode(0o700).create(&dir);
    owned_directory(&dir).then_some(dir)
}

/// Whether `path` is a directory (not a link to one) owned by this user.
fn owned_directory(path: &Path) -> bool {
    let user = rustix::process::geteuid().as_raw();
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() && m.uid() == user)
}

fn read_stamp(path: &Path) -> Option<String> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    (&mut file).take(64).read_to_string(&mut text).ok()?;
    Some(text.trim().to_owned())
}

fn write_stamp(path: &Path, boot: &str) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags((OFlags::NOFOLLOW | OFlags::NONBLOCK).bits() as i32)
        .open(path)?;
    writeln!(file, "{boot}")
}
