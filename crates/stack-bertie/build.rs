//! Bertie has no runtime version string: the version this build links is compiled in.

fn main() {
    tlsbench_build_info::export_locked_versions(&[("bertie", "BERTIE_VERSION")]);
}
