//! `tlsbench interop`: one matrix per scenario and side, clients down, servers across, each
//! cell the pair's median handshakes per second (or why the pair has none).

use std::collections::HashMap;

use tlsbench_harness::Side;

use super::WIDTH;
use crate::order::first_seen;
use crate::output::columns;
use crate::output::format::{format_cell, legend};
use crate::output::model::{Cell, Table};
use crate::output::notes::notes;
use crate::results::{CellResult, RunDocument};

/// The metric the matrices show.
pub const METRIC: &str = "handshakes_per_s";

pub fn render(doc: &RunDocument) -> String {
    let shown: Vec<&CellResult> = doc.results.iter().filter(|r| r.metric == METRIC).collect();
    let clients = first_seen(shown.iter().map(|r| r.key.client_stack.as_str()));
    let servers = first_seen(shown.iter().map(|r| r.key.server_stack.as_str()));
    // Each cell's place, found in one pass; the first of a repeated cell, as the exports keep it.
    let mut placed: HashMap<(&str, Side, &str, &str), &CellResult> = HashMap::new();
    for cell in &shown {
        let key = &cell.key;
        placed.entry((&key.scenario, cell.side, &key.client_stack, &key.server_stack)).or_insert(cell);
    }
    let mut out = String::new();
    for scenario in first_seen(shown.iter().map(|r| r.key.scenario.as_str())) {
        for side in [Side::Client, Side::Server] {
            let mut table = Table::with_header(&["client \\ server"], &servers);
            for client in &clients {
                let cells = servers.iter().map(|server| {
                    let found = placed.get(&(scenario, side, client, server));
                    Cell::number(found.map_or_else(|| "-".to_string(), |r| format_cell(r)))
                });
                table.push_row(vec![client.to_string()], cells.collect());
            }
            // As many servers side by side as fit the width; the rest in the next matrices.
            let parts = columns::render_parts(&table, WIDTH);
            for (range, text) in &parts {
                let part = match parts.len() {
                    1 => String::new(),
                    _ => format!(", servers {}-{} of {}", range.start + 1, range.end, servers.len()),
                };
                out += &format!("{scenario}: {side} side, {METRIC}{part}\n{text}\n");
            }
        }
    }
    out += &columns::wrap(&legend(shown.iter().copied()), WIDTH, 2);
    for note in notes(shown.iter().copied()) {
        out += &columns::wrap(&format!("note: {note}"), WIDTH, 6);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Status;

    fn cell(
        client: &str,
        server: &str,
        side: Side,
        median: Option<f64>,
        status: Status,
        reason: Option<&str>,
    ) -> CellResult {
        let mut cell = crate::results::fixture::document().results[0].clone();
        cell.key.scenario = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".into();
        cell.metric = METRIC.into();
        (cell.key.client_stack, cell.key.server_stack, cell.side) = (client.into(), server.into(), side);
        (cell.median, cell.ci95, cell.outliers, cell.status) = (median, median.map(|m| [m, m]), Vec::new(), status);
        cell.reason = reason.map(String::from);
        cell
    }

    #[test]
    fn clients_down_servers_across_with_the_reason_a_pair_failed() {
        let mut doc = crate::results::fixture::document();
        let alert = Some("server runner: server handshake failed: no shared cipher");
        doc.results = vec![
            cell("openssl", "openssl", Side::Client, Some(1500.0), Status::Ok, None),
            cell("openssl", "openssl", Side::Server, Some(6000.0), Status::Ok, None),
            cell("openssl", "rustls-ring", Side::Client, Some(1400.0), Status::Ok, None),
            cell("openssl", "rustls-ring", Side::Server, Some(12000.0), Status::Ok, None),
            cell("rustls-ring", "openssl", Side::Client, None, Status::Failed, alert),
            cell("rustls-ring", "openssl", Side::Server, None, Status::Failed, alert),
        ];
        let text = render(&doc);
        assert!(
            text.contains("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: server side, handshakes_per_s"),
            "{text}"
        );
        let server_matrix = text.split("server side").nth(1).unwrap();
        let row = |name: &str| server_matrix.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap().to_string();
        assert!(row("openssl").contains("6,000 ±0.0%") && row("openssl").contains("12,000 ±0.0%"), "{text}");
        assert!(
            row("rustls-ring").contains("failed") && row("rustls-ring").split_whitespace().any(|w| w == "-"),
            "{text}"
        );
        assert!(text.contains("note: ") && text.contains("no shared cipher"), "{text}");
    }

    #[test]
    fn twelve_servers_split_into_matrices_that_fit_120_columns() {
        let mut doc = crate::results::fixture::document();
        let stacks: Vec<String> = (0..12).map(|i| format!("stack-number-{i:02}")).collect();
        doc.results = stacks
            .iter()
            .flat_map(|c| stacks.iter().map(move |s| (c, s)))
            .flat_map(|(c, s)| {
                [Side::Client, Side::Server].map(|side| cell(c, s, side, Some(12345.0), Status::Ok, None))
            })
            .collect();
        let text = render(&doc);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= 120, "{widest} columns:\n{text}");
        // Every pair is still shown: each server heads a column once per scenario and side.
        for server in &stacks {
            let headers =
                text.lines().filter(|l| l.starts_with("client \\ server")).filter(|l| l.contains(server.as_str()));
            assert_eq!(headers.count(), 2, "{server}:\n{text}");
        }
        assert!(text.contains(", servers 1-"), "{text}");
    }
}
