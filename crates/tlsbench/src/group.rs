//! `--group-by library|backend`: a run's cells split by their stacks' TLS library (rustls with
//! each of its providers together) or by their crypto backend (every stack on AWS-LC together),
//! as each stack's runner described it when the run was taken.

#[cfg(test)]
use crate::key::CellKey;
use crate::order::first_seen;
use crate::results::{CellResult, RunDocument};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    /// The TLS library and its version, without the crypto backend (e.g. `rustls 0.23.46`).
    Library,
    /// The crypto library and its version (e.g. `AWS-LC 1.66.2`, `OpenSSL libcrypto 3.0.19`).
    Backend,
}

/// What a stack of a run from before tlsbench kept backends is grouped under.
pub const NOT_RECORDED: &str = "not recorded (a run from before tlsbench kept backends)";

/// The cells of one group, in the run's order.
pub struct Group<'a> {
    /// `backend AWS-LC 1.66.2`
    pub title: String,
    /// Its stacks, each with what sets it apart in the group: for a backend, how the stack
    /// reaches it (`rustls-aws-lc-rs: aws-lc-rs 1.19.0`); for a library, its backend.
    pub stacks: Vec<String>,
    pub cells: Vec<&'a CellResult>,
}

/// The run's cells by group, groups in order of first appearance. A pair of two stacks in
/// different groups (an interop pair) is a group of its own, `client key / server key`.
pub fn split(doc: &RunDocument, by: GroupBy) -> Vec<Group<'_>> {
    let keyed: Vec<(String, &CellResult)> = doc.results.iter().map(|cell| (cell_key(doc, by, cell), cell)).collect();
    first_seen(keyed.iter().map(|(key, _)| key.clone()))
        .into_iter()
        .map(|key| {
            let cells: Vec<&CellResult> = keyed.iter().filter(|(k, _)| *k == key).map(|(_, cell)| *cell).collect();
            let ids = first_seen(cells.iter().flat_map(|c| [c.key.client_stack.as_str(), c.key.server_stack.as_str()]));
            let stacks = ids.into_iter().map(|id| stack_note(doc, by, id)).collect();
            let what = match by {
                GroupBy::Library => "library",
                GroupBy::Backend => "backend",
            };
            Group { title: format!("{what} {key}"), stacks, cells }
        })
        .collect()
}

fn cell_key(doc: &RunDocument, by: GroupBy, cell: &CellResult) -> String {
    let client = stack_key(doc, by, &cell.key.client_stack, cell.client_library.as_deref());
    let server = stack_key(doc, by, &cell.key.server_stack, cell.server_library.as_deref());
    match client == server {
        true => client,
        false => format!("{client} / {server}"),
    }
}

/// A stack's group: its TLS library (else, in older runs, its whole library string), or its
/// backend's name and version.
fn stack_key(doc: &RunDocument, by: GroupBy, id: &str, cell_library: Option<&str>) -> String {
    let info = doc.run.stacks.iter().find(|s| s.id == id);
    match by {
        GroupBy::Library => info
            .and_then(|i| i.tls_library.clone())
            .or_else(|| info.map(|i| i.library.clone()))
            .or_else(|| cell_library.map(String::from))
            .unwrap_or_else(|| id.to_string()),
        GroupBy::Backend => {
            info.and_then(|i| i.backend.as_ref()).map_or_else(|| NOT_RECORDED.to_string(), |b| b.group())
        }
    }
}

/// `rustls-ring on ring 0.17.14` under a library; `s2n-tls (aws-lc-sys 0.47.0 via aws-lc-rs
/// 1.19.0)` under a backend.
fn stack_note(doc: &RunDocument, by: GroupBy, id: &str) -> String {
    let backend = doc.run.stacks.iter().find(|s| s.id == id).and_then(|i| i.backend.as_ref());
    match (by, backend) {
        (GroupBy::Library, Some(backend)) => format!("{id} on {backend}"),
        (GroupBy::Backend, Some(backend)) => {
            backend.detail.as_ref().map_or_else(|| id.to_string(), |detail| format!("{id} ({detail})"))
        }
        (_, None) => id.to_string(),
    }
}

impl Group<'_> {
    /// `backend AWS-LC 1.66.2: rustls-aws-lc-rs (aws-lc-rs 1.19.0), s2n-tls (...)`
    pub fn heading(&self) -> String {
        format!("{}: {}", self.title, self.stacks.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;
    use tlsbench_harness::protocol::StackInfo;
    use tlsbench_harness::{Backend, Capabilities};

    /// The fixture with three rustls-like and openssl-like stacks described as runners now
    /// describe them, and an interop pair.
    fn document() -> RunDocument {
        let mut doc = fixture::document();
        let info = |id: &str, tls: &str, backend: Backend| StackInfo {
            id: id.into(),
            library: format!("{tls} ({id})"),
            tls_library: Some(tls.into()),
            backend: Some(backend),
            capabilities: Capabilities::everything(),
        };
        doc.run.stacks = vec![
            info(
                "rustls-aws-lc-rs",
                "rustls 0.23.46",
                Backend::new("AWS-LC", "1.66.2", Some("aws-lc-rs 1.19.0".into())),
            ),
            info(
                "openssl",
                "OpenSSL 3.0.19",
                Backend::new("OpenSSL libcrypto", "3.0.19", Some("system library".into())),
            ),
            info("rustls-ring", "rustls 0.23.46", Backend::new("ring", "0.17.14", None)),
            info("s2n-tls", "s2n-tls 0.3.47", Backend::new("AWS-LC", "1.66.2", Some("aws-lc-sys 0.47.0".into()))),
        ];
        let like = |cell: &CellResult, client: &str, server: &str| CellResult {
            key: CellKey { client_stack: client.into(), server_stack: server.into(), ..cell.key.clone() },
            ..cell.clone()
        };
        let first = doc.results[0].clone();
        doc.results.push(like(&first, "rustls-ring", "rustls-ring"));
        doc.results.push(like(&first, "s2n-tls", "s2n-tls"));
        doc.results.push(like(&first, "rustls-ring", "openssl"));
        doc
    }

    fn summary(groups: &[Group]) -> Vec<(String, Vec<String>)> {
        let pairs = |g: &Group| first_seen(g.cells.iter().map(|c| c.key.pair_label()));
        groups.iter().map(|g| (g.heading(), pairs(g))).collect()
    }

    #[test]
    fn by_library_puts_a_library_s_backends_together() {
        let doc = document();
        assert_eq!(
            summary(&split(&doc, GroupBy::Library)),
            [
                (
                    concat!(
                        "library rustls 0.23.46: rustls-aws-lc-rs on AWS-LC 1.66.2 (aws-lc-rs 1.19.0), ",
                        "rustls-ring on ring 0.17.14",
                    )
                    .into(),
                    vec!["rustls-aws-lc-rs".into(), "rustls-ring".into()]
                ),
                (
                    "library OpenSSL 3.0.19: openssl on OpenSSL libcrypto 3.0.19 (system library)".into(),
                    vec!["openssl".into()]
                ),
                ("library s2n-tls 0.3.47: s2n-tls on AWS-LC 1.66.2 (aws-lc-sys 0.47.0)".into(), vec!["s2n-tls".into()]),
                (
                    concat!(
                        "library rustls 0.23.46 / OpenSSL 3.0.19: rustls-ring on ring 0.17.14, ",
                        "openssl on OpenSSL libcrypto 3.0.19 (system library)",
                    )
                    .into(),
                    vec!["rustls-ring -> openssl".into()]
                ),
            ]
        );
    }

    #[test]
    fn by_backend_puts_the_stacks_on_one_crypto_library_together() {
        let doc = document();
        let groups = split(&doc, GroupBy::Backend);
        let headings: Vec<String> = groups.iter().map(Group::heading).collect();
        assert_eq!(
            headings,
            [
                "backend AWS-LC 1.66.2: rustls-aws-lc-rs (aws-lc-rs 1.19.0), s2n-tls (aws-lc-sys 0.47.0)",
                "backend OpenSSL libcrypto 3.0.19: openssl (system library)",
                "backend ring 0.17.14: rustls-ring",
                "backend ring 0.17.14 / OpenSSL libcrypto 3.0.19: rustls-ring, openssl (system library)",
            ]
        );
        // Every cell is in exactly one group.
        assert_eq!(groups.iter().map(|g| g.cells.len()).sum::<usize>(), doc.results.len());
    }

    #[test]
    fn a_run_from_before_backends_were_kept_groups_by_its_library_strings() {
        let doc = fixture::document();
        let by_library: Vec<String> = split(&doc, GroupBy::Library).iter().map(|g| g.title.clone()).collect();
        assert_eq!(by_library, ["library rustls-aws-lc-rs 1.0", "library openssl 1.0"]);
        let by_backend: Vec<String> = split(&doc, GroupBy::Backend).iter().map(|g| g.title.clone()).collect();
        assert_eq!(by_backend, [format!("backend {NOT_RECORDED}")]);
    }
}
