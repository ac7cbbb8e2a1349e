//! Where the two runners of a split pair meet: an inherited socket, or a Unix socket path.

use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::Side;

use super::args::SideArgs;

/// How long a side waits for its peer to meet it at `--peer-socket`.
const PEER_WAIT: Duration = Duration::from_secs(30);

/// The socket to the peer runner: the inherited `--peer-fd`, or the connection made at
/// `--peer-socket` (the server listens, the client connects).
pub(super) fn peer_of(args: &SideArgs) -> Result<UnixStream, String> {
    match (args.peer_fd, &args.peer_socket) {
        // SAFETY: the orchestrator starts this runner with `--peer-fd` naming an open socket that
        // nothing else in this process uses; this takes sole ownership of it.
        (Some(fd), None) => Ok(unsafe { UnixStream::from_raw_fd(fd) }),
        (None, Some(path)) => meet_peer(path, args.role, PEER_WAIT),
        _ => Err("side: give exactly one of --peer-fd and --peer-socket".into()),
    }
}

/// Meets the peer at the Unix socket `path`: the server listens and accepts one connection,
/// then removes the path; the client connects, retrying while the path is not there yet or
/// refuses. Each waits at most `wait`.
fn meet_peer(path: &std::path::Path, role: Side, wait: Duration) -> Result<UnixStream, String> {
    let deadline = std::time::Instant::now() + wait;
    let shown = path.display();
    match role {
        Side::Server => {
            let _ = std::fs::remove_file(path);
            let listener = std::os::unix::net::UnixListener::bind(path)
                .map_err(|e| format!("listening for the peer at {shown}: {e}"))?;
            listener.set_nonblocking(true).map_err(|e| format!("listening for the peer at {shown}: {e}"))?;
            let accepted = loop {
                match listener.accept() {
                    Ok((stream, _)) => break Ok(stream),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && std::time::Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(1))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        break Err(format!("no peer connected to {shown} within {} s", wait.as_secs()))
                    }
                    Err(e) => break Err(format!("accepting the peer at {shown}: {e}")),
                }
            };
            let _ = std::fs::remove_file(path);
            let stream = accepted?;
            stream.set_nonblocking(false).map_err(|e| format!("the peer's socket: {e}"))?;
            Ok(stream)
        }
        Side::Client => loop {
            match UnixStream::connect(path) {
                Ok(stream) => return Ok(stream),
                Err(e)
                    if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(e) => return Err(format!("cannot connect to the peer at {shown}: {e}")),
            }
        },
    }
}
