//! Where `record` writes: opened and checked before the command runs, and
//! kept going when writing fails.
//!
//! A recording is written to a visible temporary file beside its final
//! name, so that a profiler killed mid-run leaves a file `profiler report`
//! can read; later runs name such files. When writing fails (the disk is
//! full, the reader of a pipe went away), recording stops writing, says so
//! once, lets the command run to its end, and keeps what was written under
//! the final name: every chunk before the failure is readable.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use anyhow::{Result, anyhow};
use profiler_model::{Leftover, leftovers};

use crate::output::{Output, describe, is_stdout};

/// The recording's output, which swallows write errors after noting the
/// first: losing the end of a recording must not stop the command. Until
/// the header has been written through (the recording's writer flushes it
/// before the command runs), a write error is returned instead: nothing
/// has run yet, and the recording is refused.
pub struct RecordingFile {
    output: Output,
    /// What `-o` said, for messages.
    name: String,
    written: u64,
    error: Option<io::Error>,
    /// Whether the header has been written through: from then on a write
    /// error stops the writing, not the recording.
    started: bool,
}

impl RecordingFile {
    /// Opens `path` for the recording, or refuses it before anything runs.
    /// Names the files earlier runs that were killed left for it.
    pub fn create(path: &Path) -> Result<RecordingFile> {
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
            for leftover in leftovers(file) {
                eprintln!(
                    "profiler: {} was left by an earlier recording that was killed; read what \
                     it holds with `profiler report -i {0}`, rename it to keep it, or delete it",
                    leftover.display()
                );
            }
        }
        Ok(RecordingFile {
            output,
            name: describe(path),
            written: 0,
            error: None,
            started: false,
        })
    }

    /// Whether the recording can be read back from its final name.
    pub fn is_file(&self) -> bool {
        self.output.file().is_some()
    }

    /// Puts the recording in place. Returns whether all of it was written;
    /// if not, the user has been told what was kept.
    pub fn finish(self) -> Result<bool> {
        let is_file = self.is_file();
        self.output.commit().map_err(|error| {
            anyhow!(
                "cannot put the recording in place at {}: {error}",
                self.name
            )
        })?;
        if self.error.is_some() && is_file {
            eprintln!(
                "profiler: kept the {} bytes written in {}; `profiler report -i {1}` reads them",
                self.written, self.name
            );
        }
        Ok(self.error.is_none())
    }

    /// Notes the first write error once the header is written, and says
    /// so: from now on nothing is written. Before, the error is returned,
    /// naming the output.
    fn fail(&mut self, error: io::Error) -> io::Result<()> {
        if !self.started {
            let message = format!("cannot write the recording to {}: {error}", self.name);
            return Err(io::Error::new(error.kind(), message));
        }
        eprintln!(
            "profiler: cannot write {}: {error}; recording stops writing after {} bytes, \
             the command runs on",
            self.name, self.written
        );
        self.error = Some(error);
        Ok(())
    }
}

impl Write for RecordingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.error.is_some() {
            return Ok(buf.len());
        }
        match self.output.write(buf) {
            Ok(n) => {
                self.written += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => self.fail(e).map(|()| buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.error.is_none() {
            match self.output.flush() {
                Ok(()) => self.started = true,
                Err(e) => self.fail(e)?,
            }
        }
        Ok(())
    }
}
