//! rustls does not report its version at runtime: the versions this build links are compiled in.
//! A build from a maintainer's local checkout (scripts/build-rustls.sh PATH) also compiles in
//! the checkout's commit and path, which its library string carries (`rustls 0.23.46+1a2b3c4d5e
//! (aws-lc-rs 1.15.2) from /src/rustls`).

fn main() {
    tlsbench_build_info::export_locked_versions(&[
        ("rustls", "RUSTLS_VERSION"),
        ("aws-lc-rs", "AWS_LC_RS_VERSION"),
        ("aws-lc-fips-sys", "AWS_LC_FIPS_SYS_VERSION"),
        ("ring", "RING_VERSION"),
    ]);
    for var in ["TLSBENCH_RUSTLS_COMMIT", "TLSBENCH_RUSTLS_CHECKOUT"] {
        println!("cargo:rerun-if-env-changed={var}");
        println!("cargo:rustc-env={var}={}", std::env::var(var).unwrap_or_default());
    }
}
