//! BoringSSL reports only "BoringSSL" at runtime: the version of boring-sys (which vendors one
//! BoringSSL commit) this build links is compiled in.

fn main() {
    tlsbench_build_info::export_locked_versions(&[("boring-sys", "BORING_SYS_VERSION")]);
}
