//! The runner of s2n-tls at another release of its crates than the workspace's Cargo.lock holds:
//! scripts/build-crate.sh s2n-tls VERSION builds it in a copy of the workspace whose adapter asks
//! for s2n-tls =VERSION (s2n-tls-sys, which vendors s2n-tls's C source, follows), into
//! target/versions/s2n-tls@VERSION. Both stacks are listed as ID@VERSION: s2n-tls@0.3.31,
//! s2n-tls-recvbuf@0.3.31. Its C code uses AWS-LC's prefixed symbols, alone in this process.

use tlsbench_stack_s2n::S2n;

tlsbench_harness::family!(S2nRelease at env!("TLSBENCH_CRATE_RELEASE"), {
    "s2n-tls" => S2n::new(),
    "s2n-tls-recvbuf" => S2n::recv_buffering(),
});

// Every allocation, s2n-tls's and AWS-LC's included, goes through tlsbench's accounting.
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<S2nRelease>()
}
