//! Why a module's addresses could not be named.

use std::io;

use profiler_model::BuildId;

#[derive(Debug, thiserror::Error)]
pub enum SymbolsError {
    #[error("cannot read {path}: {error}")]
    Read { path: String, error: io::Error },

    #[error("{path} is not a readable ELF file: {error}")]
    Parse { path: String, error: object::Error },

    #[error(
        "{path} has changed since the recording (its build-id is {found}, the recording's \
         {recorded}); its addresses are shown unnamed"
    )]
    BuildIdMismatch {
        path: String,
        recorded: BuildId,
        found: BuildId,
    },
}
