//! `profiler stat`'s output: per-event totals, rates and running shares as
//! `perf stat` prints them, or JSON; and the counts of every interval as
//! they come.
//!
//! As in perf stat, an event's rate is per second of the task-clock (or
//! cpu-clock) counted beside it, the CPU time of what was counted, not per
//! second of wall time; without a clock counted there is none. A line under
//! the counts says so.

use std::io::{self, Write};
use std::time::Duration;

use profiler_events::{Count, EventCount, EventValue, StatCounts, ThreadCount};
use serde_json::{Value, json};

/// How a count ended, for the totals.
#[derive(Clone, Debug)]
pub struct StatSummary<'a> {
    /// What was counted: `the command 'app'`, `process 1234`...
    pub target: &'a str,
    pub totals: &'a StatCounts,
    /// The command's exit, when a command was counted.
    pub exit: Option<StatExit>,
    /// CPU time the command spent in user space and in the kernel.
    pub user_time: Option<Duration>,
    pub system_time: Option<Duration>,
    /// The signal that interrupted counting, if one did.
    pub interrupted_by: Option<i32>,
}

/// How a counted command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatExit {
    /// `exited with status 3`, `killed by signal 15 (Terminated)`.
    pub outcome: String,
    /// The status a shell would report.
    pub status: u8,
}

/// One interval's counts as `perf stat -I` prints them, with the column
/// heads before the `first`.
pub fn render_stat_interval_text(
    counts: &StatCounts,
    first: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let time = counts.elapsed.as_secs_f64();
    if counts.threads.is_empty() {
        if first {
            writeln!(out, "#{:>14} {:>18} {:<5} event", "time", "counts", "unit")?;
        }
        let clock = clock_seconds(&counts.events);
        for event in &counts.events {
            writeln!(out, "{time:15.9} {}", event_line(event, clock, counts.span))?;
        }
    } else {
        if first {
            writeln!(
                out,
                "#{:>14} {:<24} {:>18} {:<5} event",
                "time", "thread", "counts", "unit"
            )?;
        }
        for thread in &counts.threads {
            let clock = clock_seconds(&thread.events);
            for event in &thread.events {
                writeln!(
                    out,
                    "{time:15.9} {:<24} {}",
                    thread_label(thread),
                    event_line(event, clock, counts.span)
                )?;
            }
        }
    }
    Ok(())
}

/// The totals as `perf stat` prints them: per event (or per thread and
/// event), the time elapsed, the command's CPU time.
pub fn render_stat_text(summary: &StatSummary, out: &mut dyn Write) -> io::Result<()> {
    let (target, totals) = (summary.target, summary.totals);
    writeln!(out)?;
    writeln!(out, " Performance counter stats for {target}:")?;
    writeln!(out)?;
    let mut rated = false;
    if totals.threads.is_empty() {
        let clock = clock_seconds(&totals.events);
        rated |= clock.is_some();
        for event in &totals.events {
            writeln!(out, "{}", event_line(event, clock, totals.elapsed))?;
        }
    } else {
        for thread in &totals.threads {
            let clock = clock_seconds(&thread.events);
            rated |= clock.is_some();
            for event in &thread.events {
                writeln!(
                    out,
                    "{:>24} {}",
                    thread_label(thread),
                    event_line(event, clock, totals.elapsed)
                )?;
            }
        }
    }
    let others = || {
        totals
            .events
            .iter()
            .chain(totals.threads.iter().flat_map(|t| &t.events))
    };
    if rated && others().any(|event| event.unit != "ns") {
        writeln!(out)?;
        writeln!(
            out,
            "{:>18} /sec: per second of task-clock, the CPU time counted (as perf stat)",
            ""
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:18.9} seconds time elapsed",
        totals.elapsed.as_secs_f64()
    )?;
    if let (Some(user), Some(system)) = (summary.user_time, summary.system_time) {
        writeln!(out)?;
        writeln!(out, "{:18.9} seconds user", user.as_secs_f64())?;
        writeln!(out, "{:18.9} seconds sys", system.as_secs_f64())?;
    }
    if let Some(signal) = summary.interrupted_by {
        writeln!(out)?;
        writeln!(out, " interrupted by signal {signal}")?;
    }
    writeln!(out)
}

/// `thread-name-TID`, as `perf stat --per-thread` labels a row.
fn thread_label(thread: &ThreadCount) -> String {
    format!("{}-{}", thread.name.as_deref().unwrap_or("?"), thread.tid)
}

/// One event: the scaled count, its name, its rate per second of the
/// `clock` counted beside it (a clock: the CPUs it used over `span` of wall
/// time), and the share of the time it ran.
fn event_line(event: &EventCount, clock: Option<f64>, span: Duration) -> String {
    let count = match &event.value {
        EventValue::NotSupported { .. } => {
            return format!("{:>18}      {}", "<not supported>", event.event);
        }
        EventValue::Counted(count) if !count.was_counted() => {
            return format!("{:>18}      {}", "<not counted>", event.event);
        }
        EventValue::Counted(count) => count,
    };
    let (value, unit, rate) = match event.unit {
        "ns" => (
            group_digits_f64(count.scaled as f64 / 1e6, 2),
            "msec",
            format!("{:8.3} CPUs utilized", cpus_utilized(count, span)),
        ),
        _ => (
            group_digits(count.scaled),
            "",
            rate_per_clock_second(count, clock).map_or(String::new(), rate_text),
        ),
    };
    let running = count
        .running_percent()
        .map_or(String::new(), |p| format!("({p:.2}%)"));
    let rate = match rate.is_empty() {
        true => format!("  {:<22}", ""),
        false => format!("# {rate:<22}"),
    };
    format!("{value:>18} {unit:<5} {:<26} {rate} {running}", event.event)
        .trim_end()
        .to_owned()
}

/// The seconds of CPU time the task-clock (or cpu-clock) among `events`
/// counted, if one did.
fn clock_seconds(events: &[EventCount]) -> Option<f64> {
    let is_clock = |name: &str| {
        let base = name.split(':').next().unwrap_or(name);
        matches!(base, "task-clock" | "cpu-clock")
    };
    (events.iter())
        .filter(|event| event.unit == "ns" && is_clock(&event.event))
        .find_map(|event| match &event.value {
            EventValue::Counted(count) if count.was_counted() && count.scaled > 0 => {
                Some(count.scaled as f64 / 1e9)
            }
            _ => None,
        })
}

/// `count` per second of the clock, as perf stat's rates are.
fn rate_per_clock_second(count: &Count, clock: Option<f64>) -> Option<f64> {
    clock.map(|seconds| count.scaled as f64 / seconds)
}

fn rate_per_second(count: &Count, span: Duration) -> f64 {
    match span.as_secs_f64() {
        0.0 => 0.0,
        seconds => count.scaled as f64 / seconds,
    }
}

/// A clock's nanoseconds per nanosecond of wall time.
fn cpus_utilized(count: &Count, span: Duration) -> f64 {
    rate_per_second(count, span) / 1e9
}

fn rate_text(rate: f64) -> String {
    let (value, prefix) = if rate >= 1e9 {
        (rate / 1e9, "G")
    } else if rate >= 1e6 {
        (rate / 1e6, "M")
    } else if rate >= 1e3 {
        (rate / 1e3, "K")
    } else {
        (rate, "")
    };
    format!("{value:8.3} {prefix}/sec")
}

/// `1234567` as `1,234,567`.
fn group_digits(value: u64) -> String {
    let digits = value.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

fn group_digits_f64(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    match text.split_once('.') {
        Some((whole, fraction)) => match whole.parse::<u64>() {
            Ok(whole) => format!("{}.{fraction}", group_digits(whole)),
            Err(_) => text,
        },
        None => text,
    }
}

fn event_json(event: &EventCount, clock: Option<f64>, span: Duration) -> Value {
    match &event.value {
        EventValue::NotSupported { reason } => json!({
            "event": event.event,
            "unit": event.unit,
            "supported": false,
            "reason": reason,
        }),
        EventValue::Counted(count) => {
            let mut value = json!({
                "event": event.event,
                "unit": event.unit,
                "supported": true,
                "counted": count.was_counted(),
                "value": count.scaled,
                "raw": count.raw,
                "time_enabled_ns": count.enabled_ns,
                "time_running_ns": count.running_ns,
                "running_percent": count.running_percent(),
                "rate_per_second": rate_per_clock_second(count, clock),
                "rate_per_elapsed_second": rate_per_second(count, span),
            });
            if event.unit == "ns" {
                value["cpus_utilized"] = json!(cpus_utilized(count, span));
            }
            value
        }
    }
}

fn counts_json(counts: &StatCounts, span: Duration) -> (Value, Value) {
    let clock = clock_seconds(&counts.events);
    let events = counts
        .events
        .iter()
        .map(|e| event_json(e, clock, span))
        .collect::<Vec<_>>();
    let threads = counts
        .threads
        .iter()
        .map(|thread| {
            json!({
                "pid": thread.pid,
                "tid": thread.tid,
                "name": thread.name,
                "events": (thread.events.iter())
                    .map(|e| event_json(e, clock_seconds(&thread.events), span))
                    .collect::<Vec<_>>(),
            })
        })
        .collect::<Vec<_>>();
    (json!(events), json!(threads))
}

/// One interval's counts as one line of JSON.
pub fn render_stat_interval_json(counts: &StatCounts, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &interval_json(counts))?;
    writeln!(out)
}

/// The totals as JSON: pretty, or on one line (after intervals' lines).
pub fn render_stat_json(
    summary: &StatSummary,
    pretty: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let summary = summary_json(summary);
    match pretty {
        true => serde_json::to_writer_pretty(&mut *out, &summary)?,
        false => serde_json::to_writer(&mut *out, &summary)?,
    }
    writeln!(out)
}

fn interval_json(counts: &StatCounts) -> Value {
    let (events, threads) = counts_json(counts, counts.span);
    let mut value = json!({
        "interval_s": counts.elapsed.as_secs_f64(),
        "span_s": counts.span.as_secs_f64(),
        "events": events,
    });
    if !counts.threads.is_empty() {
        value["threads"] = threads;
    }
    value
}

fn summary_json(summary: &StatSummary) -> Value {
    let totals = summary.totals;
    let (events, threads) = counts_json(totals, totals.elapsed);
    let mut value = json!({
        "target": summary.target,
        "elapsed_s": totals.elapsed.as_secs_f64(),
        "events": events,
        "interrupted_by": summary.interrupted_by,
    });
    if !totals.threads.is_empty() {
        value["threads"] = threads;
    }
    if let Some(exit) = &summary.exit {
        value["outcome"] = json!(exit.outcome);
        value["exit_status"] = json!(exit.status);
    }
    if let (Some(user), Some(system)) = (summary.user_time, summary.system_time) {
        value["user_s"] = json!(user.as_secs_f64());
        value["system_s"] = json!(system.as_secs_f64());
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(1234567), "1,234,567");
        assert_eq!(group_digits_f64(1234.567, 2), "1,234.57");
        assert_eq!(rate_text(2500.0).trim(), "2.500 K/sec");
    }
}
