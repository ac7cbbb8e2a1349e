//! The io measure with real stacks: exact call counts where the library's IO loop makes them
//! predictable, behaviours that must differ between configurations of one library, the gates,
//! and the runner's `sample --measure io` and `trace` commands.

use std::process::Command;

use tlsbench_harness::io::{self, IoTrace, TraceReply};
use tlsbench_harness::protocol::{Metric, Reply};
use tlsbench_harness::testing::{pki, scenario};
use tlsbench_harness::transport::IoEvent;
use tlsbench_harness::{Error, Measure, Side, Stack};
use tlsbench_stack_openssl::OpenSsl;
use tlsbench_stack_rustls::Rustls;
use tlsbench_stack_s2n::S2n;

const PROFILE_13: &str = "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm";
const PROFILE_12: &str = "io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm";

fn trace<C: Stack, S: Stack>(client: &C, server: &S, name: &str) -> IoTrace {
    io::trace(client, server, &scenario(name), pki())
        .unwrap_or_else(|e| panic!("{} -> {} {name}: {e}", client.id(), server.id()))
}

/// (reads, reads that would block, writes, records written) of one side.
fn calls(trace: &IoTrace, side: Side) -> (u64, usize, u64, u64) {
    let t = trace.totals(side);
    let blocked =
        trace.events.iter().filter(|e| matches!(e, IoEvent::Read { side: s, got: None, .. } if *s == side)).count();
    (t.read_calls, blocked, t.write_calls, t.records_written)
}

#[test]
fn rustls_io_profile_makes_the_calls_its_read_until_would_block_loop_implies() {
    // rustls's adapter reads until the transport would block, then processes, then writes
    // what is pending in one call. A side is called only when its peer's bytes are there
    // (the client also to begin), so every read that finds nothing follows reads that found
    // bytes, in the same call.
    //
    // TLS 1.3. Turn 1: the client writes its hello (1 record) without reading; the server
    // reads the hello, reads (would block), writes hello + change_cipher_spec + its whole
    // encrypted flight as one record: 3 records, 1 write. Turn 2: the client reads the
    // flight, reads (would block), writes change_cipher_spec + Finished (2 records, 1 write);
    // the server reads them, reads (would block). Both are done, nothing in flight.
    // Application data: the client writes 1 record; the server reads it and reads (would
    // block), writes 1 record; the client reads it and reads (would block). close_notify: the
    // client writes it; the server reads it (a closed connection reads no more) and writes its
    // own; the client reads it.
    //   client: reads 5 (2 would block), writes 4, records 1 + 2 + 1 + 1 = 5
    //   server: reads 7 (3 would block), writes 3, records 3 + 1 + 1 = 5
    //
    // TLS 1.2: the same, with one more round trip: the server's first flight (hello,
    // certificate, key exchange, hello done in one record), the client's key exchange +
    // change_cipher_spec + Finished (3 records, 1 write), the server's change_cipher_spec +
    // Finished (2 records, 1 write), which the client reads (and reads once more, would block).
    // The alerts are one record each.
    //   client: reads 7 (3 would block), writes 4, records 1 + 3 + 1 + 1 = 6
    //   server: reads 7 (3 would block), writes 4, records 1 + 2 + 1 + 1 = 5
    for rustls in [Rustls::aws_lc_rs(), Rustls::ring()] {
        let t = trace(&rustls, &rustls, PROFILE_13);
        assert_eq!((calls(&t, Side::Client), calls(&t, Side::Server)), ((5, 2, 4, 5), (7, 3, 3, 5)), "{}", rustls.id());
        let t = trace(&rustls, &rustls, PROFILE_12);
        assert_eq!((calls(&t, Side::Client), calls(&t, Side::Server)), ((7, 3, 4, 6), (7, 3, 4, 5)), "{}", rustls.id());
        // Reads of 4 KiB: buffering. Writes of several records in one call. The server's TLS
        // 1.3 flight is one encrypted record; its TLS 1.2 flight one plaintext record of four
        // messages: coalescing either way. The client has nothing to coalesce.
        for t in [trace(&rustls, &rustls, PROFILE_13), t] {
            for side in [Side::Client, Side::Server] {
                let b = t.behaviour(side);
                assert_eq!((b.read_buffering, b.write_buffering), (Some(true), Some(true)), "{} {side}", t.scenario);
            }
            assert_eq!(t.behaviour(Side::Server).record_coalescing, Some(true), "{}", t.scenario);
            assert_eq!(t.behaviour(Side::Client).record_coalescing, None, "{}", t.scenario);
        }
    }
}

#[test]
fn the_counts_agree_with_the_bytes_and_records_on_the_wire() {
    for name in [
        PROFILE_13,
        PROFILE_12,
        "handshake-full_1.3_x25519_rsa-2048_aes-256-gcm",
        "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm",
    ] {
        let t = trace(&OpenSsl, &Rustls::aws_lc_rs(), name);
        for side in [Side::Client, Side::Server] {
            let totals = t.totals(side);
            // Every byte written is in exactly one record: the parsed headers account for all.
            let records: u64 = t
                .events
                .iter()
                .filter_map(|e| match e {
                    IoEvent::Write { side: s, records, .. } if *s == side => {
                        Some(records.iter().map(|r| r.wire_len() as u64).sum::<u64>())
                    }
                    _ => None,
                })
                .sum();
            assert_eq!(records, totals.bytes_written, "{name} {side}");
            // What one side wrote, the other read.
            let peer = if side == Side::Client { Side::Server } else { Side::Client };
            let read: usize = t
                .events
                .iter()
                .filter_map(|e| match e {
                    IoEvent::Read { side: s, got: Some(n), .. } if *s == peer => Some(*n),
                    _ => None,
                })
                .sum();
            assert_eq!(read as u64, totals.bytes_written, "{name}: {peer} read what {side} wrote");
        }
    }
}

#[test]
fn s2n_tls_with_receive_buffering_reads_ahead_and_without_reads_header_then_body() {
    for name in [PROFILE_13, PROFILE_12] {
        let plain = trace(&S2n::new(), &S2n::new(), name);
        let buffered = trace(&S2n::recv_buffering(), &S2n::recv_buffering(), name);
        for side in [Side::Client, Side::Server] {
            assert_eq!(plain.behaviour(side).read_buffering, Some(false), "s2n-tls {name} {side}");
            assert_eq!(buffered.behaviour(side).read_buffering, Some(true), "s2n-tls-recvbuf {name} {side}");
            let (p, b) = (plain.totals(side), buffered.totals(side));
            assert!(b.read_calls < p.read_calls, "{name} {side}: {b:?} vs {p:?}");
            // Receive buffering changes reads only.
            assert_eq!((b.write_calls, b.records_written), (p.write_calls, p.records_written), "{name} {side}");
            // s2n-tls writes each record in its own call.
            assert!(!plain.behaviour(side).write_buffering.unwrap_or(false), "{name} {side}");
        }
        // Without buffering, every read that gets bytes asks for a header (5) or one body.
        let headers_and_bodies = plain.events.iter().all(|e| match e {
            IoEvent::Read { want, got: Some(got), .. } => want == got,
            _ => true,
        });
        assert!(headers_and_bodies, "{name}: {:?}", plain.events);
    }
}

#[test]
fn openssl_writes_its_tls13_flight_in_one_call_of_one_record_per_message() {
    let t = trace(&OpenSsl, &OpenSsl, PROFILE_13);
    let server_flight = t
        .events
        .iter()
        .find_map(|e| match e {
            IoEvent::Write { side: Side::Server, records, .. } => {
                Some(records.iter().map(|r| r.content_type).collect::<Vec<_>>())
            }
            _ => None,
        })
        .unwrap();
    // server_hello, change_cipher_spec, then encrypted_extensions, certificate,
    // certificate_verify and finished in a record each.
    assert_eq!(server_flight, [22, 20, 23, 23, 23, 23]);
    let server = t.behaviour(Side::Server);
    assert_eq!(
        (server.read_buffering, server.write_buffering, server.record_coalescing),
        (Some(false), Some(true), Some(false))
    );
}

#[test]
fn a_handshake_kind_is_measured_on_the_handshake_after_the_seed() {
    let aws = Rustls::aws_lc_rs();
    let report =
        io::sample(&aws, &OpenSsl, &scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"), pki()).unwrap();
    assert_eq!(report.iterations, 1);
    assert_eq!(report.values.len(), 2 * Metric::of(Measure::Io, tlsbench_harness::Kind::HandshakeFull).len());
    let value = |r: &tlsbench_harness::protocol::SampleReport, side, metric| {
        r.values.iter().find(|v| v.side == side && v.metric == metric).unwrap().value
    };
    for side in [Side::Client, Side::Server] {
        let (reads, writes) = (value(&report, side, Metric::ReadCalls), value(&report, side, Metric::WriteCalls));
        assert_eq!(value(&report, side, Metric::IoCalls), reads + writes);
        assert!(reads > 0.0 && writes > 0.0, "{report:?}");
    }
    assert!(report.values.iter().all(|v| v.seconds == 0.0));
    // A resumed handshake: no certificate chain from the server, so far fewer bytes.
    let resumed =
        io::sample(&aws, &OpenSsl, &scenario("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm"), pki())
            .unwrap();
    let (full, resumed) =
        (value(&report, Side::Server, Metric::BytesWritten), value(&resumed, Side::Server, Metric::BytesWritten));
    assert!(resumed < full / 2.0, "server bytes: resumed {resumed}, full {full}");
}

#[test]
fn io_profile_passes_its_gates_or_fails_the_cell() {
    // Configs for ChaCha20 under a scenario asking for AES: the handshake completes, the gate
    // refuses it before any data moves.
    let aws = Rustls::aws_lc_rs();
    let chacha = scenario("io-profile_1.3_x25519_ecdsa-p256_chacha20-poly1305");
    let client_config = aws.client_config(&chacha, pki()).unwrap();
    let server_config = OpenSsl.server_config(&chacha, pki()).unwrap();
    let err = io::trace_with_configs(&aws, &OpenSsl, client_config, server_config, &scenario(PROFILE_13)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "gate failed: client negotiated cipher suite chacha20-poly1305, the scenario asks for aes-128-gcm"
    );
    // The time measure does not apply to io-profile, nor io to transfer.
    let err = io::trace(&aws, &aws, &scenario("transfer_1.3_x25519_ecdsa-p256_aes-128-gcm"), pki()).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    // A stack that cannot send close_notify says so.
    let err = io::trace(&tlsbench_stack_bertie::Bertie, &aws, &scenario(PROFILE_13), pki()).unwrap_err();
    assert!(matches!(&err, Error::Unsupported(reason) if reason == "bertie: close_notify not implemented"), "{err}");
}

/// The runner binary with `args`, its certificates in a directory of this test's own.
fn runner(args: &[&str]) -> String {
    let data = std::env::temp_dir().join(format!("tlsbench-io-test-{}-{}", std::process::id(), args.join("-").len()));
    let output = Command::new(env!("CARGO_BIN_EXE_tlsbench-runner-openssl"))
        .args(args)
        .arg("--data-dir")
        .arg(&data)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&data);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_runner_samples_the_io_measure_and_prints_traces() {
    let reply: Reply = serde_json::from_str(&runner(&[
        "sample",
        "--client",
        "rustls-ring",
        "--server",
        "rustls-ring",
        "--scenario",
        PROFILE_13,
        "--measure",
        "io",
    ]))
    .unwrap();
    let Reply::Ok(report) = reply else { panic!("{reply:?}") };
    let value = |side, metric| report.values.iter().find(|v| v.side == side && v.metric == metric).unwrap().value;
    // As reasoned out in rustls_io_profile_makes_the_calls_its_read_until_would_block_loop_implies.
    assert_eq!((value(Side::Client, Metric::IoCalls), value(Side::Server, Metric::IoCalls)), (9.0, 10.0));
    assert_eq!((value(Side::Client, Metric::EmptyReadCalls), value(Side::Server, Metric::EmptyReadCalls)), (2.0, 3.0));
    assert_eq!((value(Side::Client, Metric::RecordsWritten), value(Side::Server, Metric::RecordsWritten)), (5.0, 5.0));

    let reply: TraceReply = serde_json::from_str(&runner(&[
        "trace",
        "--client",
        "openssl",
        "--server",
        "s2n-tls",
        "--scenario",
        PROFILE_12,
    ]))
    .unwrap();
    let TraceReply::Ok(trace) = reply else { panic!("{reply:?}") };
    assert_eq!((trace.client_stack.as_str(), trace.server_stack.as_str()), ("openssl", "s2n-tls"));
    assert!(
        trace.server_library.starts_with("s2n-tls ") && trace.client_library.starts_with("OpenSSL 3."),
        "{trace:?}"
    );
    let phases: Vec<&str> = trace
        .events
        .iter()
        .filter_map(|e| match e {
            IoEvent::Phase { name } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(phases, ["handshake", "application data", "close_notify"]);

    let reply: TraceReply =
        serde_json::from_str(&runner(&["trace", "--client", "bertie", "--server", "bertie", "--scenario", PROFILE_12]))
            .unwrap();
    assert_eq!(reply, TraceReply::Unsupported { reason: "bertie: TLS 1.2 not implemented".into() });
}
