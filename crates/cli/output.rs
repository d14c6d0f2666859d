//! The subcommands' outputs, given as `-o PATH`, placed by the rules of
//! [`placement`](crate::placement): a regular file is replaced whole and
//! atomically once everything was written ([`AtomicFile`]); a character
//! device, a FIFO (once a reader has opened it), a socket (connected to) or
//! an inherited descriptor is written in place, as a stream, and never
//! replaced; `-` and `/dev/stdout` are the standard output.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::atomic_file::{AtomicFile, Leftover, Placed};
use crate::messages::say;
use crate::placement::{Destination, Found, place};

pub(crate) use crate::placement::is_stdout;

/// An output being written.
pub(crate) struct Output {
    sink: Sink,
    /// Whether a write has failed: an error that follows is about this
    /// file, and says so.
    failed: bool,
}

enum Sink {
    Replace(AtomicFile),
    Stream(Box<dyn Write>),
}

/// What became of an output once written.
#[derive(Debug)]
pub(crate) enum Committed {
    /// A regular file, put in place.
    File(Placed),
    /// A stream, flushed.
    Stream,
}

impl Output {
    /// Opens `path` for writing, or refuses it: every check that the final
    /// rename of a regular file needs is made now.
    pub(crate) fn create(path: &Path, leftover: Leftover) -> io::Result<Output> {
        let sink = match place(path)? {
            Destination::Stdout => {
                let fd = rustix::io::fcntl_dupfd_cloexec(io::stdout(), 3)?;
                Sink::Stream(Box::new(File::from(fd)))
            }
            Destination::Descriptor(path) => {
                Sink::Stream(Box::new(OpenOptions::new().append(true).open(path)?))
            }
            Destination::InPlace(found) => Sink::Stream(open_in_place(&found)?),
            Destination::Replace(found) => Sink::Replace(AtomicFile::create(found, leftover)?),
        };
        Ok(Output {
            sink,
            failed: false,
        })
    }

    /// The regular file this replaces, if it replaces one.
    pub(crate) fn file(&self) -> Option<&AtomicFile> {
        match &self.sink {
            Sink::Replace(file) => Some(file),
            Sink::Stream(_) => None,
        }
    }

    /// Puts a regular file in place; flushes a stream.
    pub(crate) fn commit(self) -> io::Result<Committed> {
        match self.sink {
            Sink::Replace(file) => file.commit().map(Committed::File),
            Sink::Stream(mut stream) => stream.flush().map(|()| Committed::Stream),
        }
    }

    /// Stops writing, keeping what was written of a regular file under its
    /// temporary name: where that is, if anywhere.
    pub(crate) fn keep(self) -> Option<PathBuf> {
        match self.sink {
            Sink::Replace(file) => file.keep(),
            Sink::Stream(_) => None,
        }
    }

    fn noted<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if let Err(error) = &result
            && error.kind() != io::ErrorKind::Interrupted
        {
            self.failed = true;
        }
        result
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = match &mut self.sink {
            Sink::Replace(file) => file.write(buf),
            Sink::Stream(stream) => stream.write(buf),
        };
        self.noted(result)
    }
    fn flush(&mut self) -> io::Result<()> {
        let result = match &mut self.sink {
            Sink::Replace(file) => file.flush(),
            Sink::Stream(stream) => stream.flush(),
        };
        self.noted(result)
    }
}

/// `path` as messages name it.
pub(crate) fn describe(path: &Path) -> String {
    match is_stdout(path) {
        true => "the standard output".to_owned(),
        false => path.display().to_string(),
    }
}

/// Writes `path` through `write`: a regular file is replaced only once
/// everything was written; anything else is written in place.
pub(crate) fn write_output<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<Output>) -> Result<T>,
) -> Result<T> {
    let output = Output::create(path, Leftover::Nothing).map_err(|error| {
        anyhow!(
            "cannot write {}: {error}; choose another -o FILE",
            path.display()
        )
    })?;
    let replaces = output.file().is_some();
    let cannot_write = |error: &dyn std::fmt::Display| {
        let kept = match replaces {
            true => format!("; {} is as it was", describe(path)),
            false => String::new(),
        };
        anyhow!("cannot write {}: {error}{kept}", describe(path))
    };
    let mut out = BufWriter::new(output);
    let written = write(&mut out).and_then(|value| {
        out.flush()?;
        Ok(value)
    });
    let value = match written {
        Ok(value) => value,
        // The writing failed (a full disk): the file is named, with the
        // system's words.
        Err(error) if out.get_ref().failed => {
            let cause = error.chain().find_map(|e| e.downcast_ref::<io::Error>());
            return Err(match cause {
                Some(cause) => cannot_write(cause),
                None => cannot_write(&error),
            });
        }
        Err(error) => return Err(error),
    };
    let output = out.into_inner().map_err(|e| cannot_write(e.error()))?;
    if let Committed::File(placed) = output.commit().map_err(|e| cannot_write(&e))?
        && placed.moved
    {
        say!(
            "profiler: the directory of {} was moved while it was written: it is {}",
            path.display(),
            placed.path.display()
        );
    }
    Ok(value)
}

/// Opens what is not a regular file for writing where it is: never
/// created, never truncated, never through a symbolic link swapped in
/// since it was looked at.
fn open_in_place(found: &Found) -> io::Result<Box<dyn Write>> {
    if found.file_type() == Some(FileType::Socket) {
        // Reached through the directory held open, where the address has
        // room for that.
        let mut held = PathBuf::from(format!("/proc/self/fd/{}", found.dir.fd().as_raw_fd()));
        held.push(&found.name);
        let path = match held.as_os_str().len() < 108 {
            true => held,
            false => found.path(),
        };
        return Ok(Box::new(UnixStream::connect(path)?));
    }
    let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::NOFOLLOW | OFlags::NOCTTY;
    let open = |more| rustix::fs::openat(found.dir.fd(), &found.name, flags | more, Mode::empty());
    let fd = match open(OFlags::NONBLOCK | OFlags::CLOEXEC) {
        Ok(fd) => {
            rustix::fs::fcntl_setfl(&fd, OFlags::APPEND)?;
            fd
        }
        Err(Errno::NXIO) if found.file_type() == Some(FileType::Fifo) => {
            say!(
                "profiler: waiting for a reader to open the FIFO {}",
                found.path().display()
            );
            open(OFlags::CLOEXEC)?
        }
        Err(e) => return Err(e.into()),
    };
    same_file(found, &fd)?;
    Ok(Box::new(File::from(fd)))
}

/// Checks that `fd` is what `found` saw at its name.
fn same_file(found: &Found, fd: &OwnedFd) -> io::Result<()> {
    let stat = rustix::fs::fstat(fd.as_fd())?;
    let same = found.existing.as_ref().is_some_and(|seen| {
        seen.stx_ino == stat.st_ino
            && u32::from(seen.stx_mode) & 0o170000 == stat.st_mode & 0o170000
    });
    match same {
        true => Ok(()),
        false => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it was replaced while it was opened",
        )),
    }
}
