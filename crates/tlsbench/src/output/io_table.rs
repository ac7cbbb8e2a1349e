//! `tlsbench io`: per stack, the IO behaviours its io-profile trace shows and its IO totals,
//! each cell `client/server`.

use tlsbench_harness::io::{Behaviour, IoTotals, IoTrace};
use tlsbench_harness::{Scenario, Side};

use super::model::{Cell, Column, Table};
use super::{columns, WIDTH};

/// Explains the table; printed under it.
pub const LEGEND: &str = "\
each cell: client/server. read buffering: a read asks for more than is left of the record it
starts in. write buffering: one write call carries bytes of more than one record. record
coalescing: several handshake messages share one record (TLS 1.3: the encrypted handshake
flight in fewer records than the messages it holds); the client's is read from the same
connection with a client certificate (_mtls), since without one its flights hold one message
each. -: no occasion to tell. Read calls include the empty reads: those that found nothing
(would block; on a socket, EAGAIN). A side is called only when its peer's bytes wait to be read,
so every call is the library's own. Bytes include record headers.";

pub struct IoRow {
    pub stack: String,
    pub outcome: Outcome,
    /// The same connection with a client certificate, if the stack could trace it.
    pub mtls: Option<IoTrace>,
}

pub enum Outcome {
    Measured(IoTrace),
    Unsupported(String),
    Failed(String),
}

pub fn render(scenario: &Scenario, rows: &[IoRow]) -> String {
    // Two levels: what is counted over each side of a group, so that the table fits the width.
    let header = [
        ["buffering", "read"],
        ["buffering", "write"],
        ["record", "coalescing"],
        ["calls", "read"],
        ["calls", "empty reads"],
        ["calls", "write"],
        ["calls", "io"],
        ["written", "records"],
        ["written", "bytes"],
    ];
    let columns = header.iter().map(|h| Column { header: h.map(String::from).to_vec(), cells: Vec::new() });
    let mut table = Table { label_header: vec!["stack".into()], columns: columns.collect(), ..Table::default() };
    let (mut notes, mut negotiated) = (Vec::new(), Vec::new());
    for row in rows {
        let cells: Vec<String> = match &row.outcome {
            Outcome::Measured(trace) => {
                negotiated.push(format!("{}: {}", row.stack, negotiated_text(trace)));
                let (mut c, s) = (trace.behaviour(Side::Client), trace.behaviour(Side::Server));
                if let (None, Some(mtls)) = (c.record_coalescing, &row.mtls) {
                    c.record_coalescing = mtls.behaviour(Side::Client).record_coalescing;
                }
                let (tc, ts) = (trace.totals(Side::Client), trace.totals(Side::Server));
                let flag = |f: fn(&Behaviour) -> Option<bool>| format!("{}/{}", yes_no(f(&c)), yes_no(f(&s)));
                let count = |f: fn(&IoTotals) -> u64| format!("{}/{}", f(&tc), f(&ts));
                vec![
                    flag(|b| b.read_buffering),
                    flag(|b| b.write_buffering),
                    flag(|b| b.record_coalescing),
                    count(|t| t.read_calls),
                    count(|t| t.empty_reads),
                    count(|t| t.write_calls),
                    count(IoTotals::io_calls),
                    count(|t| t.records_written),
                    count(|t| t.bytes_written),
                ]
            }
            Outcome::Unsupported(reason) => {
                notes.push(format!("{}: n/a: {}", row.stack, without_prefix(reason, &row.stack)));
                vec!["n/a".into(); 9]
            }
            Outcome::Failed(reason) => {
                notes.push(format!("{}: failed: {}", row.stack, without_prefix(reason, &row.stack)));
                vec!["failed".into(); 9]
            }
        };
        // The flags (the first three) are words; the counts numbers.
        let cells = cells.into_iter().enumerate().map(|(i, c)| if i < 3 { Cell::text(c) } else { Cell::number(c) });
        table.push_row(vec![row.stack.clone()], cells.collect());
    }
    let config = match scenario.is_pinned() {
        true => "pinned",
        false => "each library's defaults",
    };
    let mut out = format!(
        "{scenario}: one connection (handshake, one byte each way, close_notify each way), {config}\n{}{LEGEND}\n",
        columns::render(&table, WIDTH)
    );
    // Pinned, every row negotiated the scenario's parameters (the gates check it); with the
    // defaults, what each chose is the other half of the story.
    if !scenario.is_pinned() {
        out += "negotiated (client's view; the server's where it differs):\n";
        for line in negotiated {
            out += &format!("  {line}\n");
        }
    }
    for note in notes {
        out += &format!("note: {note}\n");
    }
    out
}

/// The client's view of what was negotiated, and the server's where it differs beyond what
/// only a client reports (whether a ticket arrived).
pub fn negotiated_text(trace: &IoTrace) -> String {
    let view = |side| trace.negotiated.iter().find(|n| n.side == side).map(|n| n.negotiated.as_str());
    match (view(Side::Client), view(Side::Server)) {
        (Some(client), Some(server)) if client.starts_with(server) => client.to_string(),
        (Some(client), Some(server)) => format!("{client} / server: {server}"),
        (Some(one), None) | (None, Some(one)) => one.to_string(),
        (None, None) => "not reported".to_string(),
    }
}

fn yes_no(decided: Option<bool>) -> &'static str {
    match decided {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

/// Adapters' reasons often begin with their stack id; the note names it once. `stack` is the
/// row's label: the id, with ` [BUILD]` in a build other than release.
fn without_prefix<'a>(reason: &'a str, stack: &str) -> &'a str {
    let id = stack.split(" [").next().unwrap_or(stack);
    reason.strip_prefix(id).and_then(|r| r.strip_prefix(": ")).unwrap_or(reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsbench_harness::protocol::SideNegotiated;
    use tlsbench_harness::transport::{IoEvent, Record};

    #[test]
    fn a_measured_row_shows_client_slash_server_and_an_unsupported_one_its_reason() {
        let scenario: Scenario = "io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap();
        let record = |content_type, length, messages: Option<Vec<u8>>| Record {
            content_type,
            length,
            messages,
            continued: false,
        };
        let trace = IoTrace {
            scenario: scenario.name(),
            client_stack: "x".into(),
            server_stack: "x".into(),
            client_library: "X".into(),
            server_library: "X".into(),
            negotiated: Vec::new(),
            events: vec![
                IoEvent::Write {
                    side: Side::Client,
                    len: 105,
                    flight: 1,
                    records: vec![record(22, 100, Some(vec![1]))],
                },
                IoEvent::Read { side: Side::Server, want: 16384, got: Some(105) },
                IoEvent::Read { side: Side::Server, want: 16384, got: None },
                IoEvent::Write {
                    side: Side::Server,
                    len: 1005,
                    flight: 2,
                    records: vec![record(22, 1000, Some(vec![2, 11, 12, 14]))],
                },
                IoEvent::Read { side: Side::Client, want: 5, got: Some(5) },
                IoEvent::Read { side: Side::Client, want: 1000, got: Some(1000) },
            ],
            build: None,
        };
        // With a client certificate the client's flight holds Certificate, ClientKeyExchange
        // and CertificateVerify: in one record, it coalesces.
        let mut mtls = trace.clone();
        mtls.events.push(IoEvent::Write {
            side: Side::Client,
            len: 805,
            flight: 3,
            records: vec![record(22, 800, Some(vec![11, 16, 15]))],
        });
        let rows = [
            IoRow { stack: "x".into(), outcome: Outcome::Measured(trace.clone()), mtls: None },
            IoRow { stack: "z".into(), outcome: Outcome::Measured(trace), mtls: Some(mtls) },
            IoRow { stack: "y".into(), outcome: Outcome::Unsupported("y: TLS 1.2 not implemented".into()), mtls: None },
            IoRow {
                stack: "w [native]".into(),
                outcome: Outcome::Unsupported("w: built by its own toolchain".into()),
                mtls: None,
            },
        ];
        let text = render(&scenario, &rows);
        let cells = |stack: &str| -> Vec<String> {
            let row = text.lines().filter_map(|l| l.split_once(" | ")).find(|(label, _)| label.trim() == stack);
            let (label, rest) = row.unwrap_or_else(|| panic!("{stack}:\n{text}"));
            let cells = rest.split_whitespace().filter(|c| *c != "|").map(String::from);
            std::iter::once(label.trim().to_string()).chain(cells).collect()
        };
        assert_eq!(cells("x"), ["x", "no/yes", "-/-", "-/yes", "2/2", "0/1", "1/1", "3/3", "1/1", "105/1005"]);
        assert_eq!(cells("z")[1..4], ["no/yes", "-/-", "yes/yes"]);
        assert_eq!(cells("y")[1..], ["n/a"; 9]);
        assert!(text.contains("note: y: n/a: TLS 1.2 not implemented"), "{text}");
        // A build's row is labelled with it; its reason names the stack once all the same.
        assert!(text.contains("note: w [native]: n/a: built by its own toolchain"), "{text}");
        assert!(text.starts_with("io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm: one connection"), "{text}");
        assert!(text.lines().next().unwrap().ends_with(", pinned") && !text.contains("negotiated"), "{text}");

        // With the libraries' defaults, what each row negotiated is listed under the table.
        let defaults = scenario.with_defaults().unwrap();
        let mut chose = rows[0].outcome_trace().clone();
        chose.negotiated = vec![
            SideNegotiated { side: Side::Client, negotiated: "1.2 aes-256-gcm x25519, ticket received".into() },
            SideNegotiated { side: Side::Server, negotiated: "1.2 aes-256-gcm x25519".into() },
        ];
        let text = render(&defaults, &[IoRow { stack: "x".into(), outcome: Outcome::Measured(chose), mtls: None }]);
        assert!(text.starts_with("io-profile_1.2_default_ecdsa-p256_default: one connection"), "{text}");
        assert!(text.lines().next().unwrap().ends_with(", each library's defaults"), "{text}");
        assert!(text.contains("\n  x: 1.2 aes-256-gcm x25519, ticket received\n"), "{text}");
    }

    impl IoRow {
        fn outcome_trace(&self) -> &IoTrace {
            match &self.outcome {
                Outcome::Measured(trace) => trace,
                _ => panic!("not measured"),
            }
        }
    }
}
