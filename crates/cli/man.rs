//! `profiler man [SUBCOMMAND]`: manual pages (roff) made from the command
//! line's own definition, so they say what `--help` says; one page, or all
//! of them into a directory.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use clap::CommandFactory;
use clap_mangen::Man;

use crate::args::{Cli, ManArgs};
use crate::messages::say;
use crate::output::write_output;

pub fn run(args: ManArgs) -> Result<ExitCode> {
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
    Ok(page)
}

fn print(command: &clap::Command) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(&render(command)?)?;
    out.flush()?;
    Ok(())
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
