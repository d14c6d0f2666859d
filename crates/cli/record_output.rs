//! Where `record` writes: opened and checked before the command runs, and
//! kept going when writing fails.
//!
//! A recording is written to a visible temporary file beside its final
//! name (see [`AtomicFile`]), so that a
//! profiler killed mid-run leaves a file `profiler report` can read; later
//! runs name such files, and refuse to start while another live run writes
//! the same name. When writing fails (the disk is full, a file-size limit,
//! the reader of a pipe went away), recording stops writing, says so once,
//! lets the command run to its end, and leaves the final name as it was:
//! what was written stays under its temporary name, which is named, and
//! `record` exits with 125, the command's own status in the messages.

use std::ffi::OsStr;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use rustix::fs::{AtFlags, StatxFlags};

use crate::atomic_file::{AtomicFile, Leftover};
use crate::leftovers::{self, LiveWriter};
use crate::messages::say;
use crate::output::{Committed, Output, describe, is_stdout};

/// The recording's output, which swallows write errors after noting the
/// first: losing the end of a recording must not stop the command. Until
/// the header has been written through (the recording's writer flushes it
/// before the command runs), a write error is returned instead: nothing
/// has run yet, and the recording is refused.
pub(crate) struct RecordingFile {
    /// `None` once finished.
    output: Option<Output>,
    /// What `-o` said, for messages.
    name: String,
    written: u64,
    error: Option<io::Error>,
    /// The bytes written when the header had been written through: from
    /// then on a write error stops the writing, not the recording.
    header: Option<u64>,
}

/// What became of a recording.
#[derive(Debug)]
pub(crate) enum Finished {
    /// All of it was written: to the file at `path`, or to a stream.
    Whole { path: Option<PathBuf> },
    /// Not all of it: the final name is as it was; the messages have said
    /// where what was written is kept, if anywhere.
    Incomplete,
}

impl RecordingFile {
    /// Opens `path` for the recording, or refuses it before anything runs.
    /// Names the files earlier runs that were killed left for it.
    pub(crate) fn create(path: &Path) -> Result<RecordingFile> {
        let refuse = |why: &dyn std::fmt::Display| {
            anyhow!(
                "cannot write the recording to {}: {why}; choose another -o FILE",
                path.display()
            )
        };
        if is_stdout(path) && io::stdout().is_terminal() {
            return Err(refuse(
                &"the standard output is a terminal; pipe or redirect it",
            ));
        }
        let output = Output::create(path, Leftover::Salvageable).map_err(|e| refuse(&e))?;
        if is_stdout(path) {
            // The recording has the standard output to itself: what the
            // command prints goes to the standard error, as perf does it.
            rustix::stdio::dup2_stdout(io::stderr()).map_err(|e| refuse(&e))?;
        }
        if let Some(file) = output.file() {
            let found = leftovers::scan(file.dir(), file.name(), file.temporary());
            if let Some(writer) = found.live.iter().find(|w| is_before(w, file)) {
                return Err(anyhow!(
                    "cannot write the recording to {}: another `profiler record` (pid {}) is \
                     writing it; wait until it ends, or choose another -o FILE",
                    path.display(),
                    writer.pid
                ));
            }
            for leftover in found.killed {
                let leftover = file.dir().named(&leftover);
                say!(
                    "profiler: {} was left by an earlier recording that was killed; read what \
                     it holds with `profiler report -i {0}`, rename it to keep it, or delete it",
                    leftover.display()
                );
            }
        }
        Ok(RecordingFile {
            output: Some(output),
            name: describe(path),
            written: 0,
            error: None,
            header: None,
        })
    }

    /// Whether the recording can be read back from its final name.
    pub(crate) fn is_file(&self) -> bool {
        self.output.as_ref().is_some_and(|o| o.file().is_some())
    }

    /// Puts the recording in place if all of it was written, and says what
    /// became of it if not.
    pub(crate) fn finish(mut self) -> Finished {
        let Some(output) = self.output.take() else {
            return Finished::Incomplete;
        };
        if let Some(error) = &self.error {
            let is_file = output.file().is_some();
            let kept = output.keep();
            self.say_incomplete(error, is_file, kept.as_deref());
            return Finished::Incomplete;
        }
        match output.commit() {
            Ok(Committed::File(placed)) => {
                if placed.moved {
                    say!(
                        "profiler: the directory of {} was moved while recording: the recording \
                         is {}",
                        self.name,
                        placed.path.display()
                    );
                }
                Finished::Whole {
                    path: Some(placed.path),
                }
            }
            Ok(Committed::Stream) => Finished::Whole { path: None },
            Err(error) => {
                say!(
                    "profiler: cannot put the recording in place at {}: {error}",
                    self.name
                );
                Finished::Incomplete
            }
        }
    }

    /// Says that the recording stopped at `error`, and where what was
    /// written is.
    fn say_incomplete(&self, error: &io::Error, is_file: bool, kept: Option<&Path>) {
        let written = self.written;
        match kept {
            Some(kept) => say!(
                "profiler: the recording is incomplete ({error}): the {written} bytes written \
                 are kept in {}, which `profiler report -i {0}` reads; {} is as it was",
                kept.display(),
                self.name
            ),
            None if is_file => say!(
                "profiler: the recording is incomplete ({error}), and its directory is gone: \
                 nothing of it is kept; {} is as it was",
                self.name
            ),
            None => say!(
                "profiler: the recording is incomplete ({error}): {} was sent its first \
                 {written} bytes",
                self.name
            ),
        }
    }

    /// Notes the first write error once the header is written, and says
    /// so: from now on nothing is written. Before, the error is returned,
    /// naming the output.
    fn fail(&mut self, error: io::Error) -> io::Result<()> {
        if self.header.is_none() {
            let message = format!("cannot write the recording to {}: {error}", self.name);
            return Err(io::Error::new(error.kind(), message));
        }
        say!(
            "profiler: cannot write {}: {error}; recording stops writing after {} bytes, \
             the command runs on",
            self.name,
            self.written
        );
        self.error = Some(error);
        Ok(())
    }
}

/// Whether the live `writer` started writing the same name before `ours`:
/// of two runs started together, the later one gives way. A file system
/// that does not tell when files were made makes every other run earlier.
fn is_before(writer: &LiveWriter, ours: &AtomicFile) -> bool {
    let stat = rustix::fs::statx(ours.file(), "", AtFlags::EMPTY_PATH, StatxFlags::BTIME);
    let born = stat.ok().as_ref().and_then(leftovers::born);
    let ours_name = ours.temporary().unwrap_or(OsStr::new(""));
    match (writer.born, born) {
        (Some(theirs), Some(ours)) => (theirs, writer.name.as_os_str()) < (ours, ours_name),
        _ => true,
    }
}

impl Write for RecordingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(output) = self.output.as_mut().filter(|_| self.error.is_none()) else {
            return Ok(buf.len());
        };
        match output.write(buf) {
            Ok(n) => {
                self.written += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => self.fail(e).map(|()| buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        let Some(output) = self.output.as_mut().filter(|_| self.error.is_none()) else {
            return Ok(());
        };
        match output.flush() {
            Ok(()) => {
                self.header.get_or_insert(self.written);
            }
            Err(e) => self.fail(e)?,
        }
        Ok(())
    }
}

impl Drop for RecordingFile {
    /// A recording given up on (an error once the command ran) keeps what
    /// it wrote past its header, and says where; one that holds no more
    /// than its header leaves nothing.
    fn drop(&mut self) {
        let Some(output) = self.output.take() else {
            return;
        };
        if self.header.is_some_and(|header| self.written > header)
            && let Some(kept) = output.keep()
        {
            say!(
                "profiler: the {} bytes recorded are kept in {}, which `profiler report -i {1}` \
                 reads",
                self.written,
                kept.display()
            );
        }
    }
}
