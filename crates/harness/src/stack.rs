//! What a stack adapter implements: configs from a scenario, connections over an [`Endpoint`],
//! and what was negotiated. Adapters are thin; the drivers do the rest.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{ClientAuth, Endpoint, Error, Group, KeyType, Kind, LibError, Measure, Pki, Scenario, Suite, Version};

/// One TLS implementation in one configuration (e.g. rustls with the ring provider).
///
/// A server on a real socket ([`crate::net`]) shares the stack and one server config among its
/// worker threads, as a real server shares its context (one session cache, one ticket key), and
/// the pairs of a sample on threads with shared contexts ([`crate::Contexts::Shared`]) share one
/// server config and one client config (with the sessions it keeps), so all must be `Sync`;
/// each connection stays on the thread that made it.
pub trait Stack: Sync {
    type ClientConfig: Sync;
    type ServerConfig: Sync;
    type Client: Connection;
    type Server: Connection;

    /// The stable id, e.g. `rustls-aws-lc-rs`.
    fn id(&self) -> &'static str;

    /// The library name and version as the running code reports it, e.g. `OpenSSL 3.0.19 ...`.
    fn library(&self) -> String;

    /// The TLS library alone, without the crypto backend or the stack's configuration, e.g.
    /// `rustls 0.23.46` for both of rustls's providers: what rows are grouped by.
    fn tls_library(&self) -> String {
        self.library()
    }

    /// The crypto library the stack runs on, as the running code reports it where it can.
    fn backend(&self) -> Backend;

    /// What this stack can do; scenarios outside it are `unsupported`.
    fn capabilities(&self) -> Capabilities;

    /// A client config that offers exactly the scenario's version, suite and group (see
    /// [`Scenario::groups`]), verifies the server's chain and host name against the
    /// scenario's CA, has the client certificate when the scenario requires one, and keeps the
    /// sessions it is given when the scenario resumes. With [`crate::Config::Defaults`], only
    /// the version is pinned and the rest is the library's own, but for a client that keeps
    /// sessions by default: it keeps none.
    fn client_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Self::ClientConfig, LibError>;

    /// A client config whose connections are made up to `in_flight` at a time, by threads that
    /// share it ([`crate::Contexts::Shared`]) or a load generator's connections in flight: as
    /// [`Stack::client_config`], with room, when the scenario resumes, for a session to resume
    /// for each of them at once (a TLS 1.3 ticket is for one connection, RFC 8446 C.4, and a
    /// client that keeps fewer does full handshakes). By default the same config: a stack
    /// whose client store has no limit, or that offers a session again, needs nothing more.
    fn client_config_for(
        &self,
        scenario: &Scenario,
        pki: &Pki,
        in_flight: usize,
    ) -> Result<Self::ClientConfig, LibError> {
        let _ = in_flight;
        self.client_config(scenario, pki)
    }

    /// A server config with the scenario's key type, version, suite and group, and client
    /// certificates asked for and verified as the scenario says. Session resumption is on only
    /// in the way the scenario resumes (session cache, or tickets) and off in every other
    /// scenario, so that a full handshake measures only the handshake. With
    /// [`crate::Config::Defaults`], only the version is pinned; tickets, session cache, suites
    /// and groups are the library's own.
    fn server_config(&self, scenario: &Scenario, pki: &Pki) -> Result<Self::ServerConfig, LibError>;

    /// A client config as [`Stack::client_config`], but trusting **the system's trust store**,
    /// loaded the way the library's users load it (docs/scenarios.md#contexts): `SSL_CERT_FILE`
    /// names the system's bundle with the test CA appended. None: the stack has no system trust
    /// store to load (context-client-system is then unsupported).
    fn client_config_system(&self, scenario: &Scenario, pki: &Pki) -> Option<Result<Self::ClientConfig, LibError>> {
        let _ = (scenario, pki);
        None
    }

    /// The roots a client config trusts, where the library tells (the gate of
    /// context-client-system); None where it does not.
    fn trust_roots(&self, config: &Self::ClientConfig) -> Option<usize> {
        let _ = config;
        None
    }

    fn new_client(&self, config: &Self::ClientConfig, io: Endpoint) -> Result<Self::Client, LibError>;
    fn new_server(&self, config: &Self::ServerConfig, io: Endpoint) -> Result<Self::Server, LibError>;
}

/// The crypto library under a stack's TLS code (its "backend"), e.g. AWS-LC reached through
/// aws-lc-rs, or the system's OpenSSL libcrypto.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backend {
    /// The crypto library, e.g. `AWS-LC`, `ring`, `OpenSSL libcrypto`: stacks group by it (with
    /// the version), so stacks on the same library say the same name.
    pub name: String,
    /// Its version as the running code reports it, else as the build's lock file pins it.
    pub version: String,
    /// How the stack reaches it, or what else sets it apart, e.g. `aws-lc-rs 1.19.0`,
    /// `FIPS mode on`, `system library`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Backend {
    pub fn new(name: impl Into<String>, version: impl Into<String>, detail: Option<String>) -> Backend {
        Backend { name: name.into(), version: version.into(), detail }
    }

    /// `AWS-LC 1.66.2`: what stacks are grouped by.
    pub fn group(&self) -> String {
        format!("{} {}", self.name, self.version)
    }
}

impl fmt::Display for Backend {
    /// `AWS-LC 1.66.2 (aws-lc-rs 1.19.0)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.version)?;
        match &self.detail {
            Some(detail) => write!(f, " ({detail})"),
            None => Ok(()),
        }
    }
}

/// One side of a connection. Calls never block: when the peer's bytes are needed and not yet
/// there, they return and the driver steps the other side.
pub trait Connection {
    /// Moves the handshake on as far as the available bytes allow, writing whatever this side
    /// has to send. Returns true once this side has completed its handshake; after that it
    /// still processes what arrives after the handshake (e.g. session tickets).
    fn handshake(&mut self) -> Result<bool, LibError>;

    /// Encrypts all of `data` and writes the records to the transport.
    fn send(&mut self, data: &[u8]) -> Result<(), LibError>;

    /// Writes what the connection holds back from earlier sends. The TLS adapters write as
    /// they send; a plain TCP baseline with a user-space buffer writes it here.
    fn flush(&mut self) -> Result<(), LibError> {
        Ok(())
    }

    /// Decrypts into `buf` what the available records hold; `Ok(0)` when nothing more is
    /// available now.
    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError>;

    /// What the handshake negotiated, as this side sees it.
    fn negotiated(&self) -> Result<Negotiated, LibError>;

    /// Sends close_notify: writes the alert to the transport. Stacks that cannot leave
    /// `Kind::IoProfile` out of their capabilities.
    fn close(&mut self) -> Result<(), LibError> {
        Err(LibError::new("this adapter does not send close_notify"))
    }

    /// Reads what has arrived; true once the peer's close_notify has been received. Never
    /// blocks: false while it has not arrived yet.
    fn peer_closed(&mut self) -> Result<bool, LibError> {
        Err(LibError::new("this adapter does not read close_notify"))
    }
}

/// The parameters a completed handshake settled on, in tlsbench's vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    pub version: Version,
    pub suite: Suite,
    /// None where the library does not tell.
    pub group: Option<Group>,
    pub resumed: bool,
    /// Whether TLS 1.2 used the extended master secret; None in TLS 1.3 or where the library
    /// does not tell.
    pub ems: Option<bool>,
    /// Server side: whether the client presented a certificate that was verified. None on the
    /// client side.
    pub client_cert_verified: Option<bool>,
    /// Client side: whether a session ticket arrived on this connection (in TLS 1.3, after the
    /// handshake; the driver reads everything the server sent). None on the server side and
    /// where the library does not tell.
    pub ticket_received: Option<bool>,
}

/// What a cell shows of a handshake, e.g. `1.3 aes-256-gcm x25519, ticket received`.
impl fmt::Display for Negotiated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.version, self.suite)?;
        match self.group {
            Some(group) => write!(f, " {group}")?,
            None => f.write_str(" group not reported")?,
        }
        if self.resumed {
            f.write_str(", resumed")?;
        }
        if self.ems == Some(false) {
            f.write_str(", no EMS")?;
        }
        match self.ticket_received {
            Some(true) => f.write_str(", ticket received"),
            Some(false) => f.write_str(", no ticket"),
            None => Ok(()),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Server,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Client => "client",
            Side::Server => "server",
        })
    }
}

/// What a stack declares it supports. A scenario is supported when every parameter is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    pub kinds: Vec<Kind>,
    pub versions: Vec<Version>,
    pub groups: Vec<Group>,
    pub keys: Vec<KeyType>,
    pub suites: Vec<Suite>,
    pub client_auth: Vec<ClientAuth>,
    /// Whether TLS 1.2's extended master secret can be switched off.
    pub ems_off: bool,
    /// Scenarios the stack cannot do although each of their parameters is in the lists above
    /// (a combination), or for a more precise reason than "X not supported"; checked first.
    #[serde(default)]
    pub exclusions: Vec<Exclusion>,
    /// Peers this stack cannot complete a handshake with, by a known limit of its own: a pair
    /// it names is unsupported with the reason, whatever the scenario.
    #[serde(default)]
    pub peer_limits: Vec<PeerLimit>,
    /// Measures this stack cannot be measured by, each with its reason (e.g. callgrind cannot
    /// follow a JIT's code): their cells are unsupported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measure_limits: Vec<MeasureLimit>,
    /// The least warm-up a time sample of this stack needs, in milliseconds: a JIT compiles the
    /// hot path only after it has run a while. The orchestrator warms up every sample of a cell
    /// at least as long as either of its stacks asks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_warmup_ms: u64,
    /// The allocators the stack's runner can run it on (`TLSBENCH_ALLOCATOR`): filled in by the
    /// runner, not the stack, where its malloc is tlsbench's interposer. Empty (absent): the
    /// stack allocates through its language's runtime and takes no part in the allocator axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allocators: Vec<crate::allocator::Allocator>,
    /// Whether the stack's runner measures several pairs side by side, one per thread
    /// (`sample --threads N`): filled in by the runner. False (absent): one pair per sample.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub threads: bool,
    /// Whether those threads can also share one server config and one client config
    /// (`sample --threads N --contexts own|shared`): filled in by the runner. False (absent): a
    /// runner from before the option, whose threads each build their own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_contexts: bool,
    /// Whether those threads can be pinned one per CPU (`sample --threads N --cpus LIST`): filled
    /// in by the runner. False (absent): a runner from before the option, whose threads run
    /// wherever the scheduler puts them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pin_threads: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A measure this stack cannot be measured by, because of `reason`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasureLimit {
    pub measure: Measure,
    pub reason: String,
}

/// On `side`, this stack completes handshakes only with the peer stacks in `only` (e.g. as a
/// server, only its own client can, because it sends an incomplete chain that every client
/// verifying the chain rejects), because of `reason`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerLimit {
    pub side: Side,
    pub only: Vec<String>,
    pub reason: String,
}

/// Scenarios whose names match `pattern` (`*` stands for any text) are unsupported, because of
/// `reason`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exclusion {
    pub pattern: String,
    pub reason: String,
}

impl Exclusion {
    pub fn new(pattern: &str, reason: &str) -> Self {
        Self { pattern: pattern.into(), reason: reason.into() }
    }

    pub fn matches(&self, scenario: &Scenario) -> bool {
        wildcard_match(&self.pattern, &scenario.name())
    }
}

/// Whether `text` matches `pattern`, in which `*` stands for any text (also none).
fn wildcard_match(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            let Some(tail) = text.strip_prefix(head) else { return false };
            (0..=tail.len()).filter(|&i| tail.is_char_boundary(i)).any(|i| wildcard_match(rest, &tail[i..]))
        }
    }
}

impl Capabilities {
    /// Everything tlsbench knows how to ask for.
    pub fn everything() -> Self {
        Self {
            kinds: Kind::ALL.to_vec(),
            versions: Version::ALL.to_vec(),
            groups: Group::ALL.to_vec(),
            keys: KeyType::ALL.to_vec(),
            suites: Suite::ALL.to_vec(),
            client_auth: ClientAuth::ALL.to_vec(),
            ems_off: true,
            exclusions: Vec::new(),
            peer_limits: Vec::new(),
            measure_limits: Vec::new(),
            min_warmup_ms: 0,
            allocators: Vec::new(),
            threads: false,
            shared_contexts: false,
            pin_threads: false,
        }
    }

    /// `Err(reason)` when this stack cannot be measured by `measure`.
    pub fn check_measure(&self, measure: Measure) -> Result<(), Error> {
        match self.measure_limits.iter().find(|limit| limit.measure == measure) {
            Some(limit) => Err(Error::Unsupported(limit.reason.clone())),
            None => Ok(()),
        }
    }

    /// `Err(reason)` when this stack, on `side`, cannot complete a handshake with `peer`.
    pub fn check_peer(&self, side: Side, peer: &str) -> Result<(), Error> {
        // A peer at another release (`ID@RELEASE`) is its stack.
        let peer = peer.split_once('@').map_or(peer, |(id, _)| id);
        match self.peer_limits.iter().find(|limit| limit.side == side && !limit.only.iter().any(|id| id == peer)) {
            Some(limit) => Err(Error::Unsupported(limit.reason.clone())),
            None => Ok(()),
        }
    }

    /// `Err(reason)`: the first exclusion the scenario matches, else the first parameter this
    /// stack lacks.
    pub fn check(&self, stack: &str, scenario: &Scenario) -> Result<(), Error> {
        if let Some(exclusion) = self.exclusions.iter().find(|e| e.matches(scenario)) {
            return Err(Error::Unsupported(exclusion.reason.clone()));
        }
        fn lacks<T: PartialEq + fmt::Display>(have: &[T], want: T, stack: &str, what: &str) -> Result<(), Error> {
            match have.contains(&want) {
                true => Ok(()),
                false => Err(Error::Unsupported(format!("{stack}: {what} {want} not supported"))),
            }
        }
        lacks(&self.kinds, scenario.kind, stack, "scenario kind")?;
        lacks(&self.versions, scenario.version, stack, "TLS")?;
        // With the libraries' defaults, each negotiates a group and suite of its own.
        if let Some(group) = scenario.group() {
            lacks(&self.groups, group, stack, "group")?;
        }
        lacks(&self.keys, scenario.key, stack, "key type")?;
        if let Some(suite) = scenario.suite() {
            lacks(&self.suites, suite, stack, "cipher suite")?;
        }
        lacks(&self.client_auth, scenario.client_auth, stack, "client auth")?;
        match (scenario.ems, self.ems_off) {
            (false, false) => {
                Err(Error::Unsupported(format!("{stack}: extended master secret cannot be switched off")))
            }
            _ => Ok(()),
        }
    }
}

/// Whether a client stack and a server stack, each with its id and capabilities, can do
/// `scenario` together: each stack's own [`Capabilities::check`] first, then the limits each
/// declares on its peers.
pub fn check_pair(
    client: (&str, &Capabilities),
    server: (&str, &Capabilities),
    scenario: &Scenario,
) -> Result<(), Error> {
    client.1.check(client.0, scenario)?;
    server.1.check(server.0, scenario)?;
    client.1.check_peer(Side::Client, server.0)?;
    server.1.check_peer(Side::Server, client.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exclusion_names_its_reason_before_any_parameter_does() {
        let caps = Capabilities {
            suites: vec![Suite::Aes128Gcm],
            exclusions: vec![
                Exclusion::new("handshake-resume-*_mtls", "x: no resumption with client auth"),
                Exclusion::new("*_1.3_*", "x: cannot pin a TLS 1.3 suite"),
            ],
            ..Capabilities::everything()
        };
        let check = |name: &str| caps.check("x", &name.parse().unwrap()).map_err(|e| e.to_string());
        assert_eq!(
            check("handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls"),
            Err("x: no resumption with client auth".into())
        );
        assert_eq!(check("handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm"), Ok(()));
        assert_eq!(check("transfer_1.3_x25519_ecdsa-p256_aes-256-gcm"), Err("x: cannot pin a TLS 1.3 suite".into()));
        assert_eq!(
            check("transfer_1.2_x25519_ecdsa-p256_aes-256-gcm"),
            Err("x: cipher suite aes-256-gcm not supported".into())
        );
    }

    #[test]
    fn a_peer_limit_makes_the_pairs_it_excludes_unsupported_on_its_side_only() {
        let reason =
            "x: its server sends no intermediate; only its own client, which does not verify the chain, accepts that";
        let limited = Capabilities {
            peer_limits: vec![PeerLimit { side: Side::Server, only: vec!["x".into()], reason: reason.into() }],
            ..Capabilities::everything()
        };
        let everything = Capabilities::everything();
        let scenario: Scenario = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap();
        let check = |client, server| check_pair(client, server, &scenario).map_err(|e| e.to_string());
        assert_eq!(check(("y", &everything), ("x", &limited)), Err(reason.to_string()));
        assert_eq!(check(("x", &limited), ("x", &limited)), Ok(()));
        assert_eq!(check(("x", &limited), ("y", &everything)), Ok(()), "as a client it has no limit");
        // A scenario a stack cannot do at all names that reason first.
        let tls12 = Capabilities { versions: vec![Version::Tls13], ..limited.clone() };
        let tls12_scenario: Scenario = "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap();
        assert_eq!(
            check_pair(("y", &everything), ("x", &tls12), &tls12_scenario).map_err(|e| e.to_string()),
            Err("x: TLS 1.2 not supported".into())
        );
        // Declared by the runner's `list`, read by the orchestrator.
        let json = serde_json::to_string(&limited).unwrap();
        assert_eq!(serde_json::from_str::<Capabilities>(&json).unwrap(), limited);
    }

    #[test]
    fn wildcards_match_any_text_including_none() {
        assert!(wildcard_match("a*c", "abc") && wildcard_match("a*c", "ac") && wildcard_match("*", ""));
        assert!(wildcard_match("*_1.2_x25519_ecdsa-*_aes-256-gcm*", "transfer_1.2_x25519_ecdsa-p256_aes-256-gcm"));
        assert!(!wildcard_match("*_1.2_x25519_ecdsa-*_aes-256-gcm*", "transfer_1.2_x25519_rsa-2048_aes-256-gcm"));
        assert!(!wildcard_match("abc", "abcd") && !wildcard_match("a*d", "abc"));
    }
}
