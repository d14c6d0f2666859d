//! Opening a file to read it, only if it is a regular file: a FIFO, a
//! device or a socket where a recording, a binary or a source file was
//! expected would block the reader for ever, feed it without end, or act
//! on being opened (a watchdog arms, a tape rewinds).
//!
//! Such a path is never opened. Its type is asked first (`stat`, which
//! follows symbolic links: binaries and debug files are often reached
//! through them); then it is opened with `O_PATH`, which reaches no
//! driver, and only once that descriptor says it is the same regular file
//! is it opened for reading, through `/proc/self/fd` (as systemd's
//! `fd_reopen` does), so that a path swapped for a device in between is
//! not opened either.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags, Stat};

/// Opens `path` for reading if it is a regular file (after following
/// symbolic links); otherwise an `InvalidInput` error that says what it is.
/// A path that is not a regular file is not opened at all.
pub fn open_regular(path: &Path) -> io::Result<File> {
    Ok(open_regular_with_owner(path)?.0)
}

/// [`open_regular`], with the user id that owns the file opened.
pub fn open_regular_with_owner(path: &Path) -> io::Result<(File, u32)> {
    let named = rustix::fs::stat(path)?;
    regular(&named)?;
    let handle = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())?;
    let held = rustix::fs::fstat(&handle)?;
    regular(&held)?;
    if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "replaced by another file while being opened",
        ));
    }
    let file = File::from(reopen(&handle, path)?);
    let opened = rustix::fs::fstat(&file)?;
    if (opened.st_dev, opened.st_ino) != (held.st_dev, held.st_ino) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "replaced by another file while being opened",
        ));
    }
    Ok((file, opened.st_uid))
}

/// Opens for reading the file `handle` (an `O_PATH` descriptor of a
/// regular file) holds. Without /proc, `path` is opened again, without
/// waiting, and the caller checks it is the same file.
fn reopen(handle: &OwnedFd, path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY;
    let through_proc = format!("/proc/self/fd/{}", handle.as_raw_fd());
    match rustix::fs::open(through_proc.as_str(), flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(rustix::io::Errno::NOENT) => Ok(rustix::fs::open(
            path,
            flags | OFlags::NONBLOCK,
            Mode::empty(),
        )?),
        Err(error) => Err(error.into()),
    }
}

/// `Ok` for a regular file; for anything else an error that says what it is.
fn regular(stat: &Stat) -> io::Result<()> {
    let what = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => return Ok(()),
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Socket => "a socket",
        _ => "not a file",
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file"),
    ))
}

/// The whole of the regular file at `path`.
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut open_regular(path)?, &mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_opened() {
        let dir = std::env::temp_dir().join(format!("regular-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("file");
        std::fs::write(&file, b"bytes").unwrap();
        assert_eq!(read_regular(&file).unwrap(), b"bytes");
        let link = dir.join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_regular(&link).unwrap(), b"bytes");
        let (_, owner) = open_regular_with_owner(&file).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(owner, std::fs::metadata(&file).unwrap().uid());

        let fifo = dir.join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from(0o600)).unwrap();
        let error = open_regular(&fifo).unwrap_err();
        assert_eq!(error.to_string(), "a FIFO, not a regular file");
        let error = open_regular(&dir).unwrap_err();
        assert_eq!(error.to_string(), "a directory, not a regular file");
        let error = open_regular(Path::new("/dev/null")).unwrap_err();
        assert_eq!(error.to_string(), "a character device, not a regular file");
        let error = open_regular(&dir.join("missing")).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
