//! Errors met while reading a recording. Each names the file and says what to
//! do about it.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error("cannot open {}: {error}{}", path.display(), hint_for(error))]
    Open { path: PathBuf, error: io::Error },

    #[error("cannot read {}: {error}", path.display())]
    Read { path: PathBuf, error: io::Error },

    #[error(
        "{} is not a profiler recording (it lacks the profiler's signature); \
         make one with `profiler record -- COMMAND`",
        path.display()
    )]
    NotARecording { path: PathBuf },

    #[error(
        "{} is truncated: it ends inside its header, before any record (interrupted as \
         recording began, or cut short since); record it again",
        path.display()
    )]
    Truncated { path: PathBuf },

    #[error(
        "{} uses recording format version {found}, but this profiler reads versions 2 to \
         {supported}; read it with the profiler that wrote it, or record it again",
        path.display()
    )]
    Version {
        path: PathBuf,
        found: u32,
        supported: u32,
    },

    #[error("{} is corrupt at byte {offset}: {what}; record it again", path.display())]
    Corrupt {
        path: PathBuf,
        offset: u64,
        what: String,
    },

    /// A file in another format (perf.data) that its reader cannot read on:
    /// `what` says why, and what to do.
    #[error("cannot read {}: {what}", path.display())]
    Unreadable { path: PathBuf, what: String },
}

fn hint_for(error: &io::Error) -> &'static str {
    match error.kind() {
        io::ErrorKind::NotFound => {
            "; make a recording with `profiler record -- COMMAND` or name one with -i FILE"
        }
        io::ErrorKind::IsADirectory => "; name a recording file with -i FILE",
        // Recordings are read from files, at any place and more than once.
        io::ErrorKind::InvalidInput => "; save it to a file first and name that with -i FILE",
        _ => "",
    }
}
