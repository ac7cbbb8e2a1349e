//! `session`: `sample` and `side` requests from stdin, one reply line each.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::protocol::Reply;

use super::args::Command;
use super::family::Family;
use super::sample::sample;
use super::side::side;

/// Answers the requests of a session (docs/runner-protocol.md, "Sessions") until the end of
/// `requests`: each line the tab-separated words of a `sample` or `side` command, each reply one
/// line. A request that fails or cannot be read gets a `failed` reply; the session goes on.
pub fn session<F: Family>(requests: impl std::io::BufRead, replies: &mut impl Write) -> ExitCode {
    for line in requests.lines() {
        let reply = match line {
            Ok(line) => session_request::<F>(&line),
            Err(e) => Reply::failed(format!("reading the request: {e}")),
        };
        let json = serde_json::to_string(&reply).expect("a reply serializes");
        if let Err(e) = writeln!(replies, "{json}").and_then(|()| replies.flush()) {
            eprintln!("tlsbench runner: writing the reply: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn session_request<F: Family>(line: &str) -> Reply {
    let words: Vec<&str> = line.split('\t').collect();
    if !matches!(words[0], "sample" | "side") {
        return Reply::failed(format!("a session takes sample and side requests (got `{}`)", words[0]));
    }
    match Command::try_parse_from(std::iter::once("runner").chain(words)) {
        Ok(Command::Sample(args)) => sample::<F>(&args),
        Ok(Command::Side(args)) if args.peer_fd.is_some() => {
            Reply::failed("in a session the peer is reached with --peer-socket PATH, not --peer-fd")
        }
        Ok(Command::Side(args)) => side::<F>(&args),
        Ok(_) => unreachable!("only sample and side requests are parsed"),
        // clap's message, without its usage lines.
        Err(e) => Reply::failed(e.to_string().lines().next().unwrap_or_default().trim_start_matches("error: ")),
    }
}
