//! A regular file that appears at its name only once it is complete.
//!
//! Writes go to a temporary file made in the destination's directory,
//! which is held open ([`OutputDir`]); [`AtomicFile::commit`] syncs it and
//! renames it over the name relative to that directory, so a reader sees
//! the old file or the whole new one, never an empty or partial one, and a
//! directory moved meanwhile keeps the file. Nothing is ever done to the
//! file being replaced but that rename: it is not opened, exchanged or
//! emptied, and its mode is copied only because it is this user's (see
//! [`placement`](crate::placement)). A new file gets `0666 & ~umask`.
//!
//! What a crash leaves behind is chosen by [`Leftover`]. Dropping an
//! uncommitted `AtomicFile` (an error) removes its temporary file.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::output_dir::OutputDir;
use crate::placement::Found;

/// What a crash of the writer leaves of an unfinished file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Leftover {
    /// Nothing: the data goes to an unnamed file (`O_TMPFILE`) that is
    /// given a name only once complete, where the file system allows;
    /// elsewhere to a hidden, uniquely named file. For outputs worth
    /// nothing half-written.
    Nothing,
    /// A visible, uniquely named `.NAME.RANDOM.tmp` beside the destination,
    /// locked while it is written, that keeps whatever was written when
    /// the writer was killed; [`leftovers`](crate::leftovers) finds those
    /// of earlier runs. For recordings, which are worth reading however
    /// short.
    Salvageable,
}

#[derive(Debug)]
pub(crate) struct AtomicFile {
    dir: OutputDir,
    name: OsString,
    file: File,
    /// The temporary file's name in `dir`; `None` while it has none.
    temporary: Option<OsString>,
    leftover: Leftover,
    /// Committed, or kept on purpose: the temporary file is not removed.
    settled: bool,
}

/// Where a committed file is.
#[derive(Debug)]
pub(crate) struct Placed {
    pub(crate) path: PathBuf,
    /// Whether that is not where the user named it: the directory was
    /// moved while the file was written.
    pub(crate) moved: bool,
}

impl AtomicFile {
    /// Creates the temporary file for `found`, a new name or a regular
    /// file of this user's ([`placement`](crate::placement) decides), in
    /// the directory it was found in.
    pub(crate) fn create(found: Found, leftover: Leftover) -> io::Result<AtomicFile> {
        let unnamed = match leftover {
            Leftover::Nothing => unnamed_file(&found.dir).ok(),
            Leftover::Salvageable => None,
        };
        let (file, temporary) = match unnamed {
            Some(file) => (file, None),
            None => {
                let (file, name) = named_file(&found.dir, &found.name)?;
                if leftover == Leftover::Salvageable {
                    // Held until the file is closed: tells a later run
                    // that this one is alive. Where locks are not kept
                    // (some network file systems), later runs only name
                    // the file.
                    let _ = file.try_lock();
                }
                (file, Some(name))
            }
        };
        let atomic = AtomicFile {
            dir: found.dir,
            name: found.name,
            file,
            temporary,
            leftover,
            settled: false,
        };
        if let Some(existing) = &found.existing {
            let mode = Mode::from_raw_mode((existing.stx_mode & 0o777).into());
            rustix::fs::fchmod(&atomic.file, mode)?;
        }
        Ok(atomic)
    }

    /// Flushes the data to disk and puts the file in place. If that fails,
    /// a [`Leftover::Salvageable`] file is kept, and the error names it.
    pub(crate) fn commit(mut self) -> io::Result<Placed> {
        let result = self
            .file
            .sync_data()
            .and_then(|()| self.still_replaceable())
            .and_then(|()| match &self.temporary {
                Some(temporary) => {
                    rustix::fs::renameat(self.dir.fd(), temporary, self.dir.fd(), &self.name)
                        .map_err(io::Error::from)
                }
                None => link_unnamed(&self.file, &self.dir, &self.name),
            });
        match result {
            Ok(()) => {
                self.settled = true;
                let (path, moved) = self.dir.whereabouts(&self.name);
                Ok(Placed { path, moved })
            }
            Err(error) => Err(self.failed(error)),
        }
    }

    /// Stops here, keeping what was written under its temporary name;
    /// returns where that is, if it is anywhere (an unnamed file, or one
    /// whose directory was removed, is lost).
    pub(crate) fn keep(mut self) -> Option<PathBuf> {
        self.settled = true;
        let temporary = self.temporary.as_ref()?;
        match self.dir.is_removed() {
            true => None,
            false => Some(self.dir.whereabouts(temporary).0),
        }
    }

    pub(crate) fn dir(&self) -> &OutputDir {
        &self.dir
    }

    pub(crate) fn name(&self) -> &OsStr {
        &self.name
    }

    /// The temporary file's name in the directory, if it has one.
    pub(crate) fn temporary(&self) -> Option<&OsStr> {
        self.temporary.as_deref()
    }

    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// Checks the name again just before the rename: what has appeared
    /// there meanwhile is replaced only if it is a regular file of this
    /// user's.
    fn still_replaceable(&self) -> io::Result<()> {
        let Some(stat) = self.dir.stat(&self.name)? else {
            return Ok(());
        };
        let regular = FileType::from_raw_mode(stat.stx_mode.into()) == FileType::RegularFile;
        if regular && stat.stx_uid == rustix::process::geteuid().as_raw() {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "something else was put at that name meanwhile (not a file of yours), which is not \
             replaced",
        ))
    }

    /// The error of a failed commit, saying what became of the file.
    fn failed(mut self, error: io::Error) -> io::Error {
        let kind = error.kind();
        if self.dir.is_removed() {
            self.settled = true;
            return io::Error::new(
                kind,
                "its directory was removed while it was written, with what was written in it",
            );
        }
        if self.leftover == Leftover::Nothing {
            return error;
        }
        match self.keep() {
            Some(kept) => io::Error::new(
                kind,
                format!("{error}; what was written is kept in {}", kept.display()),
            ),
            None => error,
        }
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
            && !self.settled
            && !keep
        {
            let _ = rustix::fs::unlinkat(self.dir.fd(), temporary, AtFlags::empty());
        }
    }
}

/// An unnamed file in `dir`, if the file system has them and the file can
/// be named later through /proc.
fn unnamed_file(dir: &OutputDir) -> io::Result<File> {
    if !std::path::Path::new("/proc/self/fd").is_dir() {
        return Err(io::ErrorKind::Unsupported.into());
    }
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir.fd(), ".", flags, Mode::from_raw_mode(0o666))?;
    Ok(File::from(fd))
}

/// A new file `.NAME.RANDOM.tmp` in `dir`, created exclusively: a name in
/// use, by a live run or a dead one, by a link or a FIFO, is never taken
/// over or opened.
fn named_file(dir: &OutputDir, name: &OsStr) -> io::Result<(File, OsString)> {
    let flags = OFlags::CREATE
        | OFlags::EXCL
        | OFlags::NOFOLLOW
        | OFlags::RDWR
        | OFlags::CLOEXEC
        | OFlags::NOCTTY;
    let mut last_error = Errno::EXIST;
    for _ in 0..16 {
        let temporary = temporary_name(name)?;
        match rustix::fs::openat(dir.fd(), &temporary, flags, Mode::from_raw_mode(0o666)) {
            Ok(fd) => return Ok((File::from(fd), temporary)),
            Err(Errno::EXIST) => last_error = Errno::EXIST,
            Err(e) => return Err(e.into()),
        }
    }
    Err(last_error.into())
}

/// `.NAME.RANDOM.tmp`, with ten random letters and digits.
fn temporary_name(name: &OsStr) -> io::Result<OsString> {
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

/// Gives the unnamed `file` the name `name` in `dir`: directly when the
/// name is free, else through a temporary name renamed over it.
fn link_unnamed(file: &File, dir: &OutputDir, name: &OsStr) -> io::Result<()> {
    let source = format!("/proc/self/fd/{}", file.as_raw_fd());
    let link = |to: &OsStr| rustix::fs::linkat(CWD, &source, dir.fd(), to, AtFlags::SYMLINK_FOLLOW);
    match link(name) {
        Err(Errno::EXIST) => {}
        other => return other.map_err(io::Error::from),
    }
    for _ in 0..16 {
        let temporary = temporary_name(name)?;
        match link(&temporary) {
            Ok(()) => {
                return rustix::fs::renameat(dir.fd(), &temporary, dir.fd(), name).map_err(|e| {
                    let _ = rustix::fs::unlinkat(dir.fd(), &temporary, AtFlags::empty());
                    e.into()
                });
            }
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::ErrorKind::AlreadyExists.into())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::*;
    use crate::placement::{Destination, place};

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

    fn create(path: &Path, leftover: Leftover) -> io::Result<AtomicFile> {
        match place(path)? {
            Destination::Replace(found) => AtomicFile::create(found, leftover),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn commit_replaces_the_destination_whole_and_keeps_its_mode() {
        for leftover in [Leftover::Nothing, Leftover::Salvageable] {
            let dir = scratch_dir(&format!("commit-{leftover:?}"));
            let path = dir.join("out.data");
            fs::write(&path, b"old").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
            let mut file = create(&path, leftover).unwrap();
            file.write_all(b"new contents").unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"old");
            let placed = file.commit().unwrap();
            assert_eq!((placed.path, placed.moved), (path.clone(), false));
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
            let mut file = create(&path, leftover).unwrap();
            file.write_all(b"<svg/>").unwrap();
            assert!(!path.exists());
            // This user writes the name meanwhile: it is replaced.
            fs::write(&path, b"meanwhile").unwrap();
            file.commit().unwrap();
            assert_eq!(fs::read(&path).unwrap(), b"<svg/>");
            assert_eq!(names(&dir), ["out.svg"]);
        }
    }

    #[test]
    fn what_appears_at_the_name_meanwhile_and_is_no_file_is_not_replaced() {
        let dir = scratch_dir("appeared");
        let path = dir.join("out.data");
        let mut file = create(&path, Leftover::Salvageable).unwrap();
        file.write_all(b"recorded").unwrap();
        std::os::unix::fs::symlink("elsewhere", &path).unwrap();
        let error = file.commit().unwrap_err();
        assert!(error.to_string().contains("is not replaced"), "{error}");
        assert!(
            error.to_string().contains("what was written is kept in"),
            "{error}"
        );
        assert!(fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(names(&dir).len(), 2);
    }

    #[test]
    fn dropping_an_uncommitted_file_leaves_nothing_behind() {
        for leftover in [Leftover::Nothing, Leftover::Salvageable] {
            let dir = scratch_dir(&format!("drop-{leftover:?}"));
            let path = dir.join("out.data");
            fs::write(&path, b"old").unwrap();
            let mut file = create(&path, leftover).unwrap();
            file.write_all(b"half").unwrap();
            drop(file);
            assert_eq!(fs::read(&path).unwrap(), b"old");
            assert_eq!(names(&dir), ["out.data"]);
        }
    }

    #[test]
    fn a_kept_file_stays_under_its_temporary_name_and_the_old_one_in_place() {
        let dir = scratch_dir("keep");
        let path = dir.join("out.data");
        fs::write(&path, b"old").unwrap();
        let mut file = create(&path, Leftover::Salvageable).unwrap();
        file.write_all(b"partial").unwrap();
        let temporary = file.temporary().unwrap().to_owned();
        let kept = file.keep().unwrap();
        assert_eq!(kept, dir.join(&temporary));
        assert_eq!(fs::read(&kept).unwrap(), b"partial");
        assert_eq!(fs::read(&path).unwrap(), b"old");
    }

    #[test]
    fn salvageable_files_are_visible_and_unique() {
        let dir = scratch_dir("salvage");
        let path = dir.join("profiler.data");
        let first = create(&path, Leftover::Salvageable).unwrap();
        let second = create(&path, Leftover::Salvageable).unwrap();
        let (a, b) = (first.temporary().unwrap(), second.temporary().unwrap());
        assert_ne!(a, b);
        let name = a.to_string_lossy().into_owned();
        assert!(
            name.starts_with(".profiler.data.") && name.ends_with(".tmp"),
            "{name}"
        );
        assert_eq!(names(&dir).len(), 2);
    }

    #[test]
    fn a_directory_moved_meanwhile_keeps_the_file() {
        let dir = scratch_dir("moved");
        fs::create_dir(dir.join("before")).unwrap();
        let mut file = create(&dir.join("before/out.data"), Leftover::Salvageable).unwrap();
        file.write_all(b"recorded").unwrap();
        fs::rename(dir.join("before"), dir.join("after")).unwrap();
        let placed = file.commit().unwrap();
        assert!(placed.moved);
        assert_eq!(placed.path, dir.join("after/out.data"));
        assert_eq!(fs::read(dir.join("after/out.data")).unwrap(), b"recorded");
    }
}
