//! The context kinds through `tlsbench run` (docs/scenarios.md#contexts): the system's store is
//! loaded from the bundle tlsbench writes, its roots are counted and reported as a property (no
//! way of it is better), and a context's resident memory is measured beside its heap.

use serde_json::Value;

use crate::common::{read_json, succeeded, tlsbench, unwrapped};

const SYSTEM: &str = "context-client-system_1.3_x25519_ecdsa-p256_aes-128-gcm";
const SERVER: &str = "context-server_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// The median of `metric` for `stack` on `scenario`; it must have one.
#[track_caller]
fn median(doc: &Value, stack: &str, scenario: &str, metric: &str) -> f64 {
    let result = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["client_stack"] == stack && r["scenario"] == scenario && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} of {stack} on {scenario}"));
    assert_eq!(result["status"], "ok", "{result}");
    result["median"].as_f64().unwrap_or_else(|| panic!("{result}"))
}

#[test]
fn a_context_run_counts_the_system_roots_and_measures_what_a_context_holds_resident() {
    if !std::path::Path::new("/etc/ssl/certs/ca-certificates.crt").exists() {
        println!("skipped: no system CA bundle (/etc/ssl/certs/ca-certificates.crt) to load");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let stacks = ["openssl", "rustls-ring", "go"];
    let mut cmd = tlsbench(dir.path());
    cmd.args(["run", "--samples", "2", "--min-time-ms", "5", "--warmup-ms", "0", "--warmup-max-ms", "500"]);
    cmd.args(["--scenario", SYSTEM, "--scenario", SERVER]);
    for arg in stacks.iter().flat_map(|s| ["--stack", s]).chain(["--measure", "time", "--measure", "heap"]) {
        cmd.arg(arg);
    }
    let output = succeeded(cmd.args(["--measure", "rss", "--export-json"]).arg(&json).output().unwrap());
    let doc = read_json(&json);
    let printed = unwrapped(&output.stdout);
    // A property, not a cost: its table says its unit alone.
    assert!(printed.contains("trust_roots (roots), scenarios"), "{printed}");
    let bundle = std::fs::read_to_string(dir.path().join("data/pki-v2/system-bundle.pem")).unwrap();
    let in_bundle = bundle.matches("-----BEGIN CERTIFICATE-----").count() as f64;
    for stack in stacks {
        let roots = median(&doc, stack, SYSTEM, "trust_roots");
        // Go's pool also reads the default directory (/etc/ssl/certs), which may hold a root more.
        let most = if stack == "go" { f64::INFINITY } else { in_bundle };
        assert!(roots >= 100.0 && roots <= most, "{stack}: {roots} roots of the bundle's {in_bundle}");
        let cell = doc["results"].as_array().unwrap().iter().find(|r| r["metric"] == "trust_roots").unwrap();
        assert_eq!(cell["better"], "neither", "{cell}");
        assert!(median(&doc, stack, SYSTEM, "contexts_per_s") > 0.0, "{stack}");
        for scenario in [SYSTEM, SERVER] {
            assert!(median(&doc, stack, scenario, "rss_context_bytes") > 0.0, "{stack} {scenario}");
        }
    }
    // The native stacks: what a context holds on the heap is resident when 100 are held (less
    // a part of the one built and dropped before them, whose freed memory the first reuses), and
    // 145 roots hold more than one server's chain and key.
    for stack in ["openssl", "rustls-ring"] {
        let (rss, heap) =
            (median(&doc, stack, SYSTEM, "rss_context_bytes"), median(&doc, stack, SYSTEM, "heap_context_bytes"));
        assert!(rss > 0.8 * heap, "{stack}: {rss} B resident per context, {heap} B on the heap");
        assert!(rss > median(&doc, stack, SERVER, "rss_context_bytes"), "{stack}");
    }
}
