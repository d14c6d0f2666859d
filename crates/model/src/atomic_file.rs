//! A file that appears at its path only once it is complete.
//!
//! Writes go to a temporary file beside the destination; [`AtomicFile::commit`]
//! syncs it and renames it into place, so a reader sees either the old file or
//! the whole new one, never half of it. Dropping an uncommitted `AtomicFile`
//! (an error, a panic) removes the temporary file.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct AtomicFile {
    destination: PathBuf,
    temporary: PathBuf,
    file: File,
    committed: bool,
}

impl AtomicFile {
    /// Creates the temporary file for `destination`. Fails early if the
    /// destination is a directory or its directory cannot be written.
    pub fn create(destination: &Path) -> io::Result<AtomicFile> {
        if destination.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory",
            ));
        }
        let name = destination
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "it names no file"))?;
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(name);
        temporary_name.push(format!(".{}.tmp", std::process::id()));
        let temporary = destination.with_file_name(temporary_name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        Ok(AtomicFile {
            destination: destination.to_owned(),
            temporary,
            file,
            committed: false,
        })
    }

    /// Flushes the data to disk and renames the file into place.
    pub fn commit(mut self) -> io::Result<()> {
        self.file.sync_data()?;
        std::fs::rename(&self.temporary, &self.destination)?;
        self.committed = true;
        Ok(())
    }

    pub fn destination(&self) -> &Path {
        &self.destination
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
        if !self.committed {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("atomic-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn commit_replaces_the_destination_whole() {
        let dir = scratch_dir("commit");
        let path = dir.join("out.data");
        std::fs::write(&path, b"old").unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"new contents").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        file.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new contents");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }

    #[test]
    fn dropping_an_uncommitted_file_leaves_nothing_behind() {
        let dir = scratch_dir("drop");
        let path = dir.join("out.data");
        std::fs::write(&path, b"old").unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }

    #[test]
    fn a_directory_or_missing_parent_is_refused_up_front() {
        let dir = scratch_dir("refuse");
        assert_eq!(
            AtomicFile::create(&dir).unwrap_err().kind(),
            io::ErrorKind::IsADirectory
        );
        let missing = dir.join("no/such/dir/out.data");
        assert_eq!(
            AtomicFile::create(&missing).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}
