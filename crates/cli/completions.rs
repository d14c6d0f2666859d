//! `profiler completions SHELL`: the shell's completion script for every
//! subcommand and option, from the command line's own definition.

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::args::{Cli, CompletionShell, CompletionsArgs};

pub fn run(args: CompletionsArgs) -> Result<ExitCode> {
    let shell = match args.shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    // clap_complete panics on a failed write: the script is made in
    // memory, and written (a closed pipe included) here.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "profiler", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
