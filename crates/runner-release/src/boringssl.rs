//! The runner of BoringSSL at another release of the boring crates than the workspace's
//! Cargo.lock holds: scripts/build-crate.sh boring VERSION builds it in a copy of the workspace
//! whose adapter asks for boring and boring-sys =VERSION (boring-sys vendors a BoringSSL commit
//! and builds it with cmake), into target/versions/boringssl@VERSION, listed as boringssl@VERSION.
//! BoringSSL's unprefixed symbols are alone in this process, as in runner-boringssl.

use tlsbench_stack_boringssl::BoringSsl;

tlsbench_harness::family!(BoringSslRelease at env!("TLSBENCH_CRATE_RELEASE"), {
    "boringssl" => BoringSsl,
});

// Every allocation, BoringSSL's included, goes through tlsbench's accounting.
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<BoringSslRelease>()
}
