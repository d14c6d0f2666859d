//! How wide the text views' rows may be: `--wide` for whole names, else
//! `--width`, else the terminal's width, else 100 columns (a pipe, a file).

use std::io::{self, IsTerminal};
use std::num::NonZeroUsize;

use clap::Args;
use profiler_report::RowWidth;

/// The rows' width where the output is not a terminal and none is given.
const DEFAULT_COLUMNS: usize = 100;

/// The width options of the text views.
#[derive(Debug, Args)]
pub(crate) struct WidthArgs {
    /// Keep whole names, however wide the rows get [default: rows fit the terminal's width,
    /// or 100 columns where the output is not a terminal, names elided in the middle]
    #[arg(short = 'w', long, conflicts_with = "width")]
    pub(crate) wide: bool,

    /// Fit rows in COLUMNS columns
    #[arg(long, value_name = "COLUMNS")]
    pub(crate) width: Option<NonZeroUsize>,
}

impl WidthArgs {
    /// The width rows written to the standard output may take.
    pub(crate) fn row_width(&self) -> RowWidth {
        if self.wide {
            return RowWidth::Unlimited;
        }
        let columns = (self.width.map(NonZeroUsize::get))
            .or_else(terminal_columns)
            .unwrap_or(DEFAULT_COLUMNS);
        RowWidth::Columns(columns)
    }
}

/// The standard output's width, where it is a terminal that says.
fn terminal_columns() -> Option<usize> {
    let stdout = io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    let size = rustix::termios::tcgetwinsize(&stdout).ok()?;
    (size.ws_col > 0).then_some(usize::from(size.ws_col))
}
