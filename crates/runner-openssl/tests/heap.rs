//! The heap accounting itself, on known cases: blocks that OpenSSL allocates and frees, each
//! allocator entry point, the side each block is charged to, the transport's pipes charged to
//! neither side; then the heap measure of a real run against valgrind's DHAT, which sees the
//! same process's allocations by its own means.
//!
//! No test harness (`harness = false`): the accounting is process-wide, and the harness's own
//! threads would allocate while a side's tag is set.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{c_char, c_int, c_void};
use std::hint::black_box;
use std::process::Command;

use std::io::{ErrorKind, Read, Write};

use tlsbench_harness::heap::{self, Usage};
use tlsbench_harness::protocol::{Metric, SampleReport};
use tlsbench_harness::testing::{pki, scenario};
use tlsbench_harness::{memory, Capabilities, Connection, Endpoint, LibError, Negotiated, Pki, Scenario, Side, Stack};
use tlsbench_stack_openssl::OpenSsl;

tlsbench_harness::interpose_malloc!();

extern "C" {
    fn CRYPTO_realloc(ptr: *mut c_void, num: usize, file: *const c_char, line: c_int) -> *mut c_void;
}

fn main() {
    allocations_inside_openssl_are_charged_to_the_side_that_made_them();
    every_allocator_entry_point_is_counted();
    a_side_tag_is_its_threads_own();
    the_pipes_a_side_writes_into_are_charged_to_neither_side();
    the_heap_measure_agrees_with_valgrind_dhat();
    println!("heap: all checks passed");
}

fn usage() -> (Usage, Usage) {
    (heap::usage(Side::Client), heap::usage(Side::Server))
}

fn allocations_inside_openssl_are_charged_to_the_side_that_made_them() {
    let early = unsafe { openssl_sys::CRYPTO_malloc(64, c"test".as_ptr(), 0) };
    heap::enable().unwrap();
    let (client0, server0) = usage();

    let block = heap::tagged(Side::Client, || unsafe { openssl_sys::CRYPTO_malloc(1000, c"test".as_ptr(), 0) });
    let (client, server) = usage();
    assert_eq!((client.held - client0.held, client.allocations - client0.allocations), (1000, 1));
    assert_eq!(server, server0);

    // Grown by the server: the client's block is freed, the server holds the new one.
    let block = heap::tagged(Side::Server, || unsafe { CRYPTO_realloc(block, 5000, c"test".as_ptr(), 0) });
    let (client, server) = usage();
    assert_eq!((client.held, client.frees - client0.frees), (client0.held, 1));
    assert_eq!((server.held - server0.held, server.allocations - server0.allocations), (5000, 1));
    assert_eq!(server.peak - server0.held, 5000);

    // Freed by the client, charged to the server, which allocated it.
    heap::tagged(Side::Client, || unsafe { openssl_sys::CRYPTO_free(block, c"test".as_ptr(), 0) });
    let (client, server) = usage();
    assert_eq!((client.held, client.frees - client0.frees), (client0.held, 1));
    assert_eq!((server.held, server.frees - server0.frees, server.peak - server0.held), (server0.held, 1, 5000));

    // A block from before the accounting began is not counted when it is freed.
    heap::tagged(Side::Client, || unsafe { openssl_sys::CRYPTO_free(early, c"test".as_ptr(), 0) });
    assert_eq!(heap::usage(Side::Client).frees, client.frees);
}

fn every_allocator_entry_point_is_counted() {
    let (client0, server0) = usage();
    heap::tagged(Side::Client, || unsafe {
        // black_box: a block that does not escape, the compiler may leave unallocated.
        let zeroed = black_box(System.alloc_zeroed(Layout::from_size_align(300, 8).unwrap())); // calloc
        let aligned = black_box(System.alloc(Layout::from_size_align(700, 4096).unwrap())); // posix_memalign
        let plain = black_box(System.alloc(Layout::from_size_align(11, 1).unwrap())); // malloc
        assert!(!zeroed.is_null() && !aligned.is_null() && !plain.is_null());
        assert_eq!(aligned as usize % 4096, 0);
        let client = heap::usage(Side::Client);
        assert_eq!((client.held - client0.held, client.allocations - client0.allocations), (1011, 3));
        System.dealloc(zeroed, Layout::from_size_align(300, 8).unwrap());
        System.dealloc(aligned, Layout::from_size_align(700, 4096).unwrap());
        System.dealloc(plain, Layout::from_size_align(11, 1).unwrap());
    });
    let client = heap::usage(Side::Client);
    assert_eq!((client.held, client.frees - client0.frees), (client0.held, 3));
    // The harness's own allocations are no side's.
    heap::tagged(Side::Server, || heap::untagged(|| drop(black_box(vec![0u8; 4096]))));
    assert_eq!(heap::usage(Side::Server).allocations, server0.allocations);
    assert_eq!(heap::lost(), 0);
}

/// The tag is per thread (`sample --threads` runs pairs on threads): what another thread
/// allocates while this one runs a side's call is not that side's, and another thread's tag
/// charges its own allocations.
fn a_side_tag_is_its_threads_own() {
    heap::reset_peak(Side::Server);
    let (client0, server0) = usage();
    // Barriers (futexes, no allocation) order the other thread's blocks inside this thread's
    // tagged call; the threads are spawned outside it, since spawning allocates.
    let (inside, done) = (std::sync::Barrier::new(2), std::sync::Barrier::new(2));
    std::thread::scope(|scope| {
        scope.spawn(|| {
            inside.wait();
            drop(black_box(vec![0u8; 3000])); // untagged on this thread: the harness's
            heap::tagged(Side::Server, || drop(black_box(vec![0u8; 2000])));
            done.wait();
        });
        heap::tagged(Side::Client, || {
            inside.wait();
            done.wait();
        });
    });
    let (client, server) = usage();
    assert_eq!(client.allocations - client0.allocations, 0, "another thread's blocks charged to this thread's side");
    assert_eq!(server.allocations - server0.allocations, 1);
    assert_eq!(server.peak - server0.held, 2000);
}

/// A side whose library writes a flight into the transport and keeps the connection open must
/// not be charged for the pipe the flight grows (the harness's memory): with a stack that holds
/// a known block per connection, the heap per connection is that block, whatever the flight's
/// size.
fn the_pipes_a_side_writes_into_are_charged_to_neither_side() {
    let memory_100 = scenario("memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm");
    for flight in [100, 20_000] {
        let report = memory::sample(&FixedFlight { flight }, &FixedFlight { flight }, &memory_100, pki())
            .expect("the fixture completes");
        let per_connection = |side| value(&report, side, Metric::HeapPerConnectionBytes);
        assert_eq!(
            (per_connection(Side::Client), per_connection(Side::Server)),
            (CLIENT_BLOCK as f64, SERVER_BLOCK as f64),
            "a {flight}-byte flight"
        );
    }
}

fn value(report: &SampleReport, side: Side, metric: Metric) -> f64 {
    let found = report.values.iter().find(|v| v.side == side && v.metric == metric);
    found.unwrap_or_else(|| panic!("no {metric:?} for the {side}: {report:?}")).value
}

/// What the fixture's client and server hold per connection.
const CLIENT_BLOCK: usize = 1000;
const SERVER_BLOCK: usize = 300;
static FLIGHT: [u8; 20_000] = [0x17; 20_000];

/// A test fixture, not a TLS library: its client writes one flight of `flight` bytes and holds
/// one block; its server reads the flight and holds one block. It reports what the scenario
/// asks, so that the gates pass.
struct FixedFlight {
    flight: usize,
}

struct FixedConnection {
    io: Endpoint,
    flight: usize,
    side: Side,
    negotiated: Negotiated,
    read: usize,
    held: Option<Vec<u8>>,
}

impl Stack for FixedFlight {
    type ClientConfig = Negotiated;
    type ServerConfig = Negotiated;
    type Client = FixedConnection;
    type Server = FixedConnection;

    fn id(&self) -> &'static str {
        "fixed-flight"
    }

    fn library(&self) -> String {
        "a test fixture".into()
    }

    fn backend(&self) -> tlsbench_harness::Backend {
        tlsbench_harness::Backend::new("no crypto", "-", None)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::everything()
    }

    fn client_config(&self, scenario: &Scenario, _: &Pki) -> Result<Negotiated, LibError> {
        Ok(asked(scenario, None))
    }

    fn server_config(&self, scenario: &Scenario, _: &Pki) -> Result<Negotiated, LibError> {
        Ok(asked(scenario, Some(false)))
    }

    fn new_client(&self, negotiated: &Negotiated, io: Endpoint) -> Result<FixedConnection, LibError> {
        Ok(FixedConnection {
            io,
            flight: self.flight,
            side: Side::Client,
            negotiated: *negotiated,
            read: 0,
            held: None,
        })
    }

    fn new_server(&self, negotiated: &Negotiated, io: Endpoint) -> Result<FixedConnection, LibError> {
        Ok(FixedConnection {
            io,
            flight: self.flight,
            side: Side::Server,
            negotiated: *negotiated,
            read: 0,
            held: None,
        })
    }
}

fn asked(scenario: &Scenario, client_cert_verified: Option<bool>) -> Negotiated {
    let (group, suite) = scenario.pins().expect("the fixture's scenarios are pinned");
    Negotiated {
        version: scenario.version,
        suite,
        group: Some(group),
        resumed: false,
        ems: None,
        client_cert_verified,
        ticket_received: None,
    }
}

impl Connection for FixedConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        match self.side {
            Side::Client if self.held.is_none() => {
                self.io.write_all(&FLIGHT[..self.flight]).map_err(LibError::new)?;
                self.held = Some(vec![1; CLIENT_BLOCK]);
            }
            Side::Client => {}
            Side::Server => loop {
                match self.io.read(&mut [0u8; 4096]) {
                    Ok(n) => self.read += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => return Err(LibError::new(e)),
                }
            },
        }
        if self.side == Side::Server && self.read == self.flight && self.held.is_none() {
            self.held = Some(vec![2; SERVER_BLOCK]);
        }
        Ok(self.held.is_some())
    }

    fn send(&mut self, _: &[u8]) -> Result<(), LibError> {
        Err(LibError::new("the fixture sends no application data"))
    }

    fn receive(&mut self, _: &mut [u8]) -> Result<usize, LibError> {
        Err(LibError::new("the fixture receives no application data"))
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        Ok(self.negotiated)
    }
}

/// Runs the runner under DHAT for memory-100 and memory-1000: the growth of DHAT's peak and
/// of its block count per extra connection pair must match the heap measure's per-connection
/// figures (the two sides' peaks and allocations added) within 2%. Both come from the same
/// processes: the runner's own accounting still runs under valgrind. DHAT also sees the
/// harness's own blocks (the links and their pipes, one pair per connection), which the heap
/// measure charges to neither side: the same samples taken in this process say how many.
fn the_heap_measure_agrees_with_valgrind_dhat() {
    let runs: Vec<_> = [100, 1000]
        .map(|n| {
            let scenario = format!("memory-{n}_1.3_x25519_ecdsa-p256_aes-128-gcm");
            Command::new("valgrind")
                .args(["--tool=dhat", "--dhat-out-file=/dev/null", "--soname-synonyms=somalloc=nouserintercepts"])
                .arg(env!("CARGO_BIN_EXE_tlsbench-runner-openssl"))
                .args([
                    "sample",
                    "--client",
                    "openssl",
                    "--server",
                    "openssl",
                    "--measure",
                    "heap",
                    "--scenario",
                    &scenario,
                ])
                .spawn_output()
        })
        .into_iter()
        .map(|child| child.wait_with_output().expect("valgrind ran"))
        .map(|output| {
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            assert!(output.status.success(), "valgrind failed: {stderr}");
            let reply: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(reply["status"], "ok", "{reply}");
            (dhat_line(&stderr, "At t-gmax:"), dhat_line(&stderr, "Total:"), reply)
        })
        .collect();
    let ((gmax_100, _), (_, blocks_100), _) = &runs[0];
    let ((gmax_1000, _), (_, blocks_1000), reply) = &runs[1];
    let dhat_peak = (gmax_1000 - gmax_100) as f64 / 900.0;
    let dhat_allocations = (blocks_1000 - blocks_100) as f64 / 900.0;
    let ours = |metric: &str| -> f64 {
        let values = reply["values"].as_array().unwrap();
        values.iter().filter(|v| v["metric"] == metric).map(|v| v["value"].as_f64().unwrap()).sum()
    };
    let (peak, allocations) = (ours("heap_peak_per_connection_bytes"), ours("allocations_per_handshake"));
    let (harness_peak, harness_allocations) = harness_blocks_per_connection();
    let (dhat_peak, dhat_allocations) = (dhat_peak - harness_peak, dhat_allocations - harness_allocations);
    println!(
        "per connection pair: peak {peak:.0} B (DHAT {dhat_peak:.0}), \
         allocations {allocations:.1} (DHAT {dhat_allocations:.1}), \
         DHAT's less the harness's own {harness_peak:.0} B in {harness_allocations:.1} blocks"
    );
    assert!(harness_allocations > 0.0, "the harness's links allocate per connection, and are seen");
    assert!((peak / dhat_peak - 1.0).abs() < 0.02, "peak {peak} vs DHAT {dhat_peak}");
    assert!(
        (allocations / dhat_allocations - 1.0).abs() < 0.02,
        "allocations {allocations} vs DHAT {dhat_allocations}"
    );
}

/// The growth of the harness's own peak bytes and allocations per added connection pair, from
/// memory-100 to memory-1000 with openssl, as in the runner under DHAT.
fn harness_blocks_per_connection() -> (f64, f64) {
    let sample = |n: usize| {
        let scenario = scenario(&format!("memory-{n}_1.3_x25519_ecdsa-p256_aes-128-gcm"));
        heap::reset_harness_peak();
        let before = heap::harness_usage();
        memory::sample(&OpenSsl, &OpenSsl, &scenario, pki()).expect("openssl memory-N");
        let after = heap::harness_usage();
        ((after.peak - before.held) as f64, (after.allocations - before.allocations) as f64)
    };
    // Once first, unmeasured: OpenSSL's once-per-process state is allocated outside any side's
    // call, so here it would count as the harness's (in the runner, before accounting starts).
    sample(100);
    let ((peak_100, allocations_100), (peak_1000, allocations_1000)) = (sample(100), sample(1000));
    ((peak_1000 - peak_100) / 900.0, (allocations_1000 - allocations_100) / 900.0)
}

/// `(bytes, blocks)` of a DHAT summary line such as `==1== At t-gmax: 628,055 bytes in 8,446 blocks`.
fn dhat_line(stderr: &str, label: &str) -> (u64, u64) {
    let line = stderr.lines().find_map(|l| l.split_once(label).map(|(_, rest)| rest.to_string()));
    let line = line.unwrap_or_else(|| panic!("DHAT printed no `{label}` line: {stderr}"));
    let numbers: Vec<u64> = line.split_whitespace().filter_map(|w| w.replace(',', "").parse().ok()).collect();
    match numbers[..] {
        [bytes, blocks] => (bytes, blocks),
        _ => panic!("unexpected DHAT line `{line}`"),
    }
}

trait SpawnOutput {
    fn spawn_output(&mut self) -> std::process::Child;
}

impl SpawnOutput for Command {
    /// Started with stdout and stderr captured, so that both runs go at once.
    fn spawn_output(&mut self) -> std::process::Child {
        self.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("valgrind is installed (scripts/setup.sh)")
    }
}
