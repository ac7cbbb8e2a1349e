//! Correctness gates: after each handshake and each transfer, check that what happened is what
//! the scenario asked. A gate that fails fails the cell; it never turns into a number.

use crate::{Error, Negotiated, Scenario, Side};

/// Checks one side's view of a completed handshake against the scenario.
pub fn check_handshake(side: Side, scenario: &Scenario, got: &Negotiated, expect_resumed: bool) -> Result<(), Error> {
    let mismatch = |what: &str, got: &dyn std::fmt::Display, want: &dyn std::fmt::Display| {
        Err(Error::Gate(format!("{side} negotiated {what} {got}, the scenario asks for {want}")))
    };
    if got.version != scenario.version {
        return mismatch("TLS", &got.version, &scenario.version);
    }
    if got.suite != scenario.suite {
        return mismatch("cipher suite", &got.suite, &scenario.suite);
    }
    if let Some(group) = got.group.filter(|g| *g != scenario.group) {
        return mismatch("group", &group, &scenario.group);
    }
    match (got.resumed, expect_resumed) {
        (true, false) => Err(Error::Gate(format!("{side} resumed a session where a full handshake was asked"))),
        (false, true) => Err(Error::Gate(format!("{side} did a full handshake where resumption was asked"))),
        _ => Ok(()),
    }
}

/// What one side of a transfer saw: byte count and digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    pub bytes: u64,
    pub digest: u128,
}

/// Checks that the receiver got exactly what the sender sent.
pub fn check_transfer(sent: Tally, received: Tally) -> Result<(), Error> {
    if sent.bytes != received.bytes {
        return Err(Error::Gate(format!("sent {} bytes, received {}", sent.bytes, received.bytes)));
    }
    if sent.digest != received.digest {
        return Err(Error::Gate(format!("received {} bytes whose digest differs from the sent data's", received.bytes)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Group, Suite, Version};

    fn scenario() -> Scenario {
        "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap()
    }

    fn asked() -> Negotiated {
        Negotiated { version: Version::Tls13, suite: Suite::Aes128Gcm, group: Some(Group::X25519), resumed: false }
    }

    #[test]
    fn what_was_asked_passes() {
        check_handshake(Side::Client, &scenario(), &asked(), false).unwrap();
        check_handshake(Side::Server, &scenario(), &Negotiated { group: None, ..asked() }, false).unwrap();
    }

    #[test]
    fn each_mismatch_is_named() {
        let cases = [
            (Negotiated { version: Version::Tls12, ..asked() }, "client negotiated TLS 1.2, the scenario asks for 1.3"),
            (Negotiated { suite: Suite::Chacha20Poly1305, ..asked() }, "client negotiated cipher suite chacha20-poly1305, the scenario asks for aes-128-gcm"),
            (Negotiated { group: Some(Group::Secp256r1), ..asked() }, "client negotiated group secp256r1, the scenario asks for x25519"),
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
    fn transfer_checks_length_and_digest() {
        let sent = Tally { bytes: 10, digest: 7 };
        check_transfer(sent, sent).unwrap();
        let short = check_transfer(sent, Tally { bytes: 9, digest: 7 }).unwrap_err();
        assert_eq!(short.to_string(), "gate failed: sent 10 bytes, received 9");
        let corrupt = check_transfer(sent, Tally { bytes: 10, digest: 8 }).unwrap_err();
        assert!(corrupt.to_string().contains("digest differs"), "{corrupt}");
    }
}
