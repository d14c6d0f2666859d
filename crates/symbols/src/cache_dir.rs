//! The directory the naming cache keeps its files in, used only where it
//! is safe: a real directory (not a symbolic link) owned by the effective
//! user, which neither group nor others may write. It is created with
//! mode 0700 where missing, as are the directories above it, each only in
//! a directory of the effective user. Every file in it is reached through the
//! directory held open (`openat`), never by path again, so a directory
//! swapped after the check is not written into; a file is read only if
//! it is a regular one, and written whole to a temporary file then
//! renamed into place, so that two reports at once leave one complete
//! file or the other. What the files hold together is bounded: past the
//! bound, the files used longest ago (by modification time, which a read
//! renews) go.
//!
//! Any failure here (a full disk, a directory of another user) leaves
//! the cache unused: it only saves time.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timespec, Timestamps};

/// The cache directory, held open.
#[derive(Debug)]
pub(crate) struct CacheDir {
    dir: OwnedFd,
    /// The most bytes its files may hold together.
    bound: u64,
}

impl CacheDir {
    /// `path`, created if missing, if it is safe to use; `None` if not.
    pub(crate) fn open(path: &Path, bound: u64) -> Option<CacheDir> {
        create(path, 8);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let dir = rustix::fs::open(path, flags, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&dir).ok()?;
        let own = stat.st_uid == rustix::process::geteuid().as_raw();
        let shared = stat.st_mode & 0o022 != 0;
        (own && !shared).then_some(CacheDir { dir, bound })
    }

    /// The bytes of the file `name`, if it is a regular file within the
    /// bound; a read counts as a use.
    pub(crate) fn read(&self, name: &str) -> Option<Vec<u8>> {
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
        let fd = rustix::fs::openat(&self.dir, name, flags, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&fd).ok()?;
        let size = u64::try_from(stat.st_size).ok()?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || size > self.bound {
            return None;
        }
        let _ = rustix::fs::futimens(&fd, &renewed());
        let mut bytes = Vec::with_capacity(size as usize);
        File::from(fd)
            .take(self.bound)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(bytes)
    }

    /// Replaces the file `name` with `bytes`, then keeps the directory
    /// within its bound. Bytes over the bound are not written.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) {
        if bytes.len() as u64 > self.bound {
            return;
        }
        // Unique to this write: other processes and threads may be writing
        // the same file.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let write = WRITES.fetch_add(1, Ordering::Relaxed);
        let temporary = format!(".{name}.{}.{write}.tmp", std::process::id());
        if self.write_as(&temporary, name, bytes).is_none() {
            let _ = rustix::fs::unlinkat(&self.dir, temporary.as_str(), AtFlags::empty());
        }
        self.evict(name);
    }

    fn write_as(&self, temporary: &str, name: &str, bytes: &[u8]) -> Option<()> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let create = || {
            let flags = flags | OFlags::EXCL;
            rustix::fs::openat(&self.dir, temporary, flags, Mode::from_raw_mode(0o600))
        };
        // One left by an earlier process of the same id that did not finish.
        let fd = create()
            .or_else(|_| {
                rustix::fs::unlinkat(&self.dir, temporary, AtFlags::empty())?;
                create()
            })
            .ok()?;
        let mut file = File::from(fd);
        file.write_all(bytes).ok()?;
        drop(file);
        rustix::fs::renameat(&self.dir, temporary, &self.dir, name).ok()
    }

    /// Removes the files used longest ago, `kept` aside, while they hold
    /// more than the bound together.
    fn evict(&self, kept: &str) {
        let Ok(entries) = rustix::fs::Dir::read_from(&self.dir) else {
            return;
        };
        let mut files: Vec<(i64, i64, String, u64)> = Vec::new();
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            let Ok(stat) = rustix::fs::statat(&self.dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            if FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile {
                let size = u64::try_from(stat.st_size).unwrap_or(0);
                let used = (stat.st_mtime, stat.st_mtime_nsec as i64);
                files.push((used.0, used.1, name.to_owned(), size));
            }
        }
        let mut total: u64 = files.iter().map(|file| file.3).sum();
        files.sort_unstable();
        for (_, _, name, size) in files {
            if total <= self.bound {
                break;
            }
            if name != kept
                && rustix::fs::unlinkat(&self.dir, name.as_str(), AtFlags::empty()).is_ok()
            {
                total -= size;
            }
        }
    }
}

/// Makes the directory `path` (mode 0700) and the missing ones above it,
/// up to `depth` of them, each only in a directory of the user running:
/// root reporting with another user's `HOME` makes nothing in it, which
/// that user could then not use.
fn create(path: &Path, depth: usize) {
    let Some(parent) = path.parent() else {
        return;
    };
    if depth == 0 || std::fs::symlink_metadata(path).is_ok() {
        return;
    }
    create(parent, depth - 1);
    let own = |meta: std::fs::Metadata| meta.uid() == rustix::process::geteuid().as_raw();
    if std::fs::metadata(parent).is_ok_and(own) {
        let _ = std::fs::DirBuilder::new().mode(0o700).create(path);
    }
}

/// Timestamps that renew the modification time and leave the access time.
fn renewed() -> Timestamps {
    let time = |nanoseconds| Timespec {
        tv_sec: 0,
        tv_nsec: nanoseconds,
    };
    Timestamps {
        last_access: time(rustix::fs::UTIME_OMIT),
        last_modification: time(rustix::fs::UTIME_NOW),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cache-dir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_missing_directory_is_made_private_and_files_read_back() {
        let root = scratch("made");
        let path = root.join("a/profiler");
        let dir = CacheDir::open(&path, 1 << 20).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        dir.write("one", b"first");
        dir.write("one", b"second");
        assert_eq!(dir.read("one").as_deref(), Some(&b"second"[..]));
        assert_eq!(dir.read("two"), None);
        let names: Vec<_> = std::fs::read_dir(&path).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_symbolic_link_or_a_directory_others_may_write_is_not_used() {
        let root = scratch("refused");
        let real = root.join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, root.join("link")).unwrap();
        assert!(CacheDir::open(&root.join("link"), 1 << 20).is_none());
        for mode in [0o770, 0o707, 0o777] {
            std::fs::set_permissions(&real, std::fs::Permissions::from_mode(mode)).unwrap();
            assert!(CacheDir::open(&real, 1 << 20).is_none(), "{mode:o}");
        }
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(CacheDir::open(&real, 1 << 20).is_some());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn nothing_is_made_in_another_users_directory() {
        if !profiler_testing::root("giving a directory to another user") {
            return;
        }
        let root = scratch("stranger");
        let theirs = root.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        let nobody = rustix::process::Uid::from_raw(65534);
        rustix::fs::chown(&theirs, Some(nobody), None).unwrap();
        assert!(CacheDir::open(&theirs.join("cache/profiler"), 1 << 20).is_none());
        assert!(!theirs.join("cache").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        let root = scratch("regular");
        let dir = CacheDir::open(&root, 8).unwrap();
        std::fs::write(root.join("big"), [0u8; 9]).unwrap();
        assert_eq!(dir.read("big"), None);
        std::fs::create_dir(root.join("sub")).unwrap();
        assert_eq!(dir.read("sub"), None);
        std::fs::write(root.join("target"), b"x").unwrap();
        std::os::unix::fs::symlink(root.join("target"), root.join("link")).unwrap();
        assert_eq!(dir.read("link"), None);
        assert_eq!(dir.read("target").as_deref(), Some(&b"x"[..]));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn writers_at_once_leave_one_whole_file() {
        let root = scratch("concurrent");
        let dir = CacheDir::open(&root, 1 << 20).unwrap();
        let contents: Vec<Vec<u8>> = (0..8u8).map(|i| vec![i; 50_000]).collect();
        std::thread::scope(|scope| {
            for bytes in &contents {
                let dir = &dir;
                scope.spawn(move || (0..20).for_each(|_| dir.write("same", bytes)));
            }
            for _ in 0..100 {
                if let Some(read) = dir.read("same") {
                    assert!(contents.contains(&read), "a file of {} bytes", read.len());
                }
            }
        });
        assert!(contents.contains(&dir.read("same").unwrap()));
        let names: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temporary file left");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn past_the_bound_the_files_used_longest_ago_go() {
        let root = scratch("evict");
        let dir = CacheDir::open(&root, 10).unwrap();
        let pause = || std::thread::sleep(std::time::Duration::from_millis(20));
        dir.write("a", b"aaaa");
        pause();
        dir.write("b", b"bbbb");
        pause();
        // A read renews `a`: `b` is now the one used longest ago.
        assert!(dir.read("a").is_some());
        pause();
        dir.write("c", b"cccc");
        assert!(root.join("a").exists());
        assert!(!root.join("b").exists());
        assert!(root.join("c").exists());
        // A file over the bound is not written at all.
        dir.write("d", &[0; 11]);
        assert!(!root.join("d").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
