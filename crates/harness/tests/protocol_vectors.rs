//! The runner protocol as data (docs/runner-protocol.md, "The protocol as data"): the files in
//! `protocol/` at the repository root are generated here from the harness, the reference
//! implementation, and the Go and Java runners' tests read the same files. A file that differs
//! from what the harness generates fails its test; `TLSBENCH_BLESS=1 cargo test -p
//! tlsbench-harness --test protocol_vectors` rewrites it (then review the diff).
//!
//! `protocol/replies.schema.json` is written by hand: here every example reply of the harness's
//! own types must match it, and every broken one must not. No JSON Schema crate is in the
//! workspace (the `jsonschema` crate would bring an HTTP client and a regex engine), so
//! [`validate`] is a small validator of the keywords the schema uses; Go and Java have their own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::Serialize;
use serde_json::{json, Value};
use tlsbench_harness::allocator::{Allocator, AllocatorInUse};
use tlsbench_harness::build::BuildInfo;
use tlsbench_harness::cold::{Cold, ColdReply, ColdSide};
use tlsbench_harness::driver::check_measure;
use tlsbench_harness::gate::Tally;
use tlsbench_harness::io::{IoTrace, TraceReply};
use tlsbench_harness::net::{Latency, NetReply, NetReport, Page, Serving, SocketCounts};
use tlsbench_harness::protocol::{
    Cause, CpuSpeed, ListReply, Metric, MetricValue, Reply, SampleReport, SideNegotiated, StackInfo, ThreadSample,
    PROTOCOL_VERSION,
};
use tlsbench_harness::split::{read_message, write_message, Message, Next};
use tlsbench_harness::transport::{IoEvent, Record};
use tlsbench_harness::{
    Backend, Capabilities, ClientAuth, Error, Exclusion, Group, KeyType, Kind, Measure, MeasureLimit, PeerLimit,
    Scenario, Side, Suite, Version,
};

fn protocol_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../protocol")
}

/// A JSON array with one item per line, so that a diff shows which items changed.
fn lines(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().map(|item| format!("  {item}")).collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}

fn compact(item: &impl Serialize) -> String {
    serde_json::to_string(item).expect("serializable")
}

/// Compares `protocol/FILE` with what the harness generates, or rewrites it under TLSBENCH_BLESS=1.
fn check_file(file: &str, generated: &str) {
    let path = protocol_dir().join(file);
    if std::env::var("TLSBENCH_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, generated).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed.lines().zip(generated.lines()).position(|(a, b)| a != b);
        let line = first.unwrap_or_else(|| committed.lines().count().min(generated.lines().count())) + 1;
        panic!(
            "protocol/{file} is not what the harness generates (first difference at line {line}); if the change is \
             meant, rewrite it with `TLSBENCH_BLESS=1 cargo test -p tlsbench-harness --test protocol_vectors`, review \
             the diff, and make the Go and Java runners follow"
        );
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The columns of each row of protocol/scenarios.json: a row a line, in arrays, since there are
/// over 2,000 of them. `group` and `suite` are null with the libraries' defaults.
const SCENARIO_COLUMNS: [&str; 10] =
    ["name", "kind", "version", "group", "key", "suite", "client_auth", "ems", "client_groups", "server_groups"];

/// Names that are not scenarios, each for another rule (the message is each language's to match).
const INVALID_SCENARIOS: &[&str] = &[
    "",
    "handshake",
    "handshake-full_1.3_x25519_ecdsa-p256",
    "handshake-full_1.4_x25519_ecdsa-p256_aes-128-gcm",
    "handshake-half_1.3_x25519_ecdsa-p256_aes-128-gcm",
    "handshake-full_1.3_x448_ecdsa-p256_aes-128-gcm",
    "handshake-full_1.3_x25519_dsa-1024_aes-128-gcm",
    "handshake-full_1.3_x25519_ecdsa-p256_aes-128-cbc",
    "Handshake-Full_1.3_x25519_ecdsa-p256_aes-128-gcm",
    "handshake-half_1.4_x448_dsa-1024_aes-128-cbc",
    "handshake-half_1.4_x25519_dsa-1024_aes-128-gcm",
    "handshake-full_1.3_default_ecdsa-p256_aes-128-gcm",
    "handshake-full_1.3_x25519_ecdsa-p256_default",
    "handshake-full_1.3_default_ecdsa-p256_default_no-ems",
    "handshake-full_1.2_default_ecdsa-p256_default_no-ems",
    "handshake-resume-ticket_1.3_default_ecdsa-p256_default",
    "handshake-resume-id_1.2_default_rsa-2048_default_mtls",
    "handshake-resume-id_1.3_x25519_ecdsa-p256_aes-128-gcm",
    "handshake-full_1.2_x25519mlkem768_ecdsa-p256_aes-128-gcm",
    "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems",
    "handshake-resume-id_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems",
    "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_psk",
    "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_none",
    "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems_mtls",
    "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls_mtls",
    "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls_cert-requested",
    "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems_no-ems",
    "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_",
    "handshake-full__x25519_ecdsa-p256_aes-128-gcm",
    "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_MTLS",
];

#[test]
fn scenario_vectors_are_the_harness_s() {
    let all = Scenario::all();
    let rows = all.iter().map(|s| {
        let row = json!([
            s.name(),
            s.kind,
            s.version,
            s.group(),
            s.key,
            s.suite(),
            s.client_auth,
            s.ems,
            s.groups(Side::Client),
            s.groups(Side::Server)
        ]);
        assert_eq!(row.as_array().unwrap().len(), SCENARIO_COLUMNS.len());
        compact(&row)
    });
    let table = lines(rows).replace('\n', "\n  ");
    let table =
        format!("{{\n  \"columns\": {},\n  \"scenarios\": {}\n}}\n", compact(&SCENARIO_COLUMNS), table.trim_end());
    check_file("scenarios.json", &table);

    let invalid = INVALID_SCENARIOS.iter().map(|name| {
        #[derive(Serialize)]
        struct Invalid<'a> {
            name: &'a str,
            error: String,
        }
        compact(&Invalid { name, error: name.parse::<Scenario>().expect_err("an invalid name") })
    });
    check_file("invalid-scenarios.json", &lines(invalid));

    // Each measure with a scenario of each kind: whether it applies, and if not, the reason.
    let mut measures = Vec::new();
    for &measure in Measure::ALL {
        for &kind in Kind::ALL {
            let scenario = all.iter().find(|s| s.kind == kind).expect("every kind has scenarios");
            let unsupported = check_measure(measure, scenario).err().map(|e| e.to_string());
            measures
                .push(compact(&json!({ "measure": measure, "scenario": scenario.name(), "unsupported": unsupported })));
        }
    }
    check_file("measures.json", &lines(measures));
}

fn message_json(message: &Message) -> Value {
    match message {
        Message::Flight { bytes, done, unread } => {
            json!({ "type": "flight", "done": done, "unread": unread, "bytes": hex(bytes) })
        }
        Message::Next(next) => {
            let next = match next {
                Next::Seed => "seed",
                Next::Warmup => "warm-up",
                Next::Measure => "measure",
                Next::Stop => "stop",
            };
            json!({ "type": "next", "next": next })
        }
        Message::Reached(reached) => json!({ "type": "reached", "reached": reached }),
        Message::Tally(tally) => json!({ "type": "tally", "bytes": tally.bytes, "sha256": hex(&tally.digest) }),
        Message::Abort(reason) => json!({ "type": "abort", "reason": reason }),
        Message::Flights { flights, done, unread } => json!({
            "type": "flights", "done": done, "unread": unread,
            "flights": flights.iter().map(|f| hex(f)).collect::<Vec<_>>(),
        }),
    }
}

/// A frame of `body` (tag first) with its length.
fn framed(body: &[u8]) -> Vec<u8> {
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(body);
    frame
}

/// Whose failure a reader's error is, as a reply's `cause` says it: the peer's when it stopped
/// (an abort) or went away (a frame cut short), this side's own otherwise.
fn cause(error: &Error) -> &'static str {
    match error {
        Error::Peer(_) => "peer",
        _ => "own",
    }
}

#[test]
fn frame_vectors_are_the_relay_s() {
    let digest: [u8; 32] = std::array::from_fn(|i| i as u8 * 7);
    let messages = [
        Message::Flight { bytes: b"\x16\x03\x01\x00\x05hello".to_vec(), done: true, unread: 7 },
        Message::Flight { bytes: Vec::new(), done: false, unread: 0 },
        Message::Flight { bytes: vec![0x17; 3], done: false, unread: 0x0102_0304 },
        Message::Next(Next::Seed),
        Message::Next(Next::Warmup),
        Message::Next(Next::Measure),
        Message::Next(Next::Stop),
        Message::Reached(false),
        Message::Reached(true),
        Message::Tally(Tally { bytes: 64 << 20, digest }),
        Message::Tally(Tally { bytes: u64::MAX, digest: [0xff; 32] }),
        Message::Flights {
            flights: vec![b"\x16\x03\x03".to_vec(), Vec::new(), b"abc".to_vec()],
            done: true,
            unread: 3,
        },
        Message::Flights { flights: vec![Vec::new()], done: false, unread: 0 },
        Message::Flights { flights: Vec::new(), done: false, unread: 0 },
        Message::Abort("gate failed: x".into()),
        Message::Abort(String::new()),
        Message::Abort("client handshake failed: «peer» said: bad_certificate".into()),
    ];
    let mut vectors = Vec::new();
    for message in &messages {
        let mut frame = Vec::new();
        write_message(&mut frame, message).unwrap();
        let read = read_message(&mut &frame[..]);
        let mut vector = json!({ "hex": hex(&frame), "message": message_json(message) });
        match (message, read) {
            (Message::Abort(_), Err(e)) => {
                vector["error"] = json!(e.to_string());
                vector["cause"] = json!(cause(&e));
            }
            (_, Ok(back)) => assert_eq!(&back, message),
            (_, Err(e)) => panic!("{message:?} does not read back: {e}"),
        }
        vectors.push(vector);
    }
    // What a reader accepts that no writer writes: any non-zero byte is true.
    for raw in [framed(&[2, 0x02]), framed(&[0, 0xff, 1, 0, 0, 0, 0xaa]), framed(&[5, 0x80, 0, 0, 0, 0])] {
        let message = read_message(&mut &raw[..]).unwrap();
        vectors.push(json!({ "hex": hex(&raw), "message": message_json(&message), "decode_only": true }));
    }
    // What a reader refuses, and the words it says it with.
    let mut oversized = ((256u32 << 20) + 1).to_le_bytes().to_vec();
    oversized.extend_from_slice(&[0; 8]);
    let mut long_flight = vec![5, 1, 0, 0, 0, 0];
    long_flight.extend_from_slice(&4u32.to_le_bytes());
    long_flight.extend_from_slice(b"abc");
    let refused = [
        b"HTTP/1.1 200 OK".to_vec(),
        oversized,
        [100u32.to_le_bytes().as_slice(), &[1, 2, 3]].concat(),
        framed(&[]),
        framed(&[9, 0]),
        framed(&[0, 1, 0, 0, 0]),
        framed(&[1]),
        framed(&[1, 4]),
        framed(&[1, 2, 0]),
        framed(&[2]),
        framed(&[2, 1, 1]),
        framed(&[3; 40]),
        framed(&[3; 42]),
        framed(&[5, 1, 0, 0]),
        framed(&[5, 1, 0, 0, 0, 0, 3, 0]),
        framed(&long_flight),
        framed(b"\x04ok \xff"),
    ];
    for raw in refused {
        let error = read_message(&mut &raw[..]).expect_err("refused");
        vectors.push(json!({ "hex": hex(&raw), "error": error.to_string(), "cause": cause(&error) }));
    }
    check_file("frames.json", &lines(vectors.iter().map(compact)));
}

#[derive(Serialize)]
struct HistogramVector {
    /// Latencies recorded, in nanoseconds; each is clamped into 1 µs to 1 h.
    values_ns: Vec<u64>,
    count: u64,
    p50_ns: Option<u64>,
    p90_ns: Option<u64>,
    p99_ns: Option<u64>,
    max_ns: Option<u64>,
    /// The V2 encoding before deflate, which every language writes byte for byte the same.
    v2_hex: String,
    /// What a reply carries: V2 + deflate, in base64.
    base64: String,
}

#[test]
fn histogram_vectors_are_the_latency_encoding_s() {
    let cases: [Vec<u64>; 6] = [
        vec![],
        vec![1_000],
        vec![0, 500, 7_200_000_000_000],
        (1..=100).map(|us| us * 10_000).chain([2_000_000_000]).collect(),
        vec![1_234, 56_789, 56_789, 1_000_000, 31_415_926, 999_999_999, 3_599_999_999_999],
        (0..60).map(|i| 20_000 + i * i * 7_919).collect(),
    ];
    let mut vectors = Vec::new();
    for values in cases {
        let mut latency = Latency::default();
        for &ns in &values {
            latency.record(Duration::from_nanos(ns));
        }
        let ns = |d: Option<Duration>| d.map(|d| d.as_nanos() as u64);
        let Value::String(base64) = serde_json::to_value(&latency).unwrap() else { panic!("a histogram is a string") };
        // The V2 encoding of what the blob holds, from the hdrhistogram crate itself.
        let blob = base64_decode(&base64);
        let histogram: Histogram<u64> = Deserializer::new().deserialize(&mut &blob[..]).unwrap();
        assert_eq!(histogram.len(), values.len() as u64);
        let mut v2 = Vec::new();
        V2Serializer::new().serialize(&histogram, &mut v2).unwrap();
        vectors.push(compact(&HistogramVector {
            count: latency.count(),
            p50_ns: ns(latency.percentile(50.0)),
            p90_ns: ns(latency.percentile(90.0)),
            p99_ns: ns(latency.percentile(99.0)),
            max_ns: ns(latency.max()),
            values_ns: values,
            v2_hex: hex(&v2),
            base64,
        }));
    }
    check_file("histograms.json", &lines(vectors));
}

fn base64_decode(text: &str) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).expect("base64")
}

/// One sample reply of `measure` for a scenario of `kind`: every metric the measure reports
/// for the side(s), as the harness names them.
fn sample_of(measure: Measure, kind: Kind, sides: &[Side]) -> Reply {
    let values = sides
        .iter()
        .flat_map(|&side| {
            Metric::of(measure, kind).iter().filter(move |m| m.reported_by(measure, side)).enumerate().map(
                move |(i, &metric)| {
                    let seconds = if metric.higher_is_better() { 0.25 } else { 0.0 };
                    MetricValue { side, metric, value: 1000.5 + i as f64, seconds }
                },
            )
        })
        .collect();
    let library = |side| if sides.contains(&side) { format!("{side} library 1.0") } else { String::new() };
    let negotiated = sides.iter().map(|&side| SideNegotiated { side, negotiated: "1.3 aes-128-gcm x25519".into() });
    Reply::Ok(SampleReport {
        client_library: library(Side::Client),
        server_library: library(Side::Server),
        iterations: 20,
        values,
        negotiated: negotiated.collect(),
        allocator: None,
        threads: Vec::new(),
        build: None,
        cpu_speed: None,
    })
}

/// The example replies: (the schema's definition, the reply as the harness writes it).
fn example_replies() -> Vec<(&'static str, String)> {
    let mut examples = Vec::new();
    let capabilities = Capabilities {
        kinds: vec![Kind::HandshakeFull, Kind::Transfer],
        versions: Version::ALL.to_vec(),
        groups: vec![Group::X25519],
        keys: vec![KeyType::EcdsaP256],
        suites: vec![Suite::Aes128Gcm],
        client_auth: ClientAuth::ALL.to_vec(),
        ems_off: false,
        exclusions: vec![Exclusion::new("*_1.3_*_aes-256-gcm*", "cannot pin TLS 1.3 suites")],
        peer_limits: vec![PeerLimit { side: Side::Server, only: vec!["bertie".into()], reason: "a chain".into() }],
        measure_limits: vec![MeasureLimit { measure: Measure::Instructions, reason: "a JIT".into() }],
        min_warmup_ms: 2000,
        allocators: Allocator::ALL.to_vec(),
        threads: true,
        shared_contexts: true,
        pin_threads: true,
    };
    let stack = StackInfo {
        id: "rustls-ring".into(),
        library: "rustls 0.23.46 (ring 0.17.14)".into(),
        tls_library: Some("rustls 0.23.46".into()),
        backend: Some(Backend { name: "ring".into(), version: "0.17.14".into(), detail: Some("detail".into()) }),
        capabilities: capabilities.clone(),
    };
    let build = BuildInfo {
        name: "native".into(),
        profile: "release".into(),
        opt_level: "3".into(),
        rustflags: "-C target-cpu=native".into(),
        cflags: "-march=native".into(),
        cxxflags: "-march=native".into(),
        c_compiler: "gcc 12.2.0".into(),
    };
    let list =
        ListReply { protocol_version: PROTOCOL_VERSION, stacks: vec![stack], build: Some(build), full_speed: true };
    examples.push(("list_reply", compact(&list)));
    let plain = Capabilities {
        exclusions: Vec::new(),
        peer_limits: Vec::new(),
        measure_limits: Vec::new(),
        min_warmup_ms: 0,
        allocators: Vec::new(),
        threads: false,
        shared_contexts: false,
        pin_threads: false,
        ..capabilities
    };
    let minimal = ListReply {
        protocol_version: PROTOCOL_VERSION,
        stacks: vec![StackInfo::new("go", "Go crypto/tls go1.26.8", plain)],
        build: None,
        full_speed: false,
    };
    examples.push(("list_reply", compact(&minimal)));

    let both = [Side::Client, Side::Server];
    for (measure, kind) in [
        (Measure::Time, Kind::HandshakeResumeTicket),
        (Measure::Time, Kind::Transfer),
        (Measure::Instructions, Kind::HandshakeFull),
        (Measure::Io, Kind::IoProfile),
        (Measure::Heap, Kind::HandshakeFull),
        (Measure::Heap, Kind::Memory1000),
    ] {
        examples.push(("sample_reply", compact(&sample_of(measure, kind, &both))));
    }
    // A context scenario: the measured side only.
    for (measure, kind, side) in
        [(Measure::Time, Kind::ContextClientSystem, Side::Client), (Measure::Heap, Kind::ContextServer, Side::Server)]
    {
        examples.push(("sample_reply", compact(&sample_of(measure, kind, &[side]))));
    }
    // A side of a split pair: its own side only.
    examples.push(("sample_reply", compact(&sample_of(Measure::Rss, Kind::Memory100, &[Side::Server]))));
    // Several pairs on threads, with the allocator and the build.
    let Reply::Ok(one) = sample_of(Measure::Time, Kind::HandshakeFull, &both) else { unreachable!() };
    let threads: Vec<ThreadSample> =
        (0..2).map(|i| ThreadSample { iterations: one.iterations, values: one.values.clone(), cpu: Some(i) }).collect();
    let threaded = SampleReport {
        iterations: 2 * one.iterations,
        values: tlsbench_harness::protocol::sum_threads(&threads),
        allocator: Some(AllocatorInUse { name: Allocator::Jemalloc, version: "5.3.1".into() }),
        threads,
        build: Some("release".into()),
        ..one
    };
    examples.push(("sample_reply", compact(&Reply::Ok(threaded))));
    // A loop judged at full speed (`--full-speed`): its figures are of the stretches at full speed.
    let Reply::Ok(one) = sample_of(Measure::Time, Kind::HandshakeFull, &both) else { unreachable!() };
    let judged = SampleReport {
        cpu_speed: Some(CpuSpeed { gated: true, speed: 0.97, full_speed_share: 0.41, moves: 3 }),
        ..one
    };
    examples.push(("sample_reply", compact(&Reply::Ok(judged))));
    examples.push(("sample_reply", compact(&Reply::Unsupported { reason: "go: cannot pin".into() })));
    examples.push(("sample_reply", compact(&Reply::failed("gate failed: server negotiated"))));
    // A side of a split pair whose failure echoes its peer's (the Go and Java runners produce it too).
    let peer_stopped = Reply::Failed { reason: "the peer stopped: gate failed: x".into(), cause: Cause::Peer };
    examples.push(("sample_reply", compact(&peer_stopped)));
    examples.push(("sample_reply", compact(&Reply::NeedsNewProcess { reason: "this JVM pinned x25519".into() })));

    let record = |messages: Option<Vec<u8>>| Record { content_type: 22, length: 512, messages, continued: false };
    let trace = IoTrace {
        scenario: "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm".into(),
        client_stack: "openssl".into(),
        server_stack: "go".into(),
        client_library: "OpenSSL 3.5.0".into(),
        server_library: "Go crypto/tls go1.26.8".into(),
        negotiated: vec![SideNegotiated { side: Side::Client, negotiated: "1.3 aes-128-gcm x25519".into() }],
        events: vec![
            IoEvent::Phase { name: "handshake".into() },
            IoEvent::Write { side: Side::Client, len: 517, flight: 1, records: vec![record(Some(vec![1]))] },
            IoEvent::Read { side: Side::Server, want: 5, got: Some(5) },
            IoEvent::Read { side: Side::Server, want: 5, got: None },
            IoEvent::Write {
                side: Side::Server,
                len: 1044,
                flight: 2,
                records: vec![record(Some(vec![2, 8])), Record { continued: true, ..record(None) }],
            },
        ],
        build: Some("release".into()),
    };
    examples.push(("trace_reply", compact(&TraceReply::Ok(trace))));
    examples.push(("trace_reply", compact(&TraceReply::Unsupported { reason: "no trace".into() })));

    let side = |first: u64, resumes: bool| ColdSide {
        context_ns: first / 10,
        first_ns: first,
        second_ns: (!resumes).then_some(first / 3),
        first_resume_ns: resumes.then_some(first / 5),
        second_resume_ns: resumes.then_some(first / 6),
    };
    for (resumes, process_start_ns) in [(false, Some(1_834_000)), (true, None)] {
        let cold = Cold { process_start_ns, client: side(930_000, resumes), server: side(1_210_000, resumes) };
        let (client_library, server_library) = ("OpenSSL 3.5.0".into(), "OpenSSL 3.5.0".into());
        examples.push(("cold_reply", compact(&ColdReply::Ok { cold, client_library, server_library, build: None })));
    }
    examples.push(("cold_reply", compact(&ColdReply::Unsupported { reason: "cold: not in this runner".into() })));

    let serving = Serving { listening: "127.0.0.1:4433".into(), stack: "go".into(), library: "Go".into(), workers: 2 };
    examples.push(("serving", compact(&serving)));
    let mut latency = Latency::default();
    latency.record(Duration::from_micros(350));
    let report = NetReport {
        side: Side::Client,
        stack: "rustls-ring".into(),
        library: "rustls 0.23.46".into(),
        scenario: Some("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".into()),
        page: Some(Page { writes: 1, size: 1024 }),
        concurrency: 4,
        negotiated: Some("1.3 aes-128-gcm x25519".into()),
        connections: 1,
        resumed: 0,
        without_request: 0,
        failed: 1,
        failures: vec![tlsbench_harness::net::Failure { reason: "connect: refused".into(), count: 1 }],
        started_unix: 1_764_000_000.25,
        ended_unix: 1_764_000_001.5,
        cpu_user_seconds: 0.5,
        cpu_system_seconds: 0.25,
        sockets: SocketCounts { reads: 9, writes: 4, bytes_written: 900, records_written: 5, ..Default::default() },
        polls: 12,
        handshake_latency: latency.clone(),
        first_byte_latency: latency,
        rss_start_bytes: None,
        rss_peak_bytes: None,
        max_open: 0,
        run_id: None,
        build: None,
    };
    let server = NetReport {
        side: Side::Server,
        scenario: None,
        page: None,
        negotiated: None,
        without_request: 3,
        failures: Vec::new(),
        rss_start_bytes: Some(1 << 20),
        rss_peak_bytes: Some(3 << 20),
        max_open: 4,
        run_id: Some("run-1".into()),
        build: Some("release".into()),
        ..report.clone()
    };
    examples.push(("net_reply", compact(&NetReply::Ok(report))));
    examples.push(("net_reply", compact(&NetReply::Ok(server))));
    examples.push(("net_reply", compact(&NetReply::Failed { reason: "listening on 127.0.0.1:1: denied".into() })));
    examples
}

/// Broken replies that the schema must refuse: (its definition, why it is broken, the reply).
fn broken_replies(examples: &[(&'static str, String)]) -> Vec<(&'static str, &'static str, Value)> {
    let first = |schema: &str, status: &str| -> Value {
        let (_, json) = examples
            .iter()
            .find(|(s, json)| *s == schema && serde_json::from_str::<Value>(json).unwrap()["status"] == status)
            .expect("an example");
        serde_json::from_str(json).unwrap()
    };
    let list = || -> Value { serde_json::from_str(&examples[0].1).unwrap() };
    let ok = || first("sample_reply", "ok");
    let with = |mut value: Value, edit: &dyn Fn(&mut Value)| {
        edit(&mut value);
        value
    };
    vec![
        ("list_reply", "protocol version 2", with(list(), &|v| v["protocol_version"] = json!(2))),
        ("list_reply", "no stacks", with(list(), &|v| drop(v.as_object_mut().unwrap().remove("stacks")))),
        (
            "list_reply",
            "a kind tlsbench does not know",
            with(list(), &|v| v["stacks"][0]["capabilities"]["kinds"][0] = json!("handshake-half")),
        ),
        (
            "list_reply",
            "ems_off as a string",
            with(list(), &|v| v["stacks"][0]["capabilities"]["ems_off"] = json!("no")),
        ),
        ("list_reply", "an unknown field", with(list(), &|v| v["stacks"][0]["colour"] = json!("blue"))),
        ("sample_reply", "an unknown status", with(ok(), &|v| v["status"] = json!("error"))),
        ("sample_reply", "no iterations", with(ok(), &|v| drop(v.as_object_mut().unwrap().remove("iterations")))),
        ("sample_reply", "negative iterations", with(ok(), &|v| v["iterations"] = json!(-1))),
        ("sample_reply", "fractional iterations", with(ok(), &|v| v["iterations"] = json!(1.5))),
        ("sample_reply", "a metric misspelt", with(ok(), &|v| v["values"][0]["metric"] = json!("handshakes_per_sec"))),
        ("sample_reply", "a side that is not one", with(ok(), &|v| v["values"][0]["side"] = json!("both"))),
        ("sample_reply", "a value as a string", with(ok(), &|v| v["values"][0]["value"] = json!("1.5"))),
        ("sample_reply", "a value null", with(ok(), &|v| v["values"][0]["value"] = Value::Null)),
        (
            "sample_reply",
            "an unknown allocator",
            with(ok(), &|v| v["allocator"] = json!({ "name": "tcmalloc", "version": "1" })),
        ),
        ("sample_reply", "a reason beside the numbers", with(ok(), &|v| v["reason"] = json!("why"))),
        ("sample_reply", "failed without its reason", json!({ "status": "failed" })),
        ("sample_reply", "failed with a misspelt field", json!({ "status": "failed", "reasons": "x" })),
        ("sample_reply", "a cause that is not one", json!({ "status": "failed", "reason": "x", "cause": "both" })),
        (
            "sample_reply",
            "a cause beside unsupported",
            json!({ "status": "unsupported", "reason": "x", "cause": "own" }),
        ),
        ("sample_reply", "not an object", json!(["ok"])),
        (
            "trace_reply",
            "an unknown event",
            with(first("trace_reply", "ok"), &|v| v["events"][0] = json!({ "event": "poll", "side": "client" })),
        ),
        (
            "trace_reply",
            "a record longer than TLS allows",
            with(first("trace_reply", "ok"), &|v| v["events"][1]["records"][0]["length"] = json!(70000)),
        ),
        ("trace_reply", "needs_new_process outside a session", json!({ "status": "needs_new_process", "reason": "x" })),
        (
            "cold_reply",
            "a side without its context",
            with(first("cold_reply", "ok"), &|v| {
                drop(v["cold"]["client"].as_object_mut().unwrap().remove("context_ns"))
            }),
        ),
        (
            "cold_reply",
            "a negative time",
            with(first("cold_reply", "ok"), &|v| v["cold"]["server"]["first_ns"] = json!(-1)),
        ),
        ("serving", "no workers", json!({ "listening": "127.0.0.1:1", "stack": "go", "library": "Go" })),
        (
            "net_reply",
            "a histogram as numbers",
            with(first("net_reply", "ok"), &|v| v["handshake_latency"] = json!([1, 2, 3])),
        ),
        (
            "net_reply",
            "a page without its size",
            with(first("net_reply", "ok"), &|v| v["page"] = json!({ "writes": 1 })),
        ),
    ]
}

#[test]
fn reply_examples_are_the_harness_s_and_the_schema_tells_them_from_broken_ones() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(protocol_dir().join("replies.schema.json")).unwrap()).unwrap();
    let examples = example_replies();
    let mut rows = Vec::new();
    for (def, json) in &examples {
        let reply: Value = serde_json::from_str(json).unwrap();
        if let Err(e) = validate(&schema, &definition(def), &reply, "") {
            panic!("the harness's {def} does not match the schema: {e}\n{json}");
        }
        validate(&schema, &schema, &reply, "").expect("a reply matches the whole schema too");
        rows.push(format!(r#"{{"schema":"{def}","valid":true,"reply":{json}}}"#));
    }
    for (def, why, reply) in broken_replies(&examples) {
        assert!(validate(&schema, &definition(def), &reply, "").is_err(), "the schema takes {def} with {why}: {reply}");
        rows.push(compact(&json!({ "schema": def, "valid": false, "why": why, "reply": reply })));
    }
    check_file("replies.json", &lines(rows));
}

/// The schema's lists of names are the harness's.
#[test]
fn the_schema_names_what_the_harness_names() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(protocol_dir().join("replies.schema.json")).unwrap()).unwrap();
    let names = |def: &str| -> Vec<String> {
        let list = schema["$defs"][def]["enum"].as_array().unwrap_or_else(|| panic!("$defs/{def} is an enum"));
        list.iter().map(|v| v.as_str().unwrap().to_string()).collect()
    };
    let of = |all: &[&str]| all.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(names("kind"), of(&Kind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>()));
    assert_eq!(names("version"), of(&Version::ALL.iter().map(|k| k.name()).collect::<Vec<_>>()));
    assert_eq!(names("group"), of(&Group::ALL.iter().map(|k| k.name()).collect::<Vec<_>>()));
    assert_eq!(names("key"), of(&KeyType::ALL.iter().map(|k| k.name()).collect::<Vec<_>>()));
    assert_eq!(names("suite"), of(&Suite::ALL.iter().map(|k| k.name()).collect::<Vec<_>>()));
    assert_eq!(names("client_auth"), of(&ClientAuth::ALL.iter().map(|k| k.name()).collect::<Vec<_>>()));
    assert_eq!(names("measure"), of(&Measure::ALL.iter().map(|k| k.name()).collect::<Vec<_>>()));
    assert_eq!(names("allocator"), of(&Allocator::ALL.iter().map(|k| k.name()).collect::<Vec<_>>()));
    let mut metrics: Vec<&str> = Vec::new();
    for &measure in Measure::ALL {
        for &kind in measure.kinds() {
            for metric in Metric::of(measure, kind) {
                if !metrics.contains(&metric.name()) {
                    metrics.push(metric.name());
                }
            }
        }
    }
    let (mut listed, mut known) = (names("metric"), of(&metrics));
    listed.sort();
    known.sort();
    assert_eq!(listed, known, "every metric a measure reports, and no other");
    assert_eq!(schema["$defs"]["list_reply"]["properties"]["protocol_version"]["const"], json!(PROTOCOL_VERSION));
}

/// The validator itself refuses what it does not know, so that no keyword is silently ignored.
#[test]
fn the_validator_checks_each_keyword_it_knows_and_refuses_others() {
    let root = json!({ "$defs": { "n": { "type": "integer", "minimum": 1 } } });
    let check = |schema: Value, value: Value| validate(&root, &schema, &value, "");
    assert!(check(json!({ "$ref": "#/$defs/n" }), json!(1)).is_ok());
    assert!(check(json!({ "$ref": "#/$defs/n" }), json!(0)).is_err());
    assert!(check(json!({ "$ref": "#/$defs/n" }), json!(1.5)).is_err());
    assert!(check(json!({ "type": ["string", "null"] }), Value::Null).is_ok());
    assert!(check(json!({ "oneOf": [{ "type": "number" }, { "type": "integer" }] }), json!(1)).is_err());
    assert!(check(json!({ "anyOf": [{ "type": "number" }, { "type": "integer" }] }), json!(1)).is_ok());
    assert!(check(json!({ "pattern": "^a" }), json!("a")).unwrap_err().contains("unsupported keyword `pattern`"));
}

fn definition(name: &str) -> Value {
    json!({ "$ref": format!("#/$defs/{name}") })
}

/// Validates `value` against `schema` (part of `root`), with JSON Schema's meaning of the keywords
/// replies.schema.json uses; a keyword it does not know is an error, never ignored.
fn validate(root: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else { return Err(format!("{at}: a schema is an object")) };
    let fail = |what: String| Err(format!("{}: {what}", if at.is_empty() { "/" } else { at }));
    for (keyword, arg) in schema {
        match keyword.as_str() {
            "$schema" | "$id" | "title" | "description" | "$comment" | "$defs" => {}
            "$ref" => {
                let name = arg.as_str().and_then(|r| r.strip_prefix("#/$defs/")).ok_or("a local $ref")?;
                let target = root["$defs"].get(name).ok_or_else(|| format!("no $defs/{name}"))?;
                validate(root, target, value, at)?;
            }
            "type" => {
                let types: Vec<&str> = match arg {
                    Value::String(t) => vec![t.as_str()],
                    _ => arg.as_array().into_iter().flatten().filter_map(Value::as_str).collect(),
                };
                let is = |t: &str| match t {
                    "object" => value.is_object(),
                    "array" => value.is_array(),
                    "string" => value.is_string(),
                    "boolean" => value.is_boolean(),
                    "null" => value.is_null(),
                    "number" => value.is_number(),
                    "integer" => value.is_i64() || value.is_u64(),
                    _ => false,
                };
                if !types.iter().any(|t| is(t)) {
                    return fail(format!("{value} is not of type {arg}"));
                }
            }
            "enum" => {
                if !arg.as_array().is_some_and(|list| list.contains(value)) {
                    return fail(format!("{value} is not one of {arg}"));
                }
            }
            "const" => {
                if arg != value {
                    return fail(format!("{value} is not {arg}"));
                }
            }
            "minimum" | "maximum" => {
                if let (Some(n), Some(bound)) = (value.as_f64(), arg.as_f64()) {
                    if (keyword == "minimum" && n < bound) || (keyword == "maximum" && n > bound) {
                        return fail(format!("{value} is out of the {keyword} {bound}"));
                    }
                }
            }
            "required" => {
                if let Some(object) = value.as_object() {
                    for name in arg.as_array().into_iter().flatten().filter_map(Value::as_str) {
                        if !object.contains_key(name) {
                            return fail(format!("no `{name}`"));
                        }
                    }
                }
            }
            "properties" => {
                if let Some(object) = value.as_object() {
                    for (name, field) in object {
                        if let Some(property) = arg.get(name) {
                            validate(root, property, field, &format!("{at}/{name}"))?;
                        }
                    }
                }
            }
            "additionalProperties" => {
                if let Some(object) = value.as_object() {
                    let known = schema.get("properties");
                    for (name, field) in object.iter().filter(|(name, _)| known.and_then(|p| p.get(name)).is_none()) {
                        match arg {
                            Value::Bool(false) => return fail(format!("unknown field `{name}`")),
                            Value::Bool(true) => {}
                            _ => validate(root, arg, field, &format!("{at}/{name}"))?,
                        }
                    }
                }
            }
            "items" => {
                if let Some(items) = value.as_array() {
                    for (i, item) in items.iter().enumerate() {
                        validate(root, arg, item, &format!("{at}/{i}"))?;
                    }
                }
            }
            "oneOf" | "anyOf" => {
                let branches = arg.as_array().ok_or("oneOf and anyOf take a list")?;
                let errors: Vec<String> =
                    branches.iter().filter_map(|branch| validate(root, branch, value, at).err()).collect();
                let passed = branches.len() - errors.len();
                if passed == 0 || (keyword == "oneOf" && passed > 1) {
                    return fail(format!("{passed} of the {keyword} branches match ({})", errors.join("; ")));
                }
            }
            other => return Err(format!("unsupported keyword `{other}`")),
        }
    }
    Ok(())
}
