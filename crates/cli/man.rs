//! `profiler man [SUBCOMMAND]`: manual pages (roff) made from the command
//! line's own definition, so they say what `--help` says; one page, or all
//! of them into a directory. On a terminal the page is shown as man shows
//! it (`man -l -`), elsewhere its roff is printed.

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Result, anyhow};
use clap::CommandFactory;
use clap_mangen::Man;

use crate::args::{Cli, ManArgs};
use crate::messages::say;
use crate::output::write_output;

pub(crate) fn run(args: ManArgs) -> Result<ExitCode> {
    let mut cli = Cli::command();
    // Gives the subcommands their page names: profiler-record.
    cli.build();
    match (&args.out_dir, &args.subcommand) {
        (Some(dir), _) => write_all(&cli, dir)?,
        (None, None) => print(&cli)?,
        (None, Some(name)) => {
            let page = subcommands(&cli).find(|c| c.get_name() == name);
            let page = page.ok_or_else(|| {
                anyhow!("'{name}' is not a subcommand; `profiler --help` lists them")
            })?;
            print(page)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The subcommands that get a page: all but clap's `help`.
fn subcommands(cli: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    (cli.get_subcommands()).filter(|c| !c.is_hide_set() && c.get_name() != "help")
}

fn render(command: &clap::Command) -> Result<Vec<u8>> {
    let source = format!("profiler {}", env!("CARGO_PKG_VERSION"));
    let mut page = Vec::new();
    Man::new(command.clone()).source(source).render(&mut page)?;
    Ok(with_synopsis(&String::from_utf8_lossy(&page), command).into_bytes())
}

/// `page` with its synopsis showing what each option takes, as OPTIONS
/// does (`[-e|--event <EVENT>]`): clap_mangen's leaves the values out.
fn with_synopsis(page: &str, command: &clap::Command) -> String {
    let Some((before, rest)) = page.split_once(".SH SYNOPSIS\n") else {
        return page.to_owned();
    };
    let after = rest.find("\n.SH ").map_or("", |end| &rest[end..]);
    format!("{before}.SH SYNOPSIS\n{}{after}", synopsis(command))
}

/// The synopsis line of `command`, in roff.
fn synopsis(command: &clap::Command) -> String {
    let roff = |text: &str| text.replace('-', "\\-");
    let name = command.get_display_name().unwrap_or(command.get_name());
    let mut line = format!("\\fB{}\\fR", roff(&name.replacen('-', " ", 1)));
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        let values: Vec<String> = (arg.get_value_names().unwrap_or_default().iter())
            .map(|value| format!("\\fI<{value}>\\fR"))
            .collect();
        let values = match (arg.get_action().takes_values(), values.is_empty()) {
            (false, _) => String::new(),
            (true, false) => values.join(" "),
            (true, true) => format!("\\fI<{}>\\fR", arg.get_id().as_str().to_uppercase()),
        };
        let repeated = match arg.get_num_args() {
            Some(range) if range.max_values() > 1 => "...",
            _ => "",
        };
        let word = if arg.is_positional() {
            // What follows `--`, which record's COMMAND does.
            let dashes = if arg.is_last_set() { "\\-\\- " } else { "" };
            format!("{dashes}{values}{repeated}")
        } else {
            let flags: Vec<String> = (arg.get_short().map(|c| format!("\\fB\\-{c}\\fR")))
                .into_iter()
                .chain(arg.get_long().map(|l| format!("\\fB\\-\\-{}\\fR", roff(l))))
                .collect();
            match values.is_empty() {
                true => flags.join("|"),
                false => format!("{} {values}", flags.join("|")),
            }
        };
        line.push(' ');
        match arg.is_required_set() {
            true => line.push_str(&word),
            false => line.push_str(&format!("[{word}]")),
        }
    }
    if command.has_subcommands() {
        line.push_str(" \\fI<COMMAND>\\fR");
    }
    line
}

/// Prints the page of `command`: rendered by man on a terminal, as roff
/// elsewhere (for `man -l -`, or a file).
fn print(command: &clap::Command) -> Result<()> {
    let page = render(command)?;
    if io::stdout().is_terminal() && show_with_man(&page)? {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    out.write_all(&page)?;
    out.flush()?;
    Ok(())
}

/// Shows `page` with `man -l -`, as man shows installed pages (through the
/// pager); false where man cannot be run.
fn show_with_man(page: &[u8]) -> Result<bool> {
    let Ok(mut man) = Command::new("man")
        .args(["-l", "-"])
        .stdin(Stdio::piped())
        .spawn()
    else {
        say!("profiler: man cannot be run (install man-db to read the page); its roff follows");
        return Ok(false);
    };
    if let Some(mut input) = man.stdin.take() {
        // A pager the reader quits early closes the pipe: not an error.
        match input.write_all(page) {
            Err(error) if error.kind() != io::ErrorKind::BrokenPipe => return Err(error.into()),
            _ => {}
        }
    }
    let status = man.wait()?;
    if !status.success() {
        return Err(anyhow!("man -l - could not show the page ({status})"));
    }
    Ok(true)
}

/// Writes `profiler.1` and `profiler-SUBCOMMAND.1` for each into `dir`.
fn write_all(cli: &clap::Command, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|error| {
        anyhow!(
            "cannot make {}: {error}; choose another --out-dir",
            dir.display()
        )
    })?;
    let pages: Vec<&clap::Command> = std::iter::once(cli).chain(subcommands(cli)).collect();
    for page in &pages {
        let name = page.get_display_name().unwrap_or(page.get_name());
        let path = dir.join(format!("{name}.1"));
        let text = render(page)?;
        write_output(&path, |out| Ok(out.write_all(&text)?))?;
    }
    say!(
        "profiler: wrote {} pages into {}; read one with `man -l {}`, or all with man once {} is \
         on MANPATH",
        pages.len(),
        dir.display(),
        dir.join("profiler-record.1").display(),
        dir.parent().unwrap_or(dir).display()
    );
    Ok(())
}
