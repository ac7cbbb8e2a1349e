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
    let mut peaks = Vec::new();
    for search in &searches {
        assert!(search.starts_with(&format!("openssl [tcp peak], {FULL_ECDSA}")), "{search}");
        assert!(
            search.contains("server on CPUs 0 (1 worker(s)), 1 load generator(s) on CPUs 1;"),
            "the runners ran on their CPUs: {search}"
        );
        assert!(search.contains("in flight per generator 1: "), "the search starts at one connection: {search}");
        // Each step: its connections in flight per generator, its rate, how busy the workers were.
        let steps: Vec<(u32, f64, f64)> = search
            .split("; ")
            .filter_map(|part| part.trim_start_matches("in flight per generator ").split_once(": "))
            .filter_map(|(n, rest)| {
                let (rate, busy) = rest.strip_suffix("% busy")?.split_once("/s, ")?;
                Some((n.parse().ok()?, rate.replace(',', "").parse().ok()?, busy.parse().ok()?))
            })
            .collect();
        let peak = steps.iter().max_by(|a, b| a.1.total_cmp(&b.1)).expect("a step");
        peaks.push((f64::from(peak.0), peak.1));
        let loads: Vec<u32> = steps.iter().map(|s| s.0).collect();
        assert_eq!(loads, [1, 2, 4, 8, 16, 32, 64][..steps.len()], "the load doubles step by step: {search}");
        // It stopped at the first step where a saturation criterion held, and only then (the
        // figures are rounded to 4 digits, the workers' use to 1%).
        let rose = |i: usize| steps[i].1 >= steps[i - 1].1 * 1.03 * (1.0 - 1e-3);
        let (last, before) = (steps.len() - 1, &steps[..steps.len() - 1]);
        assert!(before.iter().all(|s| s.2 <= 90.0), "no step before the last had busy workers: {search}");
        assert!((1..last).all(rose), "the rate rose at every step before the last: {search}");
        let stopped = search.split("stopped: ").nth(1).unwrap_or_else(|| panic!("no stop: {search}"));
        if stopped.starts_with("workers busy (≥ 90%)") {
            assert!(steps[last].2 >= 89.0, "{search}");
        } else if stopped.starts_with("rate stopped rising (< 3% over the step before)") {
            assert!(last >= 1 && steps[last].1 < steps[last - 1].1 * 1.03 * (1.0 + 1e-3), "{search}");
        } else {
            // A busy machine can keep a slow load rising past the last step: said as such.
            assert!(stopped.starts_with("not saturated at 64 in flight per generator"), "{search}");
            assert!(last == 6 && rose(last), "{search}");
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
    for busy in samples("server", "workers_busy_percent") {
        assert!(busy > 0.0 && busy < 150.0, "a share of the workers' time: {busy}");
    }
    assert!(results.iter().filter(|r| r["metric"] == "workers_busy_percent").all(|r| r["side"] == "server"));
    assert!(results.iter().filter(|r| r["metric"] == "load_concurrency").all(|r| r["side"] == "client"));
    let median = |side: &str, metric: &str| find(side, metric)["median"].as_f64().unwrap();
    assert!(median("server", "connections_per_s") > 0.0);
    assert!(median("server", "cpu_user_us_per_connection") > 0.0);
    assert!(median("client", "handshake_p50_ms") <= median("client", "handshake_p99_ms"));
    // Sample by sample, the workers' use is the server's CPU per connection times its rate, per
    // worker, at the step of that rate.
    let (user, system) =
        (samples("server", "cpu_user_us_per_connection"), samples("server", "cpu_system_us_per_connection"));
    let (rates, busy) = (samples("server", "connections_per_s"), samples("server", "workers_busy_percent"));
    let concurrency = samples("client", "load_concurrency");
    for i in 0..2 {
        // Each sample is its search's step of the highest rate.
        assert_eq!(concurrency[i], peaks[i].0, "sample {i}: {:?}", peaks[i]);
        assert!((rates[i] / peaks[i].1 - 1.0).abs() < 1e-3, "sample {i}: {} against {:?}", rates[i], peaks[i]);
        let expected = (user[i] + system[i]) * rates[i] / 1e4;
        assert!((busy[i] / expected - 1.0).abs() < 1e-9, "sample {i}: busy {}%, expected {expected}%", busy[i]);
    }

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
