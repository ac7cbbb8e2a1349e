//! The order things were planned in, kept: tables, charts, plans and lists show their items in
//! order of first appearance. Below every module that lists things, so that none of them imports
//! it from another (output/ re-exports it for its old callers).

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
