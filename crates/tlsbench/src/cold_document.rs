//! A `tlsbench cold` run as a document (docs/results.md, "Cold runs"): the run, the machine, and per
//! scenario and stack each fresh process's figures as measured. The same document is stored
//! (store/cold.rs), printed (output/cold_table.rs) and exported (export/cold.rs), so that what is
//! read back or handed on is what was printed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tlsbench_harness::cold::{Cold, PHASES};
use tlsbench_harness::{Kind, Measure};

use crate::results::Status;

/// The layout of the cold document; a reader of another version refuses it.
pub const COLD_SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColdDocument {
    pub schema_version: u32,
    pub run: ColdRun,
    /// The scenarios measured, in the order measured: an interrupted run has fewer than planned.
    pub scenarios: Vec<ColdScenario>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColdRun {
    /// Sorts by time, as a run's: `20261129T052000Z-3fa2`.
    pub id: String,
    /// RFC 3339, UTC.
    pub started: String,
    pub tlsbench_version: String,
    pub command_line: Vec<String>,
    /// time or instructions.
    pub measure: Measure,
    /// Of every phase's value: `ns` under time, `instructions` under instructions. A process's
    /// start is in ns whatever the measure (`start_ns`).
    pub unit: String,
    /// Fresh processes per stack and scenario.
    pub processes: usize,
    /// The stacks, each measured with itself, in the order of the rows.
    pub stacks: Vec<String>,
    /// The scenarios the run set out to measure, in order.
    pub planned_scenarios: Vec<String>,
    pub environment: ColdEnvironment,
}

/// The machine, as `run` records it, but for what only a run's runners report (its allocator,
/// its builds) or measure (its conditions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColdEnvironment {
    pub cpu: String,
    pub cores: usize,
    pub kernel: String,
    pub rustc: String,
    pub aslr: String,
    pub governor: String,
}

impl ColdEnvironment {
    pub fn detect() -> ColdEnvironment {
        let env = crate::environment::detect();
        ColdEnvironment {
            cpu: env.cpu,
            cores: env.cores,
            kernel: env.kernel,
            rustc: env.rustc,
            aslr: env.aslr,
            governor: env.governor,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColdScenario {
    pub scenario: String,
    /// Its phases in order (`context`, `first`, then `second`, or `first_resume` and `second_resume`).
    pub phases: Vec<String>,
    pub rows: Vec<ColdRow>,
}

/// One stack (with itself) in one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColdRow {
    pub stack: String,
    pub status: Status,
    /// Why it failed or is unsupported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The library version the runner reported; absent where no reply said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// Every process that replied with figures, in the order run (a failed row keeps those
    /// before the failure).
    pub processes: Vec<ColdProcess>,
}

/// What one fresh process measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColdProcess {
    /// From tlsbench's clock just before the spawn to the runner's `main`, in ns; absent under
    /// instructions (callgrind's start is not the process's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<u64>,
    /// Each phase's value inside the client's calls, in the run's unit.
    pub client: BTreeMap<String, u64>,
    pub server: BTreeMap<String, u64>,
}

impl ColdProcess {
    /// A runner's figures, the phases of `phases` only.
    pub fn of(cold: &Cold, phases: &[String]) -> ColdProcess {
        let side = |side: &tlsbench_harness::cold::ColdSide| {
            phases.iter().filter_map(|p| Some((p.clone(), side.phase(p)?))).collect::<BTreeMap<_, _>>()
        };
        ColdProcess { start_ns: cold.process_start_ns, client: side(&cold.client), server: side(&cold.server) }
    }
}

/// How a row ended, as measured: every process's figures, or the reason it stopped with those
/// taken before it.
pub struct Outcome {
    pub processes: Vec<Cold>,
    pub library: Option<String>,
    /// None: every process replied; else unsupported or failed, and why.
    pub end: Option<(Status, String)>,
}

impl ColdScenario {
    pub fn new(scenario: String, phases: &[&str], outcomes: Vec<(String, Outcome)>) -> ColdScenario {
        let phases: Vec<String> = phases.iter().map(|p| p.to_string()).collect();
        let rows = outcomes
            .into_iter()
            .map(|(stack, outcome)| {
                let (status, reason) = match outcome.end {
                    None => (Status::Ok, None),
                    Some((status, reason)) => (status, Some(reason)),
                };
                let processes = outcome.processes.iter().map(|cold| ColdProcess::of(cold, &phases)).collect();
                ColdRow { stack, status, reason, library: outcome.library, processes }
            })
            .collect();
        ColdScenario { scenario, phases, rows }
    }
}

/// The phases a cold sample of `kind` has, in order.
pub fn phases(kind: Kind) -> Vec<&'static str> {
    match kind.is_resumption() {
        false => PHASES[..3].to_vec(),
        true => vec![PHASES[0], PHASES[1], PHASES[3], PHASES[4]],
    }
}

/// The unit of a measure's phase values.
pub fn unit(measure: Measure) -> &'static str {
    match measure {
        Measure::Instructions => "instructions",
        _ => "ns",
    }
}

/// A small cold run for the tests of the store, the table and the exports, from the harness's
/// own `Cold` values: two scenarios of two processes, a row that failed after its first process
/// and an unsupported one.
#[cfg(test)]
pub mod fixture {
    use tlsbench_harness::cold::{Cold, ColdSide};
    use tlsbench_harness::Measure;

    use super::*;

    pub const FULL: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    pub const RESUME: &str = "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm";

    /// Process `i`'s figures: a full handshake's phases, or a resumption's.
    pub fn cold(i: u64, resumption: bool) -> Cold {
        let side = |context: u64, first: u64, warm: u64| match resumption {
            false => ColdSide { context_ns: context, first_ns: first, second_ns: Some(warm), ..ColdSide::default() },
            true => ColdSide {
                context_ns: context,
                first_ns: first,
                first_resume_ns: Some(2 * warm),
                second_resume_ns: Some(warm / 3 + i * 60_000),
                ..ColdSide::default()
            },
        };
        Cold {
            process_start_ns: Some(2_000_000 + i * 100_000),
            client: side(400_000 + i * 10_000, 1_200_000, 300_000),
            server: side(500_000 + i * 10_000, 900_000, 250_000 + i * 30_000),
        }
    }

    fn ok(library: &str, resumption: bool) -> Outcome {
        Outcome { processes: vec![cold(0, resumption), cold(1, resumption)], library: Some(library.into()), end: None }
    }

    pub fn document() -> ColdDocument {
        let phases = |kind: &str| super::phases(kind.parse::<tlsbench_harness::Scenario>().unwrap().kind);
        let killed = (Status::Failed, "runner was killed by signal 9".to_string());
        let full = ColdScenario::new(
            FULL.into(),
            &phases(FULL),
            vec![
                ("openssl".into(), ok("OpenSSL 3.0.13 30 Jan 2024", false)),
                ("rustls-ring".into(), ok("rustls 0.23.29", false)),
                (
                    "boringssl".into(),
                    Outcome { processes: vec![cold(0, false)], library: Some("BoringSSL".into()), end: Some(killed) },
                ),
            ],
        );
        let unsupported = (Status::Unsupported, "boringssl: no session ids".to_string());
        let resume = ColdScenario::new(
            RESUME.into(),
            &phases(RESUME),
            vec![
                ("openssl".into(), ok("OpenSSL 3.0.13 30 Jan 2024", true)),
                ("rustls-ring".into(), ok("rustls 0.23.29", true)),
                ("boringssl".into(), Outcome { processes: vec![], library: None, end: Some(unsupported) }),
            ],
        );
        ColdDocument {
            schema_version: COLD_SCHEMA_VERSION,
            run: ColdRun {
                id: "cold-1".into(),
                started: "2026-11-29T05:20:00Z".into(),
                tlsbench_version: "0.1.0".into(),
                command_line: ["tlsbench", "cold", "--processes", "2"].map(String::from).to_vec(),
                measure: Measure::Time,
                unit: unit(Measure::Time).into(),
                processes: 2,
                stacks: ["openssl", "rustls-ring", "boringssl"].map(String::from).to_vec(),
                planned_scenarios: vec![FULL.into(), RESUME.into()],
                environment: ColdEnvironment {
                    cpu: "Test CPU".into(),
                    cores: 2,
                    kernel: "6.1.0-test".into(),
                    rustc: "rustc 1.90.0".into(),
                    aslr: "on (full)".into(),
                    governor: "performance".into(),
                },
            },
            scenarios: vec![full, resume],
        }
    }
}
