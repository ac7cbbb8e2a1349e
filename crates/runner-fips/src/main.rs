//! The runner of rustls on AWS-LC's FIPS module: one stack, since the FIPS build of aws-lc-rs
//! serves every crate of the binary (see Cargo.toml). Opt-in: its C build is long.

use tlsbench_stack_rustls::Rustls;

tlsbench_harness::family!(RustlsFips {
    "rustls-aws-lc-rs-fips" => Rustls::aws_lc_rs_fips(),
});

// Every allocation, AWS-LC's included, goes through tlsbench's accounting (measure heap).
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<RustlsFips>()
}
