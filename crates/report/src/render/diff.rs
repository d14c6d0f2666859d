//! A diff of two profiles as an aligned table, in the manner of `perf
//! diff`, or as JSON.

use std::io::{self, Write};

use serde_json::json;

use crate::render::fit::{RowWidth, fit_name};
use crate::views::diff::ProfileDiff;
use crate::wording::column_width;

/// The diff as an aligned table, in the manner of `perf diff`, its rows at
/// most `width` wide where function names can give way.
pub fn render_diff_text(
    diff: &ProfileDiff,
    width: RowWidth,
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(
        out,
        "# Event: {}; base {} samples, new {} samples",
        diff.event, diff.base_samples, diff.new_samples
    )?;
    writeln!(
        out,
        "# Shares are of each recording's own total; deltas in points, most changed first."
    )?;
    for pair in &diff.pairs {
        writeln!(
            out,
            "# Module:  {} in the base is {} ({})",
            pair.base,
            pair.new,
            pair.by.phrase()
        )?;
    }
    writeln!(out, "#")?;
    if diff.rows.is_empty() && diff.percent_limit > 0.0 {
        return writeln!(
            out,
            "# No function's share changed by --percent-limit {} points or more",
            diff.percent_limit
        );
    }
    let module_width = column_width(diff.rows.iter().map(|r| r.module.len()), "Module");
    writeln!(
        out,
        "# {:>7}  {:>7}  {:>8}  {:>8}  {:>8}  {:>9}  {:<module_width$}  Function",
        "Base %", "New %", "Delta", "Samples", "Samples", "Total", "Module"
    )?;
    writeln!(
        out,
        "# {:>7}  {:>7}  {:>8}  {:>8}  {:>8}  {:>9}",
        "(self)", "(self)", "(self)", "(base)", "(new)", "delta"
    )?;
    // The shares, deltas and counts take 61 columns, the module two more.
    let room = width.room_after(61 + module_width + 2);
    for row in &diff.rows {
        let name = match room {
            Some(room) => fit_name(&row.name, room),
            None => row.name.clone(),
        };
        writeln!(
            out,
            "  {:>6.2}%  {:>6.2}%  {:>+8.2}  {:>8}  {:>8}  {:>+9.2}  {:<module_width$}  {}",
            row.base.self_percent,
            row.new.self_percent,
            row.self_delta(),
            row.base.self_weight.samples,
            row.new.self_weight.samples,
            row.total_delta(),
            row.module,
            name
        )?;
    }
    Ok(())
}

/// The diff as JSON: `{"event","base_samples","new_samples","functions":[{"name","module",
/// "base_self","new_self","base_self_percent","new_self_percent","self_delta",
/// "base_total","new_total","base_total_percent","new_total_percent","total_delta"}]}`.
pub fn render_diff_json(diff: &ProfileDiff, out: &mut impl Write) -> io::Result<()> {
    let round = |p: f64| (p * 10_000.0).round() / 10_000.0;
    let functions: Vec<_> = diff
        .rows
        .iter()
        .map(|r| {
            json!({
                "name": r.name,
                "module": r.module,
                "base_module": r.base_module,
                "base_self": r.base.self_weight.samples,
                "new_self": r.new.self_weight.samples,
                "base_self_percent": round(r.base.self_percent),
                "new_self_percent": round(r.new.self_percent),
                "self_delta": round(r.self_delta()),
                "base_total": r.base.total_weight.samples,
                "new_total": r.new.total_weight.samples,
                "base_total_percent": round(r.base.total_percent),
                "new_total_percent": round(r.new.total_percent),
                "total_delta": round(r.total_delta()),
            })
        })
        .collect();
    let pairs: Vec<_> = (diff.pairs.iter())
        .map(|pair| json!({"base": pair.base, "new": pair.new, "paired_by": pair.by.phrase()}))
        .collect();
    let document = json!({
        "event": diff.event,
        "base_samples": diff.base_samples,
        "new_samples": diff.new_samples,
        "functions": functions,
        "modules": pairs,
    });
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}
