//! The flat profile as text, in the manner of `perf report --stdio`: a
//! commented header, then one aligned row per function or module.

use std::io::{self, Write};

use profiler_model::{EventDescription, Sampling};

use crate::profile::{EventProfile, FlatProfile, SortKey};

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
        render_event(event, profile.sort, out)?;
    }
    Ok(())
}

fn render_event(event: &EventProfile, sort: SortKey, out: &mut impl Write) -> io::Result<()> {
    let stats = &event.stats;
    writeln!(out, "# Event:    {}", event_phrase(&event.description))?;
    writeln!(
        out,
        "# Samples:  {} (lost {}, throttled {})",
        stats.samples, stats.lost, stats.throttled
    )?;
    let lost_share = stats.lost as f64 / (stats.samples + stats.lost).max(1) as f64;
    if lost_share > 0.01 {
        writeln!(
            out,
            "# Warning:  {:.1}% of the samples were lost (the ring buffers filled up); \
             record with a lower -F or a higher -c",
            lost_share * 100.0
        )?;
    }
    writeln!(out, "#")?;
    let rows: Vec<(f64, u64, &str, &str)> = match sort {
        SortKey::Symbol => event
            .functions
            .iter()
            .map(|f| {
                (
                    f.percent,
                    f.weight.samples,
                    f.module.as_str(),
                    f.name.as_str(),
                )
            })
            .collect(),
        SortKey::Module => event
            .modules
            .iter()
            .map(|m| {
                (
                    m.percent,
                    m.weight.samples,
                    m.module.as_str(),
                    m.path.as_str(),
                )
            })
            .collect(),
    };
    let last_column = if sort == SortKey::Symbol {
        "Function"
    } else {
        "Path"
    };
    let samples_width = rows
        .iter()
        .map(|r| r.1.to_string().len())
        .max()
        .unwrap_or(0)
        .max(7);
    let module_width = rows.iter().map(|r| r.2.len()).max().unwrap_or(0).max(6);
    writeln!(
        out,
        "# {:>7}  {:>samples_width$}  {:<module_width$}  {last_column}",
        "Self %", "Samples", "Module"
    )?;
    writeln!(
        out,
        "# {}  {}  {}  {}",
        "-".repeat(7),
        "-".repeat(samples_width),
        "-".repeat(module_width),
        "-".repeat(last_column.len())
    )?;
    for (percent, samples, module, name) in rows {
        writeln!(
            out,
            "  {percent:>6.2}%  {samples:>samples_width$}  {module:<module_width$}  {name}"
        )?;
    }
    Ok(())
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `cpu-clock, 4000 Hz, user space` or `page-faults, every 1 events, user space and kernel`.
pub(crate) fn event_phrase(event: &EventDescription) -> String {
    let rate = match event.sampling {
        Sampling::Frequency(hz) => format!("{hz} Hz"),
        Sampling::Period(n) => format!("every {n} {}", event.unit),
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
