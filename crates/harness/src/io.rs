//! The `io` measure (docs/measures.md, "io"): every transport call each side makes and the TLS
//! records it writes, taken from the transport's IO log ([`Link::with_io_log`]) for a pair in
//! one process. The numbers are counts, the same in every run, so a sample is one connection.
//!
//! - Handshake kinds: the calls of one handshake, after an unmeasured seed handshake (for the
//!   resumption kinds, the measured one resumes the seed's session). The connections' drops are
//!   not part of it.
//! - `io-profile`: one whole short connection, from a fresh config: a full handshake; the
//!   client sends one byte of application data, the server reads it and replies with one byte,
//!   the client reads that; the client sends close_notify, the server reads it and sends its
//!   own, and the client reads the server's.
//!
//! The driver steps the sides as the time driver does ([`crate::step`]): a side gets a turn
//! only when its peer's bytes are there to read (or, for the client, to begin), as an
//! application on a non-blocking socket calls its library when the socket is readable. Every
//! counted call is the library's own (or, for Bertie, which does no IO, the adapter's record
//! reader, the code its users write): a read that finds nothing is the library asking again
//! after it consumed what was there, which on a socket is a real syscall (EAGAIN). Such reads
//! count as calls, and are also counted on their own (`empty_read_calls`).
//!
//! From a trace, [`IoTrace::totals`] gives the metrics and [`IoTrace::behaviour`] the
//! buffering and coalescing behaviours, derived from the calls and records, never declared.

use serde::{Deserialize, Serialize};

use crate::driver::{check_sample, Clocks, Configs, Pair};
use crate::error::failed;
use crate::protocol::{Metric, MetricValue, SampleReport, SideNegotiated};
use crate::transport::{IoEvent, Record};
use crate::{ClientAuth, Connection, Error, Kind, Link, Measure, Pki, Scenario, Side, Stack, Version};

/// The byte the client sends in io-profile, and the server's reply.
pub const CLIENT_BYTE: u8 = 0x42;
pub const SERVER_BYTE: u8 = 0x24;

/// How many times a side is asked to read before what it waits for counts as missing.
const MAX_READ_ATTEMPTS: usize = 4;

/// The call-by-call record of one measured connection (see the module's doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoTrace {
    pub scenario: String,
    pub client_stack: String,
    pub server_stack: String,
    pub client_library: String,
    pub server_library: String,
    /// What the traced connection negotiated, as each side saw it.
    #[serde(default)]
    pub negotiated: Vec<SideNegotiated>,
    /// Both sides' calls in the order they were made, with the driver's phase marks.
    pub events: Vec<IoEvent>,
    /// The build the runner is (see [`crate::protocol::SampleReport::build`]); absent from
    /// runners built by their own toolchains (Go's, Java's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

/// `runner trace`: the trace, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum TraceReply {
    Ok(IoTrace),
    Unsupported { reason: String },
    Failed { reason: String },
}

/// One side's IO in a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoTotals {
    /// Read calls, those that found nothing (would block) included.
    pub read_calls: u64,
    /// Read calls that found nothing.
    pub empty_reads: u64,
    pub write_calls: u64,
    /// Records whose header this side wrote.
    pub records_written: u64,
    /// Bytes this side wrote, record headers included.
    pub bytes_written: u64,
}

impl IoTotals {
    pub fn io_calls(&self) -> u64 {
        self.read_calls + self.write_calls
    }
}

/// What one side's calls and records show about how it does IO; None where the trace cannot
/// tell (the side never had the occasion).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Behaviour {
    /// Read buffering: some read asked for more bytes than are left of the record it starts
    /// in (the next record's header included, when it starts at a record boundary), i.e. the
    /// side reads ahead into a buffer rather than header, then body. Decided on the reads that
    /// got bytes; None if there were none.
    pub read_buffering: Option<bool>,
    /// Write buffering: some write call carried bytes of more than one record. None if no
    /// flight of the side had more than one record.
    pub write_buffering: Option<bool>,
    /// Record coalescing: several handshake messages share one record. Where the messages are
    /// visible (plaintext handshake records: TLS 1.2, and TLS 1.3's hellos), a record with
    /// bytes of two or more messages; decidable if some flight of the side holds two or more
    /// plaintext messages. TLS 1.3's encrypted handshake messages cannot be seen, so there the
    /// side's first flight with encrypted records is compared with the messages the scenario
    /// implies it holds (server, full handshake: EncryptedExtensions, [CertificateRequest],
    /// Certificate, CertificateVerify, Finished; resumed: EncryptedExtensions, Finished;
    /// client: [Certificate, [CertificateVerify]], Finished): fewer encrypted records than
    /// messages means they were coalesced. Decidable if the flight holds two or more.
    pub record_coalescing: Option<bool>,
}

impl IoTrace {
    /// The side's calls, records and bytes over the whole trace.
    pub fn totals(&self, side: Side) -> IoTotals {
        let mut totals = IoTotals::default();
        for event in &self.events {
            match event {
                IoEvent::Read { side: s, got, .. } if *s == side => {
                    totals.read_calls += 1;
                    totals.empty_reads += u64::from(got.is_none());
                }
                IoEvent::Write { side: s, len, records, .. } if *s == side => {
                    totals.write_calls += 1;
                    totals.bytes_written += *len as u64;
                    totals.records_written += records.len() as u64;
                }
                _ => {}
            }
        }
        totals
    }

    /// The io metrics of both sides (counts: `seconds` is 0).
    pub fn metrics(&self) -> Vec<MetricValue> {
        let mut values = Vec::new();
        for side in [Side::Client, Side::Server] {
            let t = self.totals(side);
            let counts = [
                (Metric::ReadCalls, t.read_calls),
                (Metric::EmptyReadCalls, t.empty_reads),
                (Metric::WriteCalls, t.write_calls),
                (Metric::IoCalls, t.io_calls()),
                (Metric::RecordsWritten, t.records_written),
                (Metric::BytesWritten, t.bytes_written),
            ];
            values.extend(counts.into_iter().map(|(metric, n)| MetricValue {
                side,
                metric,
                value: n as f64,
                seconds: 0.0,
            }));
        }
        values
    }

    /// The side's behaviours as its calls and records show them (see [`Behaviour`]).
    pub fn behaviour(&self, side: Side) -> Behaviour {
        Behaviour {
            read_buffering: self.read_buffering(side),
            write_buffering: self.write_buffering(side),
            record_coalescing: self.record_coalescing(side),
        }
    }

    /// The side's writes in order: (flight, length, records begun in it).
    fn writes(&self, side: Side) -> impl Iterator<Item = (u32, usize, &[Record])> {
        self.events.iter().filter_map(move |event| match event {
            IoEvent::Write { side: s, len, flight, records } if *s == side => Some((*flight, *len, &records[..])),
            _ => None,
        })
    }

    /// Where each record `side` wrote begins and ends in its byte stream, in order.
    fn record_spans(&self, side: Side) -> Vec<(usize, usize)> {
        let mut end = 0;
        let records = self.writes(side).flat_map(|(_, _, records)| records);
        records
            .map(|r| {
                end += r.wire_len();
                (end - r.wire_len(), end)
            })
            .collect()
    }

    fn read_buffering(&self, side: Side) -> Option<bool> {
        let peer = match side {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        };
        let spans = self.record_spans(peer);
        let (mut position, mut decided) = (0usize, None);
        for event in &self.events {
            let IoEvent::Read { side: s, want, got: Some(got) } = event else { continue };
            if *s != side || *got == 0 {
                continue;
            }
            // The record this read starts in: the first that ends after the position.
            if let Some((_, end)) = spans.iter().find(|&&(_, end)| end > position) {
                let beyond = *want > *end - position;
                decided = Some(decided.unwrap_or(false) || beyond);
            }
            position += got;
        }
        decided
    }

    fn write_buffering(&self, side: Side) -> Option<bool> {
        let spans = self.record_spans(side);
        let mut records_per_flight = std::collections::BTreeMap::<u32, usize>::new();
        let (mut start, mut several) = (0usize, false);
        for (flight, len, records) in self.writes(side) {
            *records_per_flight.entry(flight).or_default() += records.len();
            let end = start + len;
            let touched = spans.iter().filter(|&&(s, e)| e > start && s < end).count();
            several |= touched > 1;
            start = end;
        }
        records_per_flight.values().any(|&n| n > 1).then_some(several)
    }

    fn record_coalescing(&self, side: Side) -> Option<bool> {
        let mut messages_per_flight = std::collections::BTreeMap::<u32, usize>::new();
        let mut shared = false;
        for (flight, _, records) in self.writes(side) {
            for record in records {
                *messages_per_flight.entry(flight).or_default() += record.messages.as_ref().map_or(0, Vec::len);
                shared |= record.messages_touched() > 1;
            }
        }
        let plaintext = messages_per_flight.values().any(|&n| n > 1).then_some(shared);
        let encrypted =
            self.scenario.parse::<Scenario>().ok().and_then(|scenario| self.encrypted_coalescing(side, &scenario));
        match (plaintext, encrypted) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(false) || b.unwrap_or(false)),
        }
    }

    /// TLS 1.3: fewer encrypted records in the side's first flight with any than the encrypted
    /// handshake messages the scenario implies.
    fn encrypted_coalescing(&self, side: Side, scenario: &Scenario) -> Option<bool> {
        if scenario.version != Version::Tls13 {
            return None;
        }
        let resumed = scenario.kind.is_resumption();
        let messages = match (side, resumed, scenario.client_auth) {
            (Side::Server, true, _) => 2,
            (Side::Server, false, ClientAuth::None) => 4,
            (Side::Server, false, _) => 5,
            (Side::Client, false, ClientAuth::Required) => 3,
            (Side::Client, false, ClientAuth::Requested) => 2,
            (Side::Client, _, _) => 1,
        };
        if messages < 2 {
            return None;
        }
        let encrypted =
            |records: &[Record]| records.iter().filter(|r| r.content_type == Record::APPLICATION_DATA).count();
        let flight = self.writes(side).find(|(_, _, records)| encrypted(records) > 0)?.0;
        let records: usize =
            self.writes(side).filter(|w| w.0 == flight).map(|(_, _, records)| encrypted(records)).sum();
        Some(records < messages)
    }
}

/// The io metrics of one sample: one connection's counts per side (see the module's doc).
pub fn sample<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    scenario: &Scenario,
    pki: &Pki,
) -> Result<SampleReport, Error> {
    let trace = trace(client, server, scenario, pki)?;
    Ok(SampleReport {
        client_library: trace.client_library.clone(),
        server_library: trace.server_library.clone(),
        iterations: 1,
        values: trace.metrics(),
        negotiated: trace.negotiated.clone(),
        allocator: None,
        threads: Vec::new(),
        build: None,
        cpu_speed: None,
    })
}

/// The call-by-call trace of one measured connection of `scenario` (see the module's doc).
pub fn trace<C: Stack, S: Stack>(client: &C, server: &S, scenario: &Scenario, pki: &Pki) -> Result<IoTrace, Error> {
    check_sample(client, server, scenario, Measure::Io, 1)?;
    let configs = Configs::new(client, server, scenario, pki)?;
    trace_pair(&Pair::new(client, server, &configs, scenario, Link::with_io_log()))
}

/// [`trace`] with configs built by the caller; the gates still check against `scenario`.
pub fn trace_with_configs<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    client_config: C::ClientConfig,
    server_config: S::ServerConfig,
    scenario: &Scenario,
) -> Result<IoTrace, Error> {
    let configs = Configs { client: client_config, server: server_config };
    trace_pair(&Pair::new(client, server, &configs, scenario, Link::with_io_log()))
}

fn trace_pair<C: Stack, S: Stack>(pair: &Pair<'_, C, S>) -> Result<IoTrace, Error> {
    let events = match pair.scenario.kind {
        Kind::IoProfile => profile(pair)?,
        _ => measured_handshake(pair)?,
    };
    Ok(IoTrace {
        scenario: pair.scenario.name(),
        client_stack: pair.client.id().to_string(),
        server_stack: pair.server.id().to_string(),
        client_library: pair.client.library(),
        server_library: pair.server.library(),
        negotiated: pair.gates.negotiated(),
        events,
        // The runner says which build it is, in its reply (see runner.rs).
        build: None,
    })
}

/// A seed handshake, then the measured one (resumed for the resumption kinds), checked; its
/// events, taken before the connections drop.
fn measured_handshake<C: Stack, S: Stack>(pair: &Pair<'_, C, S>) -> Result<Vec<IoEvent>, Error> {
    let (client, server) = pair.handshake(&mut Clocks::default())?;
    pair.check(&client, &server, false)?;
    drop((client, server));
    pair.link.take_io_log();
    pair.link.phase("handshake");
    let (client, server) = pair.handshake(&mut Clocks::default())?;
    pair.check(&client, &server, pair.scenario.kind.is_resumption())?;
    Ok(pair.link.take_io_log())
}

/// The io-profile connection (see the module's doc), checked at each step.
fn profile<C: Stack, S: Stack>(pair: &Pair<'_, C, S>) -> Result<Vec<IoEvent>, Error> {
    pair.link.phase("handshake");
    let (mut client, mut server) = pair.handshake(&mut Clocks::default())?;
    pair.check(&client, &server, false)?;

    pair.link.phase("application data");
    client.send(&[CLIENT_BYTE]).map_err(failed(Side::Client, "write"))?;
    expect_byte(&mut server, Side::Server, CLIENT_BYTE, &pair.link)?;
    server.send(&[SERVER_BYTE]).map_err(failed(Side::Server, "write"))?;
    expect_byte(&mut client, Side::Client, SERVER_BYTE, &pair.link)?;

    pair.link.phase("close_notify");
    client.close().map_err(failed(Side::Client, "close"))?;
    expect_close(&mut server, Side::Server, &pair.link)?;
    server.close().map_err(failed(Side::Server, "close"))?;
    expect_close(&mut client, Side::Client, &pair.link)?;
    match pair.link.in_flight() {
        0 => Ok(pair.link.take_io_log()),
        n => Err(Error::Gate(format!("both sides read the other's close_notify, and {n} bytes stay unread"))),
    }
}

/// Reads, while the peer's bytes wait to be read, until its one byte arrives, and checks it.
fn expect_byte(conn: &mut impl Connection, side: Side, want: u8, link: &Link) -> Result<(), Error> {
    let mut buf = [0u8; 16];
    for _ in 0..MAX_READ_ATTEMPTS {
        if link.unread_by(side) == 0 {
            break;
        }
        match conn.receive(&mut buf).map_err(failed(side, "read"))? {
            0 => continue,
            1 if buf[0] == want => return Ok(()),
            1 => return Err(Error::Gate(format!("{side} received byte {:#04x}, the peer sent {want:#04x}", buf[0]))),
            n => return Err(Error::Gate(format!("{side} received {n} bytes, the peer sent one"))),
        }
    }
    Err(Error::Gate(format!("{side} did not receive the peer's byte in {MAX_READ_ATTEMPTS} reads")))
}

/// Reads, while the peer's bytes wait to be read, until its close_notify has arrived.
fn expect_close(conn: &mut impl Connection, side: Side, link: &Link) -> Result<(), Error> {
    for _ in 0..MAX_READ_ATTEMPTS {
        if link.unread_by(side) == 0 {
            break;
        }
        if conn.peer_closed().map_err(failed(side, "read close_notify"))? {
            return Ok(());
        }
    }
    Err(Error::Gate(format!("{side} did not receive the peer's close_notify in {MAX_READ_ATTEMPTS} reads")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(content_type: u8, length: u16, messages: Option<Vec<u8>>) -> Record {
        Record { content_type, length, messages, continued: false }
    }

    fn write(side: Side, flight: u32, records: Vec<Record>) -> IoEvent {
        let len = records.iter().map(Record::wire_len).sum();
        IoEvent::Write { side, len, flight, records }
    }

    fn read(side: Side, want: usize, got: Option<usize>) -> IoEvent {
        IoEvent::Read { side, want, got }
    }

    fn trace(scenario: &str, events: Vec<IoEvent>) -> IoTrace {
        IoTrace {
            scenario: scenario.into(),
            client_stack: "a".into(),
            server_stack: "b".into(),
            client_library: "A".into(),
            server_library: "B".into(),
            negotiated: Vec::new(),
            events,
            build: None,
        }
    }

    const TLS13: &str = "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm";
    const TLS12: &str = "io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm";

    #[test]
    fn totals_count_calls_records_and_bytes_per_side() {
        use Side::{Client, Server};
        let t = trace(
            TLS13,
            vec![
                write(Client, 1, vec![record(22, 100, Some(vec![1]))]),
                read(Client, 5, None),
                read(Server, 5, Some(5)),
                read(Server, 100, Some(100)),
                // One call, two records.
                write(Server, 2, vec![record(22, 90, Some(vec![2])), record(20, 1, None)]),
                IoEvent::Phase { name: "application data".into() },
            ],
        );
        assert_eq!(
            t.totals(Client),
            IoTotals { read_calls: 1, empty_reads: 1, write_calls: 1, records_written: 1, bytes_written: 105 }
        );
        assert_eq!(
            t.totals(Server),
            IoTotals { read_calls: 2, empty_reads: 0, write_calls: 1, records_written: 2, bytes_written: 101 }
        );
        let value = |side, metric| t.metrics().iter().find(|v| v.side == side && v.metric == metric).unwrap().value;
        assert_eq!((value(Client, Metric::IoCalls), value(Server, Metric::IoCalls)), (2.0, 3.0));
        assert_eq!(t.metrics().len(), 2 * Metric::of(Measure::Io, Kind::IoProfile).len());
    }

    #[test]
    fn a_read_beyond_its_record_is_read_buffering_and_header_then_body_is_not() {
        use Side::{Client, Server};
        let client_records = write(Client, 1, vec![record(22, 100, Some(vec![1]))]);
        let exact = trace(
            TLS13,
            vec![client_records.clone(), read(Server, 5, None), read(Server, 5, Some(5)), read(Server, 100, Some(100))],
        );
        assert_eq!(exact.behaviour(Server).read_buffering, Some(false));
        // Asking for 16 KiB while 105 bytes make the record: buffering, even if only 105 came.
        let ahead = trace(TLS13, vec![client_records.clone(), read(Server, 16384, Some(105))]);
        assert_eq!(ahead.behaviour(Server).read_buffering, Some(true));
        // A read that would block decides nothing; a side that read nothing is undecided.
        let nothing = trace(TLS13, vec![client_records, read(Server, 16384, None)]);
        assert_eq!((nothing.behaviour(Server).read_buffering, nothing.behaviour(Client).read_buffering), (None, None));
    }

    #[test]
    fn a_write_of_two_records_is_write_buffering_and_one_record_per_write_is_not() {
        use Side::Server;
        let (hello, ccs) = (record(22, 90, Some(vec![2])), record(20, 1, None));
        let together = trace(TLS13, vec![write(Server, 2, vec![hello.clone(), ccs.clone()])]);
        assert_eq!(together.behaviour(Server).write_buffering, Some(true));
        let apart = trace(TLS13, vec![write(Server, 2, vec![hello.clone()]), write(Server, 2, vec![ccs.clone()])]);
        assert_eq!(apart.behaviour(Server).write_buffering, Some(false));
        // A write that finishes one record and begins the next carries two, though only one
        // record begins in it.
        let straddling = trace(
            TLS13,
            vec![
                IoEvent::Write { side: Server, len: 10, flight: 2, records: vec![hello.clone()] },
                IoEvent::Write { side: Server, len: 85 + 6, flight: 2, records: vec![ccs.clone()] },
            ],
        );
        assert_eq!(straddling.behaviour(Server).write_buffering, Some(true));
        // A record written in pieces is not write buffering; one record per flight cannot tell.
        let pieces = trace(
            TLS13,
            vec![
                IoEvent::Write { side: Server, len: 5, flight: 2, records: vec![hello.clone()] },
                IoEvent::Write { side: Server, len: 90, flight: 2, records: vec![] },
                IoEvent::Write { side: Server, len: 6, flight: 2, records: vec![ccs] },
            ],
        );
        assert_eq!(pieces.behaviour(Server).write_buffering, Some(false));
        let single = trace(TLS13, vec![write(Server, 2, vec![hello])]);
        assert_eq!(single.behaviour(Server).write_buffering, None);
    }

    #[test]
    fn coalescing_is_seen_in_plaintext_messages_and_in_tls13_s_encrypted_record_count() {
        use Side::{Client, Server};
        // TLS 1.2: server hello, certificate, key exchange and hello done in one record, or
        // one record each.
        let one = trace(TLS12, vec![write(Server, 2, vec![record(22, 2000, Some(vec![2, 11, 12, 14]))])]);
        assert_eq!(one.behaviour(Server).record_coalescing, Some(true));
        let each =
            trace(TLS12, vec![write(Server, 2, [2, 11, 12, 14].map(|m| record(22, 500, Some(vec![m]))).to_vec())]);
        assert_eq!(each.behaviour(Server).record_coalescing, Some(false));
        // A client hello alone says nothing.
        let hello = trace(TLS12, vec![write(Client, 1, vec![record(22, 200, Some(vec![1]))])]);
        assert_eq!(hello.behaviour(Client).record_coalescing, None);

        // TLS 1.3, full handshake without client auth: the server's encrypted flight holds
        // four messages.
        let flight = |encrypted: usize| {
            let mut records = vec![record(22, 90, Some(vec![2])), record(20, 1, None)];
            records.extend((0..encrypted).map(|_| record(23, 400, None)));
            trace(
                TLS13,
                vec![write(Server, 2, records), write(Client, 3, vec![record(20, 1, None), record(23, 53, None)])],
            )
        };
        assert_eq!(flight(1).behaviour(Server).record_coalescing, Some(true));
        assert_eq!(flight(4).behaviour(Server).record_coalescing, Some(false));
        // The client's flight is its Finished alone: nothing to coalesce.
        assert_eq!(flight(1).behaviour(Client).record_coalescing, None);
        // Resumed, the server's flight holds two messages.
        let resumed = "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm";
        let t = trace(
            resumed,
            vec![write(Server, 2, vec![record(22, 90, Some(vec![2])), record(23, 100, None), record(23, 53, None)])],
        );
        assert_eq!(t.behaviour(Server).record_coalescing, Some(false));
    }

    #[test]
    fn a_trace_reply_round_trips_through_json() {
        let reply = TraceReply::Ok(trace(
            TLS13,
            vec![write(Side::Client, 1, vec![record(22, 10, Some(vec![1]))]), read(Side::Server, 5, None)],
        ));
        let json = serde_json::to_string(&reply).unwrap();
        assert!(json.starts_with(r#"{"status":"ok","#), "{json}");
        assert_eq!(serde_json::from_str::<TraceReply>(&json).unwrap(), reply);
        let unsupported = serde_json::to_string(&TraceReply::Unsupported { reason: "x".into() }).unwrap();
        assert_eq!(unsupported, r#"{"status":"unsupported","reason":"x"}"#);
    }
}
