//! The directory an output is written in, held open from the start, as
//! coreutils' `install` and systemd-tmpfiles hold theirs: every name in it
//! is looked up, created, linked and renamed relative to this descriptor.
//! A directory renamed while the output is written keeps the output, which
//! is then named where it really is; a symbolic link swapped in for the
//! directory's path meanwhile changes nothing.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, Statx, StatxFlags};

/// A directory held open for writing outputs in it.
#[derive(Debug)]
pub(crate) struct OutputDir {
    fd: OwnedFd,
    /// The directory as the user named it (empty for the current one),
    /// for messages.
    named: PathBuf,
    /// Where it was when it was opened, to tell when it has moved.
    opened_at: Option<PathBuf>,
    /// Whether users other than this one can write in it: it is not this
    /// user's, or its group or others may write. There a symbolic link at
    /// an output's name is not followed, and another user's file is not
    /// replaced or written to.
    shared: bool,
}

impl OutputDir {
    /// Opens the directory `named` (the empty path: the current one).
    pub(crate) fn open(named: &Path) -> io::Result<OutputDir> {
        let path = match named.as_os_str().is_empty() {
            true => Path::new("."),
            false => named,
        };
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::empty())?;
        let stat = rustix::fs::fstat(&fd)?;
        let shared =
            stat.st_uid != rustix::process::geteuid().as_raw() || stat.st_mode & 0o022 != 0;
        let opened_at = location(&fd);
        Ok(OutputDir {
            fd,
            named: named.to_owned(),
            opened_at,
            shared,
        })
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Whether other users can write in this directory.
    pub(crate) fn is_shared(&self) -> bool {
        self.shared
    }

    /// `name` in this directory as the user would write it: beside the
    /// directory they named.
    pub(crate) fn named(&self, name: &OsStr) -> PathBuf {
        self.named.join(name)
    }

    /// What `name` is in this directory, without following a symbolic link
    /// there; `None` if nothing.
    pub(crate) fn stat(&self, name: &OsStr) -> io::Result<Option<Statx>> {
        let wanted = StatxFlags::BASIC_STATS | StatxFlags::BTIME;
        match rustix::fs::statx(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW, wanted) {
            Ok(stat) => Ok(Some(stat)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether the directory has been removed since it was opened.
    pub(crate) fn is_removed(&self) -> bool {
        rustix::fs::fstat(&self.fd).is_ok_and(|stat| stat.st_nlink == 0)
    }

    /// Where `name` in this directory is now, and whether that is not
    /// where the user named it (the directory was moved meanwhile).
    pub(crate) fn whereabouts(&self, name: &OsStr) -> (PathBuf, bool) {
        match location(&self.fd) {
            Some(now) if Some(&now) != self.opened_at.as_ref() => (now.join(name), true),
            _ => (self.named(name), false),
        }
    }
}

/// Where the directory `fd` is now, as the kernel names it; `None` once it
/// has been removed, or without /proc.
fn location(fd: &OwnedFd) -> Option<PathBuf> {
    let link = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(fd));
    let target = rustix::fs::readlink(link, Vec::new()).ok()?;
    let bytes = target.as_bytes();
    (bytes.starts_with(b"/") && !bytes.ends_with(b" (deleted)"))
        .then(|| PathBuf::from(OsStr::from_bytes(bytes)))
}
