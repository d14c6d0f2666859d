//! The sites of an inlined function as text (a commented header, a table
//! of the functions holding a copy, and what to annotate) or as JSON.

use std::io::{self, Write};

use serde_json::json;

use crate::views::inline_sites::{InlineSite, InlineSites};

/// The sites as text: a commented header, a table, and what to annotate.
pub fn render_inline_sites_text(sites: &InlineSites, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "# Function: {} has no code of its own: it was inlined, in {} {}",
        sites.function,
        sites.sites.len(),
        match sites.sites.len() {
            1 => "place",
            _ => "places",
        }
    )?;
    writeln!(
        out,
        "# Event:    {}: {} of {} samples ({:.2}%) in its inlined code",
        sites.event,
        sites.samples,
        sites.event_samples,
        sites.samples as f64 * 100.0 / sites.event_samples.max(1) as f64
    )?;
    writeln!(out, "#")?;
    let width = |cells: &mut dyn Iterator<Item = usize>, title: &str| {
        cells.max().unwrap_or(0).max(title.len())
    };
    let samples = width(
        &mut sites.sites.iter().map(|s| s.samples.to_string().len()),
        "Samples",
    );
    let holder = width(
        &mut sites.sites.iter().map(|s| s.holder.len()),
        "Inlined into",
    );
    let module = width(&mut sites.sites.iter().map(|s| s.module.len()), "Module");
    writeln!(
        out,
        "# {:>samples$}  {:>7}  {:<holder$}  {:<module$}  Call site",
        "Samples", "Share", "Inlined into", "Module"
    )?;
    for site in &sites.sites {
        writeln!(
            out,
            "  {:>samples$}  {:>6.2}%  {:<holder$}  {:<module$}  {}",
            site.samples,
            site.percent,
            site.holder,
            site.module,
            call_site(site)
        )?;
    }
    if let Some(first) = sites.sites.first() {
        writeln!(out, "#")?;
        writeln!(
            out,
            "# Annotate a function it was inlined into to see its code there, e.g. \
             `profiler annotate {}`",
            first.holder
        )?;
    }
    Ok(())
}

/// The sites as JSON: `{"symbol","inlined":true,"event","samples","event_samples",
/// "sites":[{"function","module","file","line","samples","percent"}]}`.
pub fn render_inline_sites_json(sites: &InlineSites, out: &mut impl Write) -> io::Result<()> {
    let entries: Vec<_> = (sites.sites.iter())
        .map(|s| {
            json!({
                "function": s.holder,
                "module": s.module,
                "file": s.file.as_deref(),
                "line": s.line,
                "samples": s.samples,
                "percent": (s.percent * 10_000.0).round() / 10_000.0,
            })
        })
        .collect();
    let document = json!({
        "symbol": sites.function,
        "inlined": true,
        "event": sites.event,
        "samples": sites.samples,
        "event_samples": sites.event_samples,
        "sites": entries,
    });
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}

/// `inlinesplit.c:28`, or `??`.
fn call_site(site: &InlineSite) -> String {
    match (&site.file, site.line) {
        (Some(file), Some(line)) => format!("{}:{line}", file.rsplit('/').next().unwrap_or(file)),
        (Some(file), None) => file.rsplit('/').next().unwrap_or(file).to_owned(),
        _ => "??".into(),
    }
}
