//! The rows of a text report as an aligned table: the shares, then one
//! column per sort key in the order given (`--sort comm,dso,sym`), each as
//! wide as its widest cell or heading, so that headings and values line up.

use std::io::{self, Write};

use crate::views::flat::{EventProfile, FlatProfile, FunctionRow};
use crate::views::places::PlaceRow;
use crate::views::sort::PlaceKind;
use crate::views::sort::{RowKind, SortKey, row_kind};
use crate::views::tasks::Task;

/// A column named by the sort keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Rank,
    Command,
    Pid,
    Module,
    /// Modules' paths, after their names.
    Path,
    Line,
    Address,
    Function,
}

impl Column {
    fn title(self) -> &'static str {
        match self {
            Column::Rank => "Rank",
            Column::Command => "Command",
            Column::Pid => "Pid:Command",
            Column::Module => "Module",
            Column::Path => "Path",
            Column::Line => "Line",
            Column::Address => "Address",
            Column::Function => "Function",
        }
    }
}

/// One row of the table.
struct Row {
    total: f64,
    percent: f64,
    samples: u64,
    /// What each member of the event's group counted.
    group: Vec<u64>,
    /// One cell per column.
    cells: Vec<String>,
}

/// The columns of rows of `kind`: the sort keys' in their order, with the
/// module before what lies inside modules and the function after a line
/// or address, where the keys leave them out.
fn columns(kind: RowKind, keys: &[SortKey]) -> Vec<Column> {
    let mut columns: Vec<Column> = keys
        .iter()
        .map(|key| match key {
            SortKey::Rank => Column::Rank,
            SortKey::Command => Column::Command,
            SortKey::Pid => Column::Pid,
            SortKey::Module => Column::Module,
            SortKey::Symbol => Column::Function,
            SortKey::Line => Column::Line,
            SortKey::Address => Column::Address,
        })
        // Rows by address have no line of their own.
        .filter(|&column| {
            !matches!(
                (kind, column),
                (RowKind::Places(PlaceKind::Address), Column::Line)
            )
        })
        .collect();
    let innermost = match kind {
        RowKind::Tasks => return columns,
        RowKind::Modules => {
            columns.push(Column::Path);
            return columns;
        }
        RowKind::Functions => Column::Function,
        RowKind::Places(PlaceKind::Line) => Column::Line,
        RowKind::Places(PlaceKind::Address) => Column::Address,
    };
    if !columns.contains(&innermost) {
        columns.push(innermost);
    }
    if !columns.contains(&Column::Function) {
        columns.push(Column::Function);
    }
    if !columns.contains(&Column::Module) {
        let at = columns.iter().position(|&c| c == innermost).unwrap_or(0);
        columns.insert(at, Column::Module);
    }
    columns
}

/// Writes the table of `event`'s rows, or a line saying why it has none.
pub(crate) fn render_table(
    event: &EventProfile,
    profile: &FlatProfile,
    out: &mut impl Write,
) -> io::Result<()> {
    let kind = row_kind(&profile.sort);
    let columns = columns(kind, &profile.sort);
    let children = profile.children && kind == RowKind::Functions;
    let rows = rows(event, kind, &columns, children, profile.inline);
    if rows.is_empty() {
        return writeln!(out, "# {}", why_empty(event, profile));
    }
    let group: &[String] = match kind {
        RowKind::Functions => &event.group,
        _ => &[],
    };
    // Each column: its title, its width, and whether it aligns right.
    let mut layout: Vec<(&str, usize, bool)> = Vec::new();
    let width = |title: &str, cells: &mut dyn Iterator<Item = usize>| {
        cells.max().unwrap_or(0).max(title.len())
    };
    if children {
        layout.push(("Children", 8, true));
    }
    layout.push(("Self %", 7, true));
    let samples = width(
        "Samples",
        &mut rows.iter().map(|r| r.samples.to_string().len()),
    );
    layout.push(("Samples", samples, true));
    for (i, name) in group.iter().enumerate() {
        let counts = &mut rows.iter().map(|r| r.group[i].to_string().len());
        layout.push((name, width(name, counts), true));
    }
    let shares = layout.len();
    for (i, column) in columns.iter().enumerate() {
        let cells = &mut rows.iter().map(|r| r.cells[i].chars().count());
        layout.push((column.title(), width(column.title(), cells), false));
    }
    let last = layout.len() - 1;
    let line = |cells: Vec<String>| -> String {
        let mut text = String::from("  ");
        for (i, (cell, &(_, width, right))) in cells.iter().zip(&layout).enumerate() {
            match (right, i == last) {
                (true, _) => text.push_str(&format!("{cell:>width$}")),
                (false, false) => text.push_str(&format!("{cell:<width$}")),
                (false, true) => text.push_str(cell),
            }
            if i != last {
                text.push_str("  ");
            }
        }
        text
    };
    let titles = line(
        layout
            .iter()
            .map(|(title, _, _)| title.to_string())
            .collect(),
    );
    // The last column is as wide as its cells, but its rule as its title.
    let rule = |(i, (title, width, _)): (usize, &(&str, usize, bool))| match i == last {
        true => "-".repeat(title.len()),
        false => "-".repeat(*width),
    };
    let rules = line(layout.iter().enumerate().map(rule).collect());
    writeln!(out, "#{}", &titles[1..])?;
    writeln!(out, "#{}", &rules[1..])?;
    for row in rows {
        let mut cells = Vec::with_capacity(layout.len());
        if children {
            cells.push(format!("{:.2}%", row.total));
        }
        cells.push(format!("{:.2}%", row.percent));
        cells.push(row.samples.to_string());
        cells.extend(row.group.iter().map(u64::to_string));
        debug_assert_eq!(cells.len(), shares);
        cells.extend(row.cells);
        writeln!(out, "{}", line(cells))?;
    }
    Ok(())
}

/// Why a table has no rows.
fn why_empty(event: &EventProfile, profile: &FlatProfile) -> String {
    match (event.stats.samples, profile.percent_limit > 0.0) {
        (0, _) => "No samples to show".to_owned(),
        (_, true) => format!(
            "Every row is below --percent-limit {}%; give a lower one to see them",
            profile.percent_limit
        ),
        (_, false) => "No samples to show in the rows chosen".to_owned(),
    }
}

/// The rows of `event` of `kind`, with their cells for `columns`.
fn rows(
    event: &EventProfile,
    kind: RowKind,
    columns: &[Column],
    children: bool,
    inline: bool,
) -> Vec<Row> {
    let task_cell = |task: &Task, column: Column| match column {
        Column::Rank => task.rank.map(|rank| rank.to_string()).unwrap_or_default(),
        Column::Command => task.command.clone().unwrap_or_default(),
        Column::Pid => task
            .process
            .as_ref()
            .map(|(pid, name)| format!("{pid}:{name}"))
            .unwrap_or_default(),
        _ => String::new(),
    };
    match kind {
        RowKind::Tasks => (event.tasks.iter())
            .map(|t| Row {
                total: t.percent,
                percent: t.percent,
                samples: t.weight.samples,
                group: Vec::new(),
                cells: columns.iter().map(|&c| task_cell(&t.task, c)).collect(),
            })
            .collect(),
        RowKind::Modules => (event.modules.iter())
            .map(|m| Row {
                total: m.percent,
                percent: m.percent,
                samples: m.weight.samples,
                group: Vec::new(),
                cells: (columns.iter())
                    .map(|&c| match c {
                        Column::Module => m.module.clone(),
                        Column::Path => m.path.clone(),
                        c => task_cell(&m.task, c),
                    })
                    .collect(),
            })
            .collect(),
        // Without the Children column, functions only passed through (no
        // samples of their own) have nothing to show.
        RowKind::Functions => (event.functions.iter())
            .filter(|f| children || f.weight.samples > 0)
            .map(|f| Row {
                total: f.total_percent,
                percent: f.percent,
                samples: f.weight.samples,
                group: f.group.clone(),
                cells: (columns.iter())
                    .map(|&c| match c {
                        Column::Module => f.module.clone(),
                        Column::Function if inline => f.name.clone(),
                        Column::Function => f.name.clone() + &inlined_note(f),
                        c => task_cell(&f.task, c),
                    })
                    .collect(),
            })
            .collect(),
        RowKind::Places(_) => (event.places.iter())
            .map(|p| Row {
                total: p.percent,
                percent: p.percent,
                samples: p.weight.samples,
                group: Vec::new(),
                cells: (columns.iter())
                    .map(|&c| match c {
                        Column::Module => p.module.clone(),
                        Column::Line | Column::Address => place_text(p),
                        Column::Function => match p.function_offset {
                            Some(offset) => format!("{}+{offset:#x}", p.function),
                            None => p.function.clone(),
                        },
                        c => task_cell(&p.task, c),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// `  (92% in inlined burn)`, or `  (70% in inlined code: mix 40%, hash
/// 30%)`, for a function whose samples lie mostly (half or more) in code
/// inlined into it; empty otherwise.
fn inlined_note(row: &FunctionRow) -> String {
    let own = row.weight.period.max(1) as f64;
    let share = |period: u64| period as f64 * 100.0 / own;
    let inlined = share(row.inlined_weight.period);
    if row.inlined_weight.samples == 0 || inlined < 50.0 {
        return String::new();
    }
    let mut direct: Vec<(&str, f64)> = (row.inlined.iter())
        .filter(|i| i.direct.samples > 0)
        .map(|i| (i.name.as_str(), share(i.direct.period)))
        .collect();
    direct.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    match direct.as_slice() {
        [(name, _)] => format!("  ({inlined:.0}% in inlined {name})"),
        _ => {
            let named: Vec<String> = (direct.iter())
                .filter(|(_, percent)| *percent >= 5.0)
                .take(3)
                .map(|(name, percent)| format!("{name} {percent:.0}%"))
                .collect();
            format!("  ({inlined:.0}% in inlined code: {})", named.join(", "))
        }
    }
}

/// `hot.c:20` (the file's name and the line), or the address in hex;
/// `??` where debug info says nothing.
fn place_text(row: &PlaceRow) -> String {
    match (row.address, &row.file, row.line) {
        (Some(address), _, _) => format!("{address:#x}"),
        (None, Some(file), Some(line)) => {
            format!("{}:{line}", file.rsplit('/').next().unwrap_or(file))
        }
        (None, _, _) => "??".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_follow_the_keys_with_module_and_function_filled_in() {
        use Column::*;
        let functions = RowKind::Functions;
        assert_eq!(columns(functions, &[SortKey::Symbol]), [Module, Function]);
        assert_eq!(columns(functions, &[]), [Module, Function]);
        assert_eq!(
            columns(
                functions,
                &[SortKey::Command, SortKey::Module, SortKey::Symbol]
            ),
            [Command, Module, Function]
        );
        assert_eq!(
            columns(functions, &[SortKey::Symbol, SortKey::Module]),
            [Function, Module]
        );
        assert_eq!(
            columns(RowKind::Places(PlaceKind::Line), &[SortKey::Line]),
            [Module, Line, Function]
        );
        assert_eq!(
            columns(RowKind::Modules, &[SortKey::Pid, SortKey::Module]),
            [Pid, Module, Path]
        );
        assert_eq!(columns(RowKind::Tasks, &[SortKey::Command]), [Command]);
    }
}
