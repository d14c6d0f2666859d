//! `profiler list`: every event this machine knows, probed, then listed by
//! the report as aligned text or as JSON.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_events::{Pmus, list_events};
use profiler_report::{render_event_list_json, render_event_list_text};
use profiler_sampler::probe_events;

use crate::args::ListArgs;

pub fn run(args: ListArgs) -> Result<ExitCode> {
    let mut events = list_events(&Pmus::system());
    probe_events(&mut events);
    let mut out = BufWriter::new(io::stdout().lock());
    match args.json {
        true => render_event_list_json(&events, &mut out)?,
        false => render_event_list_text(&events, &mut out)?,
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
