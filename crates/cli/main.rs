//! The `profiler` binary: parse the command line, convert it to a plain
//! config, call one library function per subcommand, print.
//!
//! It owns both ends of the data flow, and nothing between them: what the
//! user asks for in, one-line messages and exit statuses out. For example
//!
//! ```text
//! profiler record -e cpu-clock -o app.data -- ./app
//!     RecordArgs -> RecordConfig -> Recorder::new(..)?.record(file, None, unwinder, level)
//!         -> summary on stderr
//! profiler stat -p 1234 --duration 2
//!     StatArgs -> StatConfig { target: Target::Processes([1234]), .. } -> Stat::run -> counts
//! ```
//!
//! Usage errors (clap's, conflicting flags included) exit with 2; `record`
//! and `stat` pass the command's status on, or 125, 126, 127 when the
//! profiler, or the command's start, failed; a signal that stops `record`
//! before the command started exits as that signal would (128 + N).
//!
//! Nothing here prints with `eprintln!`/`println!`, which panic when the
//! standard error or output is broken: messages go through `say!`.

#![deny(clippy::print_stderr, clippy::print_stdout)]

mod annotate;
mod archive;
mod args;
mod atomic_file;
mod completions;
mod diff;
mod doctor;
mod env_options;
mod exit_status;
mod export;
mod flamegraph;
mod hist;
mod input;
mod job;
mod job_input;
mod leftovers;
mod list;
mod man;
mod messages;
mod once;
mod output;
mod output_dir;
mod perf_options;
mod placement;
mod progress;
mod record;
mod record_args;
mod record_histogram;
mod record_output;
mod report;
mod script;
mod shared_args;
mod stat;
mod stat_args;
mod symbolize;
mod symbols;
mod top;
mod top_args;
mod width;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::args::{Cli, Command};
use crate::exit_status::failure_status;
use crate::messages::say;

fn main() -> ExitCode {
    // A file-size limit makes writes fail, which is said, keeping the old
    // file, rather than killing the profiler without a word.
    profiler_sampler::survive_file_size_limit();
    let variable = std::env::var(env_options::VARIABLE).ok();
    let args =
        match env_options::with_env_options(std::env::args_os().collect(), variable.as_deref()) {
            Ok(args) => args,
            Err(message) => {
                say!("profiler: {message}");
                return ExitCode::from(2);
            }
        };
    let matches = match Cli::command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(error) => return usage_error(error),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    let is_record = matches!(
        cli.command,
        Command::Record(_) | Command::Stat(_) | Command::Top(_)
    );
    // A signal that comes as `record` ends, once its recording is written,
    // is noted and passed over, not left to end the profiler before it
    // passes the command's status on: the handlers stay until the process
    // exits, past the end of `main`.
    if matches!(cli.command, Command::Record(_)) {
        std::mem::forget(profiler_sampler::catch_interrupts());
    }
    let result = match cli.command {
        Command::Record(args) => record::run(
            args,
            matches.subcommand_matches("record").unwrap_or(&matches),
        ),
        Command::Report(args) => report::run(args),
        Command::Script(args) => script::run(args),
        Command::Top(args) => top::run(args),
        Command::Hist(args) => hist::run(args),
        Command::Annotate(args) => annotate::run(args),
        Command::Flamegraph(args) => flamegraph::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Export(args) => export::run(args),
        Command::Archive(args) => archive::run(args),
        Command::Symbolize(args) => symbolize::run(args),
        Command::List(args) => list::run(args),
        Command::Stat(args) => stat::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    };
    match result {
        Ok(code) => code,
        // `profiler report | head` is not an error; a recording that cannot
        // be written is.
        Err(error) if !is_record && is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            say!("profiler: {error:#}");
            ExitCode::from(failure_status(&error, is_record))
        }
    }
}

/// Help and version go to stdout; a usage error is one line and exit 2,
/// ending with where to read more.
fn usage_error(error: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
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
    let command = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .filter(|a| Cli::command().find_subcommand(a).is_some());
    // Only record, stat and top run a command that `--` would set apart.
    let runs_command = matches!(command.as_deref(), Some("record" | "stat" | "top"));
    let text = error.to_string();
    let mut message = String::new();
    // clap's own pointer to --help is replaced by ours, naming the
    // subcommand.
    let lines = (text.lines().map(str::trim))
        .take_while(|l| !l.starts_with("Usage:"))
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .filter(|l| runs_command || !l.starts_with("tip: to pass"));
    for line in lines {
        if !message.is_empty() {
            message.push_str(if message.ends_with(':') { " " } else { "; " });
        }
        message.push_str(line.trim_start_matches("error: "));
    }
    // Flags that exclude each other, named as the user typed them.
    if error.kind() == ErrorKind::ArgumentConflict
        && let Some(conflict) = conflict(&error)
    {
        message = conflict;
    }
    // `profiler report perf.data`, as perf users type it elsewhere.
    if let (ErrorKind::UnknownArgument, Some(ContextValue::String(argument))) =
        (error.kind(), error.get(ContextKind::InvalidArg))
        && std::path::Path::new(argument).is_file()
        && !argument.starts_with('-')
    {
        message =
            format!("unexpected argument '{argument}'; to read a recording, give -i {argument}");
    }
    let help = match command {
        Some(command) => format!("profiler {command} --help"),
        None => "profiler --help".to_owned(),
    };
    let _ = writeln!(io::stderr(), "profiler: {message}; see `{help}`");
    ExitCode::from(2)
}

/// Two arguments given together that exclude each other, said with what
/// to do: `-p and -a cannot be combined; leave out one of them`.
fn conflict(error: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    let raw = |kind| match error.get(kind)? {
        ContextValue::String(arg) => Some(arg.clone()),
        ContextValue::Strings(args) => args.first().cloned(),
        _ => None,
    };
    let (first, second) = (raw(ContextKind::InvalidArg)?, raw(ContextKind::PriorArg)?);
    // The positional argument: a command, or a recording named without -i.
    let positional = [&first, &second]
        .into_iter()
        .find(|arg| !arg.starts_with('-'))
        .cloned()
        .unwrap_or_default();
    Some(match (flag_name(&first), flag_name(&second)) {
        (None, None) => return None,
        (Some(flag), None) | (None, Some(flag)) if positional.contains("FILE") => {
            format!("{flag} and a recording named without it cannot be combined; name it once")
        }
        (Some(flag), None) | (None, Some(flag)) => {
            format!("{flag} takes no command; leave out the command, or {flag}")
        }
        (Some(first), Some(second)) => {
            format!("{first} and {second} cannot be combined; leave out one of them")
        }
    })
}

/// An option as clap writes it (`--pid <PID[,PID...]>`) named as it is
/// usually typed: `-p` where the subcommand gives it a short form, else
/// `--pid`; `None` for the command (`[COMMAND]...`).
fn flag_name(arg: &str) -> Option<String> {
    let long = arg.split_whitespace().next()?.strip_prefix("--");
    let Some(long) = long else {
        return arg.starts_with('-').then(|| arg.to_owned());
    };
    let cli = Cli::command();
    let subcommand = std::env::args()
        .nth(1)
        .and_then(|name| cli.find_subcommand(&name));
    let short = subcommand
        .into_iter()
        .flat_map(|command| command.get_arguments())
        .find(|a| a.get_long() == Some(long))
        .and_then(|a| a.get_short());
    Some(match short {
        Some(short) => format!("-{short}"),
        None => format!("--{long}"),
    })
}

/// Whether `error` comes of a reader that went away.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .filter_map(|e| e.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
