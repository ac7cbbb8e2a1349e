//! A cell's identity: every axis that tells one cell of a run from another, in one type.
//!
//! The results document, the database's `cells` table, the CSV export, the tables' labels and
//! `compare`'s matching all derive from [`CellKey`]: its serde names are the JSON fields and the
//! database and CSV columns. Adding an axis is one field here (and in [`CellKey::COLUMNS`]), one
//! migration step in store/schema.rs, and the code that gives the axis its meaning.

use serde::{Deserialize, Serialize};
use tlsbench_harness::Contexts;

/// Every axis of a cell, as stored and exported: names, not the planner's types, so that a run
/// that a later tlsbench no longer plans (a renamed scenario, a removed stack) still reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CellKey {
    pub scenario: String,
    pub client_stack: String,
    pub server_stack: String,
    /// "time", "io", "heap", "rss", "instructions" or "net".
    pub measure: String,
    /// "in-process" (both sides in one runner), "split-process" (one runner per side, in
    /// memory) or "tcp" (a server and a load generator on a loopback TCP socket: the transport).
    #[serde(default = "in_process")]
    pub process: String,
    /// The allocator the runners' malloc forwarded to, where the run chose allocators
    /// (`--allocator`); absent in a run that did not, whose Rust runners ran glibc's malloc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocator: Option<String>,
    /// The pairs measured side by side, one per thread (`--threads N`, N > 1); over TCP, the
    /// server's workers (`--workers N`). Absent: one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// What those threads share, where the run chose it (`--contexts`): `own` (each thread its
    /// configs) or `shared` (one server config and one client config for all). Absent in a run
    /// that did not, whose threads had their own; and on one thread or over TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contexts: Option<String>,
    /// The build of the runners that measured it, where the run chose builds (`--build`):
    /// `native`, `lto`, `release`; absent in a run that did not, which ran release's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The C compiler of the libraries the runners built from source, where the run chose
    /// compilers (`--compiler`): `gcc`, `clang`; absent in a run that did not, which ran gcc's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
}

/// Documents from before split-process pairs measured everything in one process.
fn in_process() -> String {
    "in-process".into()
}

impl CellKey {
    /// The fields' serde names, in order: the database's and the CSV's columns of the key (a
    /// test holds them to the serde derive).
    pub const COLUMNS: [&'static str; 10] = [
        "scenario",
        "client_stack",
        "server_stack",
        "measure",
        "process",
        "allocator",
        "threads",
        "contexts",
        "build",
        "compiler",
    ];

    /// Each column's value, in the order of [`CellKey::COLUMNS`]; None for an axis the run did
    /// not choose.
    pub fn values(&self) -> [Option<Value>; 10] {
        let object = match serde_json::to_value(self).expect("a key of strings and numbers serialises") {
            serde_json::Value::Object(object) => object,
            other => unreachable!("a struct serialises to an object, not {other}"),
        };
        Self::COLUMNS.map(|column| match object.get(column) {
            Some(serde_json::Value::String(text)) => Some(Value::Text(text.clone())),
            Some(serde_json::Value::Number(n)) => Some(Value::Integer(n.as_i64().expect("counts are integers"))),
            _ => None,
        })
    }

    /// The key of the columns' values (as [`CellKey::values`] gives them, or a database row).
    pub fn from_values(values: impl IntoIterator<Item = Option<Value>>) -> Result<CellKey, String> {
        let object: serde_json::Map<String, serde_json::Value> = Self::COLUMNS
            .iter()
            .zip(values)
            .filter_map(|(column, value)| {
                let value = match value? {
                    Value::Text(text) => serde_json::Value::String(text),
                    Value::Integer(n) => serde_json::Value::from(n),
                };
                Some((column.to_string(), value))
            })
            .collect();
        serde_json::from_value(serde_json::Value::Object(object)).map_err(|e| e.to_string())
    }

    /// What the cell's variants of thread (or worker) count share: every axis but that count
    /// and what the threads share. A cell of N threads, with their own configs or shared ones, is
    /// compared with the one-thread cell of the same variant key (one thread has its own).
    pub fn variant_key(&self) -> CellKey {
        CellKey { threads: None, contexts: None, ..self.clone() }
    }

    /// The key as cells are matched across runs: a run that chose no allocator ran glibc's, one
    /// without threads one pair, threads of a run that chose no contexts their own, one that
    /// chose no build release's, one that chose no compiler gcc's; `by_build` false leaves the
    /// build and the compiler out.
    pub fn for_matching(&self, by_build: bool) -> CellKey {
        let threads_in_memory = self.threads.is_some() && !self.is_tcp();
        CellKey {
            allocator: Some(self.allocator_key().to_string()),
            threads: Some(self.threads.unwrap_or(1)),
            contexts: self.contexts.clone().or_else(|| threads_in_memory.then(|| Contexts::Own.name().to_string())),
            build: by_build.then(|| self.build_key().to_string()),
            compiler: by_build.then(|| self.compiler_key().to_string()),
            ..self.clone()
        }
    }

    /// The allocator as cells are matched across runs: a run that chose none ran glibc's.
    pub fn allocator_key(&self) -> &str {
        self.allocator.as_deref().unwrap_or("glibc")
    }

    /// The build as cells are matched across runs: a run that chose none ran release's.
    pub fn build_key(&self) -> &str {
        self.build.as_deref().unwrap_or("release")
    }

    /// The C compiler as cells are matched across runs: a run that chose none ran gcc's.
    pub fn compiler_key(&self) -> &str {
        self.compiler.as_deref().unwrap_or("gcc")
    }

    /// Over a real TCP socket: a server and its load (`tcp`), or a server's peak (`tcp-peak`).
    pub fn is_tcp(&self) -> bool {
        matches!(self.process.as_str(), "tcp" | "tcp-peak")
    }

    /// Measured by the clock (wall or CPU time per sample): the `time` measure.
    pub fn is_timed(&self) -> bool {
        self.measure == "time"
    }

    /// Counted under callgrind in fixed iterations: the `instructions` and `sync` measures.
    pub fn is_counted(&self) -> bool {
        matches!(self.measure.as_str(), "instructions" | "sync")
    }

    /// The transport's calls, records and bytes: the `io` measure.
    pub fn is_io(&self) -> bool {
        self.measure == "io"
    }

    /// The column label of the pair: the stack id, or `client -> server` for an interop pair;
    /// ` [split]` when the two sides ran in separate runners, ` [tcp]` over a TCP socket,
    /// ` [tcp peak]` for a server's peak over one.
    /// ` (jemalloc)` after the pair where the run chose allocators, ` (2 threads)` for N pairs
    /// on threads (` (2 workers)` for a server's workers over TCP), ` (jemalloc, 2 threads)` for
    /// both, ` (2 threads, shared context)` or ` (2 threads, own contexts)` where the run chose
    /// what threads share; ` [native]` where the run chose builds, ` [clang]` where it chose
    /// compilers.
    pub fn pair_label(&self) -> String {
        let mut pair = pair_label(&self.client_stack, &self.server_stack)
            + &variant_label(self.allocator.as_deref(), self.threads, self.contexts.as_deref(), self.is_tcp());
        for chosen in [&self.build, &self.compiler].into_iter().flatten() {
            pair.push_str(&format!(" [{chosen}]"));
        }
        match self.process.as_str() {
            "split-process" => format!("{pair} [split]"),
            "tcp" => format!("{pair} [tcp]"),
            "tcp-peak" => format!("{pair} [tcp peak]"),
            _ => pair,
        }
    }
}

/// A column's value in the database or the CSV.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Text(String),
    Integer(i64),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Text(text) => f.write_str(text),
            Value::Integer(n) => write!(f, "{n}"),
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Value::Text(text) => text.to_sql(),
            Value::Integer(n) => n.to_sql(),
        }
    }
}

impl rusqlite::types::FromSql for Value {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        match value {
            rusqlite::types::ValueRef::Integer(n) => Ok(Value::Integer(n)),
            _ => String::column_result(value).map(Value::Text),
        }
    }
}

/// What follows a pair's label for a variant of a cell: ` (jemalloc)`, ` (2 threads)`,
/// ` (jemalloc, 2 threads, shared context)`; nothing for the default.
fn variant_label(allocator: Option<&str>, threads: Option<u32>, contexts: Option<&str>, tcp: bool) -> String {
    let unit = if tcp { "workers" } else { "threads" };
    let contexts = contexts.map(|contexts| match contexts.parse() {
        Ok(Contexts::Shared) => "shared context".to_string(),
        Ok(Contexts::Own) => "own contexts".to_string(),
        Err(_) => format!("{contexts} contexts"),
    });
    let parts: Vec<String> = allocator
        .map(str::to_string)
        .into_iter()
        .chain(threads.map(|n| format!("{n} {unit}")))
        .chain(contexts)
        .collect();
    match parts.is_empty() {
        true => String::new(),
        false => format!(" ({})", parts.join(", ")),
    }
}

/// The stack id of a pair of one stack, or `client -> server` for an interop pair.
pub fn pair_label(client: &str, server: &str) -> String {
    match client == server {
        true => client.to_string(),
        false => format!("{client} -> {server}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CellKey {
        CellKey {
            scenario: "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".into(),
            client_stack: "openssl".into(),
            server_stack: "rustls-ring".into(),
            measure: "time".into(),
            process: "split-process".into(),
            allocator: Some("jemalloc".into()),
            threads: Some(4),
            contexts: Some("shared".into()),
            build: Some("native".into()),
            compiler: Some("clang".into()),
        }
    }

    #[test]
    fn the_columns_are_the_serde_fields_in_order() {
        let serialised = serde_json::to_value(key()).unwrap();
        let fields: Vec<&str> = serialised.as_object().unwrap().keys().map(String::as_str).collect();
        let mut columns = CellKey::COLUMNS.to_vec();
        columns.sort_unstable(); // serde_json's map is sorted
        assert_eq!(fields, columns);
    }

    #[test]
    fn a_key_goes_through_its_column_values_and_back() {
        let plain = CellKey { allocator: None, threads: None, contexts: None, build: None, compiler: None, ..key() };
        for key in [key(), plain] {
            let values = key.values();
            assert_eq!(
                values.iter().flatten().count(),
                10 - [&key.allocator, &key.contexts, &key.build, &key.compiler].iter().filter(|v| v.is_none()).count()
                    - usize::from(key.threads.is_none())
            );
            assert_eq!(CellKey::from_values(values).unwrap(), key);
        }
        // An old document's cell without a process ran in one.
        let old =
            CellKey::from_values(key().values().into_iter().enumerate().map(|(i, v)| (i != 4).then_some(v).flatten()));
        assert_eq!(old.unwrap().process, "in-process");
        let missing = CellKey::from_values(std::iter::repeat_n(None, 10)).unwrap_err();
        assert!(missing.contains("missing field `scenario`"), "{missing}");
    }

    #[test]
    fn labels_name_every_axis_a_run_chose() {
        assert_eq!(
            key().pair_label(),
            "openssl -> rustls-ring (jemalloc, 4 threads, shared context) [native] [clang] [split]"
        );
        let own = CellKey { allocator: None, contexts: Some("own".into()), ..key() };
        assert_eq!(own.pair_label(), "openssl -> rustls-ring (4 threads, own contexts) [native] [clang] [split]");
        let tcp = CellKey {
            process: "tcp".into(),
            allocator: None,
            contexts: None,
            build: None,
            compiler: None,
            client_stack: "openssl".into(),
            server_stack: "openssl".into(),
            ..key()
        };
        assert_eq!(tcp.pair_label(), "openssl (4 workers) [tcp]");
        assert_eq!(CellKey { threads: None, ..tcp.clone() }.pair_label(), "openssl [tcp]");
        let peak = CellKey { process: "tcp-peak".into(), ..tcp };
        assert_eq!(peak.pair_label(), "openssl (4 workers) [tcp peak]");
        assert!(peak.is_tcp());
    }

    #[test]
    fn matching_fills_in_the_defaults_and_leaves_the_build_out_on_request() {
        let plain = CellKey { allocator: None, build: None, compiler: None, ..key() };
        let defaults = CellKey {
            allocator: Some("glibc".into()),
            build: Some("release".into()),
            compiler: Some("gcc".into()),
            ..key()
        };
        assert_eq!(plain.for_matching(true), defaults.for_matching(true));
        for other in [CellKey { build: Some("lto".into()), ..key() }, CellKey { compiler: Some("gcc".into()), ..key() }]
        {
            assert_ne!(key().for_matching(true), other.for_matching(true));
            assert_eq!(key().for_matching(false), other.for_matching(false));
        }
        assert_eq!(key().variant_key(), CellKey { threads: Some(1), ..key() }.variant_key());
        // Threads of either kind are compared with the one thread, which has its own configs.
        let one = CellKey { threads: None, contexts: None, ..key() };
        for contexts in [None, Some("own".into()), Some("shared".into())] {
            assert_eq!(CellKey { contexts, ..key() }.variant_key(), one.variant_key());
        }
        // A run that chose no contexts had threads of their own; shared ones are another cell.
        let chose_none = CellKey { contexts: None, ..key() };
        let own = CellKey { contexts: Some("own".into()), ..key() };
        assert_eq!(chose_none.for_matching(true), own.for_matching(true));
        assert_ne!(chose_none.for_matching(true), key().for_matching(true));
        assert_eq!(one.for_matching(true).contexts, None);
    }
}
