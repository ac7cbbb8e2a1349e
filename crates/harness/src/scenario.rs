//! Scenarios: one workload with all its parameters, and its canonical name
//! (`handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Declares a parameter enum whose variants have one canonical name each.
macro_rules! parameter {
    ($(#[$doc:meta])* $name:ident, $what:literal { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(into = "&'static str", try_from = "String")]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                Self::ALL.iter().copied().find(|v| v.name() == s).ok_or_else(|| {
                    let valid: Vec<_> = Self::ALL.iter().map(|v| v.name()).collect();
                    format!("unknown {} `{s}` (valid: {})", $what, valid.join(", "))
                })
            }
        }

        impl From<$name> for &'static str {
            fn from(v: $name) -> Self { v.name() }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> { s.parse() }
        }
    };
}

parameter!(
    /// What the scenario measures.
    Kind, "scenario kind" {
        HandshakeFull => "handshake-full",
        Transfer => "transfer",
    }
);

parameter!(
    /// Protocol version.
    Version, "protocol version" {
        Tls12 => "1.2",
        Tls13 => "1.3",
    }
);

parameter!(
    /// Key-exchange group.
    Group, "key-exchange group" {
        X25519 => "x25519",
        Secp256r1 => "secp256r1",
    }
);

parameter!(
    /// The server's key (and so its certificate chain's) type.
    KeyType, "key type" {
        Rsa2048 => "rsa-2048",
        EcdsaP256 => "ecdsa-p256",
    }
);

parameter!(
    /// The bulk cipher of the cipher suite. With TLS 1.2 the suite is ECDHE with the key type's
    /// signature algorithm and this cipher (e.g. ECDHE-ECDSA-AES128-GCM-SHA256).
    Suite, "cipher suite" {
        Aes128Gcm => "aes-128-gcm",
        Aes256Gcm => "aes-256-gcm",
        Chacha20Poly1305 => "chacha20-poly1305",
    }
);

/// One workload with all its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scenario {
    pub kind: Kind,
    pub version: Version,
    pub group: Group,
    pub key: KeyType,
    pub suite: Suite,
}

impl Scenario {
    /// Every scenario tlsbench knows, in a stable order.
    pub fn all() -> Vec<Scenario> {
        let mut all = Vec::new();
        for &version in Version::ALL {
            for &group in Group::ALL {
                for &key in KeyType::ALL {
                    for &suite in Suite::ALL {
                        all.push(Scenario { kind: Kind::HandshakeFull, version, group, key, suite });
                    }
                }
            }
        }
        // Bulk throughput depends on the cipher, not on the key exchange or the certificate.
        for &version in Version::ALL {
            for &suite in Suite::ALL {
                let (group, key) = (Group::X25519, KeyType::EcdsaP256);
                all.push(Scenario { kind: Kind::Transfer, version, group, key, suite });
            }
        }
        all
    }

    /// The groups a client offers, the scenario's first. In TLS 1.2 the client's groups also
    /// bound the curve of the server's ECDSA key (RFC 8422, and OpenSSL's server enforces it),
    /// so with an ECDSA key on another curve the client lists that curve too; the server offers
    /// only the scenario's group, so the key exchange still uses it (and the gate checks it).
    pub fn client_groups(&self) -> &'static [Group] {
        match (self.version, self.key, self.group) {
            (Version::Tls12, KeyType::EcdsaP256, Group::X25519) => &[Group::X25519, Group::Secp256r1],
            (_, _, Group::X25519) => &[Group::X25519],
            (_, _, Group::Secp256r1) => &[Group::Secp256r1],
        }
    }

    /// The canonical name: `kind_version_group_key_suite`.
    pub fn name(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}_{}_{}_{}", self.kind, self.version, self.group, self.key, self.suite)
    }
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        let parts: Vec<&str> = name.split('_').collect();
        let [kind, version, group, key, suite] = parts[..] else {
            return Err(format!(
                "scenario `{name}` is not of the form kind_version_group_key_suite \
                 (e.g. handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm)"
            ));
        };
        Ok(Scenario {
            kind: kind.parse()?,
            version: version.parse()?,
            group: group.parse()?,
            key: key.parse()?,
            suite: suite.parse()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for scenario in Scenario::all() {
            assert_eq!(scenario.name().parse::<Scenario>(), Ok(scenario));
        }
    }

    #[test]
    fn the_matrix_has_the_issue_s_scenarios() {
        let names: Vec<String> = Scenario::all().iter().map(Scenario::name).collect();
        assert_eq!(names.len(), 2 * 2 * 2 * 3 + 2 * 3);
        assert!(names.contains(&"handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305".into()));
        assert!(names.contains(&"transfer_1.3_x25519_ecdsa-p256_aes-256-gcm".into()));
    }

    #[test]
    fn a_bad_name_says_what_is_valid() {
        let err = "handshake-full_1.4_x25519_ecdsa-p256_aes-128-gcm".parse::<Scenario>();
        assert_eq!(err, Err("unknown protocol version `1.4` (valid: 1.2, 1.3)".into()));
        let err = "handshake".parse::<Scenario>().unwrap_err();
        assert!(err.contains("kind_version_group_key_suite"), "{err}");
    }
}
