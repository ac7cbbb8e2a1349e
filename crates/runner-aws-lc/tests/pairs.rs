//! AWS-LC's libssl with rustls (on aws-lc-rs, whose AWS-LC is another aws-lc-sys release with
//! its own symbol prefix, and on ring), both ways, through the real driver; and the gates
//! catching real handshakes between them that do not match the scenario. The runner holds
//! AWS-LC alone; its pairs with the other runners' stacks are tlsbench's (crates/tlsbench/tests).

use std::time::Duration;

use tlsbench_harness::driver::{self, SampleSpec};
use tlsbench_harness::testing::{check_every_supported_scenario as check_all_scenarios, pki, scenario, ONCE};
use tlsbench_harness::{Error, KeyType, Measure, Scenario, Side, Stack};
use tlsbench_stack_aws_lc::AwsLc;
use tlsbench_stack_openssl_shared::testing::{
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell, mismatched,
};
use tlsbench_stack_rustls::Rustls;

#[test]
fn aws_lc_and_rustls_pass_every_scenario_both_support_both_ways() {
    // Neither can switch EMS off; both have everything else, ML-KEM included. With its
    // defaults, AWS-LC takes no Ed25519 certificate. The check measures the kinds the time
    // measure applies to.
    let aws_lc_defaults_lack = |s: &Scenario| !s.is_pinned() && s.key == KeyType::Ed25519;
    let expected = Scenario::all()
        .iter()
        .filter(|s| {
            s.ems && (Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none()) && !aws_lc_defaults_lack(s)
        })
        .count();
    let rustls = Rustls::aws_lc_rs();
    assert_eq!(check_all_scenarios(&rustls, &AwsLc), expected);
    assert_eq!(check_all_scenarios(&AwsLc, &rustls), expected);
}

#[test]
fn aws_lc_and_rustls_ring_pass_the_handshake_and_transfer_scenarios_of_the_default_run() {
    let ring = Rustls::ring();
    for scenario in Scenario::defaults().into_iter().filter(|s| ring.capabilities().check(ring.id(), s).is_ok()) {
        driver::sample(&ring, &AwsLc, &scenario, pki(), &ONCE)
            .unwrap_or_else(|e| panic!("ring -> aws-lc {scenario}: {e}"));
        driver::sample(&AwsLc, &ring, &scenario, pki(), &ONCE)
            .unwrap_or_else(|e| panic!("aws-lc -> ring {scenario}: {e}"));
    }
}

/// rustls's TLS 1.2 server sends a new ticket in every handshake it resumes. AWS-LC's client
/// puts it in a new session, which reaches the new-session callback (OpenSSL's client retires
/// the session instead: docs/stacks.md): every connection resumes, each checked by the gate.
#[test]
fn the_aws_lc_client_resumes_again_and_again_from_a_server_that_renews_its_tls12_ticket() {
    let spec = SampleSpec::timed(Duration::ZERO, Duration::from_millis(20));
    for name in [
        "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-resume-ticket_1.2_x25519_rsa-2048_aes-256-gcm_mtls",
    ] {
        let report = driver::sample(&AwsLc, &Rustls::aws_lc_rs(), &scenario(name), pki(), &spec)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(report.iterations > 2, "{name}: {} handshakes", report.iterations);
    }
}

#[test]
fn a_client_offering_only_a_tls13_suite_the_server_lacks_fails_the_cell() {
    // AWS-LC's TLS 1.3 suites are pinned through their own list (SSL_CTX_set_ciphersuites).
    let chacha = "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305";
    let aes = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let err = mismatched(&Rustls::aws_lc_rs(), &AwsLc, chacha, aes, aes).unwrap_err();
    assert!(matches!(err, Error::Library { side: Side::Server, stage: "handshake", .. }), "{err}");
    assert!(err.to_string().contains("NO_SHARED_CIPHER"), "{err}");

    let err = mismatched(&AwsLc, &Rustls::aws_lc_rs(), chacha, aes, aes).unwrap_err();
    assert_eq!(err.to_string(), "server handshake failed: peer is incompatible: NoCipherSuitesInCommon");
}

#[test]
fn the_gates_catch_a_handshake_that_is_not_the_scenario() {
    let aes = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let chacha = "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305";
    let err = mismatched(&AwsLc, &Rustls::aws_lc_rs(), chacha, chacha, aes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "gate failed: client negotiated cipher suite chacha20-poly1305, the scenario asks for aes-128-gcm"
    );

    let mlkem = "handshake-full_1.3_x25519mlkem768_rsa-2048_aes-256-gcm";
    let x25519 = "handshake-full_1.3_x25519_rsa-2048_aes-256-gcm";
    let err = mismatched(&Rustls::aws_lc_rs(), &AwsLc, mlkem, mlkem, x25519).unwrap_err();
    assert_eq!(err.to_string(), "gate failed: client negotiated group x25519mlkem768, the scenario asks for x25519");
}

#[test]
fn a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell() {
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell(&Rustls::aws_lc_rs(), &AwsLc);
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell(&AwsLc, &Rustls::aws_lc_rs());
}

/// Two AWS-LCs in one process, each under its own symbol prefix (aws-lc-sys 0.41's for
/// AWS-LC's libssl, 0.47's under aws-lc-rs for rustls): each reports its own release at runtime,
/// which one capturing the other's calls would not.
#[test]
fn each_aws_lc_in_the_test_binary_reports_its_own_release() {
    let ours = AwsLc.backend();
    let rustls = Rustls::aws_lc_rs().backend();
    assert_eq!((ours.name.as_str(), rustls.name.as_str()), ("AWS-LC", "AWS-LC"));
    assert!(ours.detail.as_deref().is_some_and(|d| d.starts_with("aws-lc-sys ")), "{ours}");
    assert!(rustls.detail.as_deref().is_some_and(|d| d.starts_with("aws-lc-rs ")), "{rustls}");
    assert_ne!(ours.version, rustls.version, "{ours} / {rustls}");
}
