//! s2n-tls has no runtime version string: the version this build links is compiled in.

fn main() {
    tlsbench_build_info::export_locked_versions(&[
        ("s2n-tls", "S2N_TLS_VERSION"),
        ("aws-lc-rs", "AWS_LC_RS_VERSION"),
        ("aws-lc-sys", "AWS_LC_SYS_VERSION"),
    ]);
}
