//! `tlsbench trace`: both sides' transport calls in the order they were made, each write with
//! the records that begin in it, under the driver's phases and the flights; totals at the end.

use std::fmt::Write as _;

use tlsbench_harness::io::IoTrace;
use tlsbench_harness::transport::{handshake_message_name, IoEvent, Record};
use tlsbench_harness::Side;

pub fn render(trace: &IoTrace) -> String {
    // A build other than release, as `run` labels it: `STACK [BUILD]`.
    let label = |stack: &str| match &trace.build {
        Some(build) => format!("{stack} [{build}]"),
        None => stack.to_string(),
    };
    let mut out = format!(
        "{}\nclient: {} ({})\nserver: {} ({})\n",
        trace.scenario,
        label(&trace.client_stack),
        trace.client_library,
        label(&trace.server_stack),
        trace.server_library
    );
    let _ = writeln!(out, "negotiated: {}", crate::output::io_table::negotiated_text(trace));
    let mut flight = 0;
    for event in &trace.events {
        match event {
            IoEvent::Phase { name } => {
                let _ = write!(out, "\n== {name}\n");
            }
            IoEvent::Read { side, want, got } => {
                let got = match got {
                    Some(n) => format!("got {n}"),
                    None => "would block".to_string(),
                };
                let _ = writeln!(out, "{side:<6}  read  want {want:<5}  {got}");
            }
            IoEvent::Write { side, len, flight: f, records } => {
                if *f != flight {
                    flight = *f;
                    let _ = writeln!(out, "-- flight {flight}: {side}");
                }
                let records: Vec<String> = records.iter().map(record).collect();
                let _ = writeln!(out, "{side:<6}  write {len:<5}  {}", records.join(" "));
            }
        }
    }
    out = out.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n\n";
    let mut total = 0;
    for side in [Side::Client, Side::Server] {
        let t = trace.totals(side);
        total += t.io_calls();
        let _ = writeln!(
            out,
            "{side:<6}  {} IO calls: {} reads ({} would block), {} writes; {} records, {} bytes written",
            t.io_calls(),
            t.read_calls,
            t.empty_reads,
            t.write_calls,
            t.records_written,
            t.bytes_written
        );
    }
    let _ = writeln!(out, "total   {total} IO calls");
    out
}

/// `[handshake 222: client_hello]`, `[application_data 1022]`, `[handshake 40, encrypted]`.
fn record(record: &Record) -> String {
    let mut messages: Vec<String> = Vec::new();
    if record.continued {
        messages.push("(continued)".into());
    }
    messages.extend(record.messages.iter().flatten().map(|&m| handshake_message_name(m)));
    let encrypted_handshake = record.content_type == Record::HANDSHAKE && record.messages.is_none();
    match messages.is_empty() {
        true if encrypted_handshake => format!("[{} {}, encrypted]", record.content_type_name(), record.length),
        true => format!("[{} {}]", record.content_type_name(), record.length),
        false => format!("[{} {}: {}]", record.content_type_name(), record.length, messages.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_flights_phases_and_totals_read_in_order() {
        let hello = Record { content_type: 22, length: 222, messages: Some(vec![1]), continued: false };
        let trace = IoTrace {
            scenario: "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm".into(),
            client_stack: "a".into(),
            server_stack: "b".into(),
            client_library: "A 1".into(),
            server_library: "B 2".into(),
            negotiated: Vec::new(),
            events: vec![
                IoEvent::Phase { name: "handshake".into() },
                IoEvent::Read { side: Side::Client, want: 5, got: None },
                IoEvent::Write { side: Side::Client, len: 227, flight: 1, records: vec![hello] },
                IoEvent::Read { side: Side::Server, want: 16384, got: Some(227) },
                IoEvent::Write {
                    side: Side::Server,
                    len: 6,
                    flight: 2,
                    records: vec![Record { content_type: 20, length: 1, messages: None, continued: false }],
                },
            ],
            build: None,
        };
        let expected = "\
io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm
client: a (A 1)
server: b (B 2)
negotiated: not reported

== handshake
client  read  want 5      would block
-- flight 1: client
client  write 227    [handshake 222: client_hello]
server  read  want 16384  got 227
-- flight 2: server
server  write 6      [change_cipher_spec 1]

client  2 IO calls: 1 reads (1 would block), 1 writes; 1 records, 227 bytes written
server  2 IO calls: 1 reads (0 would block), 1 writes; 1 records, 6 bytes written
total   4 IO calls
";
        assert_eq!(render(&trace), expected);
    }
}
