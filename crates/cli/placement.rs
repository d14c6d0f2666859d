//! Where `-o PATH` puts an output, decided before anything is written, by
//! the rules a system tool run as root follows in a shared directory
//! (coreutils' `install`, rsync, systemd-tmpfiles):
//!
//! - `-` and `/dev/stdout` are the standard output; `/dev/stderr`,
//!   `/dev/fd/N` and `/proc/self/fd/N` a descriptor the profiler inherited,
//!   written as it is.
//! - A new name, or a regular file of this user's, is replaced whole: the
//!   output is written beside it and renamed over it once complete. An
//!   immutable or append-only file, or a mount point, which the rename
//!   would fail on, is refused now.
//! - A character device, and this user's FIFO or socket, are written in
//!   place and never replaced. A directory or a block device is refused.
//! - Another user's file is never replaced, nor another user's FIFO or
//!   socket written to in a directory others can write; whoever runs the
//!   profiler, root included.
//! - A symbolic link at the name is followed only in a directory that is
//!   this user's alone (to what it points to, under the same rules); in a
//!   directory others can write (such as /tmp, sticky or not) it is
//!   refused, whoever owns it.
//!
//! The directories on the way to the name are followed as the kernel
//! allows (`fs.protected_symlinks` guards links in sticky directories).

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Statx, StatxAttributes};

use crate::output_dir::OutputDir;

/// What `-o PATH` names.
#[derive(Debug)]
pub(crate) enum Destination {
    Stdout,
    /// A descriptor the profiler inherited, by a name of /dev or /proc.
    Descriptor(PathBuf),
    /// A character device, FIFO or socket, written where it is.
    InPlace(Found),
    /// A regular file of this user's, or a new name: replaced whole.
    Replace(Found),
}

/// A name in a directory held open, and what was there when looked at.
#[derive(Debug)]
pub(crate) struct Found {
    pub(crate) dir: OutputDir,
    pub(crate) name: OsString,
    /// What was at the name; `None` if nothing.
    pub(crate) existing: Option<Statx>,
}

impl Found {
    /// The name as the user would write it.
    pub(crate) fn path(&self) -> PathBuf {
        self.dir.named(&self.name)
    }

    pub(crate) fn file_type(&self) -> Option<FileType> {
        (self.existing.as_ref()).map(|stat| FileType::from_raw_mode(stat.stx_mode.into()))
    }
}

/// Whether `path` names the standard output.
pub(crate) fn is_stdout(path: &Path) -> bool {
    matches!(
        path.as_os_str().as_bytes(),
        b"-" | b"/dev/stdout" | b"/dev/fd/1" | b"/proc/self/fd/1"
    )
}

/// Decides where `path` goes, or why it cannot: the error says what it is
/// and why it is refused.
pub(crate) fn place(path: &Path) -> io::Result<Destination> {
    if is_stdout(path) {
        return Ok(Destination::Stdout);
    }
    let text = path.as_os_str().as_bytes();
    if text == b"/dev/stderr"
        || text.starts_with(b"/dev/fd/")
        || text.starts_with(b"/proc/self/fd/")
    {
        return Ok(Destination::Descriptor(path.to_owned()));
    }
    place_at(path, true)
}

/// Places `path`, following a symbolic link at its name where the rules
/// allow if `follow`.
fn place_at(path: &Path, follow: bool) -> io::Result<Destination> {
    let (dir, name) = split(path)?;
    let dir = OutputDir::open(dir).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => refusal(e.kind(), "there is no such directory"),
        io::ErrorKind::NotADirectory => refusal(e.kind(), "a part of its path is not a directory"),
        _ => e,
    })?;
    let existing = dir.stat(name)?;
    let found = Found {
        dir,
        name: name.to_owned(),
        existing,
    };
    let Some(stat) = &found.existing else {
        return Ok(Destination::Replace(found));
    };
    let others = stat.stx_uid != rustix::process::geteuid().as_raw();
    match found.file_type() {
        Some(FileType::Symlink) if found.dir.is_shared() => Err(refusal(
            io::ErrorKind::PermissionDenied,
            "it is a symbolic link, which is not followed in a directory other users can write",
        )),
        Some(FileType::Symlink) if follow => place_at(&resolve_link(path)?, false),
        Some(FileType::Symlink) => Err(refusal(
            io::ErrorKind::InvalidInput,
            "it became a symbolic link while it was looked at",
        )),
        Some(FileType::Directory) => Err(refusal(io::ErrorKind::IsADirectory, "it is a directory")),
        Some(FileType::BlockDevice) => Err(refusal(
            io::ErrorKind::InvalidInput,
            "it is a block device, which writing would overwrite; name a file",
        )),
        Some(FileType::RegularFile) if others => Err(another_users(stat, "file", "replaced")),
        Some(FileType::RegularFile) => replaceable(stat).map(|()| Destination::Replace(found)),
        Some(FileType::Fifo | FileType::Socket) if others && found.dir.is_shared() => {
            Err(another_users(
                stat,
                "FIFO or socket",
                "written to in a directory other users can write",
            ))
        }
        _ => Ok(Destination::InPlace(found)),
    }
}

/// What a symbolic link of this user's points to, as a path without
/// links; a dangling link is refused, naming where it points.
fn resolve_link(path: &Path) -> io::Result<PathBuf> {
    match fs::canonicalize(path) {
        Ok(target) => Ok(target),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let target = fs::read_link(path).unwrap_or_default();
            Err(refusal(
                io::ErrorKind::NotFound,
                &format!(
                    "it is a symbolic link to {}, which does not exist; name the file itself",
                    target.display()
                ),
            ))
        }
        Err(e) => Err(e),
    }
}

/// Refuses now what the final rename over the file would fail on: an
/// immutable or append-only file, a mount point.
fn replaceable(stat: &Statx) -> io::Result<()> {
    let known = stat.stx_attributes_mask;
    let has = |attribute| known.contains(attribute) && stat.stx_attributes.contains(attribute);
    if has(StatxAttributes::IMMUTABLE) || has(StatxAttributes::APPEND) {
        return Err(refusal(
            io::ErrorKind::PermissionDenied,
            "it cannot be replaced: it is immutable or append-only (lsattr shows an 'i' or an \
             'a')",
        ));
    }
    // Not told by the device numbers: overlayfs gives files those of the
    // layer they come from.
    if has(StatxAttributes::MOUNT_ROOT) {
        return Err(refusal(
            io::ErrorKind::ResourceBusy,
            "it cannot be replaced: it is a mount point",
        ));
    }
    Ok(())
}

fn another_users(stat: &Statx, what: &str, done: &str) -> io::Error {
    refusal(
        io::ErrorKind::PermissionDenied,
        &format!(
            "it is another user's {what} (uid {}), and is not {done}",
            stat.stx_uid
        ),
    )
}

fn refusal(kind: io::ErrorKind, why: &str) -> io::Error {
    io::Error::new(kind, why.to_owned())
}

/// The directory and file name of `path`.
pub(crate) fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    if path.as_os_str().as_bytes().ends_with(b"/") {
        return Err(match path.is_dir() {
            true => refusal(io::ErrorKind::IsADirectory, "it is a directory"),
            false => refusal(io::ErrorKind::NotFound, "there is no such directory"),
        });
    }
    let name = match path.file_name() {
        Some(name) => name,
        // `.` and `..` name directories.
        None if path.is_dir() => {
            return Err(refusal(io::ErrorKind::IsADirectory, "it is a directory"));
        }
        None => return Err(refusal(io::ErrorKind::InvalidInput, "it names no file")),
    };
    Ok((path.parent().unwrap_or(Path::new("")), name))
}
