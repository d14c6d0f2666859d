//! The exit statuses the binary ends with when a subcommand fails: `record`
//! and `stat` keep 126 and 127 for a command that could not be run, and 125
//! for the profiler's own failure, as `env`, `nice` and `timeout` do; the
//! other subcommands exit with 1.

use profiler_sampler::SamplerError;

/// Exit statuses of `record` when it cannot run the command, as `env`,
/// `nice` and `timeout` use them.
pub(crate) const PROFILER_FAILED: u8 = 125;
pub(crate) const COMMAND_NOT_RUNNABLE: u8 = 126;
pub(crate) const COMMAND_NOT_FOUND: u8 = 127;

/// The status for `error`: for `record` and `stat` (`runs_command`), which
/// of the command's start or the profiler failed, or 128 + N when signal N
/// stopped them before the command started; 1 for the other subcommands.
pub(crate) fn failure_status(error: &anyhow::Error, runs_command: bool) -> u8 {
    if !runs_command {
        return 1;
    }
    let sampler = error.downcast_ref::<SamplerError>();
    if let Some(signal) = sampler.and_then(SamplerError::interrupted_by) {
        return 128u8.saturating_add(signal as u8);
    }
    match sampler {
        Some(e) if e.is_command_not_found() => COMMAND_NOT_FOUND,
        Some(e) if e.is_command_not_runnable() => COMMAND_NOT_RUNNABLE,
        _ => PROFILER_FAILED,
    }
}
