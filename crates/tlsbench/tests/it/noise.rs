//! A noisy machine (docs/sampling.md): the injector stops by itself and refuses bad settings; a
//! run under it probes the machine first, says what it allows, and summarizes each rate without
//! the samples it set aside as slowed. Nothing here asserts how noisy the machine is: that moves.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{one_message, read_json, succeeded, tlsbench, unwrapped};

#[test]
fn the_injector_stops_by_itself_and_says_what_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = tlsbench(dir.path())
        .args(["inject-noise", "--duration", "0.5", "--on-ms", "2-5", "--off-ms", "2-5", "--mib", "8"])
        .output()
        .unwrap();
    let err = unwrapped(&succeeded(output).stderr);
    assert!(started.elapsed() < Duration::from_secs(30), "it ran for {:?}", started.elapsed());
    assert!(err.starts_with("injecting noise on CPUs "), "{err}");
    assert!(err.contains("bursts of 2-5 ms thrashing 8 MiB each, 2-5 ms apart, for 0.5 s"), "{err}");
    let busy: f64 = err
        .split("bursts ran ")
        .nth(1)
        .and_then(|rest| rest.split('%').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no duty in: {err}"));
    assert!(busy > 0.0 && busy <= 100.0, "{err}");
}

#[test]
fn the_injector_refuses_bad_settings_naming_what_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], i32, &str); 5] = [
        (&["--on-ms", "20-2"], 2, "bad range `20-2` (valid: MIN-MAX or one number of milliseconds, 0 to 60000)"),
        (&["--off-ms", "nan"], 2, "bad range `nan`"),
        (&["--duration", "0"], 2, "bad duration `0` (valid: seconds above 0, at most 3600)"),
        (&["--duration", "1e9"], 2, "bad duration `1e9`"),
        (&["--cpus", "1000", "--duration", "1"], 1, "--cpus: CPU 1000 is not one this process may use (valid: "),
    ];
    for (args, code, needle) in cases {
        let output = tlsbench(dir.path()).arg("inject-noise").args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(code), "{args:?}");
        let message = one_message(&output.stderr);
        assert!(message.starts_with("error: ") && message.contains(needle), "{args:?}: {message}");
    }
}

#[test]
fn a_run_under_injected_noise_probes_first_and_sets_slowed_samples_aside() {
    let dir = tempfile::tempdir().unwrap();
    let mut noise = tlsbench(dir.path())
        .args(["inject-noise", "--duration", "60", "--on-ms", "3-15", "--off-ms", "15-60"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let output = tlsbench(dir.path())
        .args(["run", "--stack", "openssl", "--measure", "time", "--export-json", "run.json"])
        .args(["--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"])
        .args(["--samples", "6", "--min-time-ms", "20", "--warmup-ms", "10"])
        .output()
        .unwrap();
    let _ = noise.kill();
    let _ = noise.wait();
    let output = succeeded(output);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.lines().all(|l| l.chars().count() <= 120), "{err}");
    let err = unwrapped(&output.stderr);
    assert!(err.starts_with("this machine now: 20-ms stretches of a fixed workload vary ±"), "{err}");
    // What it can tell apart, or, on a machine this noisy, that it can tell nothing apart.
    let told = ["with 6 samples per cell, wall-time differences under about", "with 6 samples per cell, no wall-time"];
    assert!(told.iter().any(|t| err.contains(t)), "{err}");

    let doc = read_json(&dir.path().join("run.json"));
    let probe = &doc["run"]["environment"]["conditions"]["noise"];
    assert_eq!(probe["stretches"], 25, "{probe}");
    for figure in ["spread_percent", "kept_spread_percent", "slowed_percent"] {
        assert!(probe[figure].as_f64().is_some_and(|x| x >= 0.0), "{figure}: {probe}");
    }
    // Every sample (one process each, on one CPU) was judged at full speed by its runner, against
    // the sentinel's reference, where there are CPUs to choose from.
    let sentinel = &doc["run"]["environment"]["conditions"]["sentinel"];
    let every_cpu_at_full_speed = sentinel["at_full_speed"] == sentinel["samples"];
    match std::thread::available_parallelism().map_or(1, |n| n.get()) {
        1 => assert!(sentinel.is_null(), "{sentinel}"),
        _ => {
            let placed = sentinel["samples"].as_u64().unwrap();
            assert!(placed >= 6, "{sentinel}");
            assert!(sentinel["at_full_speed"].as_u64().unwrap() <= placed, "{sentinel}");
            assert!(sentinel["moved"].as_u64().unwrap() <= placed, "{sentinel}");
            assert!(sentinel["reference"].as_f64().is_some_and(|r| r > 0.0), "{sentinel}");
            // The OpenSSL runner judges its own loop (`--full-speed`): every sample here.
            assert_eq!(sentinel["judged"], sentinel["samples"], "{sentinel}");
            let at_full_speed = sentinel["at_full_speed"].as_u64().unwrap();
            // The speed of the stretches counted, in the reference's units (0 where none counted).
            let (judged_speed, reference) =
                (sentinel["judged_speed"].as_f64().unwrap(), sentinel["reference"].as_f64().unwrap());
            assert!(judged_speed == 0.0 || (0.5 * reference..2.0 * reference).contains(&judged_speed), "{sentinel}");
            // The line under the table counts those that found too little at full speed.
            let table = unwrapped(&output.stdout);
            let counted = table.contains(&format!("{} of them found too little at full speed", placed - at_full_speed));
            assert_eq!(counted, at_full_speed < placed, "{table}");
        }
    }
    let rates: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"].as_str().unwrap().ends_with("_per_s"))
        .collect();
    assert!(!rates.is_empty());
    for rate in rates {
        let samples: Vec<f64> = rate["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let slowed: Vec<usize> =
            rate["slowed"].as_array().map_or(Vec::new(), |s| s.iter().map(|v| v.as_u64().unwrap() as usize).collect());
        // At least the run's samples kept, unless the cell took as many more as it may (2, or 6 where
        // the probe saw slowed stretches).
        assert!(samples.len() - slowed.len() >= 6 || samples.len() >= 8, "{rate}");
        let mut kept: Vec<f64> =
            samples.iter().enumerate().filter(|(i, _)| !slowed.contains(i)).map(|(_, &x)| x).collect();
        kept.sort_by(f64::total_cmp);
        let median = (kept[(kept.len() - 1) / 2] + kept[kept.len() / 2]) / 2.0;
        // The same median up to the last bits (the two middle values are averaged in another order).
        assert!((rate["median"].as_f64().unwrap() / median - 1.0).abs() < 1e-12, "{median}: {rate}");
        // Its figure, the mean of the kept samples' faster half, within its interval.
        let figure = crate::common::faster_half_mean(kept.clone());
        assert!((rate["faster_half_mean"].as_f64().unwrap() / figure - 1.0).abs() < 1e-12, "{figure}: {rate}");
        let interval = rate["ci95"].as_array().unwrap();
        assert!(interval[0].as_f64().unwrap() <= figure && figure <= interval[1].as_f64().unwrap(), "{rate}");
        assert_eq!(rate["min"].as_f64().unwrap(), kept[0], "{rate}");
        // Only samples below the median are set aside for their values; a sample that ran where no
        // CPU was at full speed may be set aside whatever its value.
        if every_cpu_at_full_speed {
            assert!(slowed.iter().all(|&i| samples[i] < median), "{rate}");
        }
    }
}
