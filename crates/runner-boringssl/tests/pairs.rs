//! BoringSSL with rustls, both ways, in every scenario both support, through the real driver;
//! and the gates catching real handshakes between them that do not match the scenario.

use tlsbench_harness::driver;
use tlsbench_harness::testing::{
    check_every_supported_scenario as check_all_scenarios, check_shared_contexts, pki, ONCE,
};
use tlsbench_harness::{Error, Measure, Scenario, Side, Stack};
use tlsbench_stack_boringssl::BoringSsl;
use tlsbench_stack_openssl_shared::testing::{
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell, mismatched,
};
use tlsbench_stack_rustls::Rustls;

#[test]
fn boringssl_and_rustls_pass_every_scenario_both_support_both_ways() {
    // Neither can switch EMS off; both have everything else, ML-KEM included. The check
    // measures the kinds the time measure applies to.
    // With its defaults, BoringSSL takes no Ed25519 certificate.
    let boringssl_defaults_lack = |s: &Scenario| !s.is_pinned() && s.key == tlsbench_harness::KeyType::Ed25519;
    let expected = Scenario::all()
        .iter()
        .filter(|s| {
            s.ems
                && (Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none())
                && !boringssl_defaults_lack(s)
        })
        .count();
    let aws = Rustls::aws_lc_rs();
    assert_eq!(check_all_scenarios(&aws, &BoringSsl), expected);
    assert_eq!(check_all_scenarios(&BoringSsl, &aws), expected);
}

#[test]
fn boringssl_and_rustls_ring_pass_the_handshake_and_transfer_scenarios_of_the_default_run() {
    let ring = Rustls::ring();
    for scenario in Scenario::defaults().into_iter().filter(|s| ring.capabilities().check(ring.id(), s).is_ok()) {
        driver::sample(&ring, &BoringSsl, &scenario, pki(), &ONCE)
            .unwrap_or_else(|e| panic!("ring -> boringssl {scenario}: {e}"));
        driver::sample(&BoringSsl, &ring, &scenario, pki(), &ONCE)
            .unwrap_or_else(|e| panic!("boringssl -> ring {scenario}: {e}"));
    }
}

#[test]
fn a_client_offering_only_a_tls13_suite_the_server_lacks_fails_the_cell() {
    // BoringSSL's TLS 1.3 suites are pinned through their own list, not the cipher string.
    let chacha = "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305";
    let aes = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let err = mismatched(&Rustls::aws_lc_rs(), &BoringSsl, chacha, aes, aes).unwrap_err();
    assert!(matches!(err, Error::Library { side: Side::Server, stage: "handshake", .. }), "{err}");
    assert!(err.to_string().contains("NO_SHARED_CIPHER"), "{err}");

    let err = mismatched(&BoringSsl, &Rustls::aws_lc_rs(), chacha, aes, aes).unwrap_err();
    assert_eq!(err.to_string(), "server handshake failed: peer is incompatible: NoCipherSuitesInCommon");
}

#[test]
fn the_gates_catch_a_handshake_that_is_not_the_scenario() {
    let aes = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let chacha = "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305";
    let err = mismatched(&BoringSsl, &Rustls::aws_lc_rs(), chacha, chacha, aes).unwrap_err();
    assert_eq!(
        err.to_string(),
        "gate failed: client negotiated cipher suite chacha20-poly1305, the scenario asks for aes-128-gcm"
    );

    let mlkem = "handshake-full_1.3_x25519mlkem768_rsa-2048_aes-256-gcm";
    let x25519 = "handshake-full_1.3_x25519_rsa-2048_aes-256-gcm";
    let err = mismatched(&Rustls::aws_lc_rs(), &BoringSsl, mlkem, mlkem, x25519).unwrap_err();
    assert_eq!(err.to_string(), "gate failed: client negotiated group x25519mlkem768, the scenario asks for x25519");
}

#[test]
fn a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell() {
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell(&Rustls::aws_lc_rs(), &BoringSsl);
    check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell(&BoringSsl, &Rustls::aws_lc_rs());
}

#[test]
fn threads_sharing_configs_resume_each_other_s_sessions() {
    // Session IDs and tickets, in TLS 1.2 and 1.3 (testing::check_shared_contexts).
    let aws = Rustls::aws_lc_rs();
    assert_eq!(check_shared_contexts(&BoringSsl, &BoringSsl), 3);
    assert_eq!(check_shared_contexts(&BoringSsl, &aws), 3);
    assert_eq!(check_shared_contexts(&aws, &BoringSsl), 3);
}
