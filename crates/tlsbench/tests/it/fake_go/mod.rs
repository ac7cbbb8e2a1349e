//! What the axis tests share: the directory of the real runners, and a runner directory with a
//! fake `go` beside the real OpenSSL runner. (A directory module: Cargo does not make it a test.)

use std::path::{Path, PathBuf};

use tlsbench_harness::protocol::PROTOCOL_VERSION;
use tlsbench_harness::Capabilities;

/// Where cargo put tlsbench and the Rust runners.
pub fn runner_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_tlsbench")).parent().unwrap().to_path_buf()
}

/// The real OpenSSL runner, and a fake one holding `go` whose list declares neither allocators
/// nor threads (as the Go runner's) and which replies `failed` to any sample.
pub fn runners_with_a_runtime_stack() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        runner_dir().join("tlsbench-runner-openssl"),
        dir.path().join("tlsbench-runner-openssl"),
    )
    .unwrap();
    let capabilities = serde_json::to_string(&Capabilities::everything()).unwrap();
    let list = format!(
        concat!(
            r#"{{"protocol_version":{PROTOCOL_VERSION},"stacks":[{{"id":"go","#,
            r#""library":"Go crypto/tls go1.0 (a fake)","capabilities":{capabilities}}}]}}"#,
        ),
        PROTOCOL_VERSION = PROTOCOL_VERSION,
        capabilities = capabilities,
    );
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\nlist) printf '%s\\n' '{list}' ;;\n\
         *) printf '%s' '{{\"status\":\"failed\",\"reason\":\"asked\"}}' ;;\nesac\n"
    );
    let fake = dir.path().join("tlsbench-runner-fake");
    crate::common::executable(&fake, &script);
    dir
}
