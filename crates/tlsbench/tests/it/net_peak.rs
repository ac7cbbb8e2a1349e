//! End-to-end: a server's peak over loopback TCP (`run --transport tcp --peak`), the server and
//! its load generators on CPUs of their own, with the real runners.

use crate::net_common::tlsbench;

const FULL_ECDSA: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

#[test]
fn a_peak_runs_the_server_and_its_load_on_cpus_of_their_own_and_raises_the_load_until_saturated() {
    let allowed = tlsbench::cores::allowed();
    assert!(allowed.starts_with(&[0, 1]), "this test puts the server on CPU 0 and its load on CPU 1: {allowed:?}");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = tlsbench(dir.path())
        .args(["run", "--transport", "tcp", "--stack", "openssl", "--scenario", FULL_ECDSA])
        .args(["--server-cores", "0", "--load-cores", "1", "--samples", "2", "--min-time-ms", "200"])
        .arg("--export-json")
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.lines().chain(stderr.lines()).all(|l| l.chars().count() <= 120), "{stdout}{stderr}");

    // Each search says where its runners ran, as the kernel reported their CPUs (/proc), each
    // step's load, and why it stopped: a saturation criterion, not the last step.
    let searches: Vec<String> = stderr.split("peak of ").skip(1).map(|s| s.replace("\n  ", " ")).collect();
    assert_eq!(searches.len(), 2, "one search per sample: {stderr}");
    for search in &searches {
        assert!(search.starts_with(&format!("openssl [tcp peak], {FULL_ECDSA}")), "{search}");
        assert!(
            search.contains("server on CPUs 0 (1 worker(s)), 1 load generator(s) on CPUs 1;"),
            "the runners ran on their CPUs: {search}"
        );
        assert!(search.contains("in flight per generator 1: "), "the search starts at one connection: {search}");
        let stopped = search.split("stopped: ").nth(1).unwrap_or_else(|| panic!("no stop: {search}"));
        assert!(
            stopped.starts_with("workers busy (≥ 90%)")
                || stopped.starts_with("rate stopped rising (< 3% over the step before)"),
            "the load was raised until the server was saturated: {search}"
        );
        // The search doubled the load step by step up to where it stopped.
        let steps: Vec<u32> = search
            .split("; ")
            .filter_map(|part| part.trim_start_matches("in flight per generator ").split_once(": "))
            .filter_map(|(n, rest)| rest.contains("% busy").then(|| n.parse().ok()).flatten())
            .collect();
        assert_eq!(steps, [1, 2, 4, 8, 16, 32, 64][..steps.len()], "{search}");
        if stopped.starts_with("rate stopped rising") {
            assert!(steps.len() >= 2, "a rate stops rising against a step before: {search}");
        }
    }

    // The cells: the peak step's figures of each side, with the workers' use and the load's
    // concurrency then.
    assert!(stdout.contains("openssl [tcp peak]"), "{stdout}");
    assert!(stdout.contains("server peaks"), "the table says where each peak was and why it stopped: {stdout}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    let find = |side: &str, metric: &str| {
        let found = results.iter().find(|r| r["side"] == side && r["metric"] == metric);
        found.unwrap_or_else(|| panic!("no {metric} of the {side}: {results:?}"))
    };
    for r in results {
        assert_eq!((r["process"].as_str(), r["status"].as_str()), (Some("tcp-peak"), Some("ok")), "{r}");
        assert_eq!(r["samples"].as_array().unwrap().len(), 2, "{r}");
    }
    let samples = |side: &str, metric: &str| -> Vec<f64> {
        find(side, metric)["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
    };
    for concurrency in samples("client", "load_concurrency") {
        assert!([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0].contains(&concurrency), "{concurrency}");
    }
    for busy in samples("server", "workers_busy_percent") {
        assert!(busy > 0.0 && busy < 150.0, "a share of the workers' time: {busy}");
    }
    assert!(results.iter().filter(|r| r["metric"] == "workers_busy_percent").all(|r| r["side"] == "server"));
    assert!(results.iter().filter(|r| r["metric"] == "load_concurrency").all(|r| r["side"] == "client"));
    let median = |side: &str, metric: &str| find(side, metric)["median"].as_f64().unwrap();
    assert!(median("server", "connections_per_s") > 0.0);
    assert!(median("server", "cpu_user_us_per_connection") > 0.0);
    assert!(median("client", "handshake_p50_ms") <= median("client", "handshake_p99_ms"));
    // The workers' use is the server's CPU per connection times its rate, per worker.
    let cpu = median("server", "cpu_user_us_per_connection") + median("server", "cpu_system_us_per_connection");
    let busy = median("server", "workers_busy_percent");
    let rate = median("server", "connections_per_s");
    assert!((cpu * rate / 1e4 / busy - 1.0).abs() < 0.5, "busy {busy}%, {cpu} µs × {rate}/s");

    // A plain TCP run is what it was: no peak's cells or metrics.
    let plain = tlsbench(dir.path())
        .args(["run", "--transport", "tcp", "--stack", "openssl", "--scenario", FULL_ECDSA])
        .args(["--samples", "1", "--min-time-ms", "100", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["process"] == "tcp"), "{results:?}");
    assert!(!results.iter().any(|r| r["metric"] == "workers_busy_percent" || r["metric"] == "load_concurrency"));
}

#[test]
fn bad_core_lists_name_the_cpus_tlsbench_may_use() {
    let allowed = tlsbench::cores::format_list(&tlsbench::cores::allowed());
    let dir = tempfile::tempdir().unwrap();
    let error = |args: &[&str]| {
        let out = tlsbench(dir.path())
            .args(["run", "--stack", "openssl", "--scenario", FULL_ECDSA])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        String::from_utf8(out.stderr).unwrap()
    };
    let tcp = ["--transport", "tcp"];
    let memory = error(&["--peak"]);
    assert!(memory.contains("measure a server's peak over TCP: add --transport tcp"), "{memory}");
    let outside = error(&[&tcp[..], &["--server-cores", "0", "--load-cores", "1000"]].concat());
    assert!(
        outside.contains(&format!("--load-cores 1000: CPU 1000 is not one tlsbench may use (allowed: {allowed})")),
        "{outside}"
    );
    let shared = error(&[&tcp[..], &["--server-cores", "0", "--load-cores", "0"]].concat());
    assert!(shared.contains("--server-cores and --load-cores share CPU 0"), "{shared}");
    assert!(shared.contains(&format!("(allowed: {allowed})")), "{shared}");
    let garbled = error(&[&tcp[..], &["--server-cores", "0-"]].concat());
    assert!(garbled.contains("`0-` is not a CPU list") && garbled.contains("taskset -c"), "{garbled}");
    let all = error(&[&tcp[..], &["--server-cores", &allowed]].concat());
    assert!(all.contains("leaving none for the load"), "{all}");
}
