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

    #[error(
        "no function with samples is named '{symbol}' or starts with it; the hottest: \
         {hottest}; or give MODULE:ADDRESS"
    )]
    NoFunction { symbol: String, hottest: String },

    #[error(
        "'{symbol}' matches several functions with samples: {candidates}; give a whole name, \
         or MODULE:ADDRESS"
    )]
    AmbiguousFunction { symbol: String, candidates: String },

    #[error("the recording has no samples of {filter}; it has {available}")]
    NoMatchingSamples { filter: String, available: String },

    #[error("{}: {what}", path.display())]
    Histogram {
        path: std::path::PathBuf,
        what: String,
    },

    #[error("{0}")]
    Options(String),

    /// Recordings that are not one job's, or what a job cannot give.
    #[error("{0}")]
    Job(String),

    #[error("cannot write: {0}")]
    Write(std::io::Error),
}

/// Not `#[from]`: the message already states the cause, which must not be
/// chained a second time.
impl From<std::io::Error> for ReportError {
    fn from(error: std::io::Error) -> Self {
        ReportError::Write(error)
    }
}
