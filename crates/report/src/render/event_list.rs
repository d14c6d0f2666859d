//! `profiler list`'s output: every event this machine knows, grouped as
//! `perf list` groups them, each with whether it can be counted now and, if
//! not, why; as aligned text or as JSON.

use std::io::{self, Write};

use profiler_events::{ListedEvent, Usability};
use serde_json::{Value, json};

/// The widest name column; longer names push their line's columns right.
const MAX_NAME_WIDTH: usize = 48;

/// `NAME [OR ALIAS]  [group]  usable | not usable: why`, a blank line
/// between groups.
pub fn render_event_list_text(events: &[ListedEvent], out: &mut dyn Write) -> io::Result<()> {
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

/// The events as a JSON array, each with its encoding and verdict.
pub fn render_event_list_json(events: &[ListedEvent], out: &mut dyn Write) -> io::Result<()> {
    let list: Vec<Value> = events.iter().map(to_json).collect();
    serde_json::to_writer_pretty(&mut *out, &list)?;
    writeln!(out)
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
