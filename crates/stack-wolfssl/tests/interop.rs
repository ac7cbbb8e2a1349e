//! wolfSSL with OpenSSL (the system's libssl) and rustls (aws-lc-rs), each on either side, in
//! every scenario both support, through the real driver in one process: wolfSSL's symbols
//! (wolfSSL_*, wc_*) clash with neither's. Runs with the feature: `cargo test --release -p
//! tlsbench-stack-wolfssl --features wolfssl`.
#![cfg(feature = "wolfssl")]

use tlsbench_harness::driver;
use tlsbench_harness::testing::{check_every_supported_scenario as check_all_scenarios, pki, scenario, ONCE};
use tlsbench_harness::{Error, Side, Stack};
use tlsbench_stack_openssl::OpenSsl;
use tlsbench_stack_rustls::Rustls;
use tlsbench_stack_wolfssl::WolfSsl;

#[test]
fn wolfssl_and_openssl_pass_every_scenario_both_support() {
    // Without tickets, Ed25519, EMS off (wolfSSL) and ML-KEM (OpenSSL 3.0): still over 300.
    assert!(check_all_scenarios(&WolfSsl, &OpenSsl) > 300);
    assert!(check_all_scenarios(&OpenSsl, &WolfSsl) > 300);
}

#[test]
fn wolfssl_and_rustls_pass_every_scenario_both_support() {
    let rustls = Rustls::aws_lc_rs();
    // With ML-KEM, which both have.
    assert!(check_all_scenarios(&WolfSsl, &rustls) > 300);
    assert!(check_all_scenarios(&rustls, &WolfSsl) > 300);
}

/// A sample whose configs were built for other scenarios than the one asked.
fn mismatched<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    client_offers: &str,
    server_offers: &str,
    asked: &str,
) -> Result<(), Error> {
    let client_config = client.client_config(&scenario(client_offers), pki()).unwrap();
    let server_config = server.server_config(&scenario(server_offers), pki()).unwrap();
    driver::sample_with_configs(client, server, client_config, server_config, &scenario(asked), &ONCE).map(drop)
}

#[test]
fn a_session_id_that_a_server_does_not_resume_fails_the_cell() {
    // The wolfSSL client offers its session; OpenSSL's server, configured for full handshakes,
    // keeps none.
    let asked = "handshake-resume-id_1.2_x25519_rsa-2048_aes-256-gcm";
    let full = "handshake-full_1.2_x25519_rsa-2048_aes-256-gcm";
    let err = mismatched(&WolfSsl, &OpenSsl, asked, full, asked).unwrap_err();
    assert_eq!(err.to_string(), "gate failed: client did a full handshake where resumption was asked");
}

#[test]
fn a_client_offering_only_a_suite_the_server_lacks_fails_the_cell() {
    let chacha = "handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305";
    let aes = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let err = mismatched(&OpenSsl, &WolfSsl, chacha, aes, aes).unwrap_err();
    assert!(matches!(err, Error::Library { side: Side::Server, stage: "handshake", .. }), "{err}");
    let err = mismatched(&WolfSsl, &Rustls::aws_lc_rs(), chacha, aes, aes).unwrap_err();
    assert_eq!(err.to_string(), "server handshake failed: peer is incompatible: NoCipherSuitesInCommon");
}
