//! The flat profile as text, in the manner of `perf report --stdio`: a
//! commented header, then one aligned row per function or module.

use std::io::{self, Write};

use crate::render::call_tree::render_call_tree;
use crate::render::fit::RowWidth;
use crate::render::flat_table::render_table;
use crate::views::flat::{EventProfile, FlatProfile};
use crate::wording::{event_phrase, job_phrase, loss_advice, stack_advice, stack_phrase};

/// How much of the text report to print.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// The rows only: no commented line (`perf report -q`).
    pub quiet: bool,
    /// The commented header only: the recording's and each event's, no
    /// rows (`perf report --header-only`).
    pub header_only: bool,
}

/// The profile as text, its rows at most `width` wide where names can give
/// way.
pub fn render_text(profile: &FlatProfile, width: RowWidth, out: &mut impl Write) -> io::Result<()> {
    render_text_with(profile, width, TextOptions::default(), out)
}

/// The text report, as much of it as `options` asks for.
pub fn render_text_with(
    profile: &FlatProfile,
    width: RowWidth,
    options: TextOptions,
    out: &mut impl Write,
) -> io::Result<()> {
    if options.quiet {
        let mut rows = Uncommented {
            out,
            line: Vec::new(),
        };
        render_all(profile, width, options.header_only, &mut rows)?;
        return rows.finish();
    }
    render_all(profile, width, options.header_only, out)
}

fn render_all(
    profile: &FlatProfile,
    width: RowWidth,
    header_only: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let header = &profile.header;
    writeln!(out, "# Command:  {}", header.command.join(" "))?;
    let host = &header.host;
    writeln!(
        out,
        "# Recorded: {} on {} (Linux {}, {}, {} CPUs) for {:.2} s; the command {}",
        utc_time(header.start_unix_ns),
        host.hostname,
        host.kernel,
        host.arch,
        host.cpus,
        profile.duration_ns as f64 / 1e9,
        profile.outcome,
    )?;
    if !profile.ranks.is_empty() {
        writeln!(out, "# Job:      {}", job_phrase(&profile.ranks))?;
    }
    writeln!(
        out,
        "# Tasks:    {}, {}",
        count(profile.processes, "process", "processes"),
        count(profile.thread_count, "thread", "threads")
    )?;
    for problem in &profile.problems {
        writeln!(out, "# Note:     {problem}")?;
    }
    render_thread_times(profile, out)?;
    for (index, event) in profile.events.iter().enumerate() {
        writeln!(out, "#")?;
        if let Some((settings, totals)) = &profile.histogram {
            let totals = totals.get(index).copied().unwrap_or_default();
            writeln!(
                out,
                "# Histogram: {}-bit buckets, scale {}: each row counts buckets at their first \
                 address; {} samples outside the histograms are not in the rows",
                settings.bucket_bits, settings.scale, totals.outside
            )?;
        }
        render_event(event, profile, width, header_only, out)?;
    }
    Ok(())
}

/// Passes on the lines that are not comments (`#` first).
struct Uncommented<'a, W: Write> {
    out: &'a mut W,
    /// The line being written.
    line: Vec<u8>,
}

impl<W: Write> Uncommented<'_, W> {
    fn finish(mut self) -> io::Result<()> {
        let line = std::mem::take(&mut self.line);
        if !line.starts_with(b"#") {
            self.out.write_all(&line)?;
        }
        Ok(())
    }
}

impl<W: Write> Write for Uncommented<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            self.line.extend_from_slice(piece);
            if piece.ends_with(b"\n") {
                if !self.line.starts_with(b"#") {
                    self.out.write_all(&self.line)?;
                }
                self.line.clear();
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn render_event(
    event: &EventProfile,
    profile: &FlatProfile,
    width: RowWidth,
    header_only: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let stats = &event.stats;
    writeln!(out, "# Event:    {}", event_phrase(&event.description))?;
    if !event.group.is_empty() {
        writeln!(
            out,
            "# Group:    {} counted with each sample, in the columns named after them",
            event.group.join(", ")
        )?;
    }
    if let Some(thread) = &event.thread {
        writeln!(
            out,
            "# Thread:   {} (pid {}, tid {}): {} samples",
            thread.name, thread.pid, thread.tid, thread.samples
        )?;
    }
    match &event.selected {
        Some((admitted, filter)) => writeln!(
            out,
            "# Samples:  {admitted} of {}, those of {filter} (lost {}, throttled {})",
            stats.samples, stats.lost, stats.throttled
        )?,
        None => writeln!(
            out,
            "# Samples:  {} (lost {}, throttled {})",
            stats.samples, stats.lost, stats.throttled
        )?,
    }
    for advice in loss_advice(stats) {
        writeln!(out, "# Warning:  {advice}")?;
    }
    if let (Some(call_graph), Some((rooted, samples))) =
        (profile.header.call_graph, event.call_stacks)
    {
        writeln!(
            out,
            "# Stacks:   {}",
            stack_phrase(call_graph, rooted, samples)
        )?;
        if let Some(advice) = stack_advice(call_graph, rooted, samples) {
            writeln!(out, "# Warning:  {advice}")?;
        }
    }
    if profile.header.call_graph.is_none() && (profile.children || profile.call_graph) {
        writeln!(out, "# Stacks:   {NO_STACKS}")?;
    }
    if event.commands.len() > 1 {
        writeln!(out, "# Commands: {}", commands_phrase(event))?;
    }
    writeln!(out, "#")?;
    if header_only {
        return Ok(());
    }
    render_table(event, profile, width, out)?;
    if let Some(tree) = &event.tree {
        render_call_tree(tree, width, out)?;
    }
    Ok(())
}

/// The threads shown of their times, those that lived longest: the rest
/// are counted in a line.
const TIMED_THREADS: usize = 10;

/// With `record --off-cpu`: how each thread spent its life, on the CPU,
/// blocked and preempted, and their total against its lifetime (less
/// where switches were lost, or the thread was running before the
/// recording saw it).
fn render_thread_times(profile: &FlatProfile, out: &mut impl Write) -> io::Result<()> {
    if profile.thread_times.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "# Threads:  time on the CPU, and off it blocked (waiting for something) or preempted \
         (runnable, another thread had its CPU), against each thread's lifetime"
    )?;
    writeln!(
        out,
        "# {:>11} {:>11} {:>11} {:>11} {:>11} {:>7}  Thread",
        "On-CPU", "Blocked", "Preempted", "Total", "Lifetime", "Of life"
    )?;
    let ms = |ns: u64| format!("{:.1} ms", ns as f64 / 1e6);
    let mut threads: Vec<_> = profile.thread_times.iter().collect();
    threads.sort_by_key(|t| {
        (
            std::cmp::Reverse(t.times.lifetime()),
            t.times.pid,
            t.times.tid,
        )
    });
    for thread in threads.into_iter().take(TIMED_THREADS) {
        let t = &thread.times;
        let name = match thread.name.as_str() {
            "" => String::new(),
            name => format!("{name} "),
        };
        writeln!(
            out,
            "# {:>11} {:>11} {:>11} {:>11} {:>11} {:>6.1}%  {name}(pid {}, tid {})",
            ms(t.on_cpu),
            ms(t.blocked),
            ms(t.preempted),
            ms(t.total()),
            ms(t.lifetime()),
            t.total() as f64 * 100.0 / t.lifetime().max(1) as f64,
            t.pid,
            t.tid,
        )?;
    }
    let more = profile.thread_times.len().saturating_sub(TIMED_THREADS);
    if more > 0 {
        writeln!(
            out,
            "# and {more} more threads that lived less long: --format json lists every one"
        )?;
    }
    Ok(())
}

/// What `--children` and `--call-graph` show of a recording without call
/// stacks.
const NO_STACKS: &str = "none recorded, so the call tree holds only inline chains (and \
    Children only code inlined into each function); record with -g or --call-graph dwarf for \
    callers";

/// `grep 63.10%, sed 28.02%, sh 8.43%`: the commands' shares, the first
/// eight.
fn commands_phrase(event: &EventProfile) -> String {
    const LISTED: usize = 8;
    let mut listed: Vec<String> = (event.commands.iter().take(LISTED))
        .map(|c| {
            let name = c.task.command.as_deref().unwrap_or("[unknown]");
            format!("{name} {:.2}%", c.percent)
        })
        .collect();
    if event.commands.len() > LISTED {
        listed.push(format!("and {} more", event.commands.len() - LISTED));
    }
    listed.join(", ")
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `2026-11-22 20:15:03 UTC`.
fn utc_time(unix_ns: u64) -> String {
    let seconds = unix_ns / 1_000_000_000;
    let (days, of_day) = (seconds / 86_400, seconds % 86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_print_as_utc_dates() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_time(951_782_400_000_000_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(
            utc_time(1_795_379_923_294_877_693),
            "2026-11-22 20:38:43 UTC"
        );
    }
}
