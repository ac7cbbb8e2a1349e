//! What both builds, `aws-lc` and `aws-lc-fips`, are tested for alike: resumption, a large
//! transfer, and a chain from another CA and a certificate for another host name failing; on a
//! group each build's policy allows (the FIPS module's leaves out X25519 alone).

use std::time::Duration;

use tlsbench_harness::driver::{self, SampleSpec};
use tlsbench_harness::testing::{self, pki, scenario};
use tlsbench_stack_openssl_shared::testing as shared_tests;

use super::*;

const GROUP: &str = if cfg!(feature = "fips") { "secp256r1" } else { "x25519" };

/// A full handshake of `asked` with itself, whose sides both report what was asked: the gates
/// accept a group of None, so they alone would not notice a side that stopped reporting it.
pub(crate) fn assert_full_handshake_reports_what_was_asked(asked: &Scenario) {
    let (group, suite) = asked.pins().expect("a pinned scenario");
    let (client, server) = testing::connect(&AwsLc, &AwsLc, asked, asked).unwrap_or_else(|e| panic!("{asked}: {e}"));
    let tls12 = asked.version == Version::Tls12;
    let expected = Negotiated {
        version: asked.version,
        suite,
        group: Some(group),
        resumed: false,
        ems: tls12.then_some(true),
        client_cert_verified: None,
        ticket_received: tls12.then_some(false),
    };
    assert_eq!(client.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: client");
    let expected = Negotiated { client_cert_verified: Some(false), ticket_received: None, ..expected };
    assert_eq!(server.negotiated().map_err(|e| e.0), Ok(expected), "{asked}: server");
}

/// Resumption from tickets in both versions and from a TLS 1.2 session ID: after the full
/// handshake that seeds the client, every connection resumes (each checked by the gate).
#[test]
fn every_connection_after_the_first_resumes_from_a_ticket_or_a_session_id() {
    let spec = SampleSpec::timed(Duration::ZERO, Duration::from_millis(20));
    for name in [
        format!("handshake-resume-ticket_1.3_{GROUP}_ecdsa-p256_aes-128-gcm"),
        format!("handshake-resume-ticket_1.2_{GROUP}_ecdsa-p256_aes-128-gcm"),
        "handshake-resume-ticket_1.3_x25519mlkem768_rsa-2048_aes-256-gcm_mtls".to_string(),
        "handshake-resume-ticket_1.2_secp384r1_ecdsa-p384_aes-256-gcm".to_string(),
        format!("handshake-resume-id_1.2_{GROUP}_rsa-2048_aes-128-gcm"),
    ] {
        let asked = scenario(&name);
        let report = driver::sample(&AwsLc, &AwsLc, &asked, pki(), &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(report.iterations > 2, "{name}: {} handshakes", report.iterations);
    }
    // Connection by connection: a full handshake, then one that resumes from its ticket.
    for name in [
        format!("handshake-resume-ticket_1.3_{GROUP}_ecdsa-p256_aes-128-gcm"),
        format!("handshake-resume-ticket_1.2_{GROUP}_rsa-2048_aes-256-gcm"),
    ] {
        let asked = scenario(&name);
        let client_config = AwsLc.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        let server_config = AwsLc.server_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
        let ticket_expected = (asked.version == Version::Tls12).then_some(true);
        for resumed in [false, true] {
            let (client, server) = testing::connect_configs(&AwsLc, &AwsLc, &client_config, &server_config)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let negotiated = client.negotiated().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!((negotiated.resumed, negotiated.ticket_received), (resumed, ticket_expected), "{name}");
            assert_eq!(server.negotiated().map(|n| n.resumed).map_err(|e| e.0), Ok(resumed), "{name}");
        }
        assert!(client_config.session.lock().unwrap().is_some(), "{name}: the client kept a session");
    }
}

#[test]
fn a_server_chain_from_another_ca_fails_verification() {
    let error = shared_tests::check_a_server_chain_from_another_ca_fails_verification(&AwsLc, GROUP);
    assert!(error.contains("CERTIFICATE_VERIFY_FAILED"), "{error}");
}

#[test]
fn a_certificate_for_another_host_name_fails_verification() {
    let error =
        shared_tests::check_a_certificate_for_another_host_name_fails_verification(&AwsLc, GROUP, |config, io| {
            let mut ssl = Ssl::new(&config.ctx).expect("creating the client connection");
            ssl.param_mut().set_host("other.tlsbench.test").expect("setting the host name to verify");
            ssl.set_connect_state();
            AwsLcConnection::new(ssl, io)
        });
    assert!(error.contains("CERTIFICATE_VERIFY_FAILED"), "{error}");
}

/// 256 KiB in 16 KiB records each way arrive byte for byte, in order.
#[test]
fn a_large_transfer_arrives_intact() {
    let asked = scenario(&format!("transfer_1.3_{GROUP}_ecdsa-p256_aes-256-gcm"));
    let (mut client, mut server) = testing::connect(&AwsLc, &AwsLc, &asked, &asked).unwrap_or_else(|e| panic!("{e}"));
    let sent: Vec<u8> = (0..256 * 1024u32).map(|i| (i % 251) as u8).collect();
    client.send(&sent).unwrap_or_else(|e| panic!("client send: {e}"));
    assert!(receive_all(&mut server, sent.len()) == sent, "the server received other bytes than sent");
    server.send(&sent).unwrap_or_else(|e| panic!("server send: {e}"));
    assert!(receive_all(&mut client, sent.len()) == sent, "the client received other bytes than sent");
}

fn receive_all(to: &mut AwsLcConnection, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; 16 * 1024];
    let mut received = Vec::with_capacity(len);
    while received.len() < len {
        let n = to.receive(&mut buf).unwrap_or_else(|e| panic!("receive: {e}"));
        assert!(n > 0, "stalled after {} bytes", received.len());
        received.extend_from_slice(&buf[..n]);
    }
    received
}
