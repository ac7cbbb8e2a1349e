//! `tlsbench list stacks`: each stack with the library its runner reports and what it supports.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use tlsbench_harness::protocol::StackInfo;

pub fn render(infos: &[StackInfo]) -> String {
    fn joined<T: std::fmt::Display>(items: &[T]) -> String {
        items.iter().map(T::to_string).collect::<Vec<_>>().join(" ")
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(["stack", "library", "scenarios", "TLS", "groups", "key types", "cipher suites"]);
    for info in infos {
        let c = &info.capabilities;
        table.add_row([
            info.id.clone(),
            info.library.clone(),
            joined(&c.kinds),
            joined(&c.versions),
            joined(&c.groups),
            joined(&c.keys),
            joined(&c.suites),
        ]);
    }
    format!("{table}\n")
}
