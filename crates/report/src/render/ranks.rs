//! `report --ranks`: the load imbalance of a job's functions as a text
//! table (seconds for the clocks, events for the others) or as JSON
//! (`{"ranks":[{"rank","host"}], "events":[{"event","unit","functions":
//! [{"function","module","min","median","mean","max","max_rank",
//! "imbalance","lost"}]}]}`, values in the event's unit).

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::render::flat_json::ranks_json;
use crate::views::ranks::{BalanceRow, EventBalance, RankBalance};
use crate::wording::{column_width, event_phrase, job_phrase};

pub fn render_ranks_text(balance: &RankBalance, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "# Job:      {}", job_phrase(&balance.ranks))?;
    for event in &balance.events {
        writeln!(out, "#")?;
        render_event(event, balance, out)?;
    }
    Ok(())
}

/// How a value of the event reads: seconds for the clocks (counted in
/// nanoseconds), events for the others.
struct Unit {
    seconds: bool,
}

impl Unit {
    fn of(event: &EventBalance) -> Unit {
        Unit {
            seconds: event.description.unit == "ns",
        }
    }

    fn suffix(&self) -> &'static str {
        match self.seconds {
            true => " s",
            false => "",
        }
    }

    fn show(&self, value: f64) -> String {
        match self.seconds {
            true => format!("{:.3}", value / 1e9),
            false => format!("{value:.1}"),
        }
    }
}

fn render_event(
    event: &EventBalance,
    balance: &RankBalance,
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(out, "# Event:    {}", event_phrase(&event.description))?;
    let what = match Unit::of(event).seconds {
        true => "time",
        false => "events",
    };
    writeln!(
        out,
        "# Per function, its self {what} on each rank: the least, the median, the mean and \
         the most,\n# the rank with the most and the imbalance (most / mean); sorted by what \
         the imbalance costs,\n# (most - mean) x ranks: the time the other ranks wait."
    )?;
    if balance.percent_limit > 0.0 {
        writeln!(
            out,
            "# Functions below {}% of the event are left out (--percent-limit).",
            balance.percent_limit
        )?;
    }
    writeln!(out, "#")?;
    if event.rows.is_empty() {
        let why = match balance.percent_limit > 0.0 {
            true => format!(
                "Every function is below --percent-limit {}%; give a lower one to see them",
                balance.percent_limit
            ),
            false => "No samples of this event".to_owned(),
        };
        return writeln!(out, "{why}");
    }
    let unit = Unit::of(event);
    let cells: Vec<[String; 9]> = event.rows.iter().map(|row| cells(row, &unit)).collect();
    let suffix = unit.suffix();
    let headings = [
        format!("Lost{suffix}"),
        format!("Min{suffix}"),
        format!("Median{suffix}"),
        format!("Mean{suffix}"),
        format!("Max{suffix}"),
        "Max rank".to_owned(),
        "Imbalance".to_owned(),
        "Module".to_owned(),
        "Function".to_owned(),
    ];
    let widths: Vec<usize> = (0..headings.len())
        .map(|column| column_width(cells.iter().map(|c| c[column].len()), &headings[column]))
        .collect();
    let line = |cells: &[String], comment: bool| {
        let mut text = String::from(if comment { "#" } else { " " });
        for (column, cell) in cells.iter().enumerate() {
            let width = widths[column] + usize::from(column == 0 && comment);
            let cell = match column == 0 && comment {
                true => cell.trim_start_matches('#').to_owned(),
                false => cell.clone(),
            };
            match column {
                7 => text.push_str(&format!("  {cell:<width$}")),
                8 => text.push_str(&format!("  {cell}")),
                _ => text.push_str(&format!("  {cell:>width$}")),
            }
        }
        text.trim_end().to_owned()
    };
    writeln!(out, "{}", line(&headings, true))?;
    for row in &cells {
        writeln!(out, "{}", line(row, false))?;
    }
    Ok(())
}

fn cells(row: &BalanceRow, unit: &Unit) -> [String; 9] {
    [
        unit.show(row.lost),
        unit.show(row.min as f64),
        unit.show(row.median),
        unit.show(row.mean),
        unit.show(row.max as f64),
        row.max_rank.to_string(),
        format!("{:.2}", row.imbalance),
        row.module.clone(),
        row.name.clone(),
    ]
}

pub fn render_ranks_json(balance: &RankBalance, out: &mut impl Write) -> io::Result<()> {
    let events: Vec<Value> = (balance.events.iter())
        .map(|event| {
            let functions: Vec<Value> = (event.rows.iter())
                .map(|row| {
                    json!({
                        "function": row.name,
                        "module": row.module,
                        "min": row.min,
                        "median": row.median,
                        "mean": row.mean,
                        "max": row.max,
                        "max_rank": row.max_rank,
                        "imbalance": row.imbalance,
                        "lost": row.lost,
                    })
                })
                .collect();
            json!({
                "event": event.description.name,
                "unit": event.description.unit,
                "functions": functions,
            })
        })
        .collect();
    let document = json!({
        "ranks": ranks_json(balance.ranks.iter().map(|r| (r.rank, r.host.as_str()))),
        "events": events,
    });
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}
