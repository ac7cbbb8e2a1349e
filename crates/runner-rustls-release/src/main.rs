//! The runner of rustls at another release than the workspace's Cargo.lock holds, or built from a
//! maintainer's local checkout: scripts/build-rustls.sh builds it in a copy of the workspace whose
//! lock (or [patch.crates-io]) names that rustls, into target/versions/rustls@RELEASE. Both
//! providers' stacks are listed as ID@RELEASE: rustls-aws-lc-rs@0.23.20, rustls-ring@0.23.20.

use tlsbench_stack_rustls::Rustls;

tlsbench_harness::family!(RustlsRelease at env!("TLSBENCH_RUSTLS_RELEASE"), {
    "rustls-aws-lc-rs" => Rustls::aws_lc_rs(),
    "rustls-ring" => Rustls::ring(),
});

// Every allocation, the providers' C and assembly included, goes through tlsbench's accounting.
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<RustlsRelease>()
}
