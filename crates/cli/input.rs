//! Opening the recording a subcommand reads.

use std::path::Path;

use anyhow::Result;
use profiler_model::Recording;

/// Opens the recording at `path`, saying once what of it could not be read
/// (it ends early, chunks failed their checksums): the views then show what
/// could.
pub fn open(path: &Path) -> Result<Recording> {
    let recording = Recording::open(path)?;
    if let Some(damage) = &recording.damage {
        eprintln!("profiler: warning: {}: {damage}", path.display());
    }
    Ok(recording)
}
