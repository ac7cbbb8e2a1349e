//! What tlsbench prints: the results table on stdout, progress on stderr.

pub mod comparison;
pub mod matrix;
pub mod progress;
pub mod run_list;
pub mod stack_list;
pub mod table;
