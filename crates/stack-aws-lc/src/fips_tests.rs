//! The stack `aws-lc-fips` (`cargo test --release -p tlsbench-stack-aws-lc --features fips`):
//! AWS-LC's FIPS module in FIPS mode, what it negotiates with itself, and what it refuses.

use tlsbench_harness::testing::{self, pki, scenario};
use tlsbench_harness::{KeyType, Kind, Measure, Suite};

use super::*;

/// A handshake between configs built for two scenarios (see `testing::connect`).
fn connect(client: &Scenario, server: &Scenario) -> Result<(AwsLcConnection, AwsLcConnection), String> {
    testing::connect(&AwsLc, &AwsLc, client, server)
}

/// The FIPS module, not the plain AWS-LC (`AWS-LC 1.73.0 (aws-lc-sys 0.41.0)`, the stack
/// `aws-lc`): its own version string, the aws-lc-fips-sys release, and FIPS mode on.
#[test]
fn the_library_is_aws_lc_s_fips_module_in_fips_mode() {
    assert_eq!(AwsLc.id(), "aws-lc-fips");
    let library = AwsLc.library();
    let (version, krate) = library.split_once(" (").unwrap_or_else(|| panic!("{library}"));
    let number = version.strip_prefix("AWS-LC FIPS ").unwrap_or_else(|| panic!("{library}"));
    assert!(number.split('.').count() == 3 && number.split('.').all(|n| n.parse::<u32>().is_ok()), "{library}");
    assert!(krate.starts_with("aws-lc-fips-sys 0.") && krate.ends_with(')'), "{library}");
    assert!(openssl::fips::enabled(), "FIPS_mode() is 0");
    let backend = AwsLc.backend();
    assert_eq!((backend.name.as_str(), backend.version.as_str()), ("AWS-LC FIPS", number));
    assert_eq!(backend.detail, Some(format!("{}, static, FIPS mode on", krate.trim_end_matches(')'))));
}

#[test]
fn every_approved_scenario_samples_with_positive_values_on_both_sides() {
    let measured = testing::check_every_supported_scenario(&AwsLc, &AwsLc);
    // Everything time measures with EMS (AWS-LC cannot switch it off), AES-GCM and the
    // approved groups when pinned, and no Ed25519 with the defaults (AWS-LC's defaults leave it
    // out to verify).
    let approved = |s: &Scenario| match s.pins() {
        Some((group, suite)) => group != Group::X25519 && suite != Suite::Chacha20Poly1305,
        None => s.key != KeyType::Ed25519,
    };
    let expected = Scenario::all()
        .into_iter()
        .filter(|s| (Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none()) && s.ems && approved(s));
    assert_eq!(measured, expected.count());
    assert!(measured > 100, "{measured} scenarios");
}

/// Full handshakes in both versions with every approved group and suite and every key type:
/// both sides report what was asked.
#[test]
fn full_handshakes_negotiate_what_was_asked() {
    for &version in Version::ALL {
        for group in [Group::Secp256r1, Group::Secp384r1, Group::X25519Mlkem768] {
            for &key in KeyType::ALL {
                for suite in [Suite::Aes128Gcm, Suite::Aes256Gcm] {
                    // ML-KEM exists in TLS 1.3 only.
                    let Ok(asked) = Scenario::new(Kind::HandshakeFull, version, group, key, suite) else { continue };
                    both_builds_tests::assert_full_handshake_reports_what_was_asked(&asked);
                }
            }
        }
    }
}

/// With the libraries' defaults it offers only approved groups and suites, AWS-LC's order kept:
/// the hybrid in TLS 1.3 (where X25519 comes next in AWS-LC's own list), P-256 in TLS 1.2, and
/// AES-128-GCM (ChaCha20-Poly1305 would follow it).
#[test]
fn the_defaults_negotiate_approved_groups_and_suites() {
    for (name, group) in [
        ("handshake-full_1.3_default_ecdsa-p256_default", Group::X25519Mlkem768),
        ("handshake-full_1.2_default_rsa-2048_default", Group::Secp256r1),
        ("transfer_1.2_default_ecdsa-p384_default", Group::Secp256r1),
    ] {
        let asked = scenario(name);
        let (client, server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{name}: {e}"));
        for negotiated in [client.negotiated(), server.negotiated()] {
            let negotiated = negotiated.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((negotiated.group, negotiated.suite), (Some(group), Suite::Aes128Gcm), "{name}");
        }
    }
}

/// Data crosses intact both ways, and 256 KiB in 16 KiB records each way arrive byte for byte.
#[test]
fn data_crosses_intact_in_both_directions() {
    for name in ["transfer_1.3_secp256r1_ecdsa-p256_aes-256-gcm", "transfer_1.2_secp384r1_rsa-2048_aes-128-gcm"] {
        let asked = scenario(name);
        let (mut client, mut server) = connect(&asked, &asked).unwrap_or_else(|e| panic!("{e}"));
        testing::check_data_crosses(name, &mut client, &mut server);
    }
}

/// X25519 alone and ChaCha20-Poly1305 are not FIPS-approved: their scenarios are n/a with that
/// reason, and a config asked for one anyway fails, saying why.
#[test]
fn what_is_not_approved_is_unsupported_and_its_configs_fail() {
    let x25519 = scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
    let chacha = scenario("handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305");
    let reason = |s: &Scenario| AwsLc.capabilities().check("aws-lc-fips", s).map_err(|e| e.to_string());
    assert_eq!(
        reason(&x25519),
        Err("aws-lc-fips: FIPS-approved groups only, and x25519 alone is not (secp256r1, secp384r1 and \
             x25519mlkem768 are)"
            .into())
    );
    assert_eq!(
        reason(&chacha),
        Err("aws-lc-fips: FIPS-approved cipher suites only, and ChaCha20-Poly1305 is not (AES-GCM is)".into())
    );
    assert_eq!(reason(&scenario("handshake-full_1.3_x25519mlkem768_ed25519_aes-256-gcm")), Ok(()));
    assert_eq!(
        AwsLc.client_config(&x25519, pki()).err().map(|e| e.0),
        Some("aws-lc-fips: group x25519 is not FIPS-approved".into())
    );
    assert_eq!(
        AwsLc.server_config(&chacha, pki()).err().map(|e| e.0),
        Some("aws-lc-fips: cipher suite chacha20-poly1305 is not FIPS-approved".into())
    );
}

/// What it offers and accepts with the defaults, against a server and a client of the same
/// module set by hand to X25519 alone or ChaCha20-Poly1305 alone, which the FIPS module has but
/// which are not approved: no handshake either way.
#[test]
fn the_defaults_neither_offer_nor_accept_what_is_not_approved() {
    let defaults = scenario("handshake-full_1.3_default_ecdsa-p256_default");
    let client_config = AwsLc.client_config(&defaults, pki()).unwrap_or_else(|e| panic!("{e}"));
    let server_config = AwsLc.server_config(&defaults, pki()).unwrap_or_else(|e| panic!("{e}"));
    for (groups, suites, expected) in [
        ("X25519", "TLS_AES_128_GCM_SHA256", "NO_SHARED_GROUP"),
        ("P-256", "TLS_CHACHA20_POLY1305_SHA256", "NO_SHARED_CIPHER"),
    ] {
        let what = format!("{groups} and {suites}");
        let server = shared::server_config(only(groups, suites), &defaults, pki()).unwrap_or_else(|e| panic!("{e}"));
        let Err(error) = testing::connect_configs(&AwsLc, &AwsLc, &client_config, &server) else {
            panic!("the FIPS client negotiated {what}")
        };
        assert!(error.starts_with("server: ") && error.contains(expected), "{what}: {error}");

        let client = shared::client_context(only(groups, suites), &defaults, pki()).unwrap_or_else(|e| panic!("{e}"));
        let client = ClientConfig { ctx: client.build(), session: Arc::new(Mutex::new(None)) };
        let Err(error) = testing::connect_configs(&AwsLc, &AwsLc, &client, &server_config) else {
            panic!("the FIPS server negotiated {what}")
        };
        assert!(error.starts_with("server: ") && error.contains(expected), "{what}: {error}");
    }
}

/// A TLS 1.3 context of the FIPS module with only these groups and suites, set by hand (the
/// adapter's own contexts refuse what is not approved).
fn only(groups: &str, suites: &str) -> SslContextBuilder {
    let mut ctx = SslContextBuilder::new(SslMethod::tls()).expect("creating the context");
    shared::pin_version(&mut ctx, Version::Tls13).expect("pinning TLS 1.3");
    ctx.set_groups_list(groups).expect("setting the groups");
    let suites = CString::new(suites).expect("no NUL in the list");
    // SAFETY: the context is live and the string NUL-terminated; AWS-LC copies what it parses.
    shared::check(
        unsafe { openssl_sys::SSL_CTX_set_ciphersuites(ctx.as_ptr(), suites.as_ptr()) },
        "setting the suites",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    ctx
}
