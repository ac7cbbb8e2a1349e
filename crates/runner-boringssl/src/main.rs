//! The runner of the link family built on BoringSSL: BoringSSL itself (static, unprefixed
//! symbols that would capture the system libssl's), and rustls with either provider.

use tlsbench_stack_boringssl::BoringSsl;
use tlsbench_stack_rustls::Rustls;

tlsbench_harness::family!(BoringSslFamily {
    "boringssl" => BoringSsl,
    "rustls-aws-lc-rs" => Rustls::aws_lc_rs(),
    "rustls-ring" => Rustls::ring(),
});

// Every allocation, the C libraries' included, goes through tlsbench's accounting (measure heap).
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<BoringSslFamily>()
}
