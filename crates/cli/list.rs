//! `profiler list`: every event this machine knows, grouped as `perf list`
//! groups them, each with whether it can be counted now and, if not, why;
//! as aligned text or as JSON.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;
use profiler_events::{ListedEvent, Pmus, Usability, list_events};
use profiler_sampler::probe_events;
use serde_json::{Value, json};

use crate::args::ListArgs;

/// The widest name column; longer names push their line's columns right.
const MAX_NAME_WIDTH: usize = 48;

pub fn run(args: ListArgs) -> Result<ExitCode> {
    let mut events = list_events(&Pmus::system());
    probe_events(&mut events);
    let mut out = BufWriter::new(io::stdout().lock());
    if args.json {
        let list: Vec<Value> = events.iter().map(to_json).collect();
        // As an io::Error, so that a closed pipe (`| head`) is no failure.
        serde_json::to_writer_pretty(&mut out, &list).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        write_text(&mut out, &events)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `NAME [OR ALIAS]  [group]  usable | not usable: why`, a blank line
/// between groups.
fn write_text(out: &mut impl Write, events: &[ListedEvent]) -> io::Result<()> {
    let names: Vec<String> = events.iter().map(display_name).collect();
    let name_width = names
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(0)
        .min(MAX_NAME_WIDTH);
    let kind_width = events
        .iter()
        .map(|e| e.group.label().len() + 2)
        .max()
        .unwrap_or(0);
    let mut previous = None;
    for (event, name) in events.iter().zip(&names) {
        if previous.is_some_and(|group| group != event.group) {
            writeln!(out)?;
        }
        previous = Some(event.group);
        let kind = format!("[{}]", event.group.label());
        writeln!(
            out,
            "{name:<name_width$}  {kind:<kind_width$}  {}",
            status(event)
        )?;
    }
    Ok(())
}

fn display_name(event: &ListedEvent) -> String {
    std::iter::once(event.name.as_str())
        .chain(event.aliases.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" OR ")
}

fn status(event: &ListedEvent) -> String {
    let mut status = match &event.usability {
        Usability::Usable => "usable".to_owned(),
        Usability::Unusable(why) => format!("not usable: {why}"),
        Usability::NotProbed => event.description.clone().unwrap_or_default(),
    };
    match (&event.scale, &event.unit) {
        (Some(scale), Some(unit)) => status.push_str(&format!(" (1 count = {scale} {unit})")),
        (None, Some(unit)) => status.push_str(&format!(" (counts {unit})")),
        (Some(scale), None) => status.push_str(&format!(" (scale {scale})")),
        (None, None) => {}
    }
    status
}

fn to_json(event: &ListedEvent) -> Value {
    let (usable, reason) = match &event.usability {
        Usability::Usable => (json!(true), Value::Null),
        Usability::Unusable(why) => (json!(false), json!(why)),
        Usability::NotProbed => (Value::Null, Value::Null),
    };
    let encoding = event.spec.as_ref().map_or(Value::Null, |spec| {
        json!({
            "type": spec.perf_type,
            "config": spec.config,
            "config1": spec.config1,
            "config2": spec.config2,
        })
    });
    json!({
        "name": event.name,
        "aliases": event.aliases,
        "group": event.group.label(),
        "usable": usable,
        "reason": reason,
        "encoding": encoding,
        "unit": event.unit,
        "scale": event.scale,
        "description": event.description,
    })
}
