//! Bertie and libcrux, its cryptography, have no runtime version string: the versions this
//! build links are compiled in.

fn main() {
    tlsbench_build_info::export_locked_versions(&[("bertie", "BERTIE_VERSION"), ("libcrux", "LIBCRUX_VERSION")]);
}
