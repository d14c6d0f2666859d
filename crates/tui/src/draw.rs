//! Drawing a screen from its state: the header, the table (or the
//! annotated listing, or the help), the panel of callers and the line of
//! keys. Pure: the same state draws the same cells, on a terminal or on
//! ratatui's test backend.

use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::annotate_view::AnnotateScreen;
use crate::app::App;
use crate::numbers::thousands;
use crate::table::{Row, SortKey, Table};

/// The header's facts, which the loop keeps current.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Header {
    /// `profiler top` or `profiler report`.
    pub title: String,
    /// What is sampled, or which recording.
    pub target: String,
    /// Per event: its name and rate, e.g. `cpu-clock 4000 Hz`.
    pub events: Vec<String>,
    /// Time sampled (top), or the window shown (a recording).
    pub time: String,
    /// How the target ended, once it has.
    pub status: Option<String>,
}

/// Callers and callees of the selected function, with their samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Neighbours {
    pub callers: Vec<(Arc<str>, u64)>,
    pub callees: Vec<(Arc<str>, u64)>,
}

/// Everything one frame shows.
pub(crate) struct View<'a> {
    pub header: &'a Header,
    pub table: &'a Table,
    pub app: &'a App,
    /// The event's lost and throttled samples.
    pub lost: u64,
    pub throttled: u64,
    pub neighbours: Option<&'a Neighbours>,
    /// Colours may be used (not with `NO_COLOR`).
    pub color: bool,
}

/// Rows of the table that fit in a screen `height` rows high.
pub(crate) fn table_height(height: u16, panel: bool) -> usize {
    let body = height.saturating_sub(4);
    let body = if panel { body - body / 3 } else { body };
    usize::from(body.saturating_sub(1))
}

pub(crate) fn draw(frame: &mut Frame<'_>, view: &View<'_>) {
    let area = frame.area();
    let [head, body, keys] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_header(frame, head, view);
    match &view.app.annotate {
        Some(screen) => draw_listing(frame, body, screen, view.color),
        None if view.app.callers => {
            let panel = body.height / 3;
            let [table, rest] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(panel)]).areas(body);
            draw_table(frame, table, view);
            draw_neighbours(frame, rest, view.neighbours);
        }
        None => draw_table(frame, body, view),
    }
    draw_keys(frame, keys, view.app);
    if view.app.help {
        draw_help(frame, area, view.app);
    }
}

fn draw_header(frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
    let (header, app) = (view.header, view.app);
    let event = (header.events.get(app.event).map(String::as_str)).unwrap_or("");
    let events = match header.events.len() {
        0 | 1 => String::new(),
        n => format!(" ({}/{n})", app.event + 1),
    };
    let first = format!(
        "{}: {event}{events}, {}, {}",
        header.title, header.target, header.time
    );
    let total = view.table.total;
    let mut second = format!(
        "{} samples, {} lost, {} throttled  sort: {}",
        thousands(total.samples),
        thousands(view.lost),
        thousands(view.throttled),
        app.key.label(),
    );
    if !app.replay {
        second.push_str(if app.decay {
            "  decay: on"
        } else {
            "  decay: off"
        });
    }
    if !app.filter.is_empty() {
        second.push_str(&format!("  filter: {}", app.filter));
    }
    let mut lines = vec![Line::from(Span::styled(first, bold()))];
    lines.push(match (&header.status, &app.message) {
        (_, Some(message)) => Line::from(Span::styled(message.clone(), warn(view.color))),
        (Some(status), None) => Line::from(vec![
            Span::raw(second),
            Span::raw("  "),
            Span::styled(status.clone(), warn(view.color)),
        ]),
        (None, None) => Line::from(second),
    });
    frame.render_widget(Paragraph::new(lines), area);
}

/// Which columns fit: the function gets what the others leave.
pub(crate) struct Columns {
    command: bool,
    pid: bool,
    module: bool,
}

impl Columns {
    /// Every column, as snapshots print them.
    pub(crate) fn all() -> Columns {
        Columns {
            command: true,
            pid: true,
            module: true,
        }
    }

    fn fitting(width: u16, key: SortKey) -> Columns {
        let width = usize::from(width);
        Columns {
            command: width >= 60 && key != SortKey::Command && key != SortKey::Pid,
            pid: width >= 70 || key == SortKey::Pid,
            module: width >= 50 && key != SortKey::Module,
        }
    }

    pub(crate) fn heading(&self, key: SortKey) -> String {
        let mut text = format!("{:>7} {:>9}", "Self", "Samples");
        if self.command {
            text.push_str(&format!(" {:<15}", "Command"));
        }
        if self.pid {
            text.push_str(&format!(" {:>7}", "Pid"));
        }
        if self.module {
            text.push_str(&format!(" {:<18}", "Module"));
        }
        let name = match key {
            SortKey::Symbol => "Function",
            SortKey::Module => "Module",
            SortKey::Command | SortKey::Pid => "Command",
        };
        text.push(' ');
        text.push_str(name);
        text
    }
}

fn draw_table(frame: &mut Frame<'_>, area: Rect, view: &View<'_>) {
    let app = view.app;
    let columns = Columns::fitting(area.width, app.key);
    let mut lines = vec![Line::from(Span::styled(
        pad(&columns.heading(app.key), area.width),
        Style::default().add_modifier(Modifier::REVERSED),
    ))];
    let height = usize::from(area.height.saturating_sub(1));
    let rows = view.table.rows.iter().enumerate().skip(app.scroll);
    for (index, row) in rows.take(height) {
        let text = pad(&row_text(row, &columns), area.width);
        let mut style = share_style(row.percent, view.color);
        if index == app.selected {
            style = style.add_modifier(Modifier::REVERSED);
        }
        lines.push(Line::from(Span::styled(text, style)));
    }
    if view.table.rows.is_empty() {
        let empty = match (app.filter.is_empty(), view.table.total.samples) {
            (false, _) => format!("no row holds \"{}\" (/ to change, Esc clears)", app.filter),
            (true, 0) => "no samples yet".to_owned(),
            (true, _) => "no samples of this event".to_owned(),
        };
        lines.push(Line::from(empty));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

/// A row of the table in `columns`.
pub(crate) fn row_text(row: &Row, columns: &Columns) -> String {
    let mut text = format!("{:>6.2}% {:>9}", row.percent, thousands(row.weight.samples));
    if columns.command {
        let command = match row.other_commands {
            0 => row.command.to_string(),
            n => format!("{}+{n}", row.command),
        };
        text.push_str(&format!(" {:<15}", clip(&command, 15)));
    }
    if columns.pid {
        let pid = row
            .pid
            .map_or_else(|| "-".to_owned(), |pid| pid.to_string());
        text.push_str(&format!(" {pid:>7}"));
    }
    if columns.module {
        text.push_str(&format!(" {:<18}", clip(&row.module, 18)));
    }
    text.push(' ');
    text.push_str(&row.name);
    text
}

fn draw_neighbours(frame: &mut Frame<'_>, area: Rect, neighbours: Option<&Neighbours>) {
    let mut lines = vec![Line::from(Span::styled(
        pad("Callers of the selected function / its callees", area.width),
        Style::default().add_modifier(Modifier::REVERSED),
    ))];
    let empty = Neighbours::default();
    let neighbours = neighbours.unwrap_or(&empty);
    let half = usize::from(area.height.saturating_sub(1)) / 2;
    let list = |lines: &mut Vec<Line<'_>>, arrow: &str, entries: &[(Arc<str>, u64)]| {
        if entries.is_empty() {
            lines.push(Line::from(format!("  {arrow} (none sampled)")));
        }
        for (name, samples) in entries.iter().take(half.max(1)) {
            lines.push(Line::from(format!(
                "  {arrow} {:>9}  {name}",
                thousands(*samples)
            )));
        }
    };
    list(&mut lines, "<-", &neighbours.callers);
    list(&mut lines, "->", &neighbours.callees);
    frame.render_widget(Paragraph::new(lines), area);
}

fn draw_listing(frame: &mut Frame<'_>, area: Rect, screen: &AnnotateScreen, color: bool) {
    let mut lines = vec![Line::from(Span::styled(
        pad(&screen.title, area.width),
        Style::default().add_modifier(Modifier::REVERSED),
    ))];
    for note in &screen.notes {
        lines.push(Line::from(Span::styled(note.clone(), warn(color))));
    }
    let height = usize::from(area.height).saturating_sub(lines.len());
    for line in screen.lines.iter().skip(screen.scroll).take(height) {
        let count = match line.count {
            Some((0, _)) => format!("{:>17}", ""),
            Some((samples, percent)) => format!("{percent:>6.2}% {:>9} ", thousands(samples)),
            None => String::new(),
        };
        // The hottest line is marked in text too, for a terminal without
        // reverse video and for whoever reads a capture of the screen.
        let mark = if line.hottest { '*' } else { ' ' };
        let text = match line.heading {
            true => format!("--- {} ---", line.text),
            false => format!("{count}{mark}{}", line.text),
        };
        let mut style = match line.count {
            Some((samples, percent)) if samples > 0 => share_style(percent, color),
            _ => Style::default(),
        };
        if line.heading {
            style = bold();
        }
        if line.hottest {
            style = style.add_modifier(Modifier::BOLD | Modifier::REVERSED);
        }
        lines.push(Line::from(Span::styled(pad(&text, area.width), style)));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn draw_keys(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let text = if app.editing {
        format!("filter: {}_   (Enter keeps it, Esc clears it)", app.filter)
    } else if app.annotate.is_some() {
        "Esc/q back  Up/Down PgUp/PgDn scroll".to_owned()
    } else {
        let mut keys = vec!["? help", "q quit", "s sort", "e event", "/ filter"];
        match app.replay {
            true => keys.extend(["[ ] window", "Enter annotate"]),
            false => keys.extend(["z zero", "d decay", "Enter annotate"]),
        }
        match (app.stacks, app.replay) {
            (true, true) => keys.push("c callers"),
            (true, false) => keys.push("g callers"),
            (false, _) => {}
        }
        // Tighter where two spaces between keys would not fit.
        let wide = keys.join("  ");
        match wide.len() <= usize::from(area.width) {
            true => wide,
            false => keys.join(" "),
        }
    };
    let style = Style::default().add_modifier(Modifier::REVERSED);
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(pad(&text, area.width), style))),
        area,
    );
}

const HELP: &[(&str, &str)] = &[
    ("q", "quit (in a listing: back)"),
    ("s", "sort by symbol, module, command, pid"),
    ("e", "next event"),
    ("/", "filter rows by name"),
    ("z", "zero the counts (live)"),
    ("d", "decaying counts: recent seconds weigh more (live)"),
    ("Enter", "annotate the selected function"),
    (
        "g, c",
        "callers and callees of the selected function (with -g)",
    ),
    ("[ ]", "move the window through a recording"),
    ("Up/Down", "select; PgUp/PgDn, Home/End"),
    ("?", "this help; any key closes it"),
];

fn draw_help(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let width = area.width.min(64);
    let height = area.height.min(HELP.len() as u16 + 2);
    let x = area.x + (area.width - width) / 2;
    let y = area.y + (area.height - height) / 2;
    let popup = Rect::new(x, y, width, height);
    let mut lines = vec![Line::from(Span::styled(
        pad(" Keys", width),
        Style::default().add_modifier(Modifier::REVERSED),
    ))];
    for (key, what) in HELP {
        let off = (*key == "g, c" && !app.stacks) || (*key == "[ ]" && !app.replay);
        let what = if off {
            format!("{what} (not here)")
        } else {
            (*what).to_owned()
        };
        lines.push(Line::from(format!(" {key:<8} {what}")));
    }
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(lines), popup);
}

fn share_style(percent: f64, color: bool) -> Style {
    match (color, percent) {
        (false, _) => Style::default(),
        (true, p) if p >= 5.0 => Style::default().fg(Color::Red),
        (true, p) if p >= 0.5 => Style::default().fg(Color::Green),
        _ => Style::default(),
    }
}

fn warn(color: bool) -> Style {
    match color {
        true => Style::default().fg(Color::Yellow),
        false => bold(),
    }
}

fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

/// `text` cut or filled with spaces to `width` columns.
fn pad(text: &str, width: u16) -> String {
    let width = usize::from(width);
    let mut out: String = text.chars().take(width).collect();
    let len = out.chars().count();
    out.extend(std::iter::repeat_n(' ', width - len));
    out
}

/// `text` in at most `width` columns, cut with `~`.
fn clip(text: &str, width: usize) -> String {
    match text.chars().count() <= width {
        true => text.to_owned(),
        false => {
            let mut cut: String = text.chars().take(width - 1).collect();
            cut.push('~');
            cut
        }
    }
}
