//! The `cold` command (docs/runner-protocol.md#cold): in a fresh process, each side's first
//! context, its first full handshake, a second (warm) one, and for resumption scenarios the first
//! resumption and a second one, each side timed inside its own calls; and how long the process
//! took from its spawn to `main`. Under callgrind, the counted side's calls only are collected,
//! and callgrind dumps its counts after each phase, so that each dump file holds one phase.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::context::{client_context, server_context};
use crate::driver::{check_measure, Clock, Clocks, Configs, Pair};
use crate::runner::{with_pair, Family, PairVisitor};
use crate::{Error, Kind, Link, Measure, Pki, Scenario, Side, Stack};

/// The phases of a cold sample, in order, as callgrind's dumps name them.
pub const PHASES: [&str; 5] = ["context", "first", "second", "first_resume", "second_resume"];

/// `runner cold`'s reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ColdReply {
    Ok {
        cold: Cold,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        client_library: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        server_library: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        build: Option<String>,
    },
    Unsupported {
        reason: String,
    },
    Failed {
        reason: String,
    },
}

/// What one fresh process measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cold {
    /// From the orchestrator's clock reading just before the spawn to the top of `main`; absent
    /// without `--spawned-at-ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_start_ns: Option<u64>,
    pub client: ColdSide,
    pub server: ColdSide,
}

/// One side's figures, in nanoseconds inside its own calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColdSide {
    pub context_ns: u64,
    pub first_ns: u64,
    /// handshake-full only: a second full handshake on the same contexts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_resume_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_resume_ns: Option<u64>,
}

impl ColdSide {
    /// The figure of a phase ([`PHASES`]); None where the scenario has none.
    pub fn phase(&self, phase: &str) -> Option<u64> {
        match phase {
            "context" => Some(self.context_ns),
            "first" => Some(self.first_ns),
            "second" => self.second_ns,
            "first_resume" => self.first_resume_ns,
            "second_resume" => self.second_resume_ns,
            _ => None,
        }
    }
}

/// What `cold` was asked.
#[derive(clap::Args)]
pub struct ColdArgs {
    #[arg(long)]
    pub client: String,
    #[arg(long)]
    pub server: String,
    /// A handshake scenario.
    #[arg(long)]
    pub scenario: Scenario,
    /// Where the certificates are cached.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// The orchestrator's CLOCK_MONOTONIC reading just before it spawned this process.
    #[arg(long)]
    pub spawned_at_ns: Option<u64>,
    /// Under callgrind: the side whose calls are collected.
    #[arg(long, value_parser = parse_side)]
    pub count_side: Option<Side>,
}

fn parse_side(text: &str) -> Result<Side, String> {
    match text {
        "client" => Ok(Side::Client),
        "server" => Ok(Side::Server),
        _ => Err(format!("unknown side `{text}` (valid: client, server)")),
    }
}

/// `runner cold`: one cold sample of the pair in this fresh process; `started_ns` is
/// CLOCK_MONOTONIC read at the top of `main`.
pub fn run<F: Family>(args: &ColdArgs, started_ns: u64) -> ColdReply {
    match with_pair::<F, _>(&args.client, &args.server, ColdPair { args, started_ns }) {
        Ok(reply) => reply,
        Err(reason) => ColdReply::Failed { reason },
    }
}

struct ColdPair<'a> {
    args: &'a ColdArgs,
    started_ns: u64,
}

impl PairVisitor for ColdPair<'_> {
    type Output = ColdReply;
    fn visit<C: Stack, S: Stack>(self, client: &C, server: &S) -> ColdReply {
        let outcome = sample(client, server, self.args, self.started_ns);
        reply(outcome, client.library(), server.library())
    }
}

/// One cold sample of `client` against `server`.
pub fn sample<C: Stack, S: Stack>(client: &C, server: &S, args: &ColdArgs, started_ns: u64) -> Result<Cold, Error> {
    let scenario = &args.scenario;
    if !matches!(scenario.kind, Kind::HandshakeFull | Kind::HandshakeResumeId | Kind::HandshakeResumeTicket) {
        return Err(Error::Unsupported(format!(
            "cold takes a handshake scenario (handshake-full, handshake-resume-id, handshake-resume-ticket), not {}",
            scenario.kind
        )));
    }
    check_measure(Measure::Time, scenario)?;
    crate::check_pair((client.id(), &client.capabilities()), (server.id(), &server.capabilities()), scenario)?;
    if args.count_side.is_some() && valgrind_requests::valgrind::running_on_valgrind() == 0 {
        return Err(Error::Other(
            "cold --count-side runs under valgrind: valgrind --tool=callgrind --collect-atstart=no RUNNER cold ..."
                .into(),
        ));
    }
    let data_dir = args.data_dir.clone().unwrap_or_else(crate::pki::default_data_dir);
    // The certificates exist before the process is measured (the orchestrator made them); each
    // side's context reads its own files inside its clock.
    Pki::load_or_generate(&data_dir, &[scenario.key]).map_err(Error::Other)?;
    let clock = |side: Side| Clock::counting(args.count_side == Some(side));
    let phase_end = |name: &str| {
        if args.count_side.is_some() {
            let name = std::ffi::CString::new(name).expect("a phase name has no NUL");
            valgrind_requests::callgrind::dump_stats_at(&name);
        }
    };
    let mut clocks = Clocks { client: clock(Side::Client), server: clock(Side::Server) };
    let server_config = server_context(server, scenario, &data_dir, &mut clocks.server)?;
    let client_config = client_context(client, scenario, &data_dir, &mut clocks.client)?;
    let mut cold = ColdSides::default();
    cold.take(&mut clocks, |side| &mut side.context_ns);
    phase_end(PHASES[0]);
    let configs = Configs::<C, S> { client: client_config, server: server_config };
    let pair = Pair::new(client, server, &configs, scenario, Link::new());
    let handshake = |clocks: &mut Clocks, resumed: bool| -> Result<(), Error> {
        let (c, s) = pair.handshake(clocks)?;
        pair.check(&c, &s, resumed)?;
        clocks.client.time(|| drop(c));
        clocks.server.time(|| drop(s));
        Ok(())
    };
    handshake(&mut clocks, false)?;
    cold.take(&mut clocks, |side| &mut side.first_ns);
    phase_end(PHASES[1]);
    match scenario.kind.is_resumption() {
        false => {
            handshake(&mut clocks, false)?;
            cold.take(&mut clocks, |side| &mut side.second_ns);
            phase_end(PHASES[2]);
        }
        true => {
            handshake(&mut clocks, true)?;
            cold.take(&mut clocks, |side| &mut side.first_resume_ns);
            phase_end(PHASES[3]);
            handshake(&mut clocks, true)?;
            cold.take(&mut clocks, |side| &mut side.second_resume_ns);
            phase_end(PHASES[4]);
        }
    }
    let process_start_ns = args.spawned_at_ns.map(|spawned| started_ns.saturating_sub(spawned));
    Ok(Cold { process_start_ns, client: cold.client, server: cold.server })
}

#[derive(Default)]
struct ColdSides {
    client: ColdSide,
    server: ColdSide,
}

impl ColdSides {
    /// Each side's clock since the last phase into the field `field` picks, and the clock reset.
    fn take<T: From<u64>>(&mut self, clocks: &mut Clocks, field: impl Fn(&mut ColdSide) -> &mut T) {
        *field(&mut self.client) = clocks.client.take_ns().into();
        *field(&mut self.server) = clocks.server.take_ns().into();
    }
}

/// The reply to `cold`: [`sample`]'s figures, or its error as `unsupported` or `failed`.
pub fn reply(outcome: Result<Cold, Error>, client_library: String, server_library: String) -> ColdReply {
    match outcome {
        Ok(cold) => ColdReply::Ok { cold, client_library, server_library, build: Some(crate::build::this().name) },
        Err(Error::Unsupported(reason)) => ColdReply::Unsupported { reason },
        Err(error) => ColdReply::Failed { reason: error.to_string() },
    }
}
