//! The runner of AWS-LC's libssl at another aws-lc-sys release than the workspace's Cargo.lock
//! holds: scripts/build-crate.sh aws-lc VERSION builds it in a copy of the workspace whose
//! adapter asks for aws-lc-sys =VERSION, with the openssl-sys (and openssl) release that builds
//! on it, into target/versions/aws-lc@VERSION, listed as aws-lc@VERSION. AWS-LC's libssl, whose
//! exported symbols are unprefixed, is alone in this process, as in runner-aws-lc.

use tlsbench_stack_aws_lc::AwsLc;

tlsbench_harness::family!(AwsLcRelease at env!("TLSBENCH_CRATE_RELEASE"), {
    "aws-lc" => AwsLc,
});

// Every allocation, AWS-LC's included, goes through tlsbench's accounting.
tlsbench_harness::interpose_malloc!();

fn main() -> std::process::ExitCode {
    tlsbench_harness::runner::main::<AwsLcRelease>()
}
