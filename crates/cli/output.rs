//! Where the subcommands' outputs go, given as `-o PATH`.
//!
//! A regular file, or a name that does not exist yet, is replaced whole and
//! atomically once everything was written. Anything else is written in
//! place, as a stream, and never replaced: a character device, a FIFO
//! (once a reader has opened it), a socket (connected to), an inherited
//! descriptor (`/dev/stderr`, `/dev/fd/N`). `-` and `/dev/stdout` are the
//! standard output. A symbolic link to a regular file is followed: the
//! file it points to is replaced and the link kept.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use profiler_model::{AtomicFile, Leftover};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// An output being written.
pub struct Output {
    sink: Sink,
}

enum Sink {
    Replace(AtomicFile),
    Stream(Box<dyn Write>),
}

/// What `-o PATH` names, decided before anything is written.
enum Destination {
    Stdout,
    InPlace(PathBuf),
    Replace(PathBuf),
}

impl Output {
    /// Opens `path` for writing, or refuses it: every check the final
    /// rename of a regular file needs is made now.
    pub fn create(path: &Path, leftover: Leftover) -> io::Result<Output> {
        let sink = match destination(path)? {
            Destination::Stdout => {
                let fd = rustix::io::fcntl_dupfd_cloexec(io::stdout(), 3)?;
                Sink::Stream(Box::new(File::from(fd)))
            }
            Destination::InPlace(path) => Sink::Stream(open_in_place(&path)?),
            Destination::Replace(path) => Sink::Replace(AtomicFile::create(&path, leftover)?),
        };
        Ok(Output { sink })
    }

    /// The regular file this replaces (a symbolic link's target), if it
    /// replaces one: it can be read back.
    pub fn file(&self) -> Option<&Path> {
        match &self.sink {
            Sink::Replace(file) => Some(file.destination()),
            Sink::Stream(_) => None,
        }
    }

    /// Puts a regular file in place; flushes a stream.
    pub fn commit(self) -> io::Result<()> {
        match self.sink {
            Sink::Replace(file) => file.commit(),
            Sink::Stream(mut stream) => stream.flush(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.sink {
            Sink::Replace(file) => file.write(buf),
            Sink::Stream(stream) => stream.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Replace(file) => file.flush(),
            Sink::Stream(stream) => stream.flush(),
        }
    }
}

/// Whether `path` names the standard output.
pub fn is_stdout(path: &Path) -> bool {
    matches!(
        path.as_os_str().as_bytes(),
        b"-" | b"/dev/stdout" | b"/dev/fd/1" | b"/proc/self/fd/1"
    )
}

/// `path` as messages name it.
pub fn describe(path: &Path) -> String {
    match is_stdout(path) {
        true => "the standard output".to_owned(),
        false => path.display().to_string(),
    }
}

/// Writes `path` through `write`: a regular file is replaced only once
/// everything was written; anything else is written in place.
pub fn write_output<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<Output>) -> Result<T>,
) -> Result<T> {
    let output = Output::create(path, Leftover::Nothing).map_err(|error| {
        anyhow!(
            "cannot write {}: {error}; choose another -o FILE",
            path.display()
        )
    })?;
    let mut out = BufWriter::new(output);
    let value = write(&mut out)?;
    let write_error = || format!("cannot write {}", describe(path));
    out.flush().with_context(write_error)?;
    let output = out
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(write_error)?;
    output.commit().with_context(write_error)?;
    Ok(value)
}

fn destination(path: &Path) -> io::Result<Destination> {
    if is_stdout(path) {
        return Ok(Destination::Stdout);
    }
    let text = path.as_os_str().as_bytes();
    if text == b"/dev/stderr"
        || text.starts_with(b"/dev/fd/")
        || text.starts_with(b"/proc/self/fd/")
    {
        return Ok(Destination::InPlace(path.to_owned()));
    }
    let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let metadata = match fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == io::ErrorKind::NotFound && is_link => {
            let target = fs::read_link(path).unwrap_or_default();
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "it is a symbolic link to {}, which does not exist; name the file itself",
                    target.display()
                ),
            ));
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Destination::Replace(path.to_owned()));
        }
        Err(e) => return Err(e),
    };
    let kind = metadata.file_type();
    if kind.is_dir() {
        Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ))
    } else if kind.is_file() && is_link {
        Ok(Destination::Replace(fs::canonicalize(path)?))
    } else if kind.is_file() {
        Ok(Destination::Replace(path.to_owned()))
    } else if kind.is_block_device() {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is a block device, which writing would overwrite; name a file",
        ))
    } else {
        Ok(Destination::InPlace(path.to_owned()))
    }
}

/// Opens what is not a regular file for writing where it is: never
/// created, never truncated (a descriptor's regular file is appended to).
fn open_in_place(path: &Path) -> io::Result<Box<dyn Write>> {
    let kind = fs::metadata(path)?.file_type();
    if kind.is_socket() {
        return Ok(Box::new(UnixStream::connect(path)?));
    }
    if kind.is_fifo() {
        return Ok(Box::new(open_fifo(path)?));
    }
    Ok(Box::new(OpenOptions::new().append(true).open(path)?))
}

/// Opens a FIFO for writing, saying so when it waits for a reader.
fn open_fifo(path: &Path) -> io::Result<File> {
    let flags = OFlags::WRONLY | OFlags::CLOEXEC;
    match rustix::fs::open(path, flags | OFlags::NONBLOCK, Mode::empty()) {
        Ok(fd) => {
            rustix::fs::fcntl_setfl(&fd, OFlags::empty())?;
            Ok(File::from(fd))
        }
        Err(Errno::NXIO) => {
            eprintln!(
                "profiler: waiting for a reader to open the FIFO {}",
                path.display()
            );
            Ok(File::from(rustix::fs::open(path, flags, Mode::empty())?))
        }
        Err(e) => Err(e.into()),
    }
}
