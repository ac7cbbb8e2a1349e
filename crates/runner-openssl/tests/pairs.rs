//! Every pair of this family's stacks, in every scenario, through the real driver; and the
//! gates catching real handshakes that do not match the scenario.

use std::time::Duration;

use tlsbench_harness::driver::{self, SampleSpec};
use tlsbench_harness::protocol::SampleReport;
use tlsbench_harness::{Error, Pki, Scenario, Side, Stack};
use tlsbench_stack_openssl::OpenSsl;
use tlsbench_stack_rustls::Rustls;

const TINY: SampleSpec = SampleSpec { warmup: Duration::ZERO, min_time: Duration::from_millis(1) };

fn pki() -> (tempfile::TempDir, Pki) {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::load_or_generate(dir.path()).unwrap();
    (dir, pki)
}

fn scenario(name: &str) -> Scenario {
    name.parse().unwrap()
}

fn check_all_scenarios<C: Stack, S: Stack>(client: &C, server: &S, pki: &Pki) {
    for scenario in Scenario::all() {
        let report = driver::sample(client, server, &scenario, pki, &TINY)
            .unwrap_or_else(|e| panic!("{} -> {} {scenario}: {e}", client.id(), server.id()));
        assert_eq!(report.client_library, client.library());
        assert_eq!(report.server_library, server.library());
        for side in [Side::Client, Side::Server] {
            let value = report.values.iter().find(|v| v.side == side).unwrap();
            assert!(value.value > 0.0 && value.seconds >= 0.001, "{scenario} {side}: {value:?}");
        }
    }
}

#[test]
fn every_interop_pair_passes_every_scenario() {
    let (_dir, pki) = pki();
    let (aws, ring) = (Rustls::aws_lc_rs(), Rustls::ring());
    check_all_scenarios(&aws, &OpenSsl, &pki);
    check_all_scenarios(&OpenSsl, &aws, &pki);
    check_all_scenarios(&ring, &OpenSsl, &pki);
    check_all_scenarios(&OpenSsl, &ring, &pki);
    check_all_scenarios(&aws, &ring, &pki);
}

fn mismatched<C: Stack, S: Stack>(client: &C, server: &S, client_offers: &str, server_offers: &str, asked: &str) -> Result<SampleReport, Error> {
    let (_dir, pki) = pki();
    let client_config = client.client_config(&scenario(client_offers), &pki).unwrap();
    let server_config = server.server_config(&scenario(server_offers), &pki).unwrap();
    driver::sample_with_configs(client, server, client_config, server_config, &scenario(asked), &TINY)
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
    assert_eq!(err.to_string(), "gate failed: client negotiated cipher suite chacha20-poly1305, the scenario asks for aes-128-gcm");

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
