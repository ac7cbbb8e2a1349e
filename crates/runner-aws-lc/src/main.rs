//! The runner of AWS-LC's own libssl: one stack. The `openssl` crate it is reached through is
//! on AWS-LC here, so this runner is built alone (see Cargo.toml); AWS-LC's symbols carry
//! aws-lc-sys's prefix (`aws_lc_0_41_0_SSL_new`), so nothing else could capture them or be
//! captured by them, but a runner of its own keeps the one libssl in it unmistakable.

use tlsbench_stack_aws_lc::AwsLc;

tlsbench_harness::family!(AwsLcFamily {
    "aws-lc" => AwsLc,
});

// Every allocation, AWS-LC's included, goes through tlsbench's accounting (measure heap).
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<AwsLcFamily>()
}
