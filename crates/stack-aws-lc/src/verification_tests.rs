//! Certificate verification in both builds, `aws-lc` and `aws-lc-fips`: a chain from another CA
//! and a certificate for another host name fail, on a group each build's policy allows (the FIPS
//! module's leaves out X25519 alone).

use tlsbench_harness::testing::{self, pki, scenario};
use tlsbench_harness::{KeyType, Link};

use super::*;

const GROUP: &str = if cfg!(feature = "fips") { "secp256r1" } else { "x25519" };

#[test]
fn a_server_chain_from_another_ca_fails_verification() {
    // TLS 1.3 so that the cipher suite does not depend on the key type: the only mismatch is
    // the certificate.
    let client = scenario(&format!("handshake-full_1.3_{GROUP}_rsa-2048_aes-128-gcm"));
    let server = Scenario { key: KeyType::EcdsaP256, ..client };
    let Err(error) = testing::connect(&AwsLc, &AwsLc, &client, &server) else {
        panic!("the client accepted a chain its CA did not sign")
    };
    assert!(error.starts_with("client: "), "{error}");
    assert!(error.contains("CERTIFICATE_VERIFY_FAILED"), "{error}");
    assert!(error.contains("unable to get local issuer certificate"), "{error}");
}

#[test]
fn a_certificate_for_another_host_name_fails_verification() {
    let asked = scenario(&format!("handshake-full_1.2_{GROUP}_ecdsa-p256_aes-128-gcm"));
    let link = Link::new();
    let client_config = AwsLc.client_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
    let server_config = AwsLc.server_config(&asked, pki()).unwrap_or_else(|e| panic!("{e}"));
    // `new_client` with another name to verify: the chain is still good, only the name differs.
    let mut ssl = Ssl::new(&client_config.ctx).expect("creating the client connection");
    ssl.param_mut().set_host("other.tlsbench.test").expect("setting the host name to verify");
    ssl.set_connect_state();
    let mut client = AwsLcConnection::new(ssl, link.client()).unwrap_or_else(|e| panic!("{e}"));
    let mut server = AwsLc.new_server(&server_config, link.server()).unwrap_or_else(|e| panic!("{e}"));
    let error = testing::client_refusal(&mut client, &mut server, &link);
    assert!(error.contains("CERTIFICATE_VERIFY_FAILED"), "{error}");
    assert!(error.to_lowercase().contains("hostname mismatch"), "{error}");
}
