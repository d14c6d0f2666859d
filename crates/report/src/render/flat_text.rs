//! The flat profile as text, in the manner of `perf report --stdio`: a
//! commented header, then one aligned row per function or module.

use std::io::{self, Write};

use profiler_model::{CallGraph, EventDescription, EventStats, Sampling};

use crate::render::flat_table::render_table;
use crate::views::call_tree::{CallTree, TreeDirection};
use crate::views::flat::{EventProfile, FlatProfile};

pub fn render_text(profile: &FlatProfile, out: &mut impl Write) -> io::Result<()> {
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
    writeln!(
        out,
        "# Tasks:    {}, {}",
        count(profile.processes, "process", "processes"),
        count(profile.thread_count, "thread", "threads")
    )?;
    for problem in &profile.problems {
        writeln!(out, "# Note:     {problem}")?;
    }
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
        render_event(event, profile, out)?;
    }
    Ok(())
}

fn render_event(
    event: &EventProfile,
    profile: &FlatProfile,
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
    writeln!(
        out,
        "# Samples:  {} (lost {}, throttled {})",
        stats.samples, stats.lost, stats.throttled
    )?;
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
    render_table(event, profile, out)?;
    if let Some(tree) = &event.tree {
        render_tree(tree, out)?;
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

/// What to do when more than 1% of an event's samples were lost, or its
/// sampling was throttled that often.
pub fn loss_advice(stats: &EventStats) -> Vec<String> {
    let mut advice = Vec::new();
    let lost_share = stats.lost as f64 / stats.samples.saturating_add(stats.lost).max(1) as f64;
    if lost_share > 0.01 {
        advice.push(format!(
            "{:.1}% of the samples were lost (the ring buffers filled up); record with a \
             lower -F, a higher -c or a bigger --mmap-pages",
            lost_share * 100.0
        ));
    }
    if stats.throttled as f64 > stats.samples as f64 * 0.01 {
        advice.push(format!(
            "the kernel throttled sampling {} times (more samples per second than \
             kernel.perf_event_max_sample_rate and perf_cpu_time_max_percent allow): the \
             samples undercount the busiest stretches; record with a lower -F or a higher -c",
            stats.throttled
        ));
    }
    advice
}

/// `frame pointers: 97.2% reached the start of their program or thread (1234 of 1270 samples)`.
pub fn stack_phrase(call_graph: CallGraph, rooted: u64, samples: u64) -> String {
    let how = match call_graph {
        CallGraph::FramePointer => "frame pointers".to_owned(),
        CallGraph::Dwarf { stack_bytes } => format!("dwarf, {stack_bytes}-byte stack copies"),
    };
    format!(
        "{how}: {:.1}% reached the start of their program or thread ({rooted} of {samples} samples)",
        rooted as f64 * 100.0 / samples.max(1) as f64
    )
}

/// What to do when too few stacks were whole (among enough samples to
/// tell).
pub fn stack_advice(call_graph: CallGraph, rooted: u64, samples: u64) -> Option<String> {
    if samples < 50 || rooted as f64 >= samples as f64 * 0.9 {
        return None;
    }
    Some(match call_graph {
        CallGraph::FramePointer => "many stacks are cut short: code built without frame \
            pointers breaks the chain; record with --call-graph dwarf, or build with \
            -fno-omit-frame-pointer"
            .to_owned(),
        CallGraph::Dwarf { stack_bytes } => format!(
            "many stacks are cut short: deep stacks need a bigger copy; record with \
             --call-graph dwarf,{}",
            (stack_bytes.saturating_mul(4)).min(65528)
        ),
    })
}

/// How many levels a call tree's rows are indented at most.
const MAX_TREE_INDENT: usize = 32;

/// The call tree, indented, each node with its share of the event.
fn render_tree(tree: &CallTree, out: &mut impl Write) -> io::Result<()> {
    let title = match tree.direction {
        TreeDirection::Caller => "callers first: each function, then what it called",
        TreeDirection::Callee => "callees first: each function, then what called it",
    };
    writeln!(out, "#")?;
    writeln!(out, "# Call tree, {title}")?;
    writeln!(out, "#")?;
    for node in &tree.nodes {
        let inlined = match node.inlined {
            true => " (inlined)",
            false => "",
        };
        // Deeper than the cap, rows stay at its indentation and say how
        // deep they are, counting the roots as 1.
        let depth = match node.depth > MAX_TREE_INDENT {
            true => format!("(depth {}) ", node.depth + 1),
            false => String::new(),
        };
        writeln!(
            out,
            "  {:>6.2}%  {}{depth}{}{inlined} [{}]",
            node.percent,
            "  ".repeat(node.depth.min(MAX_TREE_INDENT)),
            node.name,
            node.module
        )?;
    }
    Ok(())
}

/// The width of a column: its widest value, or its heading if wider.
pub(crate) fn column_width(widths: impl Iterator<Item = usize>, heading: &str) -> usize {
    widths.max().unwrap_or(0).max(heading.len())
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `cpu-clock, 4000 Hz, user space` or `page-faults, every 1 events, user space and kernel`.
pub(crate) fn event_phrase(event: &EventDescription) -> String {
    let rate = match (event.leader, event.sampling) {
        (Some(_), _) => "read with each sample of its group's leader".to_owned(),
        (None, Sampling::Frequency(hz)) => format!("{hz} Hz"),
        (None, Sampling::Period(n)) => format!("every {n} {}", event.unit),
    };
    let scope = match (event.user, event.kernel) {
        (true, false) => "user space",
        (false, true) => "kernel",
        _ => "user space and kernel",
    };
    format!("{}, {rate}, {scope}", event.name)
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
