//! The runner: a small binary per link family that measures a sample and prints a
//! [`Reply`](crate::protocol::Reply) as JSON: one sample in a fresh process, or sample after
//! sample in a `session` (docs/runner-protocol.md, "Sessions"). The stack ids are resolved here, once;
//! from there on everything is generic over the chosen pair.
//!
//! # The reply channel
//!
//! A runner's standard output carries its reply and nothing else: one JSON document, then a
//! newline. Libraries print, though (Bertie `println!`s in its certificate code, and a C library
//! may `printf` or `write(1, ...)`), and one stray line would make the reply unreadable. So the
//! first thing a runner does, before any library runs, is to keep the descriptor it was given
//! as stdout for the reply alone and to point descriptor 1 at stderr: whatever a library then
//! prints to "stdout" lands on stderr. Here that is [`take_reply_channel`]: `fcntl(1,
//! F_DUPFD_CLOEXEC)` for the reply, then `dup2(2, 1)`. A runner in another language does the
//! same in its own terms (a JVM keeps `System.out`'s descriptor for the reply and sets
//! `System.setOut(System.err)`; a Go runner dups `os.Stdout` and redirects descriptor 1), so the
//! orchestrator keeps reading the reply from the runner's stdout.
//!
//! Stderr is the runner's diagnostics and whatever its libraries print. The orchestrator keeps
//! its last lines with the reason of a cell that fails, and otherwise ignores it.
//!
//! # Its files
//!
//! `family.rs`: a family of stacks and resolving a stack id to its type, once. `args.rs`: the
//! command line. A file per command: `list.rs`, `sample.rs`, `side.rs` (and `peer.rs`, where the
//! two runners of a split pair meet), `trace.rs`, `net.rs` (`serve` and `load`), `session.rs`.
//! A new command: a variant of `Command` in `args.rs`, its file, and one arm in [`main`].

// The Err of its functions is the reply itself (Reply, NetReply), made once per command and
// never in a measured loop: boxing it would only move it to the heap.
#![allow(clippy::result_large_err)]

mod args;
mod family;
mod list;
mod net;
mod peer;
mod sample;
mod session;
mod side;
mod trace;

use std::fs::File;
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitCode;

use clap::Parser;

use crate::protocol::{Cause, Reply};
use crate::{Error, Scenario, Stack};
use args::Command;

pub use family::{local_id, with_pair, Family, PairVisitor, StackVisitor};
pub use session::session;

/// The reply for what a measurement returned, with the allocator the process ran on and the
/// build it is.
fn reply(outcome: Result<crate::protocol::SampleReport, Error>) -> Reply {
    match outcome {
        Ok(report) => Reply::Ok(crate::protocol::SampleReport {
            allocator: crate::allocator::in_use(),
            build: Some(crate::build::this().name),
            ..report
        }),
        Err(Error::Unsupported(reason)) => Reply::Unsupported { reason },
        Err(Error::Peer(reason)) => Reply::Failed { reason, cause: Cause::Peer },
        Err(error) => Reply::failed(error.to_string()),
    }
}

/// The whole of a runner binary's `main`.
pub fn main<F: Family>() -> ExitCode {
    // The process's start, for `cold`: before anything else runs.
    let started_ns = crate::cpu_time::monotonic_ns();
    // First of all: nothing a library prints may reach the reply channel.
    let mut replies = match take_reply_channel() {
        Ok(channel) => channel,
        Err(e) => {
            eprintln!("tlsbench runner: setting up the reply channel: {e}");
            return ExitCode::FAILURE;
        }
    };
    let command = Command::parse();
    // A process whose allocator is not the one asked for measures nothing (`list` still answers).
    if let (Err(reason), false) = (crate::allocator::check_requested(), matches!(command, Command::List)) {
        let reply = Reply::failed(reason);
        let json = serde_json::to_string(&reply).expect("serializable");
        let mut reply_once = || writeln!(replies, "{json}").and_then(|()| replies.flush());
        // A session gets the reason for each of its requests, as each comes.
        let written = match command {
            Command::Session => std::io::stdin().lines().map_while(Result::ok).try_for_each(|_| reply_once()),
            _ => reply_once(),
        };
        return match written {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    let reply = match command {
        Command::List => serde_json::to_string(&list::list::<F>()),
        Command::Sample(args) => serde_json::to_string(&sample::sample::<F>(&args)),
        Command::Side(args) => serde_json::to_string(&side::side::<F>(&args)),
        Command::Trace(args) => serde_json::to_string(&trace::trace::<F>(&args)),
        Command::Serve(args) => serde_json::to_string(&net::serve::<F>(&args, &mut replies)),
        Command::Load(args) => serde_json::to_string(&net::load::<F>(&args)),
        Command::Session => return session::<F>(std::io::stdin().lock(), &mut replies),
        Command::Cold(args) => serde_json::to_string(&crate::cold::run::<F>(&args, started_ns)),
    };
    match reply.map(|json| writeln!(replies, "{json}").and_then(|()| replies.flush())) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("tlsbench runner: writing the reply: {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("tlsbench runner: encoding the reply: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The reply channel (see the module docs): the descriptor this process was given as stdout,
/// kept for the reply alone, while descriptor 1 becomes a copy of stderr. Called before
/// anything else runs, so nothing has been written to stdout yet.
pub fn take_reply_channel() -> std::io::Result<File> {
    // SAFETY: plain descriptor calls. F_DUPFD_CLOEXEC returns a new descriptor (3 or above, so
    // never 0, 1 or 2) that nothing else in this process knows; we take sole ownership of it.
    let reply = unsafe {
        let fd = libc::fcntl(libc::STDOUT_FILENO, libc::F_DUPFD_CLOEXEC, 3);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(fd)
    };
    // SAFETY: dup2 on the standard descriptors, which stay open for the life of the process;
    // Rust's stdout (nothing buffered yet) and C's stdio keep writing to descriptor 1, now stderr.
    if unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(File::from(reply))
}

/// Whether the pair can do the scenario, with the limits each stack declares on its peers; the
/// drivers check each stack's own capabilities again.
fn check_pair<C: Stack, S: Stack>(client: &C, server: &S, scenario: &Scenario) -> Result<(), Error> {
    crate::check_pair((client.id(), &client.capabilities()), (server.id(), &server.capabilities()), scenario)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_that_echoes_the_peer_says_so_and_one_of_its_own_does_not() {
        let json = |error: Error| serde_json::to_string(&reply(Err(error))).unwrap();
        assert_eq!(
            json(Error::Peer("the peer stopped: gate failed: x".into())),
            r#"{"status":"failed","reason":"the peer stopped: gate failed: x","cause":"peer"}"#
        );
        assert_eq!(json(Error::Gate("x".into())), r#"{"status":"failed","reason":"gate failed: x"}"#);
        // A reply from before the field, or one that names its own cause, parses as its own.
        for own in [r#"{"status":"failed","reason":"x"}"#, r#"{"status":"failed","reason":"x","cause":"own"}"#] {
            assert_eq!(serde_json::from_str::<Reply>(own).unwrap(), Reply::failed("x"));
        }
    }
}
