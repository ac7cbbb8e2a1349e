//! End-to-end: tlsbench with peers that no one here wrote. `tlsbench load` against Debian's
//! nginx, which the tests start on loopback with tlsbench's certificates (scripts/nginx.conf),
//! and `openssl s_time` against `tlsbench serve`. scripts/setup.sh installs both.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tlsbench_harness::net::NetReport;
use tlsbench_harness::{Pki, Scenario};

const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
const RESUME: &str = "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm";

use crate::net_common;

use net_common::Server;

/// `tlsbench load ... --output FILE`: the report, after checking that the command succeeded.
fn load(data: &Path, args: &[&str]) -> NetReport {
    let (ok, report, text) = net_common::load(data, args);
    assert!(ok, "tlsbench load {args:?} failed: {text}");
    report.expect("a report")
}

/// Debian's nginx in the foreground, with its own config and logs in a temporary directory.
/// Dropping it stops it, so that a failing test leaves no server behind.
struct Nginx {
    child: Child,
    dir: tempfile::TempDir,
    addr: String,
}

impl Nginx {
    /// nginx with `workers` worker processes, tlsbench's certificate for the scenario's key type
    /// (from `data`, where `tlsbench load` finds its CA), and the scenario's TLS settings.
    fn start(data: &Path, scenario: &str, workers: u32) -> Nginx {
        let scenario: Scenario = scenario.parse().unwrap();
        let (group, suite) = scenario.pins().expect("a pinned scenario");
        let pki = Pki::load_or_generate(data, &[scenario.key]).unwrap();
        let credentials = pki.credentials(scenario.key).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (chain, key) = (dir.path().join("chain.pem"), dir.path().join("server.key"));
        std::fs::write(&chain, &credentials.chain_pem).unwrap();
        std::fs::write(&key, &credentials.key_pem).unwrap();
        // A free port: nginx binds it a moment later.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let resumes = scenario.kind.is_resumption();
        let config = include_str!("../../../../scripts/nginx.conf")
            .replace("@DIR@", &dir.path().display().to_string())
            .replace("@WORKERS@", &workers.to_string())
            .replace("@PORT@", &port.to_string())
            .replace("@CHAIN@", &chain.display().to_string())
            .replace("@KEY@", &key.display().to_string())
            .replace("@GROUP@", group.openssl_name())
            .replace("@SUITE@", suite.openssl_name(scenario.version, scenario.key))
            .replace("@TICKETS@", if resumes { "on" } else { "off" })
            .replace("@NUM_TICKETS@", if resumes { "1" } else { "0" });
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, config).unwrap();
        let child = Command::new(nginx_binary())
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let mut nginx = Nginx { child, dir, addr: format!("127.0.0.1:{port}") };
        // The master writes its pid file once it listens.
        let started = Instant::now();
        while !nginx.dir.path().join("nginx.pid").exists() {
            if nginx.child.try_wait().unwrap().is_some() || started.elapsed() > Duration::from_secs(10) {
                panic!("nginx did not start: {}", nginx.log("error.log"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        nginx
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    /// Stops nginx and returns its access log: one line per request (scripts/nginx.conf's
    /// `peers` format: protocol, cipher suite, group, `r` if resumed or `.`, status).
    fn stop(mut self) -> String {
        self.terminate();
        self.log("access.log")
    }

    /// SIGTERM (nginx's fast shutdown), then SIGKILL if it is still there after 10 s.
    fn terminate(&mut self) {
        if self.child.try_wait().unwrap().is_some() {
            return;
        }
        // SAFETY: a signal to our own child, which has not been reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let started = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(10) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// nginx on the PATH, or in /usr/sbin (not on every user's PATH), where Debian puts it.
fn nginx_binary() -> PathBuf {
    find_nginx(&std::env::var_os("PATH").unwrap_or_default(), Path::new("/usr/sbin")).unwrap_or_else(|e| panic!("{e}"))
}

fn find_nginx(path: &std::ffi::OsStr, sbin: &Path) -> Result<PathBuf, String> {
    std::env::split_paths(path)
        .chain([sbin.to_path_buf()])
        .map(|dir| dir.join("nginx"))
        .find(|binary| binary.is_file())
        .ok_or_else(|| {
            "nginx is not installed: run scripts/setup.sh, which installs Debian's nginx package".to_string()
        })
}

#[test]
fn tlsbench_load_against_nginx_negotiates_the_scenario_on_every_connection() {
    let dir = tempfile::tempdir().unwrap();
    let nginx = Nginx::start(dir.path(), FULL, 2);
    for stack in ["openssl", "rustls-aws-lc-rs"] {
        let client = load(
            dir.path(),
            &[
                "--stack",
                stack,
                "--scenario",
                FULL,
                "--connect",
                &nginx.addr,
                "--connections",
                "100",
                "--concurrency",
                "2",
            ],
        );
        assert_eq!((client.connections, client.failed), (100, 0), "{stack}: {client:?}");
        assert_eq!(client.negotiated.as_deref(), Some("1.3 aes-128-gcm x25519, no ticket"), "{stack}");
        assert!(client.sockets.bytes_read > 100 * 100, "{stack}: nginx's responses and handshakes");
    }
    // nginx's own view: each connection (the 2 warm-up ones of each load too) made one request,
    // with the scenario's parameters, and none resumed.
    let log = nginx.stop();
    assert_eq!(log.lines().count(), 2 * 102, "{log}");
    assert!(log.lines().all(|line| line == "TLSv1.3 TLS_AES_128_GCM_SHA256 X25519 . 200"), "{log}");
}

#[test]
fn a_resumption_scenario_against_nginx_resumes_from_its_tickets() {
    let dir = tempfile::tempdir().unwrap();
    let nginx = Nginx::start(dir.path(), RESUME, 2);
    // Several connections in flight, each with a ticket of its own (an OpenSSL client sharing
    // one session among them did full handshakes on a quarter to half of them).
    for stack in ["openssl", "rustls-aws-lc-rs"] {
        let client = load(
            dir.path(),
            &[
                "--stack",
                stack,
                "--scenario",
                RESUME,
                "--connect",
                &nginx.addr,
                "--connections",
                "40",
                "--concurrency",
                "4",
            ],
        );
        assert_eq!((client.connections, client.resumed, client.failed), (40, 40, 0), "{stack}: {client:?}");
        assert_eq!(client.negotiated.as_deref(), Some("1.3 aes-128-gcm x25519, resumed, ticket received"), "{stack}");
    }
    let log = nginx.stop();
    let resumed = log.lines().filter(|line| *line == "TLSv1.3 TLS_AES_128_GCM_SHA256 X25519 r 200").count();
    assert!(resumed >= 80, "nginx saw them resume too: {log}");
}

#[test]
fn a_missing_nginx_says_what_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let err = find_nginx(dir.path().as_os_str(), &dir.path().join("sbin")).unwrap_err();
    assert_eq!(err, "nginx is not installed: run scripts/setup.sh, which installs Debian's nginx package");
}

/// A `tlsbench serve` in the background; `stop` sends SIGTERM and returns its report.
/// `openssl s_time` against `addr` for about a second; returns how many connections it counted
/// and the marks it printed for them (`r` for each resumed one).
///
/// s_time is given tlsbench's CA so that OpenSSL's client verifies the server's chain as
/// tlsbench's clients do. It does not enforce the result: its -verify only sets a depth, and it
/// never turns SSL_VERIFY_PEER on nor checks the name.
fn s_time(data: &Path, addr: &str, args: &[&str]) -> (u64, String) {
    let key = FULL.parse::<Scenario>().unwrap().key;
    let ca = data.join("ca.pem");
    std::fs::write(&ca, &Pki::load_or_generate(data, &[key]).unwrap().credentials(key).unwrap().ca_pem).unwrap();
    let out = Command::new("openssl")
        .args([
            "s_time",
            "-connect",
            addr,
            "-time",
            "1",
            "-tls1_3",
            "-ciphersuites",
            "TLS_AES_128_GCM_SHA256",
            "-verify",
            "3",
            "-CAfile",
        ])
        .arg(&ca)
        .args(args)
        .output()
        .expect("openssl is not installed: run scripts/setup.sh");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "s_time {args:?}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    // "N connections in S real seconds, B bytes read per connection"
    let line = stdout.lines().find(|l| l.contains("real seconds")).unwrap_or_else(|| panic!("{stdout}"));
    let count = line.split_whitespace().next().unwrap().parse().unwrap();
    // One mark per connection, on the line before the counts.
    let marks = stdout.lines().filter(|l| !l.is_empty() && l.chars().all(|c| "*rt3".contains(c))).collect();
    (count, marks)
}

#[test]
fn s_time_against_tlsbench_serve_is_counted_by_the_server_without_failures() {
    let dir = tempfile::tempdir().unwrap();
    for stack in ["openssl", "rustls-aws-lc-rs"] {
        // -www /: a request (the same as tlsbench load's) and its response. s_time reads up to the
        // server's close_notify, then resets the connection (SO_LINGER 0), sending no close_notify.
        let server = Server::start(dir.path(), &["--stack", stack, "--scenario", FULL, "--workers", "1"]);
        let (count, marks) = s_time(dir.path(), &server.addr, &["-new", "-www", "/"]);
        let report = server.stop();
        assert!(count > 0 && marks.len() as u64 == count, "{marks}");
        assert_eq!(
            (report.connections, report.resumed, report.without_request, report.failed),
            (count, 0, 0, 0),
            "{stack}: {report:?}"
        );
        assert_eq!(report.negotiated.as_deref(), Some("1.3 aes-128-gcm x25519"));

        // Without -www, s_time resets each connection as soon as its handshake is done.
        let server = Server::start(dir.path(), &["--stack", stack, "--scenario", FULL, "--workers", "1"]);
        let (count, _) = s_time(dir.path(), &server.addr, &["-new"]);
        let report = server.stop();
        assert_eq!(
            (report.connections, report.without_request, report.failed),
            (count, count, 0),
            "{stack}: {report:?}"
        );
    }
}

#[test]
fn s_time_reuse_resumes_every_connection_on_tlsbench_serve() {
    let dir = tempfile::tempdir().unwrap();
    for stack in ["openssl", "rustls-aws-lc-rs"] {
        // -reuse: one full handshake, then each connection resumes the session of the last
        // ticket. In TLS 1.3 tickets come after the handshake, so s_time has one only when it
        // reads (-www): without it, it never resumes.
        let server = Server::start(dir.path(), &["--stack", stack, "--scenario", RESUME, "--workers", "1"]);
        let (count, marks) = s_time(dir.path(), &server.addr, &["-reuse", "-www", "/"]);
        let report = server.stop();
        assert!(count > 0 && marks == "r".repeat(count as usize), "{stack}: {marks}");
        assert_eq!((report.connections, report.resumed, report.failed), (count + 1, count, 0), "{stack}: {report:?}");
        assert_eq!(report.negotiated.as_deref(), Some("1.3 aes-128-gcm x25519, resumed"));
    }
}
