//! What the pairs tests of runner-openssl, runner-boringssl and runner-aws-lc share: each pairs its family's
//! stack with rustls, through the real driver. And what the adapters' own tests check alike,
//! each with its library's own words added where they differ.

use tlsbench_harness::driver;
use tlsbench_harness::protocol::SampleReport;
use tlsbench_harness::testing::{self, pki, scenario, ONCE};
use tlsbench_harness::{Connection, Endpoint, Error, KeyType, LibError, Link, Measure, Negotiated, Scenario, Stack};

/// A sample whose client and server configs were built for other scenarios than the one asked.
pub fn mismatched<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    client_offers: &str,
    server_offers: &str,
    asked: &str,
) -> Result<SampleReport, Error> {
    let client_config = client.client_config(&scenario(client_offers), pki()).unwrap();
    let server_config = server.server_config(&scenario(server_offers), pki()).unwrap();
    driver::sample_with_configs(client, server, client_config, server_config, &scenario(asked), &ONCE)
}

/// The client keeps and offers sessions; the server's config (a full-handshake one) never
/// resumes. The seed handshake is full as it should be; the next one must resume and doesn't,
/// which fails the cell: with a TLS 1.3 ticket and with a TLS 1.2 session ID.
pub fn check_a_resumption_that_falls_back_to_a_full_handshake_fails_the_cell<C: Stack, S: Stack>(
    client: &C,
    server: &S,
) {
    for asked in [
        "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
        "handshake-resume-id_1.2_x25519_rsa-2048_aes-256-gcm",
    ] {
        let full =
            asked.replace("handshake-resume-ticket", "handshake-full").replace("handshake-resume-id", "handshake-full");
        let err = mismatched(client, server, asked, &full, asked).unwrap_err();
        let (client, server) = (client.id(), server.id());
        assert_eq!(
            err.to_string(),
            "gate failed: client did a full handshake where resumption was asked",
            "{client} -> {server} {asked}"
        );
    }
}

/// What the adapters' own tests share (each adds its library's differences): a full handshake
/// with a server chain from another CA than the client trusts fails on the client, which names
/// a missing issuer; TLS 1.3 on `group`, so that the suite does not depend on the key type and
/// the only mismatch is the certificate. The client's error, for each library's own words.
pub fn check_a_server_chain_from_another_ca_fails_verification<S: Stack>(stack: &S, group: &str) -> String {
    let client = scenario(&format!("handshake-full_1.3_{group}_rsa-2048_aes-128-gcm"));
    let server = Scenario { key: KeyType::EcdsaP256, ..client };
    let Err(error) = testing::connect(stack, stack, &client, &server) else {
        panic!("{}: the client accepted a chain its CA did not sign", stack.id())
    };
    assert!(error.starts_with("client: "), "{error}");
    assert!(error.contains("unable to get local issuer certificate"), "{error}");
    error
}

/// A TLS 1.2 handshake on `group` whose client, made by `client_for_another_host` from the
/// scenario's config, verifies another host name than the certificate's (the chain is still
/// good, only the name differs): the client refuses, naming the mismatch. The client's error.
pub fn check_a_certificate_for_another_host_name_fails_verification<S: Stack>(
    stack: &S,
    group: &str,
    client_for_another_host: impl FnOnce(&S::ClientConfig, Endpoint) -> Result<S::Client, LibError>,
) -> String {
    let asked = scenario(&format!("handshake-full_1.2_{group}_ecdsa-p256_aes-128-gcm"));
    let link = Link::new();
    let client_config = stack.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
    let server_config = stack.server_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
    let mut client = client_for_another_host(&client_config, link.client()).unwrap_or_else(|e| panic!("{e}"));
    let mut server = stack.new_server(&server_config, link.server()).unwrap_or_else(|e| panic!("{e}"));
    let error = testing::client_refusal(&mut client, &mut server, &link);
    // `Hostname mismatch` in OpenSSL 1.1.1, `hostname mismatch` from 3.0 on and in BoringSSL.
    assert!(error.to_lowercase().contains("hostname mismatch"), "{error}");
    error
}

/// In TLS 1.3 and 1.2: one byte each way, then close_notify each way; each side sees the peer's
/// close_notify once the peer has sent it, and not before ([`testing::check_close_notify`]).
pub fn check_close_notify_each_way<S: Stack>(stack: &S) {
    for name in ["handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm"]
    {
        let asked = scenario(name);
        let (mut client, mut server) =
            testing::connect(stack, stack, &asked, &asked).unwrap_or_else(|e| panic!("{name}: {e}"));
        testing::check_close_notify(name, &mut client, &mut server);
    }
}

/// A message each way arrives whole ([`testing::check_data_crosses`]).
pub fn check_data_crosses_in_both_directions<S: Stack>(stack: &S) {
    let asked = scenario("transfer_1.3_x25519_ecdsa-p256_aes-256-gcm");
    let (mut client, mut server) = testing::connect(stack, stack, &asked, &asked).unwrap_or_else(|e| panic!("{e}"));
    testing::check_data_crosses(&asked.name(), &mut client, &mut server);
}

/// Every scenario the time measure takes but those `left_out` samples through the real driver
/// ([`testing::check_every_supported_scenario`]): the stack supports exactly the rest.
pub fn check_every_scenario_but<S: Stack>(stack: &S, left_out: impl Fn(&Scenario) -> bool) {
    let measured = testing::check_every_supported_scenario(stack, stack);
    let timed =
        Scenario::all().into_iter().filter(|s| Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none());
    assert_eq!(measured, timed.filter(|s| !left_out(s)).count(), "{}", stack.id());
}

/// A TLS 1.2 handshake with a client certificate: the server reports it verified, and both
/// sides the extended master secret.
pub fn check_a_verified_client_certificate_is_reported<S: Stack>(stack: &S) {
    let asked = scenario("handshake-full_1.2_secp384r1_ed25519_aes-256-gcm_mtls");
    let (client, server) = testing::connect(stack, stack, &asked, &asked).unwrap_or_else(|e| panic!("{e}"));
    let reported =
        |negotiated: Result<Negotiated, LibError>| negotiated.map_err(|e| e.0).map(|n| (n.ems, n.client_cert_verified));
    assert_eq!(reported(client.negotiated()), Ok((Some(true), None)), "{}: client", stack.id());
    assert_eq!(reported(server.negotiated()), Ok((Some(true), Some(true))), "{}: server", stack.id());
}

/// The TLS 1.3 suite list really is pinned (a cipher string does not reach TLS 1.3): a client
/// and a server with different suites have none in common, and the server says so.
pub fn check_tls13_suites_are_pinned_on_both_sides<S: Stack>(stack: &S) {
    let client = scenario("handshake-full_1.3_x25519_ecdsa-p256_chacha20-poly1305");
    let server = scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
    let Err(error) = testing::connect(stack, stack, &client, &server) else {
        panic!("{}: a client and a server with no common suite connected", stack.id())
    };
    assert!(error.starts_with("server: ") && error.contains("NO_SHARED_CIPHER"), "{error}");
}

/// What BoringSSL and AWS-LC leave out: TLS 1.2 without the extended master secret, and, with
/// their defaults, Ed25519 (their default signature algorithms leave it out).
pub fn no_ems_or_default_ed25519(scenario: &Scenario) -> bool {
    !scenario.ems || (!scenario.is_pinned() && scenario.key == KeyType::Ed25519)
}
