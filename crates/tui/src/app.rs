//! The screen's state, changed only by keys: which table (sort key, event,
//! filter), which row is selected, whether decay, the panel of callers,
//! the help or an annotated listing is shown. What a key asks of the
//! counts (zero them, annotate a function, move the window) is handed back
//! as a [`Request`] for the loop to carry out.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::annotate_view::AnnotateScreen;
use crate::names::FunctionId;
use crate::table::{SortKey, Table};

/// What a key asks of the loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Request {
    Nothing,
    Quit,
    /// Forget the counts.
    Zero,
    /// Annotate this function of the current event.
    Annotate(FunctionId),
    /// Move the recording's window by this many steps (a recording only).
    Window(i32),
}

/// What the screen shows, apart from the counts.
#[derive(Debug, Default)]
pub(crate) struct App {
    pub key: SortKey,
    /// The event shown, and how many there are.
    pub event: usize,
    pub events: usize,
    pub filter: String,
    /// The filter is being typed.
    pub editing: bool,
    pub decay: bool,
    /// The panel of callers and callees of the selected function.
    pub callers: bool,
    /// Whether stacks were sampled, so that there are callers to show.
    pub stacks: bool,
    /// A recording is shown, whose window `[` and `]` move.
    pub replay: bool,
    pub help: bool,
    pub selected: usize,
    /// The first row shown.
    pub scroll: usize,
    pub annotate: Option<AnnotateScreen>,
    /// One line for the user, until the next key.
    pub message: Option<String>,
}

impl App {
    /// Handles `key`, with `table` the rows on screen.
    pub(crate) fn key(&mut self, key: KeyEvent, table: &Table, page: usize) -> Request {
        if key.kind == KeyEventKind::Release {
            return Request::Nothing;
        }
        self.message = None;
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Request::Quit;
        }
        if self.editing {
            self.edit_filter(key.code);
            return Request::Nothing;
        }
        if self.help {
            self.help = false;
            return match key.code {
                KeyCode::Char('q') => Request::Quit,
                _ => Request::Nothing,
            };
        }
        if let Some(screen) = &mut self.annotate {
            if !screen.key(key.code, page) {
                self.annotate = None;
            }
            return Request::Nothing;
        }
        self.table_key(key.code, table, page)
    }

    fn table_key(&mut self, code: KeyCode, table: &Table, page: usize) -> Request {
        let last = table.rows.len().saturating_sub(1);
        match code {
            KeyCode::Char('q') | KeyCode::Esc => return Request::Quit,
            KeyCode::Char('s') => {
                self.key = self.key.next();
                self.selected = 0;
            }
            KeyCode::Char('e') if self.events > 1 => {
                self.event = (self.event + 1) % self.events;
                self.selected = 0;
            }
            KeyCode::Char('e') => self.message = Some("only one event is sampled".into()),
            KeyCode::Char('/') => {
                self.editing = true;
                self.selected = 0;
            }
            KeyCode::Char('z' | 'd') if self.replay => {
                self.message =
                    Some("a recording's counts stay as they are: [ and ] move the window".into());
            }
            KeyCode::Char('z') => return Request::Zero,
            KeyCode::Char('d') => self.decay = !self.decay,
            KeyCode::Char('g' | 'c') if self.stacks => self.callers = !self.callers,
            KeyCode::Char('g' | 'c') => {
                self.message = Some("no call stacks were sampled: run with -g".into());
            }
            KeyCode::Char('?') | KeyCode::F(1) => self.help = true,
            KeyCode::Char('[') if self.replay => return Request::Window(-1),
            KeyCode::Char(']') if self.replay => return Request::Window(1),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(page.max(1)),
            KeyCode::PageDown => self.selected = (self.selected + page.max(1)).min(last),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = last,
            KeyCode::Enter => {
                let row = table.rows.get(self.selected);
                match row.and_then(|row| row.function) {
                    Some(function) => return Request::Annotate(function),
                    None if row.is_some() => {
                        self.message =
                            Some("only functions are annotated: press s for the symbol view".into())
                    }
                    None => {}
                }
            }
            _ => {}
        }
        Request::Nothing
    }

    fn edit_filter(&mut self, code: KeyCode) {
        match code {
            KeyCode::Enter => self.editing = false,
            KeyCode::Esc => {
                self.editing = false;
                self.filter.clear();
            }
            KeyCode::Backspace => {
                self.filter.pop();
            }
            KeyCode::Char(c) if !c.is_control() => self.filter.push(c),
            _ => {}
        }
        self.selected = 0;
    }

    /// Keeps the selection within `rows` and on screen (`height` rows).
    pub(crate) fn clamp(&mut self, rows: usize, height: usize) {
        self.selected = self.selected.min(rows.saturating_sub(1));
        if self.selected < self.scroll {
            self.scroll = self.selected;
        } else if height > 0 && self.selected >= self.scroll + height {
            self.scroll = self.selected + 1 - height;
        }
        self.scroll = self.scroll.min(rows.saturating_sub(height.max(1)));
        if self.selected < self.scroll {
            self.scroll = self.selected;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::Weight;
    use crate::table::Row;
    use std::sync::Arc;

    fn press(app: &mut App, code: KeyCode, table: &Table) -> Request {
        app.key(KeyEvent::from(code), table, 10)
    }

    fn table() -> Table {
        let row = |name: &str, function| Row {
            name: Arc::from(name),
            module: Arc::from("app"),
            command: Arc::from("app"),
            other_commands: 0,
            pid: Some(1),
            weight: Weight::default(),
            percent: 0.0,
            function,
        };
        Table {
            rows: vec![row("hot", Some(3)), row("cold", Some(4))],
            total: Weight::default(),
        }
    }

    #[test]
    fn keys_change_the_view_and_ask_for_work() {
        let (mut app, table) = (App::default(), table());
        assert_eq!(
            press(&mut app, KeyCode::Char('s'), &table),
            Request::Nothing
        );
        assert_eq!(app.key, SortKey::Module);
        press(&mut app, KeyCode::Down, &table);
        press(&mut app, KeyCode::Down, &table);
        assert_eq!(app.selected, 1, "the selection stops at the last row");
        assert_eq!(
            press(&mut app, KeyCode::Enter, &table),
            Request::Annotate(4)
        );
        assert_eq!(press(&mut app, KeyCode::Char('z'), &table), Request::Zero);
        press(&mut app, KeyCode::Char('d'), &table);
        assert!(app.decay);
        press(&mut app, KeyCode::Char('/'), &table);
        for c in "ho".chars() {
            press(&mut app, KeyCode::Char(c), &table);
        }
        assert_eq!(
            press(&mut app, KeyCode::Char('q'), &table),
            Request::Nothing
        );
        assert_eq!(app.filter, "hoq", "q is typed into the filter");
        press(&mut app, KeyCode::Backspace, &table);
        press(&mut app, KeyCode::Enter, &table);
        assert_eq!((app.filter.as_str(), app.editing), ("ho", false));
        press(&mut app, KeyCode::Char('g'), &table);
        assert!(!app.callers && app.message.is_some(), "no stacks: no panel");
        assert_eq!(
            press(&mut app, KeyCode::Char(']'), &table),
            Request::Nothing
        );
        assert_eq!(press(&mut app, KeyCode::Char('q'), &table), Request::Quit);
    }

    #[test]
    fn the_selection_stays_on_screen() {
        let mut app = App {
            selected: 30,
            ..App::default()
        };
        app.clamp(40, 10);
        assert_eq!(app.scroll, 21);
        app.clamp(5, 10);
        assert_eq!((app.selected, app.scroll), (4, 0));
    }
}
