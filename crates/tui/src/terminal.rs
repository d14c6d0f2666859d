//! The full-screen loop: the terminal in raw mode on the alternate screen
//! (given back as it was however the loop ends), a redraw at every refresh,
//! key and resize, and the keys' requests carried out.

use std::io::Write;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode, KeyModifiers};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::app::Request;
use crate::draw;
use crate::error::TuiError;
use crate::screen::Screen;

/// Where a screen's counts come from.
pub(crate) trait Source {
    /// Brings the screen's counts up to date.
    fn refresh(&mut self, screen: &mut Screen<'_>) -> Result<(), TuiError>;

    /// Moves a recording's window `step` windows on (or back).
    fn window(&mut self, _screen: &mut Screen<'_>, _step: i32) -> Result<(), TuiError> {
        Ok(())
    }

    /// Whether the screen should close: what it showed was stopped from
    /// outside (an interrupt, a hang-up).
    fn closes(&self) -> bool {
        false
    }
}

/// The terminal while a screen owns it.
struct Raw<W: Write> {
    terminal: Terminal<CrosstermBackend<W>>,
}

impl<W: Write> Raw<W> {
    fn enter(mut out: W) -> Result<Raw<W>, TuiError> {
        terminal::enable_raw_mode().map_err(TuiError::Terminal)?;
        if let Err(error) = execute!(out, EnterAlternateScreen, cursor::Hide) {
            let _ = terminal::disable_raw_mode();
            return Err(TuiError::Terminal(error));
        }
        let terminal = Terminal::new(CrosstermBackend::new(out)).map_err(TuiError::Terminal)?;
        Ok(Raw { terminal })
    }
}

impl<W: Write> Drop for Raw<W> {
    fn drop(&mut self) {
        let out = self.terminal.backend_mut();
        let _ = execute!(out, LeaveAlternateScreen, cursor::Show);
        let _ = terminal::disable_raw_mode();
    }
}

/// Runs `screen` on the terminal `out` until the user quits or the
/// source closes it.
pub(crate) fn run(
    screen: &mut Screen<'_>,
    source: &mut dyn Source,
    interval: Duration,
    out: impl Write,
) -> Result<(), TuiError> {
    let mut raw = Raw::enter(out)?;
    let terminal = &mut raw.terminal;
    let mut next = Instant::now();
    loop {
        if Instant::now() >= next {
            source.refresh(screen)?;
            next = Instant::now() + interval;
            if source.closes() {
                return Ok(());
            }
        }
        terminal
            .draw(|frame| screen.draw(frame))
            .map_err(TuiError::Terminal)?;
        let wait = next.saturating_duration_since(Instant::now());
        if !event::poll(wait).map_err(TuiError::Terminal)? {
            continue;
        }
        let key = match event::read().map_err(TuiError::Terminal)? {
            Event::Key(key) => key,
            // The next draw fits the new size.
            Event::Resize(..) => continue,
            _ => continue,
        };
        if key.code == KeyCode::Char('l') && key.modifiers.contains(KeyModifiers::CONTROL) {
            terminal.clear().map_err(TuiError::Terminal)?;
            continue;
        }
        let height = terminal.size().map_err(TuiError::Terminal)?.height;
        let page = draw::table_height(height, screen.app.callers);
        match screen.app.key(key, &screen.table, page) {
            Request::Quit => return Ok(()),
            Request::Zero => screen.tally.zero(),
            Request::Annotate(function) => screen.annotate(function),
            Request::Window(step) => source.window(screen, step)?,
            Request::Nothing => {}
        }
        screen.rebuild();
    }
}

/// Whether colours may be used: not where `NO_COLOR` is set to anything.
pub fn colors_allowed() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}
