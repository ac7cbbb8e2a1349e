//! What tlsbench prints: the results table on stdout, progress on stderr.

pub mod cold_table;
pub mod columns;
pub mod comparison;
pub mod format;
pub mod io_table;
pub mod matrix;
pub mod model;
pub mod notes;
pub mod progress;
pub mod run_list;
pub mod scaling;
pub mod stack_list;
pub mod stderr;
pub mod table;
pub mod trace;

use std::io::Write;

/// The terminal's width that the results table and the lines under it keep to.
pub const WIDTH: usize = 120;

/// Writes `text` to stdout. A reader that has gone (`tlsbench list scenarios | head`) is not an
/// error: what follows (exports, the store) still happens, where `print!` would panic.
pub fn print(text: impl std::fmt::Display) {
    let mut stdout = std::io::stdout().lock();
    match write!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => eprintln!("warning: writing to stdout: {e}"),
        _ => {}
    }
}
