//! Scenarios: one workload with all its parameters, and its canonical name
//! (`handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{LibError, Side};

/// Declares a parameter enum whose variants have one canonical name each.
macro_rules! parameter {
    ($(#[$doc:meta])* $name:ident, $what:literal { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(into = "&'static str", try_from = "String")]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

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
        /// TLS 1.2 session-ID resumption from the server's session cache.
        HandshakeResumeId => "handshake-resume-id",
        /// Resumption from a ticket: TLS 1.2 stateless tickets, TLS 1.3 PSK with (EC)DHE.
        HandshakeResumeTicket => "handshake-resume-ticket",
        Transfer => "transfer",
        /// One full handshake, one byte each way, close_notify each way: the IO calls and
        /// records of a whole short connection (measure `io`).
        IoProfile => "io-profile",
        /// N client/server pairs stepped through the handshake in lockstep and held open: the
        /// memory each connection costs (measures `heap` and `rss`).
        Memory100 => "memory-100",
        Memory1000 => "memory-1000",
        Memory10000 => "memory-10000",
        /// One server context built (chain, key, client-auth CA) and dropped (docs/scenarios.md).
        ContextServer => "context-server",
        /// One client context trusting the one test CA built and dropped.
        ContextClient => "context-client",
        /// One client context with the system's trust store built and dropped.
        ContextClientSystem => "context-client-system",
    }
);

parameter!(
    /// What a cell records (docs/measures.md).
    Measure, "measure" {
        /// Wall time inside each side's library calls.
        Time => "time",
        /// Instructions executed inside each side's library calls, counted by valgrind's
        /// callgrind: the same every time, whatever else the machine does.
        Instructions => "instructions",
        /// Synchronization inside each side's library calls, counted under callgrind as
        /// instructions are: lock calls by kind, once checks, atomic read-modify-write
        /// instructions and futex system calls, in a process that has started a thread.
        Sync => "sync",
        /// Every transport call each side makes, and the records it writes.
        Io => "io",
        /// What each side allocates and holds, C libraries included.
        Heap => "heap",
        /// The process's peak resident memory (one process per side).
        Rss => "rss",
        /// Over a real loopback TCP socket, a server and a load generator each in its own
        /// runner: connections per second, latency, CPU and syscalls per connection.
        Net => "net",
    }
);

parameter!(
    /// What the threads of a sample of several (`sample --threads N`) share: how a server's
    /// threads use its context is where multi-threaded servers contend (docs/axes.md#threads).
    Contexts, "contexts" {
        /// Each thread builds its own client and server configs (rustls-bench's method).
        Own => "own",
        /// One server config for all threads' servers and one client config for all their
        /// clients, built once per sample, as a multi-threaded server shares one context (its
        /// session cache, its ticket keys) and a client its own (its saved sessions).
        Shared => "shared",
    }
);

impl Measure {
    /// The scenario kinds this measure applies to.
    pub fn kinds(self) -> &'static [Kind] {
        const HANDSHAKES: [Kind; 3] = [Kind::HandshakeFull, Kind::HandshakeResumeId, Kind::HandshakeResumeTicket];
        const CONTEXTS: [Kind; 3] = Kind::CONTEXTS;
        match self {
            Measure::Time | Measure::Instructions => {
                &[HANDSHAKES[0], HANDSHAKES[1], HANDSHAKES[2], Kind::Transfer, CONTEXTS[0], CONTEXTS[1], CONTEXTS[2]]
            }
            Measure::Sync => &[HANDSHAKES[0], HANDSHAKES[1], HANDSHAKES[2], Kind::Transfer],
            Measure::Io => &[HANDSHAKES[0], HANDSHAKES[1], HANDSHAKES[2], Kind::IoProfile],
            Measure::Heap => &[
                HANDSHAKES[0],
                HANDSHAKES[1],
                HANDSHAKES[2],
                Kind::Memory100,
                Kind::Memory1000,
                Kind::Memory10000,
                CONTEXTS[0],
                CONTEXTS[1],
                CONTEXTS[2],
            ],
            Measure::Rss => {
                &[Kind::Memory100, Kind::Memory1000, Kind::Memory10000, CONTEXTS[0], CONTEXTS[1], CONTEXTS[2]]
            }
            Measure::Net => &HANDSHAKES,
        }
    }

    pub fn applies_to(self, kind: Kind) -> bool {
        self.kinds().contains(&kind)
    }
}

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
        Secp384r1 => "secp384r1",
        /// The hybrid of X25519 and ML-KEM-768 (TLS 1.3 only).
        X25519Mlkem768 => "x25519mlkem768",
    }
);

parameter!(
    /// The key type of the server's certificate chain, and of the client's when it has one.
    KeyType, "key type" {
        Rsa2048 => "rsa-2048",
        Rsa3072 => "rsa-3072",
        Rsa4096 => "rsa-4096",
        EcdsaP256 => "ecdsa-p256",
        EcdsaP384 => "ecdsa-p384",
        Ed25519 => "ed25519",
    }
);

parameter!(
    /// The bulk cipher of the cipher suite. With TLS 1.2 the suite is ECDHE with the key type's
    /// signature algorithm (RSA, or ECDSA for ECDSA and Ed25519 keys) and this cipher.
    Suite, "cipher suite" {
        Aes128Gcm => "aes-128-gcm",
        Aes256Gcm => "aes-256-gcm",
        Chacha20Poly1305 => "chacha20-poly1305",
    }
);

parameter!(
    /// Whether the server asks for a client certificate, and whether the client has one.
    ClientAuth, "client auth" {
        /// The server does not ask.
        None => "none",
        /// The client presents a certificate and the server verifies it against the CA.
        Required => "mtls",
        /// The server asks, the client has none, and the handshake completes.
        Requested => "cert-requested",
    }
);

impl KeyType {
    pub fn is_rsa(self) -> bool {
        matches!(self, KeyType::Rsa2048 | KeyType::Rsa3072 | KeyType::Rsa4096)
    }

    /// The curve of an ECDSA key, as a group.
    pub fn ecdsa_curve(self) -> Option<Group> {
        match self {
            KeyType::EcdsaP256 => Some(Group::Secp256r1),
            KeyType::EcdsaP384 => Some(Group::Secp384r1),
            _ => None,
        }
    }
}

impl Suite {
    /// OpenSSL's name for the suite, which BoringSSL, LibreTLS's libtls and s2n-tls report too:
    /// RFC 8446's name in TLS 1.3; in TLS 1.2, ECDHE with the key's signature algorithm (RSA, or
    /// ECDSA for ECDSA and Ed25519 keys), so the name depends on the key type.
    pub fn openssl_name(self, version: Version, key: KeyType) -> &'static str {
        match (version, key.is_rsa(), self) {
            (Version::Tls13, _, Suite::Aes128Gcm) => "TLS_AES_128_GCM_SHA256",
            (Version::Tls13, _, Suite::Aes256Gcm) => "TLS_AES_256_GCM_SHA384",
            (Version::Tls13, _, Suite::Chacha20Poly1305) => "TLS_CHACHA20_POLY1305_SHA256",
            (Version::Tls12, true, Suite::Aes128Gcm) => "ECDHE-RSA-AES128-GCM-SHA256",
            (Version::Tls12, true, Suite::Aes256Gcm) => "ECDHE-RSA-AES256-GCM-SHA384",
            (Version::Tls12, true, Suite::Chacha20Poly1305) => "ECDHE-RSA-CHACHA20-POLY1305",
            (Version::Tls12, false, Suite::Aes128Gcm) => "ECDHE-ECDSA-AES128-GCM-SHA256",
            (Version::Tls12, false, Suite::Aes256Gcm) => "ECDHE-ECDSA-AES256-GCM-SHA384",
            (Version::Tls12, false, Suite::Chacha20Poly1305) => "ECDHE-ECDSA-CHACHA20-POLY1305",
        }
    }

    /// The suite a library reports as `negotiated`, in its own terms: the one that `name_of`
    /// gives as `negotiated` for some key type (a TLS 1.2 suite's name depends on the key's
    /// signature algorithm, so every key type is tried).
    pub fn negotiated<N: PartialEq + fmt::Debug>(
        negotiated: N,
        name_of: impl Fn(KeyType, Suite) -> N,
    ) -> Result<Suite, LibError> {
        Suite::ALL
            .iter()
            .copied()
            .find(|&suite| KeyType::ALL.iter().any(|&key| name_of(key, suite) == negotiated))
            .ok_or_else(|| LibError(format!("negotiated an unexpected cipher suite: {negotiated:?}")))
    }
}

impl Group {
    /// OpenSSL's name for the group in a groups list, which BoringSSL and libtls take too.
    pub fn openssl_name(self) -> &'static str {
        match self {
            Group::X25519 => "X25519",
            Group::Secp256r1 => "P-256",
            Group::Secp384r1 => "P-384",
            Group::X25519Mlkem768 => "X25519MLKEM768",
        }
    }
}

impl Kind {
    /// The kinds that build a context and measure nothing else (docs/scenarios.md#contexts).
    pub const CONTEXTS: [Kind; 3] = [Kind::ContextServer, Kind::ContextClient, Kind::ContextClientSystem];

    /// The side whose context a context kind builds; None for every other kind.
    pub fn context_side(self) -> Option<Side> {
        match self {
            Kind::ContextServer => Some(Side::Server),
            Kind::ContextClient | Kind::ContextClientSystem => Some(Side::Client),
            _ => None,
        }
    }

    pub fn is_resumption(self) -> bool {
        matches!(self, Kind::HandshakeResumeId | Kind::HandshakeResumeTicket)
    }

    /// How many connections a memory-N scenario holds open at once.
    pub fn connections(self) -> Option<usize> {
        match self {
            Kind::Memory100 => Some(100),
            Kind::Memory1000 => Some(1_000),
            Kind::Memory10000 => Some(10_000),
            _ => None,
        }
    }
}

/// How both sides' libraries are configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Config {
    /// Like compared with like: each side offers and accepts exactly this group and cipher
    /// suite, and resumption is on only in the way the scenario's kind resumes (no session
    /// cache, no tickets otherwise).
    Pinned { group: Group, suite: Suite },
    /// Each library as its maintainers ship it: its own cipher suite and group preferences,
    /// session tickets, session cache and buffering. Only the protocol version, the key type and
    /// client auth are the scenario's, and a client resumes no session (the kinds that resume
    /// are pinned only). The gates report what was negotiated instead of requiring it.
    Defaults,
}

/// How a scenario's name says [`Config::Defaults`], in place of the group and the suite.
pub const DEFAULT: &str = "default";

/// One workload with all its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scenario {
    pub kind: Kind,
    pub version: Version,
    pub config: Config,
    pub key: KeyType,
    pub client_auth: ClientAuth,
    /// TLS 1.2 extended master secret (RFC 7627); always on in TLS 1.3, where it is built in.
    pub ems: bool,
}

impl Scenario {
    /// A pinned scenario with no client auth and EMS on, if the parameters fit together.
    pub fn new(kind: Kind, version: Version, group: Group, key: KeyType, suite: Suite) -> Result<Self, String> {
        let config = Config::Pinned { group, suite };
        Scenario { kind, version, config, key, client_auth: ClientAuth::None, ems: true }.validated()
    }

    /// The same workload with each library's own defaults, if that exists (see [`Config::Defaults`]).
    pub fn with_defaults(self) -> Result<Self, String> {
        Scenario { config: Config::Defaults, ..self }.validated()
    }

    /// The same workload pinned to `group` and `suite`, if the parameters fit together.
    pub fn pinned_to(self, group: Group, suite: Suite) -> Result<Self, String> {
        Scenario { config: Config::Pinned { group, suite }, ..self }.validated()
    }

    /// The pinned group and suite; None with the libraries' defaults.
    pub fn pins(&self) -> Option<(Group, Suite)> {
        match self.config {
            Config::Pinned { group, suite } => Some((group, suite)),
            Config::Defaults => None,
        }
    }

    /// The pinned group; None with the libraries' defaults.
    pub fn group(&self) -> Option<Group> {
        self.pins().map(|(group, _)| group)
    }

    /// The pinned cipher suite; None with the libraries' defaults.
    pub fn suite(&self) -> Option<Suite> {
        self.pins().map(|(_, suite)| suite)
    }

    pub fn is_pinned(&self) -> bool {
        self.pins().is_some()
    }

    /// Every scenario tlsbench knows, in a stable order: the whole matrix that globs select from.
    pub fn all() -> Vec<Scenario> {
        let mut all = Vec::new();
        for &kind in &[Kind::HandshakeFull, Kind::HandshakeResumeId, Kind::HandshakeResumeTicket] {
            for &version in Version::ALL {
                for &group in Group::ALL {
                    for &key in KeyType::ALL {
                        for &suite in Suite::ALL {
                            for &client_auth in ClientAuth::ALL {
                                for ems in [true, false] {
                                    let config = Config::Pinned { group, suite };
                                    let scenario = Scenario { kind, version, config, key, client_auth, ems };
                                    all.extend(scenario.validated());
                                }
                            }
                        }
                    }
                }
            }
        }
        // Bulk throughput depends on the cipher, not on the key exchange or the certificate.
        for &version in Version::ALL {
            for &suite in Suite::ALL {
                all.extend(Scenario::new(Kind::Transfer, version, Group::X25519, KeyType::EcdsaP256, suite));
            }
        }
        // Whole connections (IO), with each kind of client auth; connections held open (memory).
        for &kind in &[Kind::IoProfile, Kind::Memory100, Kind::Memory1000, Kind::Memory10000] {
            let client_auths = if kind == Kind::IoProfile { ClientAuth::ALL } else { &[ClientAuth::None] };
            for &version in Version::ALL {
                for &group in Group::ALL {
                    for &key in KeyType::ALL {
                        for &suite in Suite::ALL {
                            for &client_auth in client_auths {
                                let config = Config::Pinned { group, suite };
                                let scenario = Scenario { kind, version, config, key, client_auth, ems: true };
                                all.extend(scenario.validated());
                            }
                        }
                    }
                }
            }
        }
        // Contexts: what a context holds depends on the key type and client auth, hardly on the
        // suite or the group (one pin, and the libraries' defaults).
        for kind in Kind::CONTEXTS {
            let client_auths: &[ClientAuth] = match kind {
                Kind::ContextClientSystem => &[ClientAuth::None],
                _ => &[ClientAuth::None, ClientAuth::Required],
            };
            for &version in Version::ALL {
                for &key in KeyType::ALL {
                    for &client_auth in client_auths {
                        let config = Config::Pinned { group: Group::X25519, suite: Suite::Aes128Gcm };
                        all.extend(Scenario { kind, version, config, key, client_auth, ems: true }.validated());
                    }
                }
            }
        }
        // Each library as shipped: every workload that does not resume, with each key type and
        // client auth; transfer once per version.
        let as_shipped: Vec<Scenario> = all
            .iter()
            .filter(|s| s.kind != Kind::Transfer || s.key == KeyType::EcdsaP256)
            .filter_map(|s| s.with_defaults().ok())
            .collect();
        let mut seen = std::collections::HashSet::new();
        all.extend(as_shipped.into_iter().filter(|s| seen.insert(*s)));
        all
    }

    /// What a run measures when no `--scenario` is given: every cipher suite, group and key
    /// type of the common cases (RSA-2048 and ECDSA P-256 with x25519 and P-256), bulk transfer,
    /// and one representative of each further dimension: resumption, client certificates,
    /// larger keys, other groups, EMS off.
    pub fn defaults() -> Vec<Scenario> {
        Scenario::defaults_for(Measure::Time)
    }

    /// What a run of `measure` covers when no `--scenario` is given: for time, see
    /// [`Scenario::defaults`]; for instructions, the headlines of [`Scenario::quick_for`]; for
    /// the others, TLS 1.2 and 1.3 with RSA-2048 and ECDSA P-256.
    pub fn defaults_for(measure: Measure) -> Vec<Scenario> {
        let kinds: &[Kind] = match measure {
            Measure::Time => return Scenario::time_defaults(),
            // Under valgrind a sample takes seconds: the headlines only.
            Measure::Instructions | Measure::Sync => return Scenario::quick_for(measure),
            Measure::Io => &[Kind::IoProfile, Kind::HandshakeFull],
            Measure::Heap => &[Kind::HandshakeFull, Kind::Memory1000],
            Measure::Rss => &[Kind::Memory1000],
            Measure::Net => &[Kind::HandshakeFull, Kind::HandshakeResumeTicket],
        };
        let mut defaults = Vec::new();
        for &kind in kinds {
            for &version in Version::ALL {
                for key in [KeyType::Rsa2048, KeyType::EcdsaP256] {
                    defaults.extend(Scenario::new(kind, version, Group::X25519, key, Suite::Aes128Gcm));
                }
            }
        }
        defaults
    }

    /// What `tlsbench run --quick` measures when no `--scenario` is given, for each measure
    /// the headline scenarios it applies to: full and resumed handshakes in TLS 1.3 and 1.2,
    /// bulk transfer, a whole short connection, connections held open. All with x25519, ECDSA
    /// P-256 and AES-128-GCM, which every stack supports in each version it has.
    pub fn quick_for(measure: Measure) -> Vec<Scenario> {
        const HEADLINES: [&str; 8] = [
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm",
        ];
        let headlines = HEADLINES.iter().map(|name| name.parse::<Scenario>().expect("the headlines are valid names"));
        headlines.filter(|s| measure.applies_to(s.kind)).collect()
    }

    /// What `--scenario KIND` (a kind's bare name) selects of a context kind: TLS 1.3 and 1.2
    /// with RSA-2048 and ECDSA P-256, pinned; the server's with client auth too. None for the
    /// other kinds, whose names are globs like any other.
    pub fn focused_contexts(kind: Kind) -> Option<Vec<Scenario>> {
        kind.context_side()?;
        let mut focused = Vec::new();
        for &version in Version::ALL {
            for key in [KeyType::Rsa2048, KeyType::EcdsaP256] {
                let scenario = Scenario::new(kind, version, Group::X25519, key, Suite::Aes128Gcm).ok();
                focused.extend(scenario);
                if kind == Kind::ContextServer && key == KeyType::EcdsaP256 {
                    focused.extend(scenario.map(|s| Scenario { client_auth: ClientAuth::Required, ..s }));
                }
            }
        }
        Some(focused)
    }

    fn time_defaults() -> Vec<Scenario> {
        let common = |s: &Scenario| {
            s.is_pinned() && s.kind == Kind::Transfer
                || (s.kind == Kind::HandshakeFull
                    && s.is_pinned()
                    && matches!(s.group(), Some(Group::X25519 | Group::Secp256r1))
                    && matches!(s.key, KeyType::Rsa2048 | KeyType::EcdsaP256)
                    && s.client_auth == ClientAuth::None
                    && s.ems)
        };
        let representatives = [
            "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "handshake-resume-ticket_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm",
            "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls",
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls",
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_cert-requested",
            "handshake-full_1.3_x25519_rsa-3072_aes-128-gcm",
            "handshake-full_1.3_x25519_rsa-4096_aes-128-gcm",
            "handshake-full_1.3_x25519_ecdsa-p384_aes-128-gcm",
            "handshake-full_1.3_x25519_ed25519_aes-128-gcm",
            "handshake-full_1.3_secp384r1_ecdsa-p256_aes-128-gcm",
            "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm",
            "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems",
        ];
        let mut defaults: Vec<Scenario> = Scenario::all().into_iter().filter(common).collect();
        defaults
            .extend(representatives.iter().map(|name| name.parse::<Scenario>().expect("the defaults are valid names")));
        defaults
    }

    /// The canonical name: `kind_version_group_key_suite`, then `_mtls` or `_cert-requested`
    /// for client auth and `_no-ems` for TLS 1.2 without extended master secret.
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// The groups a side lists, the scenario's first. In TLS 1.2 the groups a peer lists also
    /// bound the curve of the other side's ECDSA certificate (RFC 8422; OpenSSL enforces it on
    /// both sides), so with an ECDSA key on another curve, the client lists that curve too, and
    /// so does the server when it verifies a client certificate. Both prefer the scenario's
    /// group, so the key exchange still uses it (and the gates check that it did).
    /// Empty with the libraries' defaults.
    pub fn groups(&self, side: Side) -> Vec<Group> {
        let Some(group) = self.group() else { return Vec::new() };
        let mut groups = vec![group];
        let peer_has_cert = side == Side::Client || self.client_auth == ClientAuth::Required;
        if let (Version::Tls12, Some(curve), true) = (self.version, self.key.ecdsa_curve(), peer_has_cert) {
            if curve != group {
                groups.push(curve);
            }
        }
        groups
    }

    /// The scenario if its parameters fit together, else why not.
    fn validated(self) -> Result<Self, String> {
        let name = self.name();
        match self {
            Scenario { kind: Kind::HandshakeResumeId, version: Version::Tls13, .. } => {
                Err(format!("{name}: session-ID resumption exists in TLS 1.2 only"))
            }
            Scenario {
                config: Config::Pinned { group: Group::X25519Mlkem768, .. }, version: Version::Tls12, ..
            } => Err(format!("{name}: x25519mlkem768 exists in TLS 1.3 only")),
            Scenario { ems: false, version: Version::Tls13, .. } => Err(format!("{name}: EMS is TLS 1.2 only")),
            Scenario { config: Config::Defaults, ems: false, .. } => {
                Err(format!("{name}: no-ems switches EMS off, which no library does by default; it is pinned only"))
            }
            Scenario { config: Config::Defaults, kind, .. } if kind.is_resumption() => Err(format!(
                "{name}: resumption is measured pinned only (whether and how a client keeps and offers sessions is the \
                 application's choice, not a library default)"
            )),
            _ => Ok(self),
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.config {
            Config::Pinned { group, suite } => {
                write!(f, "{}_{}_{group}_{}_{suite}", self.kind, self.version, self.key)?
            }
            Config::Defaults => write!(f, "{}_{}_{DEFAULT}_{}_{DEFAULT}", self.kind, self.version, self.key)?,
        }
        if self.client_auth != ClientAuth::None {
            write!(f, "_{}", self.client_auth)?;
        }
        if !self.ems {
            f.write_str("_no-ems")?;
        }
        Ok(())
    }
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        let parts: Vec<&str> = name.split('_').collect();
        let [kind, version, group, key, suite, ref suffixes @ ..] = parts[..] else {
            return Err(format!(
                "scenario `{name}` is not of the form kind_version_group_key_suite[_mtls|_cert-requested][_no-ems] \
                 (e.g. handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm, or with `{DEFAULT}` as both group and suite \
                 for each library's own defaults)"
            ));
        };
        let config = match (group, suite) {
            (DEFAULT, DEFAULT) => Config::Defaults,
            (DEFAULT, _) | (_, DEFAULT) => {
                return Err(format!(
                    "scenario `{name}`: group and suite are either both `{DEFAULT}` (each library's own defaults) \
                     or both named"
                ))
            }
            _ => Config::Pinned { group: group.parse()?, suite: suite.parse()? },
        };
        let mut scenario = Scenario {
            kind: kind.parse()?,
            version: version.parse()?,
            config,
            key: key.parse()?,
            client_auth: ClientAuth::None,
            ems: true,
        };
        for (i, &suffix) in suffixes.iter().enumerate() {
            match suffix {
                "no-ems" if i + 1 == suffixes.len() => scenario.ems = false,
                _ if i == 0 && suffix != "none" && suffix.parse::<ClientAuth>().is_ok() => {
                    scenario.client_auth = suffix.parse()?;
                }
                _ => {
                    return Err(format!(
                        "scenario `{name}`: unknown suffix `{suffix}` (valid: mtls, cert-requested, no-ems)"
                    ))
                }
            }
        }
        scenario.validated()
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
    fn the_matrix_holds_each_dimension_and_no_impossible_combination() {
        let names: Vec<String> = Scenario::all().iter().map(Scenario::name).collect();
        for name in [
            "handshake-full_1.2_secp256r1_rsa-2048_chacha20-poly1305",
            "transfer_1.3_x25519_ecdsa-p256_aes-256-gcm",
            "handshake-resume-ticket_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm_mtls",
            "handshake-resume-id_1.2_secp384r1_ed25519_aes-256-gcm_cert-requested_no-ems",
            "handshake-full_1.3_x25519_rsa-4096_chacha20-poly1305",
        ] {
            assert!(names.contains(&name.to_string()), "{name} missing");
        }
        assert!(!names.iter().any(|n| n.starts_with("handshake-resume-id_1.3")));
        assert!(!names.iter().any(|n| n.contains("_1.2_x25519mlkem768")));
        assert!(!names.iter().any(|n| n.contains("_1.3_") && n.ends_with("no-ems")));
    }

    #[test]
    fn the_defaults_keep_issue_2_s_matrix_and_add_one_of_each_dimension() {
        let defaults = Scenario::defaults();
        assert_eq!(defaults.len(), 30 + 14);
        let full_common =
            defaults.iter().filter(|s| s.kind == Kind::HandshakeFull && s.client_auth == ClientAuth::None && s.ems);
        assert!(full_common.count() >= 24);
        // The context kinds are measured only when asked for (`--scenario context-server`).
        for kind in Measure::Time.kinds() {
            assert_eq!(defaults.iter().any(|s| s.kind == *kind), kind.context_side().is_none(), "{kind}");
        }
        for measure in Measure::ALL {
            assert!(Scenario::defaults_for(*measure).iter().all(|s| measure.applies_to(s.kind)), "{measure}");
        }
    }

    #[test]
    fn the_quick_set_has_the_headlines_of_every_measure() {
        for measure in Measure::ALL {
            let quick = Scenario::quick_for(*measure);
            assert!(!quick.is_empty() && quick.iter().all(|s| measure.applies_to(s.kind)), "{measure}");
        }
        let kinds = |m| Scenario::quick_for(m).iter().map(|s| s.kind).collect::<Vec<_>>();
        for kind in [Kind::HandshakeFull, Kind::HandshakeResumeTicket, Kind::Transfer] {
            assert!(kinds(Measure::Time).contains(&kind), "{kind}");
        }
        assert!(kinds(Measure::Io).contains(&Kind::IoProfile));
        for version in Version::ALL {
            assert!(
                Scenario::quick_for(Measure::Time).iter().any(|s| s.kind.is_resumption() && s.version == *version),
                "{version}"
            );
        }
    }

    #[test]
    fn groups_add_the_ecdsa_curve_in_tls_1_2_for_the_side_that_verifies_a_certificate() {
        let groups = |name: &str, side| name.parse::<Scenario>().unwrap().groups(side);
        let (client, server) = (Side::Client, Side::Server);
        assert_eq!(
            groups("handshake-full_1.2_x25519_ecdsa-p384_aes-128-gcm", client),
            vec![Group::X25519, Group::Secp384r1]
        );
        assert_eq!(groups("handshake-full_1.2_x25519_ecdsa-p384_aes-128-gcm", server), vec![Group::X25519]);
        let mtls = "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls";
        assert_eq!(groups(mtls, server), vec![Group::X25519, Group::Secp256r1]);
        assert_eq!(groups("handshake-full_1.3_x25519_ecdsa-p384_aes-128-gcm_mtls", client), vec![Group::X25519]);
        assert_eq!(groups("handshake-full_1.2_secp256r1_ecdsa-p256_aes-128-gcm", client), vec![Group::Secp256r1]);
        assert_eq!(groups("handshake-full_1.2_x25519_ed25519_aes-128-gcm", client), vec![Group::X25519]);
    }

    #[test]
    fn a_negotiated_suite_is_found_back_from_a_library_name_of_any_key_type() {
        let by_name = |name: &str, version| {
            Suite::negotiated(name, |key, suite| suite.openssl_name(version, key)).map_err(|e| e.0)
        };
        assert_eq!(by_name("TLS_AES_256_GCM_SHA384", Version::Tls13), Ok(Suite::Aes256Gcm));
        assert_eq!(by_name("ECDHE-RSA-CHACHA20-POLY1305", Version::Tls12), Ok(Suite::Chacha20Poly1305));
        assert_eq!(by_name("ECDHE-ECDSA-AES128-GCM-SHA256", Version::Tls12), Ok(Suite::Aes128Gcm));
        // A TLS 1.2 name is not a TLS 1.3 suite, and a suite tlsbench does not know is an error.
        assert_eq!(
            by_name("ECDHE-ECDSA-AES128-GCM-SHA256", Version::Tls13),
            Err("negotiated an unexpected cipher suite: \"ECDHE-ECDSA-AES128-GCM-SHA256\"".into())
        );
        assert_eq!(
            by_name("AES128-SHA", Version::Tls12),
            Err("negotiated an unexpected cipher suite: \"AES128-SHA\"".into())
        );
    }

    #[test]
    fn the_libraries_defaults_are_named_in_place_of_group_and_suite_and_never_resume() {
        let defaults: Scenario = "io-profile_1.3_default_ecdsa-p256_default_mtls".parse().unwrap();
        assert_eq!((defaults.config, defaults.group(), defaults.suite()), (Config::Defaults, None, None));
        assert_eq!(defaults.client_auth, ClientAuth::Required);
        assert!(defaults.groups(Side::Client).is_empty(), "nothing pinned");
        let pinned: Scenario = "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls".parse().unwrap();
        assert_eq!(pinned.with_defaults(), Ok(defaults));
        let all = Scenario::all();
        assert!(all.contains(&defaults));
        for s in all.iter().filter(|s| !s.is_pinned()) {
            assert!(!s.kind.is_resumption() && s.ems, "{s}");
        }
        let err = "handshake-full_1.3_default_ecdsa-p256_aes-128-gcm".parse::<Scenario>().unwrap_err();
        assert!(err.contains("group and suite are either both `default`"), "{err}");
        let err = "handshake-resume-ticket_1.3_default_ecdsa-p256_default".parse::<Scenario>().unwrap_err();
        let why = "resumption is measured pinned only (whether and how a client keeps and offers sessions is the \
                   application's choice, not a library default)";
        assert!(err.ends_with(why), "{err}");
        // The runs that name no scenario stay pinned.
        for measure in Measure::ALL {
            assert!(
                Scenario::defaults_for(*measure).iter().chain(&Scenario::quick_for(*measure)).all(Scenario::is_pinned),
                "{measure}"
            );
        }
    }

    #[test]
    fn a_bad_name_says_what_is_valid() {
        let err = "handshake-full_1.4_x25519_ecdsa-p256_aes-128-gcm".parse::<Scenario>();
        assert_eq!(err, Err("unknown protocol version `1.4` (valid: 1.2, 1.3)".into()));
        let err = "handshake".parse::<Scenario>().unwrap_err();
        assert!(err.contains("kind_version_group_key_suite"), "{err}");
        let err = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems".parse::<Scenario>();
        assert_eq!(err, Err("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems: EMS is TLS 1.2 only".into()));
        let err = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_psk".parse::<Scenario>();
        assert!(err.unwrap_err().contains("unknown suffix `psk` (valid: mtls, cert-requested, no-ems)"));
        let err = "handshake-resume-id_1.3_x25519_ecdsa-p256_aes-128-gcm".parse::<Scenario>();
        assert!(err.unwrap_err().ends_with("session-ID resumption exists in TLS 1.2 only"));
    }
}
