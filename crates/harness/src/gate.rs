//! Correctness gates: after each handshake and each transfer, check that what happened is what
//! the scenario asked. A gate that fails fails the cell; it never turns into a number.

use std::cell::Cell;

use crate::protocol::SideNegotiated;
use crate::{ClientAuth, Error, Negotiated, Scenario, Side, Version};

/// The gates of a sample's handshakes, keeping what the last one each side passed negotiated:
/// the sample reports it (with the libraries' defaults it is the only place the suite and group
/// are named).
#[derive(Default)]
pub struct Gates(Cell<[Option<Negotiated>; 2]>);

impl Gates {
    /// [`check_handshake`], keeping `got` when it passes.
    pub fn check(&self, side: Side, scenario: &Scenario, got: &Negotiated, expect_resumed: bool) -> Result<(), Error> {
        check_handshake(side, scenario, got, expect_resumed)?;
        let mut seen = self.0.get();
        seen[side as usize] = Some(*got);
        self.0.set(seen);
        Ok(())
    }

    /// What each side's last passed handshake negotiated, client first.
    pub fn negotiated(&self) -> Vec<SideNegotiated> {
        let sides = [Side::Client, Side::Server].into_iter().zip(self.0.get());
        sides.filter_map(|(side, seen)| Some(SideNegotiated { side, negotiated: seen?.to_string() })).collect()
    }
}

/// Checks one side's view of a completed handshake against the scenario.
pub fn check_handshake(side: Side, scenario: &Scenario, got: &Negotiated, expect_resumed: bool) -> Result<(), Error> {
    let mismatch = |what: &str, got: &dyn std::fmt::Display, want: &dyn std::fmt::Display| {
        Err(Error::Gate(format!("{side} negotiated {what} {got}, the scenario asks for {want}")))
    };
    if got.version != scenario.version {
        return mismatch("TLS", &got.version, &scenario.version);
    }
    // With the libraries' defaults, the suite and group are what they chose: reported, not checked.
    if let Some((want_group, want_suite)) = scenario.pins() {
        if got.suite != want_suite {
            return mismatch("cipher suite", &got.suite, &want_suite);
        }
        if let Some(group) = got.group.filter(|g| *g != want_group) {
            return mismatch("group", &group, &want_group);
        }
    }
    match (got.resumed, expect_resumed) {
        (true, false) => return Err(Error::Gate(format!("{side} resumed a session where a full handshake was asked"))),
        (false, true) => return Err(Error::Gate(format!("{side} did a full handshake where resumption was asked"))),
        _ => {}
    }
    if let (Version::Tls12, Some(ems)) = (scenario.version, got.ems) {
        if ems != scenario.ems {
            let on_off = |on: bool| if on { "on" } else { "off" };
            return mismatch("extended master secret", &on_off(ems), &on_off(scenario.ems));
        }
    }
    if side == Side::Server {
        let required = scenario.client_auth == ClientAuth::Required;
        match got.client_cert_verified {
            None => return Err(Error::Gate("server does not report whether it verified a client certificate".into())),
            Some(false) if required => {
                return Err(Error::Gate("server did not verify a client certificate, the scenario requires one".into()))
            }
            Some(true) if !required => {
                return Err(Error::Gate("server verified a client certificate, the scenario's client has none".into()))
            }
            _ => {}
        }
    }
    Ok(())
}

/// What one side of a transfer saw: byte count and digest. In one process the digest is xxh3's
/// 128 bits (fast, outside the clocks); between runner processes it is SHA-256, which every
/// language's standard library has (docs/runner-protocol.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally<D = u128> {
    pub bytes: u64,
    pub digest: D,
}

/// Checks that the receiver got exactly what the sender sent.
pub fn check_transfer<D: PartialEq>(sent: Tally<D>, received: Tally<D>) -> Result<(), Error> {
    if sent.bytes != received.bytes {
        return Err(Error::Gate(format!("sent {} bytes, received {}", sent.bytes, received.bytes)));
    }
    if sent.digest != received.digest {
        return Err(Error::Gate(format!(
            "received {} bytes whose digest differs from the sent data's",
            received.bytes
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Group, Suite};

    fn scenario() -> Scenario {
        "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap()
    }

    fn asked() -> Negotiated {
        Negotiated {
            version: Version::Tls13,
            suite: Suite::Aes128Gcm,
            group: Some(Group::X25519),
            resumed: false,
            ems: None,
            client_cert_verified: Some(false),
            ticket_received: None,
        }
    }

    #[test]
    fn what_was_asked_passes() {
        check_handshake(Side::Client, &scenario(), &asked(), false).unwrap();
        check_handshake(Side::Server, &scenario(), &Negotiated { group: None, ..asked() }, false).unwrap();
        check_handshake(Side::Client, &scenario(), &Negotiated { client_cert_verified: None, ..asked() }, false)
            .unwrap();
    }

    #[test]
    fn client_certificates_and_ems_are_checked() {
        let mtls: Scenario = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls".parse().unwrap();
        let verified = Negotiated { client_cert_verified: Some(true), ..asked() };
        check_handshake(Side::Server, &mtls, &verified, false).unwrap();
        let err = check_handshake(Side::Server, &mtls, &asked(), false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "gate failed: server did not verify a client certificate, the scenario requires one"
        );
        let err = check_handshake(Side::Server, &scenario(), &verified, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "gate failed: server verified a client certificate, the scenario's client has none"
        );
        let err = check_handshake(Side::Server, &mtls, &Negotiated { client_cert_verified: None, ..asked() }, false)
            .unwrap_err();
        assert_eq!(err.to_string(), "gate failed: server does not report whether it verified a client certificate");

        let no_ems: Scenario = "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems".parse().unwrap();
        let tls12 = Negotiated { version: Version::Tls12, ..asked() };
        check_handshake(Side::Client, &no_ems, &Negotiated { ems: Some(false), ..tls12 }, false).unwrap();
        let err = check_handshake(Side::Client, &no_ems, &Negotiated { ems: Some(true), ..tls12 }, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "gate failed: client negotiated extended master secret on, the scenario asks for off"
        );
    }

    #[test]
    fn each_mismatch_is_named() {
        let cases = [
            (Negotiated { version: Version::Tls12, ..asked() }, "client negotiated TLS 1.2, the scenario asks for 1.3"),
            (
                Negotiated { suite: Suite::Chacha20Poly1305, ..asked() },
                "client negotiated cipher suite chacha20-poly1305, the scenario asks for aes-128-gcm",
            ),
            (
                Negotiated { group: Some(Group::Secp256r1), ..asked() },
                "client negotiated group secp256r1, the scenario asks for x25519",
            ),
            (Negotiated { resumed: true, ..asked() }, "client resumed a session where a full handshake was asked"),
        ];
        for (got, message) in cases {
            let err = check_handshake(Side::Client, &scenario(), &got, false).unwrap_err();
            assert_eq!(err.to_string(), format!("gate failed: {message}"));
        }
        let err = check_handshake(Side::Server, &scenario(), &asked(), true).unwrap_err();
        assert_eq!(err.to_string(), "gate failed: server did a full handshake where resumption was asked");
    }

    #[test]
    fn with_the_libraries_defaults_the_suite_and_group_are_reported_not_required() {
        let defaults: Scenario = "handshake-full_1.3_default_ecdsa-p256_default".parse().unwrap();
        let chosen = Negotiated {
            suite: Suite::Aes256Gcm,
            group: Some(Group::Secp256r1),
            ticket_received: Some(true),
            ..asked()
        };
        check_handshake(Side::Client, &defaults, &chosen, false).unwrap();
        assert_eq!(chosen.to_string(), "1.3 aes-256-gcm secp256r1, ticket received");
        // The version, resumption and client auth are still the scenario's.
        let err = check_handshake(Side::Client, &defaults, &Negotiated { version: Version::Tls12, ..chosen }, false)
            .unwrap_err();
        assert_eq!(err.to_string(), "gate failed: client negotiated TLS 1.2, the scenario asks for 1.3");
        let err = check_handshake(Side::Client, &defaults, &Negotiated { resumed: true, ..chosen }, false).unwrap_err();
        assert_eq!(err.to_string(), "gate failed: client resumed a session where a full handshake was asked");
        let err =
            check_handshake(Side::Server, &defaults, &Negotiated { client_cert_verified: Some(true), ..chosen }, false)
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "gate failed: server verified a client certificate, the scenario's client has none"
        );
    }

    #[test]
    fn transfer_checks_length_and_digest() {
        let sent = Tally { bytes: 10, digest: 7 };
        check_transfer(sent, sent).unwrap();
        let short = check_transfer(sent, Tally { bytes: 9, digest: 7 }).unwrap_err();
        assert_eq!(short.to_string(), "gate failed: sent 10 bytes, received 9");
        let corrupt = check_transfer(sent, Tally { bytes: 10, digest: 8 }).unwrap_err();
        assert!(corrupt.to_string().contains("digest differs"), "{corrupt}");
    }
}
