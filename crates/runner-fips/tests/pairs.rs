//! The runner's two stacks on AWS-LC's FIPS module, rustls (`rustls-aws-lc-rs-fips`) and
//! AWS-LC's libssl (`aws-lc-fips`), with each other both ways through the real driver, and that
//! they run on the one module. No rustls here offers what is not approved (its `fips` feature
//! takes X25519 and ChaCha20-Poly1305 out of the standard provider too): the adapter's own tests
//! hold aws-lc-fips against AWS-LC contexts set by hand to offer them.

use std::time::Duration;

use tlsbench_harness::driver::{self, SampleSpec};
use tlsbench_harness::testing::{check_every_supported_scenario as check_all_scenarios, pki, scenario};
use tlsbench_harness::{Group, KeyType, Measure, Scenario, Stack, Suite};
use tlsbench_stack_aws_lc::AwsLc;
use tlsbench_stack_rustls::Rustls;

#[test]
fn aws_lc_fips_and_rustls_fips_pass_every_approved_scenario_both_ways() {
    // Neither can switch EMS off; both have the approved groups and suites, ML-KEM included,
    // and every key type. With its defaults, AWS-LC takes no Ed25519 certificate.
    let approved = |s: &Scenario| match s.pins() {
        Some((group, suite)) => group != Group::X25519 && suite != Suite::Chacha20Poly1305,
        None => s.key != KeyType::Ed25519,
    };
    let expected = Scenario::all()
        .iter()
        .filter(|s| s.ems && (Measure::Time.applies_to(s.kind) && s.kind.context_side().is_none()) && approved(s))
        .count();
    let rustls = Rustls::aws_lc_rs_fips();
    assert_eq!(check_all_scenarios(&rustls, &AwsLc), expected);
    assert_eq!(check_all_scenarios(&AwsLc, &rustls), expected);
}

/// Both stacks report the one FIPS module, in FIPS mode, at the same release: one C build.
#[test]
fn both_stacks_run_on_the_one_fips_module_in_fips_mode() {
    let (ours, rustls) = (AwsLc.backend(), Rustls::aws_lc_rs_fips().backend());
    assert_eq!((ours.name.as_str(), ours.version.as_str()), (rustls.name.as_str(), rustls.version.as_str()));
    assert_eq!(ours.name, "AWS-LC FIPS", "{ours}");
    for backend in [&ours, &rustls] {
        assert!(backend.detail.as_deref().is_some_and(|d| d.ends_with(", FIPS mode on")), "{backend}");
    }
    assert!(AwsLc.library().contains(" (aws-lc-fips-sys 0."), "{}", AwsLc.library());
}

/// rustls's TLS 1.2 server sends a new ticket in every handshake it resumes, which AWS-LC's
/// client takes as a new session: every connection resumes, each checked by the gate.
#[test]
fn the_aws_lc_fips_client_resumes_again_and_again_from_a_server_that_renews_its_tls12_ticket() {
    let spec = SampleSpec::timed(Duration::ZERO, Duration::from_millis(20));
    for name in [
        "handshake-resume-ticket_1.2_secp256r1_ecdsa-p256_aes-128-gcm",
        "handshake-resume-ticket_1.2_secp384r1_rsa-2048_aes-256-gcm_mtls",
    ] {
        let report = driver::sample(&AwsLc, &Rustls::aws_lc_rs_fips(), &scenario(name), pki(), &spec)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(report.iterations > 2, "{name}: {} handshakes", report.iterations);
    }
}
