//! `profiler list`: every event this machine knows, probed, then listed by
//! the report as aligned text or as JSON.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_events::{ListGroup, ListedEvent, Pmus, list_events};
use profiler_report::{render_event_list_json, render_event_list_text};
use profiler_sampler::probe_events;

use crate::args::ListArgs;

pub(crate) fn run(args: ListArgs) -> Result<ExitCode> {
    let pmus = Pmus::system();
    let mut events = list_events(&pmus);
    if args.raw_dump {
        return raw_dump(&events, &pmus);
    }
    probe_events(&mut events);
    let mut out = BufWriter::new(io::stdout().lock());
    match args.json {
        true => render_event_list_json(&events, &mut out)?,
        false => render_event_list_text(&events, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Every name `-e` takes, and each PMU as `PMU/`, on one line: for the
/// completion scripts, as `perf list --raw-dump` is for perf's.
fn raw_dump(events: &[ListedEvent], pmus: &Pmus) -> Result<ExitCode> {
    let names = (events.iter())
        .filter(|e| e.group != ListGroup::RawDescriptor)
        .flat_map(|e| std::iter::once(&e.name).chain(&e.aliases).cloned());
    let pmus = pmus.iter().map(|pmu| format!("{}/", pmu.name));
    let line: Vec<String> = names.chain(pmus).collect();
    let mut out = io::stdout().lock();
    writeln!(out, "{}", line.join(" "))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
