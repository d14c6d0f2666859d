//! Files the reading subcommands write: whole or not at all.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use profiler_model::AtomicFile;

/// Writes `path` through `write`, replacing it only once everything was
/// written.
pub fn write_atomically<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<AtomicFile>) -> Result<T>,
) -> Result<T> {
    let file = AtomicFile::create(path).map_err(|error| {
        anyhow!(
            "cannot write {}: {error}; choose another -o FILE",
            path.display()
        )
    })?;
    let mut out = BufWriter::new(file);
    let value = write(&mut out)?;
    let write_error = || format!("cannot write {}", path.display());
    out.flush().with_context(write_error)?;
    let file = out
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(write_error)?;
    file.commit().with_context(write_error)?;
    Ok(value)
}
