//! The build this runner is (its name, profile and flags), which `list` and `sample` report.

fn main() {
    tlsbench_build_info::export_build();
}
