//! rustls does not report its version at runtime: the versions this build links are compiled in.

fn main() {
    tlsbench_build_info::export_locked_versions(&[
        ("rustls", "RUSTLS_VERSION"),
        ("aws-lc-rs", "AWS_LC_RS_VERSION"),
        ("aws-lc-fips-sys", "AWS_LC_FIPS_SYS_VERSION"),
        ("ring", "RING_VERSION"),
    ]);
}
