//! The runner protocol (docs/runner-protocol.md), held against every runner that
//! `scripts/build.sh` builds beside tlsbench, in every language: each one's `list`, an
//! in-process sample of each of its stacks with itself, split pairs across runners in both
//! roles, the replies for what it cannot do. Runners that garble, truncate or speak another
//! version: faulty_runners.rs.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;
use tlsbench_harness::protocol::{ListReply, Metric, Reply, PROTOCOL_VERSION};
use tlsbench_harness::{Capabilities, Measure, Scenario, Side};

/// Every runner `scripts/build.sh` builds: a missing one is a failure (run scripts/build.sh),
/// not a runner quietly left out of the test.
const BUILT: &[&str] = &[
    "tlsbench-runner-openssl",
    "tlsbench-runner-boringssl",
    "tlsbench-runner-aws-lc",
    "tlsbench-runner-go",
    "tlsbench-runner-java",
];

/// Opt-in runners (built only on request), held against the protocol too when they are built.
const BUILT_ON_REQUEST: &[&str] = &["tlsbench-runner-wolfssl"];

/// The stack every split pair is made with: in the broadest Rust runner.
const PEER: &str = "rustls-aws-lc-rs";

/// Scenarios a stack's self-test takes, the first it supports: stacks that cannot pin a TLS 1.3
/// suite run AES-256-GCM (libtls), and Bertie has no TLS 1.2.
pub const SELF_TEST: &[&str] = &[
    "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
    "handshake-full_1.3_x25519_ecdsa-p256_aes-256-gcm",
    "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm",
];

pub fn runner_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_tlsbench")).parent().expect("tlsbench is in a directory").to_path_buf()
}

/// The runner binaries beside tlsbench, each with its `list` reply, checked to be there; and the
/// opt-in ones that are built.
fn runners() -> Vec<(PathBuf, ListReply)> {
    let dir = runner_dir();
    let on_request = BUILT_ON_REQUEST.iter().filter(|name| dir.join(name).is_file());
    BUILT
        .iter()
        .chain(on_request)
        .map(|name| {
            let path = dir.join(name);
            assert!(path.exists(), "{} is missing: build every runner with scripts/build.sh", path.display());
            let output = std::process::Command::new(&path).arg("list").output().unwrap();
            assert!(output.status.success(), "{name} list: {}", String::from_utf8_lossy(&output.stderr));
            let stdout = String::from_utf8(output.stdout).unwrap();
            assert_eq!(stdout.lines().count(), 1, "{name}: one line on stdout, the reply: {stdout}");
            let reply: ListReply =
                serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{name} list: {e}: {stdout}"));
            (path, reply)
        })
        .collect()
}

pub fn data_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        // The orchestrator makes the certificates before it starts a runner; so does this test.
        tlsbench_harness::Pki::load_or_generate(dir.path(), &[tlsbench_harness::KeyType::EcdsaP256]).unwrap();
        dir
    })
    .path()
}

/// One reply of `runner args...`, which must be its only line on stdout.
fn reply(runner: &Path, args: &[&str]) -> Reply {
    let output = std::process::Command::new(runner).args(args).arg("--data-dir").arg(data_dir()).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{} {args:?}: exit {:?}: {stderr}", runner.display(), output.status);
    assert_eq!(stdout.lines().count(), 1, "{} {args:?}: one line on stdout: {stdout}", runner.display());
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{} {args:?}: {e}: {stdout}", runner.display()))
}

fn self_test_scenario(id: &str, capabilities: &Capabilities) -> Scenario {
    let scenario =
        SELF_TEST.iter().map(|name| name.parse::<Scenario>().unwrap()).find(|s| capabilities.check(id, s).is_ok());
    scenario.unwrap_or_else(|| panic!("{id} supports none of {SELF_TEST:?}"))
}

#[test]
fn every_runner_speaks_this_protocol_version_and_lists_distinct_stacks() {
    for (path, list) in runners() {
        assert_eq!(list.protocol_version, PROTOCOL_VERSION, "{}", path.display());
        assert!(!list.stacks.is_empty(), "{}", path.display());
        for stack in &list.stacks {
            assert!(!stack.library.is_empty(), "{}: {}", path.display(), stack.id);
            assert!(
                !stack.capabilities.kinds.is_empty() && !stack.capabilities.versions.is_empty(),
                "{}: {}",
                path.display(),
                stack.id
            );
        }
    }
    // And tlsbench takes every one of them: none is set aside, and each stack's library is its own.
    let output = Command::new(env!("CARGO_BIN_EXE_tlsbench")).args(["list", "stacks"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("not measured"), "{stderr}");
    // Words as they come, whatever lines the table wraps a long library string (wolfSSL's) over.
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let listed = words(&stdout);
    for (_, list) in runners() {
        for stack in list.stacks {
            // Each stack's block starts with its id and library.
            let row = format!("{} {}", stack.id, words(&stack.library));
            assert!(listed.contains(&row), "{} missing: {stdout}", stack.id);
        }
    }
}

/// Every stack names its TLS library and its crypto backend, each as its running code reports
/// it: stacks on one crypto library agree on it, and each backend is the one its library string
/// (reported apart) says it runs on.
#[test]
fn every_stack_names_its_tls_library_and_its_backend() {
    for (path, list) in runners() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let find = |id: &str| list.stacks.iter().find(|s| s.id == id);
        for stack in &list.stacks {
            let id = &stack.id;
            let tls = stack.tls_library.as_deref().unwrap_or_else(|| panic!("{name}: {id} names no TLS library"));
            let backend = stack.backend.as_ref().unwrap_or_else(|| panic!("{name}: {id} names no backend"));
            assert!(
                !tls.is_empty() && !backend.name.is_empty() && !backend.version.is_empty(),
                "{name}: {id}: {stack:?}"
            );
            let library = &stack.library;
            match id.as_str() {
                "rustls-ring" => {
                    assert_eq!(backend.name, "ring", "{name}");
                    assert!(library.contains(&format!("(ring {})", backend.version)), "{name}: {library} / {backend}");
                }
                "rustls-aws-lc-rs" | "rustls-aws-lc-rs-fips" => {
                    let fips = id.ends_with("-fips");
                    assert_eq!(backend.name, if fips { "AWS-LC FIPS" } else { "AWS-LC" }, "{name}");
                    let via = backend.detail.as_deref().unwrap_or_default();
                    let crate_version = via.strip_prefix("aws-lc-rs ").map(|v| v.split(',').next().unwrap());
                    assert!(
                        crate_version.is_some_and(|v| library.contains(&format!("(aws-lc-rs {v}"))),
                        "{name}: {library} / {backend}"
                    );
                    assert_eq!(via.ends_with(", FIPS mode on"), fips, "{name}: {backend}");
                }
                // s2n-tls links the AWS-LC that aws-lc-rs builds: the same library as rustls's.
                "s2n-tls" | "s2n-tls-recvbuf" => {
                    let rustls =
                        find("rustls-aws-lc-rs").and_then(|s| s.backend.as_ref()).expect("beside rustls-aws-lc-rs");
                    assert_eq!(backend.group(), rustls.group(), "{name}: {id}");
                    assert_eq!(
                        Some(tls),
                        find("s2n-tls").and_then(|s| s.tls_library.as_deref()),
                        "{name}: one TLS library"
                    );
                }
                "openssl" => {
                    assert_eq!(backend.name, "OpenSSL libcrypto", "{name}");
                    assert!(
                        library.starts_with(&format!("OpenSSL {} ", backend.version)),
                        "{name}: {library} / {backend}"
                    );
                }
                // LibreTLS runs on the system's OpenSSL: the same libcrypto as the openssl stack's.
                "libtls" => assert_eq!(Some(backend), find("openssl").and_then(|s| s.backend.as_ref()), "{name}"),
                "boringssl" => {
                    assert_eq!(backend.name, "BoringSSL", "{name}");
                    assert!(library.contains(&backend.version), "{name}: {library} / {backend}");
                }
                // AWS-LC's libssl on its own libcrypto, which names the same release.
                "aws-lc" => {
                    assert_eq!(backend.name, "AWS-LC", "{name}");
                    assert!(library.starts_with(&format!("AWS-LC {} (", backend.version)), "{name}: {library}");
                    assert!(backend.detail.as_deref().is_some_and(|d| d.starts_with("aws-lc-sys ")), "{backend}");
                }
                "gnutls" => assert_eq!(backend.name, "Nettle", "{name}: {backend}"),
                // wolfSSL's own crypto, in the same library (its opt-in runner, when built).
                "wolfssl" => {
                    assert_eq!(backend.name, "wolfCrypt", "{name}");
                    assert!(
                        library.starts_with(&format!("wolfSSL {} (", backend.version)),
                        "{name}: {library} / {backend}"
                    );
                }
                "bertie" => {
                    assert_eq!(backend.name, "libcrux", "{name}");
                    assert!(
                        library.contains(&format!("(libcrux {}", backend.version)),
                        "{name}: {library} / {backend}"
                    );
                }
                "go" => {
                    assert_eq!(backend.name, "Go crypto", "{name}");
                    assert!(library.ends_with(&backend.version), "{name}: {library} / {backend}");
                }
                "jsse" => {
                    assert_eq!(backend.name, "JDK providers", "{name}");
                    assert!(
                        backend.detail.as_deref().is_some_and(|d| d.contains("AES-GCM") && d.contains("ECDH")),
                        "{name}: {backend}"
                    );
                }
                "netty-tcnative" => assert_eq!(backend.name, "BoringSSL", "{name}: {backend}"),
                other => panic!("{name}: {other}: add what its backend must be to this test"),
            }
        }
        // rustls's providers are one TLS library on two backends.
        if let (Some(aws), Some(ring)) = (find("rustls-aws-lc-rs"), find("rustls-ring")) {
            assert_eq!(aws.tls_library, ring.tls_library, "{name}");
            assert_ne!(aws.backend, ring.backend, "{name}");
        }
    }
}

#[test]
fn every_stack_measures_itself_in_its_runner_with_both_sides_checked() {
    for (path, list) in runners() {
        for stack in &list.stacks {
            let id = stack.id.as_str();
            let scenario = self_test_scenario(id, &stack.capabilities);
            let name = scenario.name();
            let args = [
                "sample",
                "--client",
                id,
                "--server",
                id,
                "--scenario",
                &name,
                "--min-time-ms",
                "5",
                "--warmup-ms",
                "0",
            ];
            let Reply::Ok(report) = reply(&path, &args) else { panic!("{id} {name}: {:?}", reply(&path, &args)) };
            assert_eq!(
                (report.client_library.as_str(), report.server_library.as_str()),
                (stack.library.as_str(), stack.library.as_str())
            );
            assert!(report.iterations >= 1, "{id}");
            for side in [Side::Client, Side::Server] {
                let rate = report.values.iter().find(|v| v.side == side && v.metric == Metric::HandshakesPerS);
                let rate = rate.unwrap_or_else(|| panic!("{id}: no {side} handshakes_per_s in {:?}", report.values));
                assert!(rate.value > 0.0 && rate.seconds >= 0.005, "{id} {side}: {rate:?}");
                let negotiated = report
                    .negotiated
                    .iter()
                    .find(|n| n.side == side)
                    .unwrap_or_else(|| panic!("{id}: no {side} negotiated"));
                let pinned = format!("{} {}", scenario.version, scenario.suite().unwrap());
                assert!(
                    negotiated.negotiated.starts_with(&pinned),
                    "{id} {side}: {} for {name}",
                    negotiated.negotiated
                );
            }
            if stack.capabilities.check_measure(Measure::Io).is_ok() {
                let args = ["sample", "--client", id, "--server", id, "--scenario", &name, "--measure", "io"];
                let Reply::Ok(io) = reply(&path, &args) else { panic!("{id} io: {:?}", reply(&path, &args)) };
                for side in [Side::Client, Side::Server] {
                    let count =
                        |metric| io.values.iter().find(|v| v.side == side && v.metric == metric).map(|v| v.value);
                    assert!(count(Metric::RecordsWritten).is_some_and(|n| n >= 1.0), "{id} {side}: {:?}", io.values);
                    assert!(count(Metric::BytesWritten).is_some_and(|n| n > 5.0), "{id} {side}: {:?}", io.values);
                    assert_eq!(
                        count(Metric::IoCalls),
                        Some(count(Metric::ReadCalls).unwrap() + count(Metric::WriteCalls).unwrap()),
                        "{id}"
                    );
                }
            }
        }
    }
}

/// A runner that takes `--full-speed` times its CPU in the harness probe's units (the Go runner
/// writes the workload out in the harness's instructions: runners/go/probe_amd64.s; the Java
/// runner calls the harness's judge itself: crates/speed-ffi), so that
/// against the full speed this process's probes find, its judged loop finds the CPU at full
/// speed. Go's compiled loop of the same workload ran at 0.4 of it, and would have found every
/// stretch slowed. A noisy machine may slow a whole loop: up to five samples, the first gated.
#[test]
fn every_runner_that_judges_its_loop_probes_in_the_harness_s_units() {
    use tlsbench_harness::speed::{probe, FULL_SPEED};
    let mut probes: Vec<f64> = (0..200)
        .map(|_| {
            std::thread::sleep(std::time::Duration::from_micros(500));
            probe()
        })
        .collect();
    probes.sort_by(f64::total_cmp);
    // The sentinel's reference: the speed its probes reach a tenth of the time.
    let reference = format!("{:.3}", probes[probes.len() * 9 / 10]);
    let judging: Vec<_> = runners().into_iter().filter(|(_, list)| list.full_speed).collect();
    assert!(judging.iter().any(|(path, _)| path.ends_with("tlsbench-runner-openssl")), "no Rust runner judges");
    // The Java runner judges through the harness's own judge (crates/speed-ffi), which the build puts beside it.
    assert!(judging.iter().any(|(path, _)| path.ends_with("tlsbench-runner-java")), "the Java runner does not judge");
    for (path, list) in judging {
        let stack = &list.stacks[0];
        let (id, name) = (stack.id.as_str(), self_test_scenario(&stack.id, &stack.capabilities).name());
        let args = ["sample", "--client", id, "--server", id, "--scenario", &name, "--min-time-ms", "20"];
        let args = [&args[..], &["--warmup-ms", "5", "--full-speed", &reference]].concat();
        let mut judged = Vec::new();
        for _ in 0..5 {
            let Reply::Ok(report) = reply(&path, &args) else { panic!("{id} {name}: {:?}", reply(&path, &args)) };
            let speed = report.cpu_speed.unwrap_or_else(|| panic!("{id}: no cpu_speed: {report:?}"));
            judged.push(speed);
            if speed.gated {
                break;
            }
        }
        let gated = judged.iter().find(|s| s.gated);
        let speed = gated.unwrap_or_else(|| panic!("{id}: no stretch at full speed against {reference}: {judged:?}"));
        assert!((FULL_SPEED..1.6).contains(&speed.speed), "{id}: against {reference}: {speed:?}");
    }
}

#[test]
fn what_a_runner_cannot_do_gets_a_reply_that_says_so() {
    for (path, list) in runners() {
        let id = list.stacks[0].id.as_str();
        // The io measure does not apply to transfers, in any language.
        let transfer = "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm";
        match reply(&path, &["sample", "--client", id, "--server", id, "--scenario", transfer, "--measure", "io"]) {
            Reply::Unsupported { reason } => {
                assert!(reason.contains("io") && reason.contains("transfer"), "{}: {reason}", path.display())
            }
            other => panic!("{}: {other:?}", path.display()),
        }
        match reply(&path, &["sample", "--client", "no-such-tls", "--server", id, "--scenario", SELF_TEST[0]]) {
            Reply::Failed { reason, .. } => {
                assert!(reason.contains("`no-such-tls`") && reason.contains(id), "{}: {reason}", path.display());
            }
            other => panic!("{}: {other:?}", path.display()),
        }
    }
}

/// A runner process taking requests (docs/runner-protocol.md, "Sessions").
struct Session {
    child: std::process::Child,
    replies: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Session {
    fn start(runner: &Path) -> Session {
        let mut child = std::process::Command::new(runner)
            .arg("session")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let replies = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
        Session { child, replies }
    }

    fn send(&mut self, words: &[&str]) {
        use std::io::Write;
        let data_dir = data_dir().to_string_lossy();
        let line = [words, &["--data-dir", &data_dir][..]].concat().join("\t");
        writeln!(self.child.stdin.as_mut().unwrap(), "{line}").unwrap();
    }

    fn receive(&mut self) -> Reply {
        let line = self.replies.next().expect("a reply line").unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn ask(&mut self, words: &[&str]) -> Reply {
        self.send(words);
        self.receive()
    }

    /// Ends the session with the end of its stdin; it must exit with 0 and nothing more to say.
    fn end(mut self) {
        drop(self.child.stdin.take());
        assert!(self.replies.next().is_none(), "nothing after the last reply");
        assert!(self.child.wait().unwrap().success());
    }
}

fn ok(reply: Reply, what: &str) -> tlsbench_harness::protocol::SampleReport {
    match reply {
        Reply::Ok(report) => report,
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn every_runner_takes_sample_after_sample_in_one_session() {
    for (path, list) in runners() {
        let stack = &list.stacks[0];
        let id = stack.id.as_str();
        let name = self_test_scenario(id, &stack.capabilities).name();
        let what = format!("{} {id}", path.display());
        let mut session = Session::start(&path);
        let time =
            ["sample", "--client", id, "--server", id, "--scenario", &name, "--min-time-ms", "5", "--warmup-ms", "0"];
        for round in 0..2 {
            let report = ok(session.ask(&time), &what);
            assert_eq!(report.client_library, stack.library, "{what}");
            assert!(
                report.iterations >= 1
                    && report.values.iter().any(|v| v.metric == Metric::HandshakesPerS && v.value > 0.0),
                "{what}"
            );
            // A full handshake each time: nothing carried over from the sample before.
            assert!(
                report.negotiated.iter().all(|n| !n.negotiated.contains("resumed")),
                "{what} round {round}: {:?}",
                report.negotiated
            );
            let io = ok(
                session.ask(&["sample", "--client", id, "--server", id, "--scenario", &name, "--measure", "io"]),
                &what,
            );
            assert!(
                io.values.iter().any(|v| v.metric == Metric::RecordsWritten && v.value >= 1.0),
                "{what}: {:?}",
                io.values
            );
        }
        // What a session does not take is answered, and the session goes on.
        match session.ask(&["list"]) {
            Reply::Failed { reason, .. } => {
                assert_eq!(reason, "a session takes sample and side requests (got `list`)", "{what}")
            }
            other => panic!("{what}: {other:?}"),
        }
        match session.ask(&[
            "side",
            "--role",
            "client",
            "--stack",
            id,
            "--peer-stack",
            id,
            "--peer-fd",
            "0",
            "--scenario",
            &name,
        ]) {
            Reply::Failed { reason, .. } => {
                assert_eq!(reason, "in a session the peer is reached with --peer-socket PATH, not --peer-fd", "{what}")
            }
            other => panic!("{what}: {other:?}"),
        }
        ok(session.ask(&time), &what);
        session.end();
    }
}

#[test]
fn sides_in_sessions_meet_a_new_peer_at_a_socket_each_sample() {
    let all = runners();
    let peer_runner =
        &all.iter().find(|(path, _)| path.ends_with("tlsbench-runner-openssl")).expect("the OpenSSL runner").0;
    let sockets = tempfile::tempdir().unwrap();
    let mut count = 0;
    for (path, list) in &all {
        let id = list.stacks[0].id.as_str();
        let name = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
        // One session of this runner's stack, facing the Rust peer in one role then the other,
        // each sample at a new path.
        let mut theirs = Session::start(path);
        let (mut rust_client, mut rust_server) = (Session::start(peer_runner), Session::start(peer_runner));
        for role in ["server", "client", "server"] {
            let peer = if role == "server" { &mut rust_client } else { &mut rust_server };
            count += 1;
            let socket = sockets.path().join(format!("{count}.sock"));
            let socket = socket.to_string_lossy();
            let peer_role = if role == "server" { "client" } else { "server" };
            let side = |role, stack, peer_stack| {
                let head =
                    ["side", "--role", role, "--stack", stack, "--peer-stack", peer_stack, "--peer-socket", &socket];
                [&head[..], &["--scenario", name, "--min-time-ms", "5", "--warmup-ms", "0"]].concat()
            };
            theirs.send(&side(role, id, PEER));
            peer.send(&side(peer_role, PEER, id));
            let what = format!("{} {id} as {role}", path.display());
            let (mine, other) = (ok(theirs.receive(), &what), ok(peer.receive(), &what));
            assert_eq!(mine.iterations, other.iterations, "{what}");
            assert!(!std::path::Path::new(&*socket).exists(), "{what}: the server removes its socket");
        }
        for session in [theirs, rust_client, rust_server] {
            session.end();
        }
    }
}

/// `tlsbench run` in a directory of its own; its output and exported results.
pub fn run(args: &[&str], runner_dir: Option<&Path>) -> (Output, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_tlsbench"));
    command.env("TLSBENCH_DATA_DIR", data_dir()).current_dir(dir.path()).args(args).arg("--export-json").arg(&json);
    if let Some(runners) = runner_dir {
        command.env("TLSBENCH_RUNNER_DIR", runners);
    }
    let output = command.output().unwrap();
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no export ({e}): {}", String::from_utf8_lossy(&output.stderr)));
    let doc: Value = serde_json::from_str(&text).unwrap();
    (output, doc["results"].as_array().unwrap().clone())
}

/// The stacks that the broadest Rust runner, which holds PEER, does not hold.
fn stacks_outside_the_openssl_runner() -> Vec<String> {
    let all = runners();
    let peer_runner =
        all.iter().find(|(path, _)| path.ends_with("tlsbench-runner-openssl")).expect("the OpenSSL runner");
    let held = |id: &str| peer_runner.1.stacks.iter().any(|s| s.id == id);
    let mut others: Vec<String> =
        all.iter().flat_map(|(_, list)| list.stacks.iter().map(|s| s.id.clone())).filter(|id| !held(id)).collect();
    others.dedup();
    assert!(others.len() >= 4, "boringssl, go, jsse and netty-tcnative at least: {others:?}");
    others
}

#[test]
fn stacks_of_every_runner_pair_split_with_a_rust_runner_in_both_roles() {
    for id in stacks_outside_the_openssl_runner() {
        for (client, server) in [(id.as_str(), PEER), (PEER, id.as_str())] {
            let args = ["run", "--client", client, "--server", server, "--process", "split", "--samples", "1"];
            let scenarios = [
                "--scenario",
                "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
                "--scenario",
                "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
            ];
            // A short bound on warming up: this checks the relay, not the JIT's figures.
            let settings = ["--min-time-ms", "5", "--warmup-ms", "0", "--warmup-max-ms", "300"];
            let (output, results) = run(&[&args[..], &scenarios, &settings].concat(), None);
            assert!(output.status.success(), "{client} -> {server}: {}", String::from_utf8_lossy(&output.stderr));
            assert!(
                results.iter().any(|r| r["metric"] == "mb_per_s"),
                "the transfer's length and SHA-256 crossed runners"
            );
            for r in &results {
                assert_eq!((r["status"].as_str(), r["process"].as_str()), (Some("ok"), Some("split-process")), "{r}");
                assert!(r["negotiated"].as_str().is_some_and(|n| n.starts_with("1.3 aes-128-gcm")), "{r}");
            }
        }
    }
}

#[test]
fn stacks_of_every_runner_serve_and_load_over_loopback_with_a_rust_stack_in_each_role() {
    for id in stacks_outside_the_openssl_runner() {
        for (client, server) in [(id.as_str(), PEER), (PEER, id.as_str())] {
            let args = [
                "run",
                "--transport",
                "tcp",
                "--client",
                client,
                "--server",
                server,
                "--samples",
                "1",
                "--min-time-ms",
                "200",
            ];
            let (output, results) =
                run(&[&args[..], &["--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"]].concat(), None);
            assert!(output.status.success(), "{client} -> {server}: {}", String::from_utf8_lossy(&output.stderr));
            let median = |side: &str, metric: &str| {
                let found = results.iter().find(|r| r["side"] == side && r["metric"] == metric);
                found
                    .and_then(|r| r["median"].as_f64())
                    .unwrap_or_else(|| panic!("{client} -> {server}: no {side} {metric}: {results:?}"))
            };
            for r in &results {
                assert_eq!((r["status"].as_str(), r["process"].as_str()), (Some("ok"), Some("tcp")), "{r}");
                assert!(r["negotiated"].as_str().is_some_and(|n| n.starts_with("1.3 aes-128-gcm")), "{r}");
            }
            for side in ["client", "server"] {
                assert!(
                    median(side, "connections_per_s") > 0.0,
                    "{client} -> {server}: the {side} completed connections"
                );
                let p50 = median(side, "handshake_p50_ms");
                assert!(
                    p50 > 0.0 && p50 <= median(side, "handshake_max_ms"),
                    "{side}: the histogram crossed languages"
                );
                let (reads, writes) = (median(side, "read_calls"), median(side, "write_calls"));
                assert!(
                    reads >= 1.0 && writes >= 1.0 && median(side, "syscalls") >= reads + writes,
                    "{client} -> {server} {side}"
                );
            }
            assert!(
                median("server", "bytes_written") > median("client", "bytes_written"),
                "the server sends the certificate"
            );
        }
    }
}
