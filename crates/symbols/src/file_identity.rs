//! What tells a file from the one that was at its path before: a program
//! rebuilt in place, or replaced by another of the same size, differs in
//! its inode or its modification time (to the nanosecond).

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A file's device, inode, size and modification time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    pub device: u64,
    pub inode: u64,
    /// In bytes.
    pub size: u64,
    /// Seconds since the epoch, and the nanoseconds beyond.
    pub modified: i64,
    pub modified_ns: i64,
}

impl FileIdentity {
    /// The identity of the file at `path` now (following symbolic links),
    /// `None` where it cannot be read.
    pub(crate) fn of_path(path: &Path) -> Option<FileIdentity> {
        std::fs::metadata(path).ok().map(|meta| Self::of(&meta))
    }

    /// The identity of the file `file` holds open.
    pub(crate) fn of_file(file: &File) -> Option<FileIdentity> {
        file.metadata().ok().map(|meta| Self::of(&meta))
    }

    fn of(meta: &std::fs::Metadata) -> FileIdentity {
        FileIdentity {
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.size(),
            modified: meta.mtime(),
            modified_ns: meta.mtime_nsec(),
        }
    }
}
