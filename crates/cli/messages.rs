//! Lines for the user on the standard error, which may be closed, a pipe
//! whose reader has gone, or a terminal that has hung up: a line that
//! cannot be written is lost, and nothing else. `eprintln!` would panic
//! there, ending `record` with 101 before the command ran, or after it in
//! place of the command's exit status.

use std::fmt;
use std::io::{self, Write};

/// `say!("profiler: ...")`: `eprintln!` that never panics.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::messages::write_line(format_args!($($arg)*))
    };
}

pub(crate) use say;

/// Writes `line` and a newline to the standard error, ignoring failure.
pub(crate) fn write_line(line: fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}
