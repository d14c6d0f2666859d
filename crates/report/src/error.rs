//! Errors of the reports.

use profiler_model::RecordingError;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Recording(#[from] RecordingError),

    #[error("the recording has no event '{requested}'; it has: {available}")]
    UnknownEvent {
        requested: String,
        available: String,
    },

    #[error("the recording has no module '{requested}'; it has: {available}")]
    UnknownModule {
        requested: String,
        available: String,
    },

    #[error("{}: {what}", path.display())]
    Histogram {
        path: std::path::PathBuf,
        what: String,
    },

    #[error("{0}")]
    Options(String),
}
