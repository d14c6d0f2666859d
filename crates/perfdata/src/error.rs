//! Why a perf.data file is not read: one line each, naming the file and
//! what to do.

use std::io;
use std::path::PathBuf;

use profiler_model::RecordingError;

/// A perf.data file that cannot be read, and why.
#[derive(Debug, thiserror::Error)]
pub enum PerfDataError {
    /// Refused when opened.
    #[error("{}: {refusal}", path.display())]
    Refused { path: PathBuf, refusal: Refusal },

    /// A record could not be read.
    #[error(transparent)]
    Records(#[from] RecordingError),
}

/// Why a perf.data file cannot be read. Each says it after the file's name.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("not a perf.data file (it lacks perf's PERFILE2 signature)")]
    NotPerfData,

    #[error(
        "a perf.data file of perf's first format (PERFFILE), which profiler does not read; \
         read it with perf"
    )]
    VersionOne,

    #[error(
        "perf's pipe format (`perf record -o -`), which profiler does not read; record into a \
         file instead (`perf record -o perf.data`)"
    )]
    Pipe,

    #[error(
        "a recording in several files, as `perf record --threads` writes into a directory, \
         which profiler does not read; record without --threads"
    )]
    Directory,

    #[error(
        "the data size field is 0 which is unexpected: was the 'perf record' command properly \
         terminated?"
    )]
    Unfinished,

    #[error("cut short: {0}; it was not written whole (or was copied in part)")]
    Truncated(String),

    #[error("not a readable perf.data file: {0}")]
    Corrupt(String),

    #[error(
        "a `perf stat record` file: it holds counts, not samples; read it with `perf stat report`"
    )]
    Stat,

    #[error("it holds no event that takes samples")]
    NoEvents,

    #[error("{0}")]
    Read(io::Error),
}

impl From<io::Error> for Refusal {
    fn from(error: io::Error) -> Refusal {
        match error.kind() {
            io::ErrorKind::UnexpectedEof => Refusal::Truncated("it ends early".into()),
            _ => Refusal::Read(error),
        }
    }
}
