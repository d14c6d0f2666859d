//! `profiler stat`: args -> StatConfig -> Stat::run -> per-event totals,
//! rates and running shares (text like `perf stat`, or JSON, rendered by
//! the report), and the counts of every interval as they come.
//!
//! The text goes to the standard error, as `perf stat` writes it, so that
//! it never mixes with the command's own output; JSON, which a program
//! reads, to the standard output (notices stay on the standard error); `-o
//! FILE` writes either to a file instead.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, anyhow};
use profiler_report::{
    StatExit, StatSummary, render_stat_interval_json, render_stat_interval_text, render_stat_json,
    render_stat_text,
};
use profiler_sampler::{Stat, StatConfig};

use crate::args::Format;
use crate::messages::say;
use crate::stat_args::StatArgs;

pub(crate) fn run(args: StatArgs) -> Result<ExitCode> {
    let stat = Stat::new(StatConfig {
        events: args.events,
        target: args.target.target(args.command),
        interval: args.interval_ms.map(Duration::from_millis),
        duration: args.duration,
        per_thread: args.per_thread,
    })?;
    for notice in stat.notices() {
        say!("profiler: {notice}");
    }
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(BufWriter::new(File::create(path).map_err(|error| {
            anyhow!(
                "cannot write {}: {error}; choose another -o FILE",
                path.display()
            )
        })?)),
        None if args.format == Format::Json => Box::new(io::stdout()),
        None => Box::new(io::stderr()),
    };
    let target = stat.target().to_owned();
    let format = args.format;
    let mut first = true;
    let outcome = stat.run(&mut |counts| {
        match format {
            Format::Text => render_stat_interval_text(counts, first, &mut out)?,
            Format::Json => render_stat_interval_json(counts, &mut out)?,
        }
        first = false;
        out.flush()
    })?;
    let summary = StatSummary {
        target: &target,
        totals: &outcome.totals,
        exit: outcome.exit.map(|exit| StatExit {
            outcome: exit.to_string(),
            status: exit.code(),
        }),
        user_time: outcome.user_time,
        system_time: outcome.system_time,
        interrupted_by: outcome.interrupted_by,
    };
    match format {
        Format::Text => render_stat_text(&summary, &mut out)?,
        Format::Json => render_stat_json(&summary, args.interval_ms.is_none(), &mut out)?,
    }
    out.flush()?;
    Ok(match outcome.exit {
        Some(exit) => ExitCode::from(exit.code()),
        None => ExitCode::SUCCESS,
    })
}
