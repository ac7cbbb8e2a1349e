//! With a runner's feature, refuses to build without the release its stacks are listed under
//! (scripts/build-crate.sh sets it): a runner of the lock file's crate must not pass for another.

fn main() {
    println!("cargo:rerun-if-env-changed=TLSBENCH_CRATE_RELEASE");
    if ["CARGO_FEATURE_S2N_TLS", "CARGO_FEATURE_BORING", "CARGO_FEATURE_AWS_LC"]
        .iter()
        .all(|feature| std::env::var_os(feature).is_none())
    {
        return;
    }
    if std::env::var("TLSBENCH_CRATE_RELEASE").is_ok_and(|r| !r.is_empty()) {
        return;
    }
    panic!(
        "tlsbench-runner-release is built by scripts/build-crate.sh (s2n-tls|boring|aws-lc VERSION): it sets \
         TLSBENCH_CRATE_RELEASE, the release its stacks are listed under (s2n-tls@RELEASE, boringssl@RELEASE, \
         aws-lc@RELEASE)"
    );
}
