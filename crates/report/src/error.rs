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
}
