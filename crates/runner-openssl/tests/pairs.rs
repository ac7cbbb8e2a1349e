//! Every pair of this family's stacks, in every scenario, through the real driver; and the
//! gates catching real handshakes that do not match the scenario.

use std::time::Duration;

use tlsbench_harness::driver::{self, SampleSpec};
use tlsbench_harness::protocol::{Metric, SampleReport};
use tlsbench_harness::split;
use tlsbench_harness::testing::{check_every_supported_scenario as check_all_scenarios, pki, scenario, ONCE};
use tlsbench_harness::{Error, Scenario, Side, Stack};
use tlsbench_stack_openssl::OpenSsl;
use tlsbench_stack_openssl_shared::testing::{
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell, mismatched,
};
use tlsbench_stack_rustls::Rustls;

#[test]
fn every_interop_pair_passes_every_scenario_both_support() {
    let (aws, ring) = (Rustls::aws_lc_rs(), Rustls::ring());
    // rustls cannot switch EMS off and OpenSSL 3.0 has no ML-KEM: what is left is well over 600.
    assert!(check_all_scenarios(&aws, &OpenSsl) > 600);
    assert!(check_all_scenarios(&OpenSsl, &aws) > 600);
    assert!(check_all_scenarios(&ring, &OpenSsl) > 600);
    assert!(check_all_scenarios(&OpenSsl, &ring) > 600);
    assert!(check_all_scenarios(&aws, &ring) > 600);
}

#[test]
fn a_client_offering_only_a_suite_the_server_lacks_fails_the_cell() {
    let chacha = "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305";
    let aes = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let err = mismatched(&Rustls::aws_lc_rs(), &OpenSsl, chacha, aes, aes).unwrap_err();
    assert!(matches!(err, Error::Library { side: Side::Server, stage: "handshake", .. }), "{err}");
    assert!(err.to_string().contains("no shared cipher"), "{err}");

    let err = mismatched(&OpenSsl, &Rustls::ring(), chacha, aes, aes).unwrap_err();
    assert_eq!(err.to_string(), "server handshake failed: peer is incompatible: NoCipherSuitesInCommon");
}

#[test]
fn the_gates_catch_a_handshake_that_is_not_the_scenario() {
    let aes = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let chacha = "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305";
    let err = mismatched(&Rustls::aws_lc_rs(), &OpenSsl, chacha, chacha, aes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "gate failed: client negotiated cipher suite chacha20-poly1305, the scenario asks for aes-128-gcm"
    );

    let p256 = "handshake-full_1.2_secp256r1_rsa-2048_aes-256-gcm";
    let x25519 = "handshake-full_1.2_x25519_rsa-2048_aes-256-gcm";
    let err = mismatched(&OpenSsl, &OpenSsl, p256, p256, x25519).unwrap_err();
    assert_eq!(err.to_string(), "gate failed: client negotiated group secp256r1, the scenario asks for x25519");

    let tls12 = "transfer_1.2_x25519_ecdsa-p256_aes-128-gcm";
    let tls13 = "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let err = mismatched(&Rustls::ring(), &Rustls::ring(), tls12, tls12, tls13).unwrap_err();
    assert_eq!(err.to_string(), "gate failed: client negotiated TLS 1.2, the scenario asks for 1.3");
}

#[test]
fn a_server_with_another_ca_s_chain_fails_verification_on_both_client_stacks() {
    // The client trusts the rsa-2048 root; the server presents the ecdsa-p256 chain.
    let rsa = "handshake-full_1.3_x25519_rsa-2048_aes-128-gcm";
    let ecdsa = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let err = mismatched(&Rustls::aws_lc_rs(), &OpenSsl, rsa, ecdsa, ecdsa).unwrap_err();
    assert_eq!(err.to_string(), "client handshake failed: invalid peer certificate: UnknownIssuer");
    let err = mismatched(&OpenSsl, &Rustls::ring(), rsa, ecdsa, ecdsa).unwrap_err();
    assert!(err.to_string().starts_with("client handshake failed:"), "{err}");
    assert!(err.to_string().contains("unable to get local issuer certificate"), "{err}");
}

#[test]
fn a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell() {
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell(&Rustls::aws_lc_rs(), &OpenSsl);
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell(&OpenSsl, &Rustls::ring());
}

#[test]
fn a_required_client_certificate_that_is_not_verified_fails_the_cell() {
    // The server only asks for a certificate and the client has none: the handshake completes,
    // and the gate must notice that the scenario's mutual TLS did not happen.
    let asked = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls";
    let requested = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_cert-requested";
    let expected = "gate failed: server did not verify a client certificate, the scenario requires one";
    let err = mismatched(&Rustls::aws_lc_rs(), &OpenSsl, requested, requested, asked).unwrap_err();
    assert_eq!(err.to_string(), expected);
    let err = mismatched(&OpenSsl, &Rustls::ring(), requested, requested, asked).unwrap_err();
    assert_eq!(err.to_string(), expected);
}

#[test]
fn resumed_handshakes_send_fewer_bytes_and_ml_kem_grows_the_client_hello() {
    // The io measure counts the bytes of one handshake per side.
    let bytes = |name: &str, side: Side| {
        let report = tlsbench_harness::io::sample(&Rustls::aws_lc_rs(), &OpenSsl, &scenario(name), pki());
        let report = report.unwrap_or_else(|e| panic!("{name}: {e}"));
        report.values.iter().find(|v| v.side == side && v.metric == Metric::BytesWritten).unwrap().value
    };
    let full = bytes("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", Side::Server);
    let resumed = bytes("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", Side::Server);
    assert!(resumed < full / 2.0, "a resumed server flight carries no certificate chain: {resumed} vs {full}");
    let classic = bytes("handshake-full_1.3_x25519_rsa-2048_aes-128-gcm", Side::Client);
    // ML-KEM needs OpenSSL 3.5, so this pair is rustls on both sides.
    let report = tlsbench_harness::io::sample(
        &Rustls::aws_lc_rs(),
        &Rustls::aws_lc_rs(),
        &scenario("handshake-full_1.3_x25519mlkem768_rsa-2048_aes-128-gcm"),
        pki(),
    )
    .unwrap();
    let hybrid =
        report.values.iter().find(|v| v.side == Side::Client && v.metric == Metric::BytesWritten).unwrap().value;
    // The ML-KEM-768 encapsulation key adds 1,184 bytes to the client's key share.
    assert!(hybrid - classic >= 1184.0, "client bytes {hybrid} (x25519mlkem768) vs {classic} (x25519)");
}

/// Runs a split-process pair in two threads over a real socketpair, as two runners would.
fn split<C: Stack + Send + Sync, S: Stack + Send + Sync>(
    client: C,
    server: S,
    name: &str,
    spec: &SampleSpec,
) -> (Result<SampleReport, Error>, Result<SampleReport, Error>) {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    let asked = scenario(name);
    std::thread::scope(|scope| {
        let server_side = scope.spawn(|| split::sample_side(&server, Side::Server, &asked, pki(), spec, b));
        let client_side = split::sample_side(&client, Side::Client, &asked, pki(), spec, a);
        (client_side, server_side.join().unwrap())
    })
}

#[test]
fn split_process_pairs_pass_the_same_gates_and_agree_on_the_work() {
    for name in [
        "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-resume-ticket_1.3_x25519_rsa-2048_chacha20-poly1305_mtls",
        "handshake-resume-id_1.2_secp384r1_ecdsa-p384_aes-256-gcm_no-ems",
        "transfer_1.2_x25519_ecdsa-p256_aes-128-gcm",
    ] {
        let (client, server) =
            split(OpenSsl, OpenSsl, name, &SampleSpec::timed(Duration::from_millis(2), Duration::from_millis(3)));
        let (client, server) = (
            client.unwrap_or_else(|e| panic!("{name} client: {e}")),
            server.unwrap_or_else(|e| panic!("{name} server: {e}")),
        );
        assert_eq!(client.iterations, server.iterations, "{name}: both sides do the same iterations");
        assert!(client.values.iter().all(|v| v.side == Side::Client && v.is_plausible()), "{name}: {client:?}");
        assert!(server.values.iter().all(|v| v.side == Side::Server && v.is_plausible()), "{name}: {server:?}");
        assert!(
            (client.client_library.starts_with("OpenSSL"), server.server_library.starts_with("OpenSSL"))
                == (true, true)
        );
    }
}

#[test]
fn a_split_pair_that_fails_fails_on_both_sides_with_the_cause() {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    let asked = scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
    let chacha = scenario("handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305");
    let (client, server) = std::thread::scope(|scope| {
        // The sides were built for different suites: the server refuses, and the client learns why.
        let server = scope.spawn(|| split::sample_side(&OpenSsl, Side::Server, &chacha, pki(), &ONCE, b));
        let client = split::sample_side(&Rustls::aws_lc_rs(), Side::Client, &asked, pki(), &ONCE, a);
        (client, server.join().unwrap())
    });
    let (client, server) = (client.unwrap_err().to_string(), server.unwrap_err().to_string());
    assert!(server.starts_with("server handshake failed:") && server.contains("no shared cipher"), "{server}");
    assert!(client.contains("the peer stopped: server handshake failed:"), "{client}");
}

/// Every scenario both stacks support and s2n-tls's named policies can pin, once each way
/// between s2n-tls and `peer`; returns how many per direction.
fn check_s2n_against<P: Stack>(s2n: &tlsbench_stack_s2n::S2n, peer: &P) -> usize {
    let (mut measured, mut failures) = (0, Vec::new());
    for scenario in Scenario::all()
        .into_iter()
        .filter(|s| tlsbench_harness::Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none())
    {
        let supported = |id, caps: tlsbench_harness::Capabilities| caps.check(id, &scenario).is_ok();
        if !supported(s2n.id(), s2n.capabilities()) || !supported(peer.id(), peer.capabilities()) {
            continue;
        }
        if tlsbench_stack_s2n::policies(&scenario).is_err() {
            continue;
        }
        for (direction, report) in [
            ("client", driver::sample(s2n, peer, &scenario, pki(), &ONCE)),
            ("server", driver::sample(peer, s2n, &scenario, pki(), &ONCE)),
        ] {
            match report {
                Ok(report) => assert!(report.values.iter().all(|v| v.is_plausible()), "{scenario}: {report:?}"),
                Err(e) => failures.push(format!("{} as {direction} with {} {scenario}: {e}", s2n.id(), peer.id())),
            }
        }
        measured += 1;
    }
    assert!(failures.is_empty(), "{} failed:\n{}", failures.len(), failures.join("\n"));
    measured
}

#[test]
fn s2n_tls_interoperates_with_rustls_and_openssl_both_ways() {
    use tlsbench_stack_s2n::S2n;
    // AES-GCM, x25519 and P-256, five key types, EMS on; ML-KEM with rustls only.
    // With the libraries' defaults, TLS 1.3 only (s2n-tls's default policy): 5 keys x 3 client
    // auths and the transfer.
    let defaults = 5 * 3 + 1;
    assert_eq!(check_s2n_against(&S2n::new(), &Rustls::aws_lc_rs()), 194 + defaults);
    assert_eq!(check_s2n_against(&S2n::recv_buffering(), &Rustls::aws_lc_rs()), 194 + defaults);
    // OpenSSL 3.0 has no ML-KEM. The receive-buffering variant differs only in how it reads,
    // which rustls's pairs cover; one run each way here keeps the test short.
    assert_eq!(check_s2n_against(&S2n::new(), &OpenSsl), 154 + defaults);
    // s2n-tls's AWS-LC has prefixed symbols: OpenSSL in the same process is still the system's.
    assert!(OpenSsl.library().starts_with("OpenSSL 3."), "{}", OpenSsl.library());
}

// GnuTLS against each peer in a test of its own, so that the two run in parallel.
#[test]
fn gnutls_interoperates_with_rustls_both_ways() {
    use tlsbench_stack_gnutls::GnuTls;
    let aws = Rustls::aws_lc_rs();
    // GnuTLS 3.7 has no ML-KEM; rustls cannot switch EMS off.
    // With the libraries' defaults: both versions' full handshakes (6 keys x 3 client auths) and transfers.
    let defaults = 2 * (6 * 3 + 1);
    assert_eq!(
        (check_all_scenarios(&GnuTls, &aws), check_all_scenarios(&aws, &GnuTls)),
        (816 + defaults, 816 + defaults)
    );
}

#[test]
fn gnutls_interoperates_with_openssl_both_ways() {
    use tlsbench_stack_gnutls::GnuTls;
    // Everything but ML-KEM, which neither has here.
    let defaults = 2 * (6 * 3 + 1);
    assert_eq!(
        (check_all_scenarios(&GnuTls, &OpenSsl), check_all_scenarios(&OpenSsl, &GnuTls)),
        (1302 + defaults, 1302 + defaults)
    );
    // Linked into one process, each still reports its own library.
    assert!(GnuTls.library().starts_with("GnuTLS 3.7"), "{}", GnuTls.library());
    assert!(OpenSsl.library().starts_with("OpenSSL 3."), "{}", OpenSsl.library());
}

#[test]
fn libtls_interoperates_with_rustls_and_openssl_both_ways() {
    use tlsbench_stack_libtls::LibTls;
    let aws = Rustls::aws_lc_rs();
    // TLS 1.2 full handshakes with EMS on, and transfers; in TLS 1.3 the same with AES-256-GCM.
    let with_rustls = (check_all_scenarios(&LibTls, &aws), check_all_scenarios(&aws, &LibTls));
    let with_openssl = (check_all_scenarios(&LibTls, &OpenSsl), check_all_scenarios(&OpenSsl, &LibTls));
    let n = 220 + 2 * (6 * 3 + 1);
    assert_eq!((with_rustls, with_openssl), ((n, n), (n, n)));
}

#[test]
fn libtls_in_tls_1_3_negotiates_the_suite_a_pinned_peer_offers_or_accepts() {
    use tlsbench_stack_libtls::LibTls;
    // libtls's TLS 1.3 configs are the same for every suite (OpenSSL's defaults): built for
    // AES-256-GCM, they take whichever suite the pinned peer has, and the gates check both sides.
    // Its capabilities still exclude these suites: they are libtls's own, not the pair's.
    let aes256 = "handshake-full_1.3_x25519_ecdsa-p256_aes-256-gcm";
    for asked in
        ["handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305"]
    {
        mismatched(&LibTls, &OpenSsl, aes256, asked, asked)
            .unwrap_or_else(|e| panic!("libtls -> openssl {asked}: {e}"));
        mismatched(&OpenSsl, &LibTls, asked, aes256, asked)
            .unwrap_or_else(|e| panic!("openssl -> libtls {asked}: {e}"));
        mismatched(&LibTls, &Rustls::aws_lc_rs(), aes256, asked, asked)
            .unwrap_or_else(|e| panic!("libtls -> rustls {asked}: {e}"));
        mismatched(&Rustls::aws_lc_rs(), &LibTls, asked, aes256, asked)
            .unwrap_or_else(|e| panic!("rustls -> libtls {asked}: {e}"));
    }
}

#[test]
fn the_gates_and_errors_hold_for_gnutls_and_libtls() {
    use tlsbench_stack_gnutls::GnuTls;
    use tlsbench_stack_libtls::LibTls;
    let aes = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let chacha = "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305";
    let err = mismatched(&GnuTls, &OpenSsl, chacha, aes, aes).unwrap_err();
    assert!(matches!(err, Error::Library { side: Side::Server, stage: "handshake", .. }), "{err}");
    assert!(err.to_string().contains("no shared cipher"), "{err}");
    let err = mismatched(&OpenSsl, &GnuTls, chacha, aes, aes).unwrap_err();
    assert_eq!(err.to_string(), "server handshake failed: No supported cipher suites have been found.");
    let err = mismatched(&GnuTls, &GnuTls, chacha, chacha, aes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "gate failed: client negotiated cipher suite chacha20-poly1305, the scenario asks for aes-128-gcm"
    );
    let asked = "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let err = mismatched(&GnuTls, &OpenSsl, asked, aes, asked).unwrap_err();
    assert_eq!(err.to_string(), "gate failed: client did a full handshake where resumption was asked");
    let err = mismatched(&OpenSsl, &GnuTls, asked, aes, asked).unwrap_err();
    assert_eq!(err.to_string(), "gate failed: client did a full handshake where resumption was asked");
    // libtls reports no group: the client's own group pin is what keeps the handshake honest.
    let p256 = "handshake-full_1.2_secp256r1_rsa-2048_aes-256-gcm";
    let x25519 = "handshake-full_1.2_x25519_rsa-2048_aes-256-gcm";
    let err = mismatched(&LibTls, &OpenSsl, p256, p256, x25519).unwrap_err();
    assert_eq!(err.to_string(), "gate failed: server negotiated group secp256r1, the scenario asks for x25519");
    // In TLS 1.2 OpenSSL words a missing common group as a missing common cipher.
    let err = mismatched(&LibTls, &OpenSsl, p256, x25519, x25519).unwrap_err();
    assert!(
        err.to_string().starts_with("server handshake failed:") && err.to_string().contains("no shared cipher"),
        "{err}"
    );
}

#[test]
fn bertie_s_client_interoperates_and_its_server_is_refused_for_its_missing_intermediate() {
    use tlsbench_stack_bertie::Bertie;
    let aws = Rustls::aws_lc_rs();
    // Bertie's client against RSA servers: TLS 1.3 full handshakes with x25519 and P-256, three
    // RSA sizes, three suites. Not ECDSA: Bertie takes only DER signatures whose r and s are
    // both 32 or 33 bytes long, so about one signature in 128 from another signer (a shorter r
    // or s) fails its handshake with INVALID_SIGNATURE (140): a real run fails such a cell.
    let mut measured = 0;
    for scenario in Scenario::all()
        .into_iter()
        .filter(|s| tlsbench_harness::Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none())
    {
        if Bertie.capabilities().check("bertie", &scenario).is_err() || !scenario.key.is_rsa() {
            continue;
        }
        for report in [
            driver::sample(&Bertie, &aws, &scenario, pki(), &ONCE),
            driver::sample(&Bertie, &OpenSsl, &scenario, pki(), &ONCE),
        ] {
            let report = report.unwrap_or_else(|e| panic!("bertie -> {scenario}: {e}"));
            assert!(report.values.iter().all(|v| v.is_plausible()), "{scenario}: {report:?}");
        }
        measured += 1;
    }
    assert_eq!(measured, 18);
    // Bertie's server sends its leaf without the intermediate: a client that verifies the chain
    // cannot build it to the root.
    let asked = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let err = mismatched(&aws, &Bertie, asked, asked, asked).unwrap_err();
    assert_eq!(err.to_string(), "client handshake failed: invalid peer certificate: UnknownIssuer");
    let err = mismatched(&OpenSsl, &Bertie, asked, asked, asked).unwrap_err();
    assert!(err.to_string().contains("unable to get local issuer certificate"), "{err}");
}

#[test]
fn the_openssl_client_resumes_again_and_again_from_a_server_that_renews_its_tls12_ticket() {
    // rustls's server issues a new ticket in every resumed TLS 1.2 handshake; OpenSSL's client
    // retires the session it offered when one arrives. Many resumed handshakes, each checked.
    let spec = SampleSpec::timed(Duration::ZERO, Duration::from_millis(20));
    for name in [
        "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-resume-ticket_1.2_x25519_rsa-2048_aes-256-gcm_mtls",
    ] {
        let report = driver::sample(&OpenSsl, &Rustls::aws_lc_rs(), &scenario(name), pki(), &spec)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(report.iterations > 2, "{name}: {} handshakes", report.iterations);
    }
}
