//! With the `release` feature, refuses to build without the release its stacks are listed under
//! (scripts/build-rustls.sh sets it): a runner of the lock file's rustls must not pass for another.

fn main() {
    println!("cargo:rerun-if-env-changed=TLSBENCH_RUSTLS_RELEASE");
    if std::env::var_os("CARGO_FEATURE_RELEASE").is_none() {
        return;
    }
    if std::env::var("TLSBENCH_RUSTLS_RELEASE").is_ok_and(|r| !r.is_empty()) {
        return;
    }
    panic!(
        "tlsbench-runner-rustls-release is built by scripts/build-rustls.sh (RELEASE or PATH): it sets \
         TLSBENCH_RUSTLS_RELEASE, the release its stacks are listed under (rustls-aws-lc-rs@RELEASE)"
    );
}
