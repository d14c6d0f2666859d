//! `top --stdio`, or `top` with its output not on a terminal: a table
//! every interval, as `perf top --stdio` prints, so that it can be logged.

use std::io::{self, Write};

use crate::draw::{Columns, Header, row_text};
use crate::numbers::thousands;
use crate::table::{SortKey, Table};

/// Writes one snapshot of `event`: a head line (what, time, counts), the
/// column heading and the hottest `rows` rows, then an empty line.
pub(crate) fn write_snapshot(
    header: &Header,
    event: usize,
    table: &Table,
    (lost, throttled): (u64, u64),
    rows: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    let event = header.events.get(event).map_or("", String::as_str);
    writeln!(
        out,
        "# {}: {event}, {}, {}: {} samples, {} lost, {} throttled{}",
        header.title,
        header.target,
        header.time,
        thousands(table.total.samples),
        thousands(lost),
        thousands(throttled),
        header
            .status
            .as_ref()
            .map_or_else(String::new, |status| format!("; {status}")),
    )?;
    let columns = Columns::all();
    writeln!(out, "{}", columns.heading(SortKey::Symbol))?;
    for row in table.rows.iter().take(rows) {
        writeln!(out, "{}", row_text(row, &columns))?;
    }
    if table.rows.is_empty() {
        writeln!(out, "(no samples yet)")?;
    }
    writeln!(out)?;
    out.flush()
}
