//! The `profiler` binary: parse the command line, convert it to a plain
//! config, call one library function per subcommand, print.

mod annotate;
mod args;
mod diff;
mod doctor;
mod export;
mod flamegraph;
mod hist;
mod input;
mod list;
mod output;
mod progress;
mod record;
mod record_output;
mod report;
mod stat;
mod symbolize;
mod symbols;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use profiler_sampler::SamplerError;

use crate::args::{Cli, Command};

/// Exit statuses of `record` when it cannot run the command, as `env`,
/// `nice` and `timeout` use them.
const PROFILER_FAILED: u8 = 125;
const COMMAND_NOT_RUNNABLE: u8 = 126;
const COMMAND_NOT_FOUND: u8 = 127;

fn main() -> ExitCode {
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(error) => return usage_error(error),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    let is_record = matches!(cli.command, Command::Record(_) | Command::Stat(_));
    let result = match cli.command {
        Command::Record(args) => record::run(
            args,
            matches.subcommand_matches("record").unwrap_or(&matches),
        ),
        Command::Report(args) => report::run(args),
        Command::Hist(args) => hist::run(args),
        Command::Annotate(args) => annotate::run(args),
        Command::Flamegraph(args) => flamegraph::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Export(args) => export::run(args),
        Command::Symbolize(args) => symbolize::run(args),
        Command::List(args) => list::run(args),
        Command::Stat(args) => stat::run(args),
        Command::Doctor(args) => doctor::run(args),
    };
    match result {
        Ok(code) => code,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("profiler: {error:#}");
            ExitCode::from(failure_status(&error, is_record))
        }
    }
}

/// Help and version go to stdout; a usage error is one line and exit 2.
fn usage_error(error: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) || error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    {
        let _ = error.print();
        return if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let text = error.to_string();
    let mut message = String::new();
    for line in text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:"))
    {
        if line.is_empty() {
            continue;
        }
        if !message.is_empty() {
            message.push_str(if message.ends_with(':') { " " } else { "; " });
        }
        message.push_str(line.trim_start_matches("error: "));
    }
    let _ = writeln!(io::stderr(), "profiler: {message}; see `profiler --help`");
    ExitCode::from(2)
}

fn failure_status(error: &anyhow::Error, is_record: bool) -> u8 {
    if !is_record {
        return 1;
    }
    match error.downcast_ref::<SamplerError>() {
        Some(e) if e.is_command_not_found() => COMMAND_NOT_FOUND,
        Some(e) if e.is_command_not_runnable() => COMMAND_NOT_RUNNABLE,
        _ => PROFILER_FAILED,
    }
}

/// `profiler report | head` is not an error.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
