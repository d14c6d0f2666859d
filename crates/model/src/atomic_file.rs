//! A regular file that appears at its path only once it is complete.
//!
//! Writes go to a temporary file in the destination's directory;
//! [`AtomicFile::commit`] syncs it and renames it into place, so a reader
//! sees either the old file or the whole new one, never half of it.
//!
//! Everything the final rename needs is tried when the file is created,
//! before any work is done: the directory must take a new file, and an
//! existing destination must be replaceable, which is tried by exchanging
//! it with the temporary file and back (`renameat2(RENAME_EXCHANGE)`); that
//! catches immutable files, another user's file in a sticky directory and
//! mount points, which a rename would refuse only at the end.
//!
//! What a crash leaves behind is chosen by [`Leftover`]. Dropping an
//! uncommitted `AtomicFile` (an error) removes its temporary file.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, CWD, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

/// What a crash of the writer leaves of an unfinished file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leftover {
    /// Nothing: the data goes to an unnamed file (`O_TMPFILE`) that is
    /// given a name only once complete, where the file system allows;
    /// elsewhere to a hidden, uniquely named file. For outputs worth
    /// nothing half-written.
    Nothing,
    /// A visible, uniquely named `.NAME.RANDOM.tmp` beside the destination,
    /// locked while it is written, that keeps whatever was written when
    /// the writer was killed; [`leftovers`] finds those of earlier runs.
    /// For recordings, which are worth reading however short.
    Salvageable,
}

#[derive(Debug)]
pub struct AtomicFile {
    destination: PathBuf,
    file: File,
    /// The temporary file's path; `None` while it has no name.
    temporary: Option<PathBuf>,
    leftover: Leftover,
    committed: bool,
}

impl AtomicFile {
    /// Creates the temporary file for `destination` and checks that it can
    /// replace the destination. `destination` must not be a symbolic link
    /// (resolve it first): it is the name that gets replaced.
    pub fn create(destination: &Path, leftover: Leftover) -> io::Result<AtomicFile> {
        let (dir, name) = split(destination)?;
        let existing = match fs::symlink_metadata(destination) {
            Ok(metadata) if metadata.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a directory",
                ));
            }
            Ok(metadata) => Some(metadata),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let unnamed = match leftover {
            Leftover::Nothing => unnamed_file(dir).ok(),
            Leftover::Salvageable => None,
        };
        let (file, temporary) = match unnamed {
            Some(file) => (file, None),
            None => {
                let (file, path) = named_file(dir, name)?;
                if leftover == Leftover::Salvageable {
                    // Held until the file is closed: tells a later run
                    // that this one is alive. Where locks are not kept
                    // (some network file systems), later runs only name
                    // the file.
                    let _ = file.try_lock();
                }
                (file, Some(path))
            }
        };
        let mut atomic = AtomicFile {
            destination: destination.to_owned(),
            file,
            temporary,
            leftover,
            committed: false,
        };
        if let Some(existing) = existing {
            let mode = existing.permissions().mode() & 0o777;
            atomic.file.set_permissions(Permissions::from_mode(mode))?;
            atomic.try_replacing(dir, name)?;
        }
        Ok(atomic)
    }

    /// Flushes the data to disk and puts the file in place. If that fails,
    /// a [`Leftover::Salvageable`] file is kept, and the error names it.
    pub fn commit(mut self) -> io::Result<()> {
        let result = self.file.sync_data().and_then(|()| match &self.temporary {
            Some(temporary) => fs::rename(temporary, &self.destination),
            None => link_unnamed(&self.file, &self.destination),
        });
        match (result, &self.temporary) {
            (Ok(()), _) => {
                self.committed = true;
                Ok(())
            }
            (Err(e), Some(temporary)) if self.leftover == Leftover::Salvageable => {
                self.committed = true;
                Err(io::Error::new(
                    e.kind(),
                    format!("{e}; what was written is kept in {}", temporary.display()),
                ))
            }
            (Err(e), _) => Err(e),
        }
    }

    pub fn destination(&self) -> &Path {
        &self.destination
    }

    /// Where the data is while it is written, if the file has a name.
    pub fn temporary(&self) -> Option<&Path> {
        self.temporary.as_deref()
    }

    /// Exchanges a file of ours with the destination and back: the final
    /// rename will be allowed if this was. A file system that cannot
    /// exchange is not probed.
    fn try_replacing(&mut self, dir: &Path, name: &std::ffi::OsStr) -> io::Result<()> {
        let probe = match &self.temporary {
            Some(path) => path.clone(),
            None => named_file(dir, name)?.1,
        };
        let exchange = || {
            rustix::fs::renameat_with(CWD, &probe, CWD, &self.destination, RenameFlags::EXCHANGE)
        };
        let result = match exchange() {
            Ok(()) => match exchange().or_else(|_| rustix::fs::rename(&probe, &self.destination)) {
                Ok(()) => Ok(()),
                Err(e) => {
                    // The destination's file is at the probe's name now:
                    // never to be removed.
                    self.temporary = None;
                    return Err(io::Error::new(
                        io::Error::from(e).kind(),
                        format!(
                            "it was moved to {} and cannot be moved back: {e}",
                            probe.display()
                        ),
                    ));
                }
            },
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => Ok(()),
            Err(e) => Err(cannot_replace(e)),
        };
        if self.temporary.is_none() {
            let _ = fs::remove_file(&probe);
        }
        result
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // A panic keeps a salvageable file, as a kill would.
        let keep = self.leftover == Leftover::Salvageable && std::thread::panicking();
        if let Some(temporary) = &self.temporary
            && !self.committed
            && !keep
        {
            let _ = fs::remove_file(temporary);
        }
    }
}

/// Temporary files that runs writing `destination` with
/// [`Leftover::Salvageable`] left behind when they were killed, by name;
/// those of runs still writing are left out.
pub fn leftovers(destination: &Path) -> Vec<PathBuf> {
    let Ok((dir, name)) = split(destination) else {
        return Vec::new();
    };
    let mut prefix = OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| {
            let file_name = entry.file_name();
            let bytes = file_name.as_bytes();
            bytes.starts_with(prefix.as_bytes())
                && bytes.ends_with(b".tmp")
                && bytes.len() > prefix.len() + 4
                && entry.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|entry| match destination.parent() {
            // Named as the destination was: without a "./" of our own.
            Some(parent) if parent.as_os_str().is_empty() => PathBuf::from(entry.file_name()),
            _ => entry.path(),
        })
        .filter(|path| !is_being_written(path))
        .collect();
    found.sort();
    found
}

/// Whether a live writer holds the lock on `path`.
fn is_being_written(path: &Path) -> bool {
    File::open(path).is_ok_and(|file| file.try_lock_shared().is_err())
}

/// The directory and file name of `destination`.
fn split(destination: &Path) -> io::Result<(&Path, &std::ffi::OsStr)> {
    if destination.as_os_str().as_bytes().ends_with(b"/") {
        return Err(match destination.is_dir() {
            true => io::Error::new(io::ErrorKind::IsADirectory, "it is a directory"),
            false => io::Error::new(io::ErrorKind::NotFound, "there is no such directory"),
        });
    }
    let name = destination
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "it names no file"))?;
    let dir = match destination.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    Ok((dir, name))
}

/// An unnamed file in `dir`, if the file system has them and the file can
/// be named later through /proc.
fn unnamed_file(dir: &Path) -> io::Result<File> {
    if !Path::new("/proc/self/fd").is_dir() {
        return Err(io::ErrorKind::Unsupported.into());
    }
    let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
    let fd = rustix::fs::open(dir, flags, Mode::from_raw_mode(0o666))?;
    Ok(File::from(fd))
}

/// A new file `.NAME.RANDOM.tmp` in `dir`, created exclusively: a name in
/// use, by a live run or a dead one, is never taken over.
fn named_file(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(File, PathBuf)> {
    let mut last_error = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..16 {
        let path = dir.join(temporary_name(name)?);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_error = e,
            Err(e) => return Err(e),
        }
    }
    Err(last_error)
}

/// `.NAME.RANDOM.tmp`, with ten random letters and digits.
fn temporary_name(name: &std::ffi::OsStr) -> io::Result<OsString> {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut random = [0u8; 10];
    rustix::rand::getrandom(&mut random, rustix::rand::GetRandomFlags::empty())?;
    let suffix: String = random
        .iter()
        .map(|&b| char::from(ALPHABET[usize::from(b) % ALPHABET.len()]))
        .collect();
    let mut temporary = OsString::from(".");
    temporary.push(name);
    temporary.push(format!(".{suffix}.tmp"));
    Ok(temporary)
}

/// Gives the unnamed `file` the name `destination`: directly when the name
/// is free, else through a temporary name renamed over it.
fn link_unnamed(file: &File, destination: &Path) -> io::Result<()> {
    let source = format!("/proc/self/fd/{}", file.as_raw_fd());
    let link = |to: &Path| rustix::fs::linkat(CWD, &source, CWD, to, AtFlags::SYMLINK_FOLLOW);
    match link(destination) {
        Err(Errno::EXIST) => {}
        other => return other.map_err(io::Error::from),
    }
    let (dir, name) = split(destination)?;
    for _ in 0..16 {
        let temporary = dir.join(temporary_name(name)?);
        match link(&temporary) {
            Ok(()) => {
                return fs::rename(&temporary, destination).inspect_err(|_| {
                    let _ = fs::remove_file(&temporary);
                });
            }
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::ErrorKind::AlreadyExists.into())
}

fn cannot_replace(error: Errno) -> io::Error {
    let why = match error {
        Errno::PERM => {
            "; it may be immutable (lsattr shows an 'i') or, in a sticky directory such as \
             /tmp, another user's"
        }
        Errno::BUSY => "; it is a mount point",
        _ => "",
    };
    let error = io::Error::from(error);
    io::Error::new(error.kind(), format!("it cannot be replaced: {error}{why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("atomic-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn commit_replaces_the_destination_whole() {
        for leftover in [Leftover::Nothing, Leftover::Salvageable] {
            let dir = scratch_dir(&format!("commit-{leftover:?}"));
            let path = dir.join("out.data");
            fs::write(&path, b"old").unwrap();
            fs::set_permissions(&path, Permissions::from_mode(0o640)).unwrap();
            let mut file = AtomicFile::create(&path, leftover).unwrap();
            file.write_all(b"new contents").unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"old");
            file.commit().unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"new contents");
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640, "{leftover:?}");
            assert_eq!(names(&dir), ["out.data"]);
        }
    }

    #[test]
    fn a_new_file_appears_only_when_committed() {
        for leftover in [Leftover::Nothing, Leftover::Salvageable] {
            let dir = scratch_dir(&format!("new-{leftover:?}"));
            let path = dir.join("out.svg");
            let mut file = AtomicFile::create(&path, leftover).unwrap();
            file.write_all(b"<svg/>").unwrap();
            assert!(!path.exists());
            // Another writer takes the name meanwhile: it is replaced.
            fs::write(&path, b"meanwhile").unwrap();
            file.commit().unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"<svg/>");
            assert_eq!(names(&dir), ["out.svg"]);
        }
    }

    #[test]
    fn dropping_an_uncommitted_file_leaves_nothing_behind() {
        for leftover in [Leftover::Nothing, Leftover::Salvageable] {
            let dir = scratch_dir(&format!("drop-{leftover:?}"));
            let path = dir.join("out.data");
            fs::write(&path, b"old").unwrap();
            let mut file = AtomicFile::create(&path, leftover).unwrap();
            file.write_all(b"half").unwrap();
            drop(file);
            assert_eq!(fs::read(&path).unwrap(), b"old");
            assert_eq!(names(&dir), ["out.data"]);
        }
    }

    #[test]
    fn a_salvageable_file_is_visible_unique_and_found_once_its_writer_is_gone() {
        let dir = scratch_dir("salvage");
        let path = dir.join("profiler.data");
        let first = AtomicFile::create(&path, Leftover::Salvageable).unwrap();
        let second = AtomicFile::create(&path, Leftover::Salvageable).unwrap();
        let (a, b) = (first.temporary().unwrap(), second.temporary().unwrap());
        assert_ne!(a, b);
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(".profiler.data.") && name.ends_with(".tmp"),
            "{name}"
        );
        // Both writers are alive: neither file is a leftover.
        assert_eq!(leftovers(&path), Vec::<PathBuf>::new());
        // A killed writer's file stays, unlocked.
        let killed = a.to_owned();
        std::mem::forget(first);
        fs::write(dir.join(".profiler.data.1.tmp"), b"an old run's").unwrap();
        drop(second);
        let found = leftovers(&path);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found.contains(&dir.join(".profiler.data.1.tmp")));
        // The forgotten file's descriptor is still open in this process,
        // so its lock holds: it is not reported while "alive".
        assert!(killed.exists());
    }

    #[test]
    fn a_directory_or_missing_parent_is_refused_up_front() {
        let dir = scratch_dir("refuse");
        for leftover in [Leftover::Nothing, Leftover::Salvageable] {
            assert_eq!(
                AtomicFile::create(&dir, leftover).unwrap_err().kind(),
                io::ErrorKind::IsADirectory
            );
            let missing = dir.join("no/such/dir/out.data");
            assert_eq!(
                AtomicFile::create(&missing, leftover).unwrap_err().kind(),
                io::ErrorKind::NotFound
            );
            let slash = dir.join("missing-dir/");
            let mut slash = slash.into_os_string();
            slash.push("/");
            let error = AtomicFile::create(Path::new(&slash), leftover).unwrap_err();
            assert!(error.to_string().contains("no such directory"), "{error}");
        }
        assert_eq!(names(&dir), Vec::<String>::new());
    }
}
