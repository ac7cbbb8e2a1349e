//! `tlsbench list stacks`: each stack with the library and crypto backend its runner reports,
//! and what it supports.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use tlsbench_harness::protocol::StackInfo;

pub fn render(infos: &[StackInfo]) -> String {
    fn joined<T: std::fmt::Display>(items: &[T]) -> String {
        items.iter().map(T::to_string).collect::<Vec<_>>().join(" ")
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(["stack", "library", "backend", "scenarios", "TLS", "groups", "key types", "cipher suites"]);
    for info in infos {
        let c = &info.capabilities;
        table.add_row([
            info.id.clone(),
            info.library.clone(),
            // A runner from before backends were reported names none.
            info.backend.as_ref().map_or_else(|| "-".to_string(), ToString::to_string),
            joined(&c.kinds),
            joined(&c.versions),
            joined(&c.groups),
            joined(&c.keys),
            joined(&c.suites),
        ]);
    }
    format!("{table}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsbench_harness::{Backend, Capabilities};

    #[test]
    fn each_row_shows_the_stack_s_backend() {
        let mut ring = StackInfo::new("rustls-ring", "rustls 0.23.46 (ring 0.17.14)", Capabilities::everything());
        ring.backend = Some(Backend::new("ring", "0.17.14", None));
        let mut openssl = StackInfo::new("openssl", "OpenSSL 3.0.19 27 Jan 2026", Capabilities::everything());
        openssl.backend = Some(Backend::new("OpenSSL libcrypto", "3.0.19", Some("system library".into())));
        let old = StackInfo::new("old", "Old 1.0", Capabilities::everything());
        let text = render(&[ring, openssl, old]);
        // Each line with its padding squeezed to one space.
        let squeezed: Vec<String> = text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        let row = |id: &str| squeezed.iter().find(|l| l.split(' ').nth(1) == Some(id)).unwrap().clone();
        assert!(squeezed[1].starts_with("│ stack ┆ library ┆ backend ┆ scenarios ┆"), "{text}");
        assert!(row("rustls-ring").contains("┆ ring 0.17.14 "), "{text}");
        assert!(row("openssl").contains("┆ OpenSSL libcrypto 3.0.19 (system library) "), "{text}");
        assert!(row("old").contains("┆ Old 1.0 ┆ - ┆"), "{text}");
    }
}
