//! Runners that garble, truncate or speak another protocol version: each costs its own cells
//! or stacks, with the reason, and nothing else (docs/runner-protocol.md).

use assert_cmd::Command;
use serde_json::Value;
use tlsbench_harness::protocol::PROTOCOL_VERSION;
use tlsbench_harness::Capabilities;

use crate::conformance::{data_dir, run, runner_dir, SELF_TEST};

/// A runner directory with the real OpenSSL runner and a fake one written as a shell script,
/// which claims the stack `go` and answers `list` with `list_reply`, `sample` with
/// `sample_reply`, and `side` as `side_script` says.
fn with_fake_runner(list_reply: &str, sample_reply: &str, side_script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        runner_dir().join("tlsbench-runner-openssl"),
        dir.path().join("tlsbench-runner-openssl"),
    )
    .unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\nlist) printf '%s\\n' '{list_reply}' ;;\n\
         sample) printf '%s' '{sample_reply}' ;;\nside) {side_script} ;;\nesac\n"
    );
    let fake = dir.path().join("tlsbench-runner-fake");
    crate::common::executable(&fake, &script);
    dir
}

fn fake_list(version: u32) -> String {
    let capabilities = serde_json::to_string(&Capabilities::everything()).unwrap();
    format!(
        concat!(
            r#"{{"protocol_version":{version},"stacks":[{{"id":"go","#,
            r#""library":"Go crypto/tls go1.0 (a fake)","capabilities":{capabilities}}}]}}"#,
        ),
        version = version,
        capabilities = capabilities,
    )
}

#[test]
fn a_runner_that_garbles_or_truncates_costs_its_cells_with_the_reason_and_the_run_goes_on() {
    // In one process: a reply with a metric no runner has. As the client of a split pair: a
    // relay frame announcing 100 bytes with 2 behind it, then a reply cut short. As the server:
    // a frame with an unknown tag.
    let bogus_metric = concat!(
        r#"{"status":"ok","client_library":"Go crypto/tls go1.0","server_library":"Go crypto/tls go1.0","#,
        r#""iterations":1,"values":[{"side":"client","metric":"handshakes_per_fortnight","value":1,"seconds":1}]}"#,
    );
    let side = concat!(
        r#"if [ "$3" = client ]; then printf '\144\000\000\000\001\000' >&0; printf '{"status":"ok","client_lib'; "#,
        r#"else cat <&0 >/dev/null & printf '\005\000\000\000\011garb' >&0; sleep 1; fi"#,
    );
    let runners = with_fake_runner(&fake_list(PROTOCOL_VERSION), bogus_metric, side);
    let args = [
        "interop",
        "--stack",
        "go",
        "--stack",
        "openssl",
        "--scenario",
        SELF_TEST[0],
        "--samples",
        "1",
        "--min-time-ms",
        "5",
        "--warmup-ms",
        "0",
    ];
    let (output, results) = run(&args, Some(runners.path()));
    assert_eq!(output.status.code(), Some(1), "failed cells fail the run: {}", String::from_utf8_lossy(&output.stderr));
    let reason = |client: &str, server: &str| {
        let cell = results
            .iter()
            .find(|r| r["client_stack"] == client && r["server_stack"] == server && r["side"] == "client");
        let cell = cell.unwrap_or_else(|| panic!("no {client} -> {server} cell"));
        assert_eq!(cell["status"], "failed", "{cell}");
        cell["reason"].as_str().unwrap().to_string()
    };
    let in_process = reason("go", "go");
    assert!(
        in_process.starts_with("runner printed an unreadable reply: unknown variant `handshakes_per_fortnight`"),
        "{in_process}"
    );
    let truncated = reason("go", "openssl");
    assert!(
        truncated.starts_with("client runner: runner printed an unreadable reply: EOF while parsing"),
        "{truncated}"
    );
    let garbled = reason("openssl", "go");
    assert!(garbled.contains("the peer runner sent a garbled message (tag 9, 5 bytes)"), "{garbled}");
    // The pair that the fake runner is not part of is measured.
    let fine: Vec<&Value> =
        results.iter().filter(|r| r["client_stack"] == "openssl" && r["server_stack"] == "openssl").collect();
    assert!(
        !fine.is_empty() && fine.iter().all(|r| r["status"] == "ok" && r["median"].as_f64().unwrap() > 0.0),
        "{fine:?}"
    );
}

#[test]
fn a_runner_of_another_protocol_version_is_set_aside_and_named_where_its_stacks_are_asked_for() {
    let runners = with_fake_runner(&fake_list(PROTOCOL_VERSION + 1), "", "exit 1");
    let tlsbench = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tlsbench"));
        command.env("TLSBENCH_RUNNER_DIR", runners.path()).env("TLSBENCH_DATA_DIR", data_dir());
        command
    };
    let stale = format!(
        "tlsbench-runner-fake is unusable: it speaks runner protocol {}, this tlsbench speaks {PROTOCOL_VERSION}",
        PROTOCOL_VERSION + 1
    );
    // The other runners' stacks are all there; the missing ones are named, with why.
    let listed = tlsbench().args(["list", "stacks"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&listed.stdout), crate::common::unwrapped(&listed.stderr));
    assert!(listed.status.success(), "{stderr}");
    let ids: Vec<&str> =
        stdout.lines().filter(|l| !l.starts_with(' ')).filter_map(|l| l.split_whitespace().next()).collect();
    assert!(ids.contains(&"openssl") && !ids.contains(&"go"), "{stdout}");
    assert!(stderr.contains("not measured: ") && stderr.contains(" go") && stderr.contains(&stale), "{stderr}");
    // Asked for by name, its stack is an error that says why.
    let asked = tlsbench().args(["run", "--stack", "go", "--samples", "1"]).output().unwrap();
    let stderr = crate::common::unwrapped(&asked.stderr);
    assert_eq!(asked.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no runner in") && stderr.contains("holds stack `go`") && stderr.contains(&stale),
        "{stderr}"
    );
}
