//! The system's trust store for context-client-system (docs/scenarios.md#contexts): a bundle of
//! the system's roots and the run's test CAs, which every runner of the run is pointed at with
//! `SSL_CERT_FILE`, and the gate on the roots a runner reports it loaded.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result};
use tlsbench_harness::protocol::{Metric, MetricValue, MIN_TRUST_ROOTS};
use tlsbench_harness::{KeyType, Pki};

/// Debian's bundle of the ca-certificates package: what the libraries' defaults read there.
pub const SYSTEM_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The bundle this run's runners read, once written.
static BUNDLE: OnceLock<&'static str> = OnceLock::new();

/// Writes `DATA_DIR/pki-v2/system-bundle.pem`: the system's bundle (`system`), then the CA of
/// each key type of `keys`, so that a client trusting it verifies the test servers; and points
/// this run's runners at it.
pub fn prepare(data_dir: &Path, keys: &[KeyType], system: &Path) -> Result<PathBuf> {
    let mut bundle = std::fs::read_to_string(system).with_context(|| {
        format!("reading the system's trust store {} (context-client-system loads it)", system.display())
    })?;
    let pki = Pki::load_or_generate(data_dir, keys).map_err(anyhow::Error::msg)?;
    for &key in keys {
        let ca = &pki.credentials(key).map_err(anyhow::Error::msg)?.ca_pem;
        bundle.push_str(&format!("\n# tlsbench test CA ({key})\n{ca}"));
    }
    let path = data_dir.join("pki-v2").join("system-bundle.pem");
    std::fs::write(&path, bundle).with_context(|| format!("writing {}", path.display()))?;
    let shown: &'static str = Box::leak(path.display().to_string().into_boxed_str());
    // A second run in one process (tests) keeps the first path: the same file name.
    let _ = BUNDLE.set(shown);
    Ok(path)
}

/// What every runner of the run gets in its environment: `SSL_CERT_FILE` at the bundle and no
/// `SSL_CERT_DIR` (an empty value removes it: see executor.rs), so that each library reads the
/// bundle and its own default directory, as on a machine without the variables. Nothing
/// before [`prepare`].
pub fn runner_env() -> Vec<(&'static str, &'static str)> {
    match BUNDLE.get() {
        Some(path) => vec![("SSL_CERT_FILE", path), ("SSL_CERT_DIR", "")],
        None => Vec::new(),
    }
}

/// The gate on a sample: a trust store that held fewer than [`MIN_TRUST_ROOTS`] roots is not
/// the system's (the runner loaded something else), so nothing it measured counts.
pub fn check_roots(values: &[MetricValue]) -> Result<(), String> {
    match values.iter().find(|v| v.metric == Metric::TrustRoots) {
        Some(v) if v.value < MIN_TRUST_ROOTS => Err(format!(
            "the {} side's trust store held {} roots (fewer than {MIN_TRUST_ROOTS}): not the system's; \
             is SSL_CERT_FILE read?",
            v.side, v.value
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use tlsbench_harness::{Kind, Measure, Scenario, Side};

    use super::*;

    #[test]
    fn a_store_of_fewer_than_100_roots_fails_the_sample_and_one_without_the_count_passes() {
        let roots = |value| vec![MetricValue { side: Side::Client, metric: Metric::TrustRoots, value, seconds: 0.0 }];
        let error = check_roots(&roots(1.0)).unwrap_err();
        assert!(error.starts_with("the client side's trust store held 1 roots (fewer than 100)"), "{error}");
        assert_eq!(check_roots(&roots(146.0)), Ok(()));
        assert_eq!(check_roots(&[]), Ok(()), "a library that does not tell");
    }

    #[test]
    fn the_bundle_is_the_system_s_then_each_test_ca() {
        let dir = tempfile::tempdir().unwrap();
        let system = dir.path().join("system.pem");
        std::fs::write(&system, "SYSTEM ROOTS\n").unwrap();
        let keys = [KeyType::EcdsaP256, KeyType::Rsa2048];
        let path = prepare(dir.path(), &keys, &system).unwrap();
        let bundle = std::fs::read_to_string(path).unwrap();
        assert!(bundle.starts_with("SYSTEM ROOTS\n"));
        assert_eq!(bundle.matches("-----BEGIN CERTIFICATE-----").count(), 2);
        let env = runner_env();
        assert_eq!(env.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["SSL_CERT_FILE", "SSL_CERT_DIR"]);
        let error = prepare(dir.path(), &keys, &dir.path().join("missing.pem")).unwrap_err();
        assert!(format!("{error:#}").starts_with("reading the system's trust store"), "{error:#}");
    }

    #[test]
    fn a_context_kind_s_bare_name_selects_its_focused_set_for_the_measures_that_take_it() {
        let selected = crate::plan::select_scenarios(&["context-client-system".into()], &[Measure::Time]).unwrap();
        assert!(!selected.is_empty() && selected.iter().all(|s| s.kind == Kind::ContextClientSystem));
        assert_eq!(selected, Scenario::focused_contexts(Kind::ContextClientSystem).unwrap());
        let error = crate::plan::select_scenarios(&["context-server".into()], &[Measure::Io]).unwrap_err();
        assert!(error.to_string().contains("add --measure"), "{error}");
    }
}
