//! The runner of the stacks on AWS-LC's FIPS module: rustls on aws-lc-rs's FIPS build, and
//! AWS-LC's own libssl through the `openssl` crate. The FIPS build serves every crate of the
//! binary (see Cargo.toml), and both stacks run on the one module. Opt-in: its C build is long.

use tlsbench_stack_aws_lc::AwsLc;
use tlsbench_stack_rustls::Rustls;

tlsbench_harness::family!(Fips {
    "rustls-aws-lc-rs-fips" => Rustls::aws_lc_rs_fips(),
    "aws-lc-fips" => AwsLc,
});

// Every allocation, AWS-LC's included, goes through tlsbench's accounting (measure heap).
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<Fips>()
}
