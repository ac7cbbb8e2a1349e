//! `tlsbench list stacks`: each stack with the library and crypto backend its runner reports,
//! and what it supports.

use tlsbench_harness::protocol::StackInfo;

use crate::output::{columns, WIDTH};

/// Each stack as a block: its id and library, then its backend and what it supports, a line
/// each, wrapped to fit the width (a table of all of them side by side was 300 columns wide).
pub fn render(infos: &[StackInfo]) -> String {
    fn joined<T: std::fmt::Display>(items: &[T]) -> String {
        items.iter().map(T::to_string).collect::<Vec<_>>().join(" ")
    }
    const LABEL: usize = 18;
    let line = |label: &str, text: &str| {
        let wrapped = columns::wrap(text, WIDTH - LABEL, 0);
        let lines = wrapped.lines().enumerate();
        lines.map(|(i, l)| format!("{:<LABEL$}{l}\n", if i == 0 { label } else { "" })).collect::<String>()
    };
    let mut out = String::new();
    for info in infos {
        let c = &info.capabilities;
        // An id too long for the label column (`rustls-aws-lc-rs@0.23.29`) has a line of its own.
        if info.id.chars().count() < LABEL {
            out += &line(&info.id, &info.library);
        } else {
            out += &format!("{}\n{}", info.id, line("", &info.library));
        }
        // A runner from before backends were reported names none.
        out += &line("  backend", &info.backend.as_ref().map_or_else(|| "-".to_string(), ToString::to_string));
        out += &line("  scenarios", &joined(&c.kinds));
        out += &line("  TLS", &joined(&c.versions));
        out += &line("  groups", &joined(&c.groups));
        out += &line("  key types", &joined(&c.keys));
        out += &line("  cipher suites", &joined(&c.suites));
        out += "\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsbench_harness::{Backend, Capabilities};

    #[test]
    fn each_stack_shows_its_library_and_backend_within_120_columns() {
        let mut ring = StackInfo::new("rustls-ring", "rustls 0.23.46 (ring 0.17.14)", Capabilities::everything());
        ring.backend = Some(Backend::new("ring", "0.17.14", None));
        let mut openssl = StackInfo::new("openssl", "OpenSSL 3.0.19 27 Jan 2026", Capabilities::everything());
        openssl.backend = Some(Backend::new("OpenSSL libcrypto", "3.0.19", Some("system library".into())));
        let old = StackInfo::new("old", "Old 1.0", Capabilities::everything());
        let release = StackInfo::new("rustls-aws-lc-rs@0.23.29", "rustls 0.23.29", Capabilities::everything());
        let text = render(&[ring, openssl, old, release]);
        // Each line with its padding squeezed to one space; a block per stack.
        let squeezed: Vec<String> = text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        let block = |id: &str| {
            let at = squeezed.iter().position(|l| l.split(' ').next() == Some(id)).unwrap();
            squeezed[at..].iter().take_while(|l| !l.is_empty()).cloned().collect::<Vec<_>>()
        };
        assert_eq!(
            block("rustls-ring")[..2],
            ["rustls-ring rustls 0.23.46 (ring 0.17.14)", "backend ring 0.17.14"],
            "{text}"
        );
        assert_eq!(block("openssl")[1], "backend OpenSSL libcrypto 3.0.19 (system library)", "{text}");
        assert_eq!(block("old")[..2], ["old Old 1.0", "backend -"], "{text}");
        // An id wider than the label column is not run into its library.
        assert_eq!(block("rustls-aws-lc-rs@0.23.29")[..2], ["rustls-aws-lc-rs@0.23.29", "rustls 0.23.29"], "{text}");
        assert!(block("openssl").iter().any(|l| l == "TLS 1.2 1.3"), "{text}");
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= 120, "{widest} columns:\n{text}");
    }
}
