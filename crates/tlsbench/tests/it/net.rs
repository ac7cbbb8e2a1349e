//! End-to-end: the network mode. `tlsbench serve` and `tlsbench load` with the real runners over
//! loopback, the faults a load generator meets, and `tlsbench merge`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use tlsbench_harness::net::NetReport;

use crate::net_common;

use net_common::{load, tlsbench, Server};

fn per_connection(report: &NetReport, total: u64) -> f64 {
    total as f64 / report.connections as f64
}

#[test]
fn a_tls_pair_over_loopback_negotiates_checks_each_response_and_counts_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let server = Server::start(
        dir.path(),
        &["--stack", "rustls-aws-lc-rs", "--scenario", scenario, "--response", "10KiB", "--workers", "2"],
    );
    let (ok, client, out) = load(
        dir.path(),
        &[
            "--stack",
            "openssl",
            "--scenario",
            scenario,
            "--connect",
            &server.addr,
            "--connections",
            "40",
            "--concurrency",
            "2",
            "--response",
            "10KiB",
        ],
    );
    let server = server.stop();
    assert!(ok, "{out}");
    let client = client.unwrap();
    assert_eq!((client.connections, client.failed), (40, 0), "{out}");
    assert_eq!(client.negotiated.as_deref(), Some("1.3 aes-128-gcm x25519, no ticket"));
    assert_eq!(server.negotiated.as_deref(), Some("1.3 aes-128-gcm x25519"));
    assert!(out.contains("10KiB, checked (length and digest)"), "{out}");
    // The client read the 40 responses of 10 KiB in its window: a throughput, not a dash.
    let throughput = out.lines().find(|l| l.starts_with("throughput")).unwrap_or_else(|| panic!("{out}"));
    let read: f64 = throughput
        .split("read ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .unwrap();
    assert!(read > 0.0, "{throughput}");
    // The warm-up connections are served too, but not measured on the client.
    assert!(server.connections >= 40 && server.failed == 0, "{server:?}");
    // What one side wrote, the other read: per connection, the same bytes both ways (within the
    // byte or two by which ECDSA signatures differ).
    let close = |a: f64, b: f64| (a - b).abs() < 2.0;
    assert!(close(
        per_connection(&client, client.sockets.bytes_read),
        per_connection(&server, server.sockets.bytes_written)
    ));
    assert!(close(
        per_connection(&client, client.sockets.bytes_written),
        per_connection(&server, server.sockets.bytes_read)
    ));
    assert!(client.sockets.bytes_read > 40 * 10240, "the responses and the handshakes");
    // TLS 1.3 with no tickets: the server writes its hello flight, the page, close_notify.
    assert!(per_connection(&server, server.sockets.records_written) >= 3.0);
    assert_eq!(client.handshake_latency.count(), 40);
    assert_eq!(client.first_byte_latency.count(), 40);
    assert!(client.first_byte_latency.percentile(50.0) >= client.handshake_latency.percentile(50.0));
    assert!(client.cpu_user_seconds + client.cpu_system_seconds > 0.0 && server.cpu_user_seconds > 0.0);
    assert!(server.rss_peak_bytes >= server.rss_start_bytes && server.max_open >= 1);
}

#[test]
fn plain_tcp_writes_each_application_write_and_the_buffered_baseline_one_per_response() {
    let dir = tempfile::tempdir().unwrap();
    let mut writes = Vec::new();
    for stack in ["tcp", "tcp-buffered"] {
        let server = Server::start(dir.path(), &["--stack", stack, "--response", "1000x64", "--workers", "1"]);
        let (ok, client, out) = load(
            dir.path(),
            &["--stack", "tcp", "--connect", &server.addr, "--connections", "20", "--response", "1000x64"],
        );
        let server = server.stop();
        assert!(ok, "{out}");
        let client = client.unwrap();
        assert_eq!((client.connections, client.failed, client.negotiated.as_deref()), (20, 0, None), "{out}");
        assert_eq!(server.sockets.records_written, 0, "no TLS records in plain TCP");
        assert_eq!(per_connection(&server, server.sockets.bytes_written), 64_000.0);
        writes.push(per_connection(&server, server.sockets.writes));
    }
    assert_eq!(writes, [1000.0, 1.0], "tcp: one write per application write; tcp-buffered: one per response");
}

#[test]
fn a_resumption_scenario_resumes_every_measured_connection() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm";
    let server = Server::start(dir.path(), &["--stack", "openssl", "--scenario", scenario]);
    let (ok, client, out) = load(
        dir.path(),
        &[
            "--stack",
            "rustls-aws-lc-rs",
            "--scenario",
            scenario,
            "--connect",
            &server.addr,
            "--connections",
            "30",
            "--concurrency",
            "2",
        ],
    );
    let server = server.stop();
    assert!(ok, "{out}");
    let client = client.unwrap();
    assert_eq!((client.connections, client.resumed), (30, 30), "{out}");
    assert!(server.resumed >= 30, "the server saw them resume too: {server:?}");
}

#[test]
fn a_server_s_workers_share_its_context_so_a_session_resumes_on_any_worker() {
    // A session cache, or ticket keys, of each worker's own would let a connection resume only
    // on the worker that made its session: with 4 workers, most connections land elsewhere.
    let dir = tempfile::tempdir().unwrap();
    for (stack, scenario) in [
        ("openssl", "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm"),
        ("gnutls", "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm"),
        ("rustls-aws-lc-rs", "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm"),
        ("s2n-tls", "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm"),
        // Its runner's workers share one tls.Config, so its ticket keys.
        ("go", "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm"),
    ] {
        let server = Server::start(dir.path(), &["--stack", stack, "--scenario", scenario, "--workers", "4"]);
        let connect = ["--stack", stack, "--scenario", scenario, "--connect", &server.addr];
        let (ok, client, out) =
            load(dir.path(), &[&connect[..], &["--connections", "40", "--concurrency", "4"]].concat());
        let server = server.stop();
        assert!(ok, "{stack}: {out}");
        let client = client.unwrap();
        assert_eq!((client.connections, client.resumed, client.failed), (40, 40, 0), "{stack}: {out}");
        assert_eq!(server.concurrency, 4, "{stack}: four workers served");
        assert!(server.resumed >= 40, "{stack}: the server saw them resume too: {server:?}");
    }
}

/// A TCP server on loopback that does `answer` with each connection, on a thread.
fn fake_server(answer: fn(std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    addr
}

/// Loads `addr` with two connections and a short io timeout; returns the failures' reasons.
fn failures(data: &Path, addr: &str, scenario: &str) -> Vec<String> {
    let started = Instant::now();
    let (ok, report, out) = load(
        data,
        &["--stack", "openssl", "--scenario", scenario, "--connect", addr, "--connections", "2", "--io-timeout", "2"],
    );
    assert!(started.elapsed() < Duration::from_secs(30), "a fault never hangs the generator");
    assert!(!ok, "failed connections make the exit status a failure: {out}");
    let report = report.unwrap_or_else(|| panic!("the results are written all the same: {out}"));
    assert_eq!(report.connections, 0);
    assert!(report.failed >= 2, "{report:?}");
    for failure in &report.failures {
        assert!(out.contains(&failure.reason), "each reason is listed: {out}");
        assert!(!failure.reason.contains('\n'), "one line");
    }
    report.failures.into_iter().map(|f| f.reason).collect()
}

const TLS13: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

#[test]
fn each_fault_is_one_clear_line_and_never_hangs_the_generator() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();

    // Nothing listens.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let reasons = failures(data, &port.to_string(), TLS13);
    assert_eq!(reasons, [format!("connecting to {port}: Connection refused (os error 111)")]);

    // Not TLS: an HTTP server's error page.
    let http = fake_server(|mut s| {
        let _ = s.read(&mut [0u8; 1024]);
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    });
    let reasons = failures(data, &http, TLS13);
    assert!(reasons.iter().all(|r| r.starts_with("handshake: ")), "{reasons:?}");

    // Silent: accepts and says nothing.
    let silent = fake_server(|s| {
        std::thread::sleep(Duration::from_secs(5));
        drop(s);
    });
    let reasons = failures(data, &silent, TLS13);
    assert_eq!(reasons, ["the server sent nothing for 2 s during the handshake"]);

    // Resets the connection once the client hello is in.
    let reset = fake_server(|mut s| {
        let _ = s.read(&mut [0u8; 4096]);
        let linger = libc::linger { l_onoff: 1, l_linger: 0 };
        // SAFETY: setsockopt on a live socket with a linger struct of the right size.
        unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as u32,
            )
        };
    });
    let reasons = failures(data, &reset, TLS13);
    assert!(
        reasons.iter().all(|r| r.contains("reset by peer") || r.contains("closed the connection during the handshake")),
        "{reasons:?}"
    );

    // Endless: after the request, streams bytes and never closes. The generator's hard stop
    // (its duration plus the io timeout) ends the connection.
    let endless = fake_server(|mut s| {
        let _ = s.read(&mut [0u8; 1024]);
        while s.write_all(&[b'x'; 16 * 1024]).is_ok() {}
    });
    let started = Instant::now();
    let (ok, report, out) =
        load(data, &["--stack", "tcp", "--connect", &endless, "--duration", "0.3", "--io-timeout", "1"]);
    assert!(started.elapsed() < Duration::from_secs(15), "an endless response never hangs the generator: {out}");
    assert!(!ok, "{out}");
    let reasons: Vec<String> = report.unwrap().failures.into_iter().map(|f| f.reason).collect();
    assert!(
        reasons.iter().all(|r| r == "still open when the load's time ran out (during the response)"),
        "{reasons:?}"
    );

    // Another version: a TLS 1.2-only server.
    let server =
        Server::start(data, &["--stack", "openssl", "--scenario", "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm"]);
    let reasons = failures(data, &server.addr, TLS13);
    server.stop();
    assert!(reasons.iter().all(|r| r.starts_with("handshake: ") && r.contains("protocol version")), "{reasons:?}");

    // A certificate from another CA.
    let elsewhere = tempfile::tempdir().unwrap();
    let server = Server::start(elsewhere.path(), &["--stack", "rustls-ring", "--scenario", TLS13]);
    let reasons = failures(data, &server.addr, TLS13);
    server.stop();
    assert!(reasons.iter().all(|r| r.contains("certificate verify failed")), "{reasons:?}");
}

#[test]
fn connections_that_succeeded_are_kept_when_the_server_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--stack", "openssl", "--scenario", TLS13]);
    let addr = server.addr.clone();
    let data = dir.path().to_path_buf();
    let idle = server.runner_cpu_ticks();
    let generator = std::thread::spawn(move || {
        load(&data, &["--stack", "openssl", "--scenario", TLS13, "--connect", &addr, "--duration", "6"])
    });
    // The server goes away once it has done handshakes (a few ticks of CPU), however long the
    // generator took to start.
    server.wait_for_work(idle, 5, Duration::from_secs(5));
    server.stop();
    let (ok, report, out) = generator.join().unwrap();
    assert!(!ok, "{out}");
    let report = report.unwrap();
    assert!(report.connections > 0 && report.failed > 0, "{out}");
    assert!(report.failures.iter().any(|f| f.reason.contains("Connection refused")), "{out}");
    assert_eq!(report.handshake_latency.count(), report.connections, "only the successful ones are in the latencies");
}

#[test]
fn merge_adds_up_generators_of_one_run_and_refuses_another_runs() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &["--stack", "rustls-ring", "--scenario", TLS13]);
    let mut partials = Vec::new();
    for (i, run) in ["r1", "r1", "r2"].iter().enumerate() {
        let path = dir.path().join(format!("part{i}.json"));
        let out = tlsbench(dir.path())
            .args([
                "load",
                "--stack",
                "rustls-ring",
                "--scenario",
                TLS13,
                "--connect",
                &server.addr,
                "--connections",
                "10",
                "--run-id",
                run,
                "--output",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        partials.push(path);
    }
    server.stop();
    let merged_path = dir.path().join("merged.json");
    let out =
        tlsbench(dir.path()).arg("merge").args(&partials[..2]).arg("--output").arg(&merged_path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let merged: NetReport = serde_json::from_str(&std::fs::read_to_string(&merged_path).unwrap()).unwrap();
    assert_eq!((merged.connections, merged.concurrency, merged.run_id.as_deref()), (20, 2, Some("r1")));
    assert_eq!(merged.handshake_latency.count(), 20, "the histograms are merged, not averaged");

    let out = tlsbench(dir.path()).arg("merge").args(&partials).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is of run r2, the first partial of run r1"));
}

#[test]
fn bad_input_names_what_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = tlsbench(dir.path()).args(args).output().unwrap();
        assert!(!out.status.success());
        crate::common::unwrapped(&out.stderr)
    };
    let err = run(&["serve", "--stack", "nginx"]);
    assert!(
        err.contains("unknown stack `nginx`") && err.contains("openssl") && err.contains("tcp, tcp-buffered"),
        "{err}"
    );
    let err = run(&["serve", "--stack", "tcp", "--scenario", TLS13]);
    assert!(err.contains("tcp is plain TCP: it has no handshake, so no --scenario"), "{err}");
    let err = run(&[
        "load",
        "--stack",
        "openssl",
        "--connect",
        "127.0.0.1:9",
        "--scenario",
        "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
    ]);
    assert!(err.contains("the network mode runs handshake scenarios"), "{err}");
    let err = run(&["serve", "--stack", "tcp", "--response", "lots"]);
    assert!(err.contains("is not a response size"), "{err}");
}

#[test]
fn run_over_tcp_stores_each_pair_as_a_net_cell_labelled_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = tlsbench(dir.path())
        .args(["run", "--transport", "tcp", "--client", "openssl", "--server", "rustls-aws-lc-rs"])
        .args(["--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"])
        .args(["--scenario", "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm"])
        .args(["--samples", "2", "--min-time-ms", "200", "--export-json"])
        .arg(&json)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{printed}");
    assert!(printed.contains("openssl -> rustls-aws-lc-rs [tcp]"), "the table names the transport: {printed}");

    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    let value = |scenario: &str, side: &str, metric: &str| {
        let found = results.iter().find(|r| r["scenario"] == scenario && r["side"] == side && r["metric"] == metric);
        found.unwrap_or_else(|| panic!("no {metric} of the {side} in {scenario}"))
    };
    for r in results {
        assert_eq!(
            (r["measure"].as_str(), r["process"].as_str(), r["status"].as_str()),
            (Some("net"), Some("tcp"), Some("ok")),
            "{r}"
        );
        assert_eq!(r["samples"].as_array().unwrap().len(), 2, "{r}");
        // getrusage splits a thread's CPU time into user and system at the scheduler's tick, so
        // a side with little system time may read 0 of it over a short sample (rustls's server
        // did, at 200 ms, on a busy machine); its user time is never 0.
        match r["metric"].as_str() {
            Some("cpu_system_us_per_connection") => assert!(r["median"].as_f64().unwrap() >= 0.0, "{r}"),
            _ => assert!(r["median"].as_f64().unwrap() > 0.0, "every number was measured: {r}"),
        }
    }
    // What each side's last handshake negotiated, the gates having passed on every one (a TLS
    // 1.2 resumption has no key exchange: rustls names no group).
    for (scenario, client, server) in [
        (
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "1.3 aes-128-gcm x25519, no ticket",
            "1.3 aes-128-gcm x25519",
        ),
        (
            "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm",
            "1.2 aes-128-gcm x25519, resumed, no ticket",
            "1.2 aes-128-gcm group not reported, resumed",
        ),
    ] {
        assert_eq!(value(scenario, "client", "connections_per_s")["negotiated"], client);
        assert_eq!(value(scenario, "server", "connections_per_s")["negotiated"], server);
    }
    let full = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    // Both sides count the same connections, so their rates are close; the latencies are ordered.
    let median = |side: &str, metric: &str| value(full, side, metric)["median"].as_f64().unwrap();
    let (client_rate, server_rate) = (median("client", "connections_per_s"), median("server", "connections_per_s"));
    assert!((client_rate / server_rate - 1.0).abs() < 0.5, "client {client_rate}/s, server {server_rate}/s");
    for side in ["client", "server"] {
        let [p50, p90, p99, max] =
            ["handshake_p50_ms", "handshake_p90_ms", "handshake_p99_ms", "handshake_max_ms"].map(|m| median(side, m));
        assert!(p50 <= p90 && p90 <= p99 && p99 <= max, "{side}: {p50} {p90} {p99} {max}");
        // A TLS 1.3 handshake and close: at least one write (a flight) and one read each.
        assert!(median(side, "write_calls") >= 1.0 && median(side, "read_calls") >= 1.0);
        assert!(median(side, "syscalls") >= median(side, "write_calls") + median(side, "read_calls"));
    }
    // The server writes the certificate; only the server's resident memory is taken.
    assert!(median("server", "bytes_written") > median("client", "bytes_written"));
    assert!(results.iter().filter(|r| r["metric"] == "rss_peak_bytes").all(|r| r["side"] == "server"));

    // Stored like any other run.
    let shown = tlsbench(dir.path()).arg("show").output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("connections_per_s (1/s, higher is better)"));
}

#[test]
fn run_over_tcp_takes_the_net_measure_and_workers_only() {
    let dir = tempfile::tempdir().unwrap();
    let error = |args: &[&str]| {
        let out = tlsbench(dir.path()).arg("run").args(args).output().unwrap();
        assert!(!out.status.success());
        crate::common::unwrapped(&out.stderr)
    };
    let heap = error(&["--transport", "tcp", "--measure", "heap", "--stack", "openssl"]);
    assert!(
        heap.contains("over --transport tcp the measure is net") && heap.contains("heap is taken in memory"),
        "{heap}"
    );
    let net = error(&["--measure", "net", "--stack", "openssl"]);
    assert!(net.contains("measure net is taken over a real socket: add --transport tcp"), "{net}");
    let transport = error(&["--transport", "udp"]);
    assert!(transport.contains("possible values: memory, tcp"), "{transport}");
    // Workers are a server's, over TCP; threads are pairs in memory.
    let workers = error(&["--stack", "openssl", "--workers", "2"]);
    assert!(workers.contains("--workers is the server's worker threads over --transport tcp"), "{workers}");
    let threads = error(&["--transport", "tcp", "--stack", "openssl", "--threads", "2"]);
    assert!(threads.contains("over --transport tcp a server scales with --workers N"), "{threads}");
    let zero = error(&["--transport", "tcp", "--stack", "openssl", "--workers", "0"]);
    assert!(zero.contains("--workers"), "{zero}");
}

#[test]
fn workers_give_the_servers_rate_per_worker_against_one_worker_of_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = tlsbench(dir.path())
        .args(["run", "--transport", "tcp", "--stack", "rustls-aws-lc-rs", "--workers", "2"])
        .args([
            "--scenario",
            "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
            "--samples",
            "2",
            "--min-time-ms",
            "200",
            "--export-json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{printed}");
    assert!(printed.contains("rustls-aws-lc-rs (2 workers) [tcp]"), "{printed}");
    assert!(printed.contains("server workers busy"), "the table says how busy the workers were: {printed}");

    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["status"] == "ok"), "{results:?}");
    let find = |metric: &str, side: &str, workers: Option<u64>| {
        let found =
            results.iter().find(|r| r["metric"] == metric && r["side"] == side && r["threads"].as_u64() == workers);
        found.unwrap_or_else(|| panic!("no {metric} of the {side} with {workers:?} workers"))
    };
    let median = |r: &serde_json::Value| r["median"].as_f64().unwrap();
    // Per worker: the server's aggregate over its workers, and its efficiency against one worker.
    let (one, two) = (find("connections_per_s", "server", None), find("connections_per_s", "server", Some(2)));
    let per_worker = find("connections_per_s_per_worker", "server", Some(2));
    assert!((median(per_worker) - median(two) / 2.0).abs() < 1e-6 * median(two), "{per_worker}");
    let efficiency = per_worker["scaling_efficiency"].as_f64().expect("an efficiency");
    assert!((efficiency - median(two) / (2.0 * median(one))).abs() < 1e-9, "{efficiency}");
    assert!(results.iter().filter(|r| r["metric"] == "connections_per_s_per_worker").all(|r| r["side"] == "server"));
    // Both load generators' connections reach the client's side of the cell.
    let client_two = find("connections_per_s", "client", Some(2));
    assert!((median(client_two) / median(two) - 1.0).abs() < 0.5, "client {client_two}, server {two}");
}
