//! Each allocator of the allocator axis is really the one in use, not just named: under
//! `TLSBENCH_ALLOCATOR=glibc|jemalloc|mimalloc`, blocks that OpenSSL allocates inside its own
//! code (an SSL_CTX, CRYPTO_malloc) and blocks of a Rust stack (a rustls connection, a Box)
//! are in the chosen allocator's books (jemalloc's `arenas.lookup`, mimalloc's
//! `mi_is_in_heap_region`) and in no other's; and the heap measure still counts them.
//!
//! No test harness (`harness = false`): the allocator is chosen once per process, on its first
//! allocation, so the test runs itself once per allocator, as the orchestrator runs a runner.

use std::ffi::c_void;
use std::process::Command;
use std::sync::Arc;

use tlsbench_harness::allocator::{self, Allocator};
use tlsbench_harness::protocol::Metric;
use tlsbench_harness::testing::{pki, scenario};
use tlsbench_harness::{memory, Side, Stack};
use tlsbench_stack_openssl::OpenSsl;
use tlsbench_stack_rustls::Rustls;

tlsbench_harness::interpose_malloc!();

/// Set in the children: the checks run there.
const CHILD: &str = "TLSBENCH_ALLOCATOR_TEST_CHILD";
/// The allocator a child must find in use, or `unknown`.
const EXPECT: &str = "TLSBENCH_ALLOCATOR_TEST_EXPECT";

fn main() {
    if std::env::var_os(CHILD).is_some() {
        match std::env::var(EXPECT).unwrap().as_str() {
            "unknown" => {
                assert_eq!(allocator::in_use().unwrap().name, Allocator::Glibc);
                println!("{}", allocator::check_requested().unwrap_err());
            }
            expected => in_the_chosen_allocator(expected.parse().unwrap()),
        }
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for chosen in Allocator::ALL {
        let output = Command::new(&exe)
            .env(allocator::ENV, chosen.name())
            .env(CHILD, "1")
            .env(EXPECT, chosen.name())
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "under {chosen}: {}\nstdout: {stdout}\nstderr: {stderr}", output.status);
        print!("{stdout}");
    }
    unset_means_glibc_and_an_unknown_name_is_refused(&exe);
    println!("allocator: all checks passed");
}

/// Whose books hold `ptr`: exactly `expected`'s.
fn assert_owned(expected: Allocator, ptr: *const c_void, what: &str) {
    assert!(!ptr.is_null(), "{what}: null");
    for allocator in [Allocator::Jemalloc, Allocator::Mimalloc] {
        assert_eq!(
            allocator.owns(ptr),
            allocator == expected,
            "{what} {ptr:?}: is it {allocator}'s? (running {expected})"
        );
    }
    assert!(expected.owns(ptr), "{what}: not {expected}'s");
}

fn in_the_chosen_allocator(expected: Allocator) {
    let used = allocator::in_use().expect("this binary interposes malloc");
    assert_eq!(used.name, expected);
    assert!(allocator::check_requested().is_ok());

    // OpenSSL allocates inside its own code: CRYPTO_malloc, and the SSL_CTX that SSL_CTX_new
    // builds (OPENSSL_zalloc inside libssl), reach the executable's malloc and so the chosen
    // allocator.
    openssl_sys::init();
    // SAFETY: plain OpenSSL calls; each block is freed by OpenSSL's own free.
    unsafe {
        let block = openssl_sys::CRYPTO_malloc(1000, c"test".as_ptr(), 0);
        assert_owned(expected, block, "CRYPTO_malloc(1000)");
        openssl_sys::CRYPTO_free(block, c"test".as_ptr(), 0);
        let ctx = openssl_sys::SSL_CTX_new(openssl_sys::TLS_method());
        assert_owned(expected, ctx.cast(), "SSL_CTX_new");
        openssl_sys::SSL_CTX_free(ctx);
    }

    // A Rust stack: a Box, and rustls's connection (its state and its buffers on the heap).
    let boxed = Box::new([7u8; 100]);
    assert_owned(expected, (&raw const *boxed).cast(), "Box<[u8; 100]>");
    let (scenario, pki) = (scenario("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"), pki());
    let rustls = Rustls::ring();
    let config: Arc<rustls::ClientConfig> = rustls.client_config(&scenario, pki).unwrap();
    let name = rustls_pki_types::ServerName::try_from("server.tlsbench.test").unwrap();
    let connection = Box::new(rustls::ClientConnection::new(config.clone(), name).unwrap());
    assert_owned(expected, (&raw const *connection).cast(), "rustls ClientConnection");
    assert_owned(expected, Arc::as_ptr(&config).cast(), "rustls ClientConfig");

    // The heap measure under this allocator: a handshake of each stack allocates, and frees.
    for (stack, report) in [
        ("openssl", memory::sample(&OpenSsl, &OpenSsl, &scenario, pki).unwrap()),
        ("rustls-ring", memory::sample(&rustls, &rustls, &scenario, pki).unwrap()),
    ] {
        for side in [Side::Client, Side::Server] {
            let value = |metric| report.values.iter().find(|v| v.side == side && v.metric == metric).unwrap().value;
            assert!(value(Metric::AllocationsPerHandshake) > 10.0, "{stack} {side} under {expected}: {report:?}");
            assert!(value(Metric::HeapPeakBytes) > 1000.0, "{stack} {side} under {expected}: {report:?}");
        }
    }
    println!("{used}: OpenSSL's and rustls's blocks are its own; the heap measure counts them");
}

/// Unset means glibc's; a name tlsbench does not know is served by glibc's malloc (the choice
/// is made before anything could report it) and refused before anything is measured.
fn unset_means_glibc_and_an_unknown_name_is_refused(exe: &std::path::Path) {
    let output = Command::new(exe).env_remove(allocator::ENV).env(CHILD, "1").env(EXPECT, "glibc").output().unwrap();
    assert!(output.status.success(), "unset: {}", String::from_utf8_lossy(&output.stderr));
    print!("unset: {}", String::from_utf8_lossy(&output.stdout));
    let output =
        Command::new(exe).env(allocator::ENV, "tcmalloc").env(CHILD, "1").env(EXPECT, "unknown").output().unwrap();
    assert!(output.status.success(), "tcmalloc: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "TLSBENCH_ALLOCATOR: unknown allocator `tcmalloc` (valid: glibc, jemalloc, mimalloc)"
    );
}
