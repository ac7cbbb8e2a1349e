//! What the pairs tests of runner-openssl, runner-boringssl and runner-aws-lc share: each pairs its family's
//! stack with rustls, through the real driver.

use tlsbench_harness::driver;
use tlsbench_harness::protocol::SampleReport;
use tlsbench_harness::testing::{pki, scenario, ONCE};
use tlsbench_harness::{Error, Stack};

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
