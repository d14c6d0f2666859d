//! Opening the recording a subcommand reads: the profiler's own, or a
//! perf.data file, told apart by their signatures.

use std::path::Path;

use crate::messages::say;
use anyhow::{Result, bail};
use profiler_model::Recording;

/// Opens the recording at `path`, saying once what of it could not be read
/// (it ends early, chunks failed their checksums) or what of a perf.data
/// file the views leave out: the views then show what could.
pub(crate) fn open(path: &Path) -> Result<Recording> {
    // `perf report -i -` reads a pipe; a recording is read from a file, at
    // any place and more than once.
    if path == Path::new("-") && !path.exists() {
        bail!(
            "-i -: recordings are not read from the standard input; save it to a file first \
             and name that with -i FILE"
        );
    }
    if profiler_perfdata::is_perf_data(path) {
        let perf_data = profiler_perfdata::open(path)?;
        for note in &perf_data.notes {
            say!("profiler: {}: {note}", path.display());
        }
        return Ok(perf_data.recording);
    }
    let recording = Recording::open(path)?;
    if let Some(damage) = &recording.damage {
        say!("profiler: warning: {}: {damage}", path.display());
    }
    Ok(recording)
}
