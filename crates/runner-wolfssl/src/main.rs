//! The runner of wolfSSL: one stack, in a runner of its own because wolfSSL is GPL-only and so
//! built only on request (see Cargo.toml). Its pairs with other stacks run split-process.

use tlsbench_stack_wolfssl::WolfSsl;

tlsbench_harness::family!(WolfSslFamily {
    "wolfssl" => WolfSsl,
});

// Every allocation, wolfSSL's included (its XMALLOC is malloc), goes through tlsbench's
// accounting (measure heap).
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<WolfSslFamily>()
}
