//! The rows of a text report as an aligned table: the shares, then one
//! column per sort key in the order given (`--sort comm,dso,sym`), each as
//! wide as its widest cell or heading, so that headings and values line up;
//! where rows would be wider than the terminal, names give way (see
//! `fit`).

use std::io::{self, Write};

use crate::render::fit::{
    RowWidth, columns as text_columns, elide_middle, elide_templates, fit_name,
};
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
    State,
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
            Column::State => "State",
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
    cells: Vec<Cell>,
}

/// A cell of a text column.
enum Cell {
    Text(String),
    /// A function's name, and a note on the code inlined into it.
    Function(String, Option<InlineNote>),
}

impl Cell {
    fn full(&self) -> String {
        match self {
            Cell::Text(text) => text.clone(),
            Cell::Function(name, None) => name.clone(),
            Cell::Function(name, Some(note)) => format!("{name}  {}", note.text(&|n| n.into())),
        }
    }

    /// The cell in at most `room` columns.
    fn fitted(&self, room: Option<usize>) -> String {
        let full = self.full();
        let Some(room) = room.filter(|&room| text_columns(&full) > room) else {
            return full;
        };
        match self {
            Cell::Text(text) => elide_middle(text, room),
            Cell::Function(name, note) => fit_function(name, note.as_ref(), room),
        }
    }
}

/// What share of a function's samples lie in code inlined into it, and in
/// which functions' code (those directly inlined into it with 5% or more,
/// the first three, each with its share when there are several).
#[derive(Clone, Debug, PartialEq)]
struct InlineNote {
    percent: f64,
    names: Vec<(String, Option<f64>)>,
}

impl InlineNote {
    /// `(92% inlined: burn)`, `(70% inlined: mix 40%, hash 30%)`, each name
    /// as `name` gives it.
    fn text(&self, name: &dyn Fn(&str) -> String) -> String {
        let names: Vec<String> = (self.names.iter())
            .map(|(n, percent)| match percent {
                Some(percent) => format!("{} {percent:.0}%", name(n)),
                None => name(n),
            })
            .collect();
        match names.is_empty() {
            true => self.bare(),
            false => format!("({:.0}% inlined: {})", self.percent, names.join(", ")),
        }
    }

    /// `(92% inlined)`.
    fn bare(&self) -> String {
        format!("({:.0}% inlined)", self.percent)
    }
}

/// A function's name and note in at most `room` columns: the note's and the
/// name's template arguments elided, then the note without its names, then
/// the name's middle, then the note left out.
fn fit_function(name: &str, note: Option<&InlineNote>, room: usize) -> String {
    let Some(note) = note else {
        return fit_name(name, room);
    };
    let fits = |text: &String| text_columns(text) <= room;
    let short_name = elide_templates(name, 0);
    let brief = |n: &str| elide_templates(n, 0);
    let tries = [
        format!("{short_name}  {}", note.text(&brief)),
        format!("{short_name}  {}", note.bare()),
    ];
    if let Some(fitted) = tries.into_iter().find(fits) {
        return fitted;
    }
    let bare = note.bare();
    match room.checked_sub(text_columns(&bare) + 2) {
        Some(left) if left >= super::fit::MIN_NAME => {
            format!("{}  {bare}", elide_middle(&short_name, left))
        }
        _ => fit_name(name, room),
    }
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
            SortKey::State => Column::State,
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

/// Writes the table of `event`'s rows, or a line saying why it has none,
/// each row at most `width` wide where names can give way.
pub(crate) fn render_table(
    event: &EventProfile,
    profile: &FlatProfile,
    row_width: RowWidth,
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
        let cells = &mut rows.iter().map(|r| text_columns(&r.cells[i].full()));
        layout.push((column.title(), width(column.title(), cells), false));
    }
    let used = shares_width(&layout[..shares]);
    let rooms = fit_columns(&layout[shares..], &columns, used, row_width);
    let fitted: Vec<Vec<String>> = (rows.iter())
        .map(|row| {
            (row.cells.iter().zip(&rooms))
                .map(|(cell, &room)| cell.fitted(room))
                .collect()
        })
        .collect();
    for (i, room) in rooms.iter().enumerate() {
        if room.is_some() {
            let (title, column_width, _) = &mut layout[shares + i];
            *column_width = width(
                title,
                &mut fitted.iter().map(|cells| text_columns(&cells[i])),
            );
        }
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
    for (row, fitted) in rows.into_iter().zip(fitted) {
        let mut cells = Vec::with_capacity(layout.len());
        if children {
            cells.push(format!("{:.2}%", row.total));
        }
        cells.push(format!("{:.2}%", row.percent));
        cells.push(row.samples.to_string());
        cells.extend(row.group.iter().map(u64::to_string));
        debug_assert_eq!(cells.len(), shares);
        cells.extend(fitted);
        writeln!(out, "{}", line(cells))?;
    }
    Ok(())
}

/// The width of the share columns, with the row's indent and the gaps
/// after them.
fn shares_width(layout: &[(&str, usize, bool)]) -> usize {
    2 + layout.iter().map(|(_, width, _)| width + 2).sum::<usize>()
}

/// The room of each text column of `layout` (after `used` columns of
/// shares) where rows must give way to fit in `width`, `None` where its
/// cells stay whole: the function's column takes what the others leave,
/// the others at most 30 columns.
fn fit_columns(
    layout: &[(&str, usize, bool)],
    columns: &[Column],
    used: usize,
    width: RowWidth,
) -> Vec<Option<usize>> {
    const OTHER_MOST: usize = 30;
    let mut rooms = vec![None; layout.len()];
    let total = used + layout.iter().map(|(_, w, _)| w + 2).sum::<usize>() - 2;
    match width {
        RowWidth::Columns(limit) if total > limit => {}
        _ => return rooms,
    }
    // The column that gives way: the function's, else the last.
    let flexible = (columns.iter())
        .position(|&c| c == Column::Function)
        .unwrap_or(layout.len() - 1);
    let mut others = 0;
    for (i, (title, column_width, _)) in layout.iter().enumerate() {
        if i == flexible {
            continue;
        }
        let kept = match *column_width > OTHER_MOST {
            true => OTHER_MOST.max(title.len()),
            false => *column_width,
        };
        if kept < *column_width {
            rooms[i] = Some(kept);
        }
        others += kept + 2;
    }
    rooms[flexible] = width.room_after(used + others);
    rooms
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
    let task_cell = |task: &Task, column: Column| {
        Cell::Text(match column {
            Column::Rank => task.rank.map(|rank| rank.to_string()).unwrap_or_default(),
            Column::Command => task.command.clone().unwrap_or_default(),
            Column::Pid => (task.process.as_ref())
                .map(|(pid, name)| format!("{pid}:{name}"))
                .unwrap_or_default(),
            Column::State => task.state.map_or("", |s| s.name()).to_owned(),
            _ => String::new(),
        })
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
                        Column::Module => Cell::Text(m.module.clone()),
                        Column::Path => Cell::Text(m.path.clone()),
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
                        Column::Module => Cell::Text(f.module.clone()),
                        Column::Function if inline => Cell::Function(f.name.clone(), None),
                        Column::Function => Cell::Function(f.name.clone(), inline_note(f)),
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
                        Column::Module => Cell::Text(p.module.clone()),
                        Column::Line | Column::Address => Cell::Text(place_text(p)),
                        Column::Function => Cell::Function(
                            match p.function_offset {
                                Some(offset) => format!("{}+{offset:#x}", p.function),
                                None => p.function.clone(),
                            },
                            None,
                        ),
                        c => task_cell(&p.task, c),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The note of a function whose samples lie mostly (half or more) in code
/// inlined into it: `(92% inlined: burn)`, or `(70% inlined: mix 40%,
/// hash 30%)`; none otherwise.
fn inline_note(row: &FunctionRow) -> Option<InlineNote> {
    let own = row.weight.period.max(1) as f64;
    let share = |period: u64| period as f64 * 100.0 / own;
    let inlined = share(row.inlined_weight.period);
    if row.inlined_weight.samples == 0 || inlined < 50.0 {
        return None;
    }
    let mut direct: Vec<(&str, f64)> = (row.inlined.iter())
        .filter(|i| i.direct.samples > 0)
        .map(|i| (i.name.as_str(), share(i.direct.period)))
        .collect();
    direct.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let names = match direct.as_slice() {
        [(name, _)] => vec![((*name).to_owned(), None)],
        _ => (direct.iter())
            .filter(|(_, percent)| *percent >= 5.0)
            .take(3)
            .map(|(name, percent)| ((*name).to_owned(), Some(*percent)))
            .collect(),
    };
    Some(InlineNote {
        percent: inlined,
        names,
    })
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
    fn inline_notes_give_way_before_names_do() {
        let note = InlineNote {
            percent: 95.0,
            names: vec![(
                "std::vector<int, std::allocator<int> >::push_back".into(),
                None,
            )],
        };
        let name = "Widget<std::map<int, long> >::burn";
        let cell = Cell::Function(name.into(), Some(note.clone()));
        let full =
            format!("{name}  (95% inlined: std::vector<int, std::allocator<int> >::push_back)");
        assert_eq!(cell.fitted(None), full);
        assert_eq!(cell.fitted(Some(200)), full);
        let fitted = |room| cell.fitted(Some(room));
        assert_eq!(
            fitted(60),
            "Widget<..>::burn  (95% inlined: std::vector<..>::push_back)"
        );
        assert_eq!(fitted(40), "Widget<..>::burn  (95% inlined)");
        assert_eq!(fitted(28), "Wid..>::burn  (95% inlined)");
        assert_eq!(fitted(12), fit_name(name, 12));
        let several = InlineNote {
            percent: 70.0,
            names: vec![("mix".into(), Some(40.0)), ("hash".into(), Some(30.0))],
        };
        assert_eq!(
            several.text(&|n| n.into()),
            "(70% inlined: mix 40%, hash 30%)"
        );
    }

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
