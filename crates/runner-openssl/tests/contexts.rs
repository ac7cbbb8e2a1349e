//! The context scenarios and the cold command (issue 41) on known cases: a stack whose context
//! holds a known number of bytes (on the heap, and resident when held), the gate on the system's trust store (a
//! bundle without the test CA, none at all, one of too few roots), and a cold sample's split
//! into its phases.
//!
//! No test harness (`harness = false`): the heap accounting is process-wide, and the tests set
//! `SSL_CERT_FILE`, which the harness's threads would race.

use std::path::Path;
use std::sync::OnceLock;

use tlsbench_harness::cold::{self, ColdArgs};
use tlsbench_harness::context::{self, CERT_FILE_VAR};
use tlsbench_harness::driver::SampleSpec;
use tlsbench_harness::protocol::{Metric, SampleReport};
use tlsbench_harness::testing::{pki, scenario};
use tlsbench_harness::{Capabilities, Endpoint, Error, LibError, Measure, Pki, Scenario, Side, Stack};
use tlsbench_stack_openssl::OpenSsl;

tlsbench_harness::interpose_malloc!();

/// The bytes each of [`Padded`]'s contexts holds for the heap measure, and for rss (pages).
const PAD: usize = 10_000;
const RSS_PAD: usize = 1 << 20;

fn main() {
    let dir = tempfile::tempdir().expect("a data directory");
    Pki::load_or_generate(dir.path(), &[tlsbench_harness::KeyType::Rsa2048]).expect("the certificates");
    // Before the heap is recorded: its table's pages would count as resident.
    resident_memory_grows_by_what_each_held_context_holds(dir.path());
    a_context_that_holds_known_bytes_more_is_measured_that_much_larger(dir.path());
    rss_is_refused_once_the_heap_is_recorded(dir.path());
    time_reports_the_measured_side_only_with_the_handshake_it_gated(dir.path());
    the_system_trust_store_must_hold_the_test_ca_and_be_a_system_store(dir.path());
    a_cold_sample_reports_each_phase_of_each_side(dir.path());
    println!("contexts: all checks passed");
}

fn value(report: &SampleReport, side: Side, metric: Metric) -> Option<f64> {
    report.values.iter().find(|v| v.side == side && v.metric == metric).map(|v| v.value)
}

const ONCE: SampleSpec = SampleSpec::timed(std::time::Duration::ZERO, std::time::Duration::from_micros(1));

fn a_context_that_holds_known_bytes_more_is_measured_that_much_larger(data_dir: &Path) {
    for (name, side) in [
        ("context-server_1.3_x25519_rsa-2048_aes-128-gcm", Side::Server),
        ("context-client_1.3_x25519_rsa-2048_aes-128-gcm", Side::Client),
    ] {
        let held = |report: &SampleReport| value(report, side, Metric::HeapContextBytes).expect("heap_context_bytes");
        let plain = context::sample(&OpenSsl, &OpenSsl, &scenario(name), data_dir, &ONCE, Measure::Heap)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let padded = context::sample(&Padded(PAD), &Padded(PAD), &scenario(name), data_dir, &ONCE, Measure::Heap)
            .unwrap_or_else(|e| panic!("{name} padded: {e}"));
        assert!(held(&plain) > 0.0, "{name}: OpenSSL's context holds something");
        assert_eq!(held(&padded), PAD as f64, "{name}: the padding, and nothing else");
        // The side that is not measured reports nothing.
        assert!(plain.values.iter().all(|v| v.side == side), "{name}: {:?}", plain.values);
    }
}

fn resident_memory_grows_by_what_each_held_context_holds(data_dir: &Path) {
    let name = "context-server_1.3_x25519_rsa-2048_aes-128-gcm";
    let padded = Padded(RSS_PAD);
    let report = context::sample(&padded, &padded, &scenario(name), data_dir, &ONCE, Measure::Rss)
        .unwrap_or_else(|e| panic!("{name} padded: {e}"));
    assert_eq!(report.iterations, context::RSS_CONTEXTS as u64, "every context built is held");
    let grown = value(&report, Side::Server, Metric::RssContextBytes).expect("rss_context_bytes");
    // The padding's pages, and little else: a page at either end, the config's own few bytes. Not
    // quite all of them at worst: Linux 6.2 and later keep a process's resident pages counted per
    // CPU, and /proc reads that count with a lag of some pages (here once 1,047,511 B per context).
    assert!((RSS_PAD as f64 * 0.99..RSS_PAD as f64 * 1.05).contains(&grown), "{grown} per context for {RSS_PAD}");
    assert_eq!(report.negotiated.len(), 2, "the gate's handshake: {:?}", report.negotiated);

    let report = context::sample(&OpenSsl, &OpenSsl, &scenario(name), data_dir, &ONCE, Measure::Rss).unwrap();
    let grown = value(&report, Side::Server, Metric::RssContextBytes).expect("rss_context_bytes");
    assert!(grown > 0.0 && grown < RSS_PAD as f64, "OpenSSL's server context: {grown} B resident");
    assert!(report.values.iter().all(|v| v.side == Side::Server), "{:?}", report.values);
}

fn rss_is_refused_once_the_heap_is_recorded(data_dir: &Path) {
    let name = "context-client_1.3_x25519_rsa-2048_aes-128-gcm";
    let error = context::sample(&OpenSsl, &OpenSsl, &scenario(name), data_dir, &ONCE, Measure::Rss)
        .expect_err("the heap's table would count as resident");
    assert!(error.to_string().contains("has not recorded its heap"), "{error}");
}

fn time_reports_the_measured_side_only_with_the_handshake_it_gated(data_dir: &Path) {
    let name = "context-server_1.3_x25519_rsa-2048_aes-128-gcm";
    let report = context::sample(&OpenSsl, &OpenSsl, &scenario(name), data_dir, &ONCE, Measure::Time).unwrap();
    assert!(report.iterations >= 1);
    assert!(value(&report, Side::Server, Metric::ContextsPerS).is_some_and(|v| v > 0.0), "{:?}", report.values);
    assert!(value(&report, Side::Client, Metric::ContextsPerS).is_none());
    // The gate's handshake: both sides negotiated the scenario's version.
    assert_eq!(report.negotiated.len(), 2, "{:?}", report.negotiated);
    assert!(report.negotiated.iter().all(|n| n.negotiated.starts_with("1.3 aes-128-gcm")), "{:?}", report.negotiated);
}

fn the_system_trust_store_must_hold_the_test_ca_and_be_a_system_store(data_dir: &Path) {
    let name = "context-client-system_1.3_x25519_rsa-2048_aes-128-gcm";
    let system = Path::new("/etc/ssl/certs/ca-certificates.crt");
    let sample = || context::sample(&OpenSsl, &OpenSsl, &scenario(name), data_dir, &ONCE, Measure::Time);
    let ca = std::fs::read_to_string(data_dir.join("pki-v2/rsa-2048/ca.pem")).unwrap();

    // SAFETY (each set_var): this test runs without a harness, on one thread.
    unsafe { std::env::remove_var(CERT_FILE_VAR) };
    let error = sample().expect_err("no bundle named");
    assert!(error.to_string().starts_with("context-client-system needs SSL_CERT_FILE"), "{error}");

    // The test CA alone: the handshake verifies, but one root is no system store.
    let alone = data_dir.join("test-ca-only.pem");
    std::fs::write(&alone, &ca).unwrap();
    unsafe { std::env::set_var(CERT_FILE_VAR, &alone) };
    let error = sample().expect_err("one root");
    assert!(matches!(error, Error::Gate(_)), "{error}");
    assert!(error.to_string().contains("held 1 roots (fewer than 100)"), "{error}");

    if !system.exists() {
        println!("contexts: no {} here; the system bundle's cases are skipped", system.display());
        return;
    }
    // The system's bundle without the test CA: the last context built cannot verify the server.
    unsafe { std::env::set_var(CERT_FILE_VAR, system) };
    let error = sample().expect_err("a bundle without the test CA");
    assert!(matches!(error, Error::Gate(_)), "{error}");
    assert!(error.to_string().contains("from the last context built did not complete"), "{error}");
    assert!(error.to_string().contains("certificate verify failed"), "{error}");

    // With it: the roots are counted, every one of the system's and the test CA.
    let bundle = data_dir.join("system-bundle.pem");
    std::fs::write(&bundle, std::fs::read_to_string(system).unwrap() + "\n" + &ca).unwrap();
    unsafe { std::env::set_var(CERT_FILE_VAR, &bundle) };
    let report = sample().unwrap_or_else(|e| panic!("{name}: {e}"));
    let roots = value(&report, Side::Client, Metric::TrustRoots).expect("OpenSSL tells its roots");
    let in_bundle = std::fs::read_to_string(&bundle).unwrap().matches("-----BEGIN CERTIFICATE-----").count();
    assert_eq!(roots, in_bundle as f64);
}

fn a_cold_sample_reports_each_phase_of_each_side(data_dir: &Path) {
    let args = |name: &str| ColdArgs {
        client: "openssl".into(),
        server: "openssl".into(),
        scenario: scenario(name),
        data_dir: Some(data_dir.to_path_buf()),
        spawned_at_ns: Some(1),
        count_side: None,
    };
    let full = cold::sample(&OpenSsl, &OpenSsl, &args("handshake-full_1.3_x25519_rsa-2048_aes-128-gcm"), 2).unwrap();
    assert_eq!(full.process_start_ns, Some(1), "from the spawn to main");
    for side in [full.client, full.server] {
        assert!(side.context_ns > 0 && side.first_ns > 0 && side.second_ns.is_some_and(|ns| ns > 0), "{side:?}");
        assert_eq!((side.first_resume_ns, side.second_resume_ns), (None, None));
    }
    let name = "handshake-resume-ticket_1.3_x25519_rsa-2048_aes-128-gcm";
    let resumed = cold::sample(&OpenSsl, &OpenSsl, &args(name), 2).unwrap();
    for side in [resumed.client, resumed.server] {
        assert!(side.first_resume_ns.is_some_and(|ns| ns > 0) && side.second_resume_ns.is_some_and(|ns| ns > 0));
        assert_eq!(side.second_ns, None, "a client that keeps sessions makes no second full handshake");
    }
    let name = "context-server_1.3_x25519_rsa-2048_aes-128-gcm";
    let error = cold::sample(&OpenSsl, &OpenSsl, &args(name), 2).expect_err("a context kind");
    assert!(matches!(error, Error::Unsupported(_)), "{error}");
}

/// A stack whose context holds exactly the bytes it is given: OpenSSL's context it connects with
/// is built at its first connection (outside the measured build), from the test's certificates.
struct Padded(usize);

struct Padding<T> {
    scenario: Scenario,
    inner: OnceLock<T>,
    _pad: Vec<u8>,
}

fn padded<T>(scenario: &Scenario, pad: usize) -> Padding<T> {
    // Written, so that the allocation is not elided and its pages are resident.
    Padding { scenario: *scenario, inner: OnceLock::new(), _pad: std::hint::black_box(vec![1u8; pad]) }
}

impl Stack for Padded {
    type ClientConfig = Padding<<OpenSsl as Stack>::ClientConfig>;
    type ServerConfig = Padding<<OpenSsl as Stack>::ServerConfig>;
    type Client = <OpenSsl as Stack>::Client;
    type Server = <OpenSsl as Stack>::Server;

    fn id(&self) -> &'static str {
        "openssl"
    }

    fn library(&self) -> String {
        OpenSsl.library()
    }

    fn backend(&self) -> tlsbench_harness::Backend {
        OpenSsl.backend()
    }

    fn capabilities(&self) -> Capabilities {
        OpenSsl.capabilities()
    }

    fn client_config(&self, scenario: &Scenario, _: &Pki) -> Result<Self::ClientConfig, LibError> {
        Ok(padded(scenario, self.0))
    }

    fn server_config(&self, scenario: &Scenario, _: &Pki) -> Result<Self::ServerConfig, LibError> {
        Ok(padded(scenario, self.0))
    }

    fn new_client(&self, config: &Self::ClientConfig, io: Endpoint) -> Result<Self::Client, LibError> {
        let inner = config.inner.get_or_init(|| OpenSsl.client_config(&config.scenario, pki()).expect("config"));
        OpenSsl.new_client(inner, io)
    }

    fn new_server(&self, config: &Self::ServerConfig, io: Endpoint) -> Result<Self::Server, LibError> {
        let inner = config.inner.get_or_init(|| OpenSsl.server_config(&config.scenario, pki()).expect("config"));
        OpenSsl.new_server(inner, io)
    }
}
