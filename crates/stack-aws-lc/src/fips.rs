//! The stack `aws-lc-fips` (feature `fips`): AWS-LC's libssl on AWS-LC's FIPS module, with the
//! policy of `rustls-aws-lc-rs-fips`: FIPS-approved algorithms only, offered and accepted, and
//! AWS-LC in FIPS mode, or the config fails. The module itself would also negotiate X25519 and
//! ChaCha20-Poly1305, which are not approved: every list is set here, none left to AWS-LC.

use std::ffi::CString;

use openssl::ssl::SslContextBuilder;
use tlsbench_harness::{Capabilities, Exclusion, Group, LibError, Scenario, Suite};

use super::shared::check;
use super::ID;

/// The approved groups tlsbench knows, in AWS-LC's default order (the hybrid first).
const GROUPS: &[Group] = &[Group::X25519Mlkem768, Group::Secp256r1, Group::Secp384r1];

/// The approved bulk ciphers: AES-GCM.
const SUITES: &[Suite] = &[Suite::Aes128Gcm, Suite::Aes256Gcm];

/// With the libraries' defaults: the approved suites of each version in AWS-LC's default order.
const TLS13_SUITES: &str = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384";
const TLS12_SUITES: &str = concat!(
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:",
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384",
);

/// The stack's capabilities less what is not approved, each with that reason.
pub(crate) fn approved_capabilities(mut capabilities: Capabilities) -> Capabilities {
    capabilities.exclusions.extend([
        Exclusion::new(
            "*_x25519_*",
            "aws-lc-fips: FIPS-approved groups only, and x25519 alone is not (secp256r1, secp384r1 and \
             x25519mlkem768 are)",
        ),
        Exclusion::new(
            "*_chacha20-poly1305*",
            "aws-lc-fips: FIPS-approved cipher suites only, and ChaCha20-Poly1305 is not (AES-GCM is)",
        ),
    ]);
    let groups = Group::ALL.iter().copied().filter(|g| GROUPS.contains(g)).collect();
    Capabilities { groups, suites: SUITES.to_vec(), ..capabilities }
}

/// Holds a context (before the adapter pins the scenario's group and suite) to the approved
/// algorithms: AWS-LC must be in FIPS mode and a pinned group and suite approved, or the config
/// fails; with the libraries' defaults, AWS-LC's own suites, groups and signature algorithms to
/// verify less those not approved (ChaCha20-Poly1305, X25519, SHA-1) and the hybrids tlsbench
/// does not know (P-256 and P-384 with ML-KEM); and on every side, approved signing algorithms
/// only.
pub(crate) fn approved_only(ctx: &mut SslContextBuilder, scenario: &Scenario) -> Result<(), LibError> {
    // FIPS mode: the FIPS module, its power-on self-tests passed (`FIPS_mode()`).
    if !openssl::fips::enabled() {
        return Err(LibError::new(format!("{ID}: AWS-LC is not in FIPS mode (FIPS_mode() is 0)")));
    }
    match scenario.pins() {
        Some((group, _)) if !GROUPS.contains(&group) => {
            return Err(LibError::new(format!("{ID}: group {group} is not FIPS-approved")))
        }
        Some((_, suite)) if !SUITES.contains(&suite) => {
            return Err(LibError::new(format!("{ID}: cipher suite {suite} is not FIPS-approved")))
        }
        Some(_) => {}
        None => {
            ctx.set_cipher_list(TLS12_SUITES).map_err(LibError::context("setting the TLS 1.2 cipher suites"))?;
            let tls13 = CString::new(TLS13_SUITES).expect("no NUL in the list");
            // SAFETY: the context is live and the string NUL-terminated; AWS-LC copies what it parses.
            check(
                unsafe { openssl_sys::SSL_CTX_set_ciphersuites(ctx.as_ptr(), tls13.as_ptr()) },
                "setting the TLS 1.3 cipher suites",
            )?;
            let groups = GROUPS.iter().map(|g| g.openssl_name()).collect::<Vec<_>>().join(":");
            ctx.set_groups_list(&groups).map_err(LibError::context(&format!("setting the groups {groups}")))?;
            // AWS-LC's default list to verify less SHA-1: the adapter's pinned list without Ed25519.
            let ed25519 = openssl_sys::SSL_SIGN_ED25519 as u16;
            let verify: Vec<u16> = super::VERIFY_ALGORITHMS.iter().copied().filter(|&a| a != ed25519).collect();
            // SAFETY: the context is live, and the pointer and length describe the list, which AWS-LC copies.
            check(
                unsafe { openssl_sys::SSL_CTX_set_verify_algorithm_prefs(ctx.as_ptr(), verify.as_ptr(), verify.len()) },
                "setting the signature algorithms to verify",
            )?;
        }
    }
    // What AWS-LC signs with: its default list less SHA-1 (not approved for signatures), which it
    // would use for a peer that offers nothing else; the adapter's pinned list is that, with
    // Ed25519, which only an Ed25519 key signs with, so its place in the list changes nothing.
    let signing = super::VERIFY_ALGORITHMS;
    // SAFETY: as above.
    check(
        unsafe { openssl_sys::SSL_CTX_set_signing_algorithm_prefs(ctx.as_ptr(), signing.as_ptr(), signing.len()) },
        "setting the signature algorithms to sign with",
    )
}
