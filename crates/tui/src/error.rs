//! What can stop a screen.

use std::io;

use profiler_model::RecordingError;
use profiler_sampler::SamplerError;

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("the terminal: {0}")]
    Terminal(#[source] io::Error),
    #[error("writing the snapshot: {0}")]
    Output(#[source] io::Error),
    #[error(transparent)]
    Sampler(#[from] SamplerError),
    #[error(transparent)]
    Recording(#[from] RecordingError),
    #[error("the sampling thread stopped unexpectedly")]
    SamplerPanicked,
}
