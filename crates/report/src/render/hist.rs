//! The histogram table as text (in the manner of PAPI's test printer, with
//! exact addresses), JSON or CSV.

use std::io::{self, Write};

use serde_json::json;

use crate::render::fit::{RowWidth, columns, elide_middle, fit_name};
use crate::views::hist::HistTable;
use crate::wording::{column_width, event_phrase};

/// The widest a module's column gets where rows must fit a width.
const MODULE_MOST: usize = 24;

/// The histogram table as text, its rows at most `width` wide where
/// symbols (and long module names) can give way.
pub fn render_hist_text(
    table: &HistTable,
    width: RowWidth,
    out: &mut impl Write,
) -> io::Result<()> {
    let buckets: usize = table.regions.iter().map(|r| r.buckets).sum();
    let bytes: usize = table.regions.iter().map(|r| r.bytes).sum();
    writeln!(
        out,
        "# Histogram: {}-bit buckets, scale {} ({} bytes of text per bucket)",
        table.width.bits(),
        table.scale.value(),
        table.scale.bytes_per_bucket()
    )?;
    writeln!(
        out,
        "# Buffers:   {buckets} buckets in {} regions with samples, {bytes} bytes",
        table.regions.len()
    )?;
    for (event, totals) in table.events.iter().zip(&table.totals) {
        writeln!(
            out,
            "# Event:     {}: {} in regions, {} outside, {} saturated, {} dropped",
            event_phrase(event),
            totals.in_region,
            totals.outside,
            totals.saturated,
            totals.dropped
        )?;
    }
    for region in &table.regions {
        writeln!(
            out,
            "# Region:    {} at {:#x}: {} buckets, {} bytes, scale {} ({})",
            region.module,
            region.address,
            region.buckets,
            region.bytes,
            region.scale.value(),
            region.path
        )?;
    }
    for problem in &table.problems {
        writeln!(out, "# Note:      {problem}")?;
    }
    writeln!(out, "#")?;

    let rows = || table.rows.iter();
    let address_width = column_width(rows().map(|r| format!("{:#x}", r.address).len()), "Address");
    let mut module_width = column_width(rows().map(|r| columns(&r.module)), "Module");
    let mut symbol_width = column_width(rows().map(|r| columns(&r.symbol)), "Symbol");
    let count_widths: Vec<usize> = table
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let widest = table
                .rows
                .iter()
                .map(|r| r.counts[i].to_string().len())
                .max()
                .unwrap_or(0);
            widest.max(e.name.len())
        })
        .collect();
    let counts_width: usize = count_widths.iter().map(|w| w + 2).sum();
    let (mut module_room, mut symbol_room) = (None, None);
    if let RowWidth::Columns(limit) = width
        && 2 + address_width + 2 + module_width + 2 + symbol_width + counts_width > limit
    {
        if module_width > MODULE_MOST {
            module_width = MODULE_MOST;
            module_room = Some(MODULE_MOST);
        }
        symbol_room = width.room_after(2 + address_width + 2 + module_width + 2 + counts_width);
    }
    let fitted = |text: &str, room: Option<usize>, fit: fn(&str, usize) -> String| match room {
        Some(room) => fit(text, room),
        None => text.to_owned(),
    };
    let cells: Vec<(String, String)> = (table.rows.iter())
        .map(|row| {
            (
                fitted(&row.module, module_room, elide_middle),
                fitted(&row.symbol, symbol_room, fit_name),
            )
        })
        .collect();
    if symbol_room.is_some() {
        symbol_width = column_width(cells.iter().map(|(_, symbol)| columns(symbol)), "Symbol");
    }
    write!(
        out,
        "# {:<address_width$}  {:<module_width$}  {:<symbol_width$}",
        "Address", "Module", "Symbol"
    )?;
    for (event, width) in table.events.iter().zip(&count_widths) {
        write!(out, "  {:>width$}", event.name)?;
    }
    writeln!(out)?;
    for (row, (module, symbol)) in table.rows.iter().zip(cells) {
        let address = format!("{:#x}", row.address);
        write!(
            out,
            "  {address:<address_width$}  {module:<module_width$}  {symbol:<symbol_width$}",
        )?;
        for (count, width) in row.counts.iter().zip(&count_widths) {
            write!(out, "  {count:>width$}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// `{"bucket_bits","scale","events":[..],"rows":[{"address","module","symbol","counts"}],
/// "outside":[..],"saturated":[..], ...}`: one entry of `counts`, `outside`
/// and `saturated` per event, in the order of `events`.
pub fn render_hist_json(table: &HistTable, out: &mut impl Write) -> io::Result<()> {
    let rows: Vec<_> = table
        .rows
        .iter()
        .map(|r| json!({"address": r.address, "module": r.module, "symbol": r.symbol, "counts": r.counts}))
        .collect();
    let regions: Vec<_> = table
        .regions
        .iter()
        .map(|r| {
            json!({
                "module": r.module, "path": r.path, "address": r.address,
                "scale": r.scale.value(), "buckets": r.buckets, "bytes": r.bytes,
            })
        })
        .collect();
    let document = json!({
        "bucket_bits": table.width.bits(),
        "scale": table.scale.value(),
        "events": table.events.iter().map(|e| &e.name).collect::<Vec<_>>(),
        "rows": rows,
        "in_region": table.totals.iter().map(|t| t.in_region).collect::<Vec<_>>(),
        "outside": table.totals.iter().map(|t| t.outside).collect::<Vec<_>>(),
        "saturated": table.totals.iter().map(|t| t.saturated).collect::<Vec<_>>(),
        "dropped": table.totals.iter().map(|t| t.dropped).collect::<Vec<_>>(),
        "regions": regions,
        "problems": table.problems,
    });
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}

/// `address,module,symbol,EVENT...` with one line per row.
pub fn render_hist_csv(table: &HistTable, out: &mut impl Write) -> io::Result<()> {
    let mut header = vec![
        "address".to_owned(),
        "module".to_owned(),
        "symbol".to_owned(),
    ];
    header.extend(table.events.iter().map(|e| e.name.clone()));
    writeln!(
        out,
        "{}",
        header
            .iter()
            .map(|h| csv_field(h))
            .collect::<Vec<_>>()
            .join(",")
    )?;
    for row in &table.rows {
        let mut fields = vec![
            format!("{:#x}", row.address),
            csv_field(&row.module),
            csv_field(&row.symbol),
        ];
        fields.extend(row.counts.iter().map(u64::to_string));
        writeln!(out, "{}", fields.join(","))?;
    }
    Ok(())
}

/// Quotes a field that holds a comma, a quote or a line break (C++ names do).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("burn_60+0x10"), "burn_60+0x10");
        assert_eq!(
            csv_field("std::map<int, long>::find"),
            "\"std::map<int, long>::find\""
        );
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
