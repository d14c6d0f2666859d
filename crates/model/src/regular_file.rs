//! Opening a file to read it, only if it is a regular file: a FIFO, a
//! device or a socket where a recording, a binary or a source file was
//! expected would block the reader for ever or feed it without end.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::OFlags;

/// Opens `path` for reading if it is a regular file (after following
/// symbolic links); otherwise an `InvalidInput` error that says what it is.
/// The open itself does not wait: a FIFO without a writer is refused, not
/// waited for.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    let what = if kind.is_file() {
        return Ok(file);
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
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

        let fifo = dir.join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from(0o600)).unwrap();
        let error = open_regular(&fifo).unwrap_err();
        assert_eq!(error.to_string(), "a FIFO, not a regular file");
        let error = open_regular(&dir).unwrap_err();
        assert_eq!(error.to_string(), "a directory, not a regular file");
        let error = open_regular(Path::new("/dev/null")).unwrap_err();
        assert_eq!(error.to_string(), "a character device, not a regular file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
