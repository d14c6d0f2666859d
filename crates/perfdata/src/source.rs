//! The records of a checked perf.data file, streamed through
//! linux-perf-data (in time order: it sorts them a round at a time) and
//! converted one by one.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use linux_perf_data::{PerfFile, PerfFileReader, PerfRecordIter};
use profiler_model::{Record, RecordSource, RecordingError, SourceRecords};

use crate::records::{Converter, FileFacts, Skipped};

/// A perf.data file whose layout was checked when it was opened.
#[derive(Debug)]
pub(crate) struct PerfDataSource {
    pub path: PathBuf,
    pub file: Arc<File>,
    /// The file's size and modification time when it was checked: a file
    /// that changed since is not read on.
    pub stamp: (u64, Option<SystemTime>),
    pub facts: Arc<FileFacts>,
}

impl PerfDataSource {
    /// The file's header as linux-perf-data reads it, and its records.
    pub(crate) fn open_records(&self) -> Result<PerfRecords, RecordingError> {
        let metadata = self
            .file
            .metadata()
            .map_err(|error| self.read_error(error))?;
        if (metadata.len(), metadata.modified().ok()) != self.stamp {
            return Err(self.unreadable("it changed while being read".into()));
        }
        let reader = BufReader::with_capacity(1 << 20, PositionedFile::new(&self.file));
        let PerfFileReader {
            perf_file,
            record_iter,
        } = catch(|| PerfFileReader::parse_file(reader))
            .map_err(|what| self.unreadable(what))?
            .map_err(|error| self.unreadable(error.to_string()))?;
        Ok(PerfRecords {
            path: self.path.clone(),
            perf_file,
            record_iter,
            facts: Arc::clone(&self.facts),
            skipped: Skipped::default(),
            done: false,
        })
    }

    fn read_error(&self, error: io::Error) -> RecordingError {
        RecordingError::Read {
            path: self.path.clone(),
            error,
        }
    }

    fn unreadable(&self, what: String) -> RecordingError {
        RecordingError::Unreadable {
            path: self.path.clone(),
            what,
        }
    }
}

impl RecordSource for PerfDataSource {
    fn records(&self) -> Result<SourceRecords, RecordingError> {
        Ok(Box::new(self.open_records()?))
    }
}

/// The header of the checked perf.data file `file`, as linux-perf-data
/// reads it.
pub(crate) fn read_header(file: &Arc<File>) -> Result<PerfFile, String> {
    let reader = BufReader::new(PositionedFile::new(file));
    let parsed = catch(|| PerfFileReader::parse_file(reader))?.map_err(|e| e.to_string())?;
    Ok(parsed.perf_file)
}

/// The profiler's records of a perf.data file.
pub(crate) struct PerfRecords {
    path: PathBuf,
    pub perf_file: PerfFile,
    record_iter: PerfRecordIter<BufReader<PositionedFile>>,
    facts: Arc<FileFacts>,
    /// What was left out so far.
    pub skipped: Skipped,
    done: bool,
}

impl Iterator for PerfRecords {
    type Item = Result<Record, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.next_converted() {
                Ok(Some(record)) => return Some(Ok(record)),
                Ok(None) => {}
                Err(what) => {
                    self.done = true;
                    return Some(Err(RecordingError::Unreadable {
                        path: self.path.clone(),
                        what,
                    }));
                }
            }
        }
        None
    }
}

impl PerfRecords {
    /// The next record, converted: `None` for one the profiler skips or
    /// at the end (which sets `done`).
    fn next_converted(&mut self) -> Result<Option<Record>, String> {
        let PerfRecords {
            perf_file,
            record_iter,
            facts,
            skipped,
            done,
            ..
        } = self;
        catch(|| {
            let Some(record) = record_iter
                .next_record(perf_file)
                .map_err(|e| e.to_string())?
            else {
                *done = true;
                return Ok(None);
            };
            let mut converter = Converter {
                facts,
                skipped: *skipped,
            };
            let converted = converter.convert(record).map_err(|e| e.to_string())?;
            *skipped = converter.skipped;
            Ok(converted)
        })?
    }
}

/// Runs `work`, turning a panic in the parser into an error: the file was
/// checked for what makes it abort, but a malformed record must end the
/// reading, not the process.
fn catch<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    panic::catch_unwind(AssertUnwindSafe(work))
        .map_err(|_| "linux-perf-data failed on a malformed record".to_owned())
}

/// Reads a shared file at positions of its own, so that several readers
/// of the same file do not move each other's offset.
pub(crate) struct PositionedFile {
    file: Arc<File>,
    position: u64,
}

impl PositionedFile {
    pub(crate) fn new(file: &Arc<File>) -> PositionedFile {
        PositionedFile {
            file: Arc::clone(file),
            position: 0,
        }
    }
}

impl Read for PositionedFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.position)?;
        self.position += n as u64;
        Ok(n)
    }
}

impl Seek for PositionedFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let base = match to {
            SeekFrom::Start(offset) => {
                self.position = offset;
                return Ok(offset);
            }
            SeekFrom::Current(delta) => (self.position, delta),
            SeekFrom::End(delta) => (self.file.metadata()?.len(), delta),
        };
        self.position = base
            .0
            .checked_add_signed(base.1)
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        Ok(self.position)
    }
}
