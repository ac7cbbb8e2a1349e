//! What tlsbench prints: the results table on stdout, progress on stderr.

pub mod columns;
pub mod comparison;
pub mod io_table;
pub mod matrix;
pub mod progress;
pub mod run_list;
pub mod stack_list;
pub mod table;
pub mod trace;

/// The distinct items in order of first appearance: tables, charts and plans follow the order
/// the run was planned in.
pub fn first_seen<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}
