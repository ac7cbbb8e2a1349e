//! Planning: which pairs and scenarios a run measures, and which cells a stack cannot do.

use anyhow::{bail, Result};
use tlsbench_harness::protocol::StackInfo;
use tlsbench_harness::{Kind, Measure, Scenario};

/// How a run places the two sides of its pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProcessChoice {
    /// In one process where a runner holds both stacks, else split.
    Auto,
    /// Every pair split-process.
    Split,
    /// Every pair both ways, where it can run in one process (to compare the two methods).
    Both,
}

/// Where the two sides of a cell run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    /// One runner, one thread, both sides.
    InProcess,
    /// One runner per side, the bytes relayed between them.
    Split,
}

impl Process {
    pub fn name(self) -> &'static str {
        match self {
            Process::InProcess => "in-process",
            Process::Split => "split-process",
        }
    }

    /// In one process if some runner holds both stacks.
    pub fn auto(client: &str, server: &str) -> Process {
        match crate::stacks::runner_for_pair(client, server) {
            Some(_) => Process::InProcess,
            None => Process::Split,
        }
    }
}

/// One (pair, scenario, measure) to measure, and whether both stacks declared support for it.
#[derive(Clone, Debug)]
pub struct Cell {
    pub client: String,
    pub server: String,
    pub scenario: Scenario,
    pub measure: Measure,
    pub process: Process,
    /// `Err(reason)` when a stack does not support the scenario; such a cell is never run.
    pub support: Result<(), String>,
}

/// Scenarios whose names match any of the globs (each measure's focused defaults when there
/// are none) and that one of the measures applies to. Each glob must match something: a typo
/// should not silently shrink the run.
pub fn select_scenarios(globs: &[String], measures: &[Measure]) -> Result<Vec<Scenario>> {
    if globs.is_empty() {
        return Ok(crate::output::first_seen(measures.iter().flat_map(|&m| Scenario::defaults_for(m))));
    }
    let all: Vec<Scenario> = Scenario::all().into_iter().filter(|s| measures.iter().any(|m| m.applies_to(s.kind))).collect();
    let mut patterns = Vec::new();
    for glob in globs {
        let pattern = glob::Pattern::new(glob).map_err(|e| anyhow::anyhow!("scenario glob `{glob}` is malformed: {e}"))?;
        if !all.iter().any(|s| pattern.matches(&s.name())) {
            if let Some(kind) = Scenario::all().iter().find(|s| pattern.matches(&s.name())).map(|s| s.kind) {
                let names = |m: &Measure| format!("{m}: {}", m.kinds().iter().map(|k| k.name()).collect::<Vec<_>>().join(", "));
                bail!(
                    "`{glob}` selects {kind} scenarios, which no measure of this run applies to ({}); add --measure",
                    Measure::ALL.iter().map(names).collect::<Vec<_>>().join("; ")
                );
            }
            bail!(
                "no scenario matches `{glob}` (names are kind_version_group_key_suite[_mtls|_cert-requested][_no-ems], \
                 kinds: {}; e.g. handshake-full_1.3_*; `tlsbench list scenarios` lists all {})",
                Kind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "),
                all.len()
            );
        }
        patterns.push(pattern);
    }
    Ok(all.into_iter().filter(|s| patterns.iter().any(|p| p.matches(&s.name()))).collect())
}

/// The cells of every measure, scenario it applies to, pair and process model. The process
/// choice is for time; io and heap are taken in one process, where one runner tags each side's
/// calls, and rss in one process per side, since a process has one peak.
pub fn cells(
    pairs: &[(String, String)],
    scenarios: &[Scenario],
    measures: &[Measure],
    infos: &[StackInfo],
    choice: ProcessChoice,
) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &measure in measures {
        for &scenario in scenarios.iter().filter(|s| measure.applies_to(s.kind)) {
            for (client, server) in pairs {
                let support = [client, server].into_iter().try_for_each(|id| {
                    let info = infos.iter().find(|i| &i.id == id).expect("every planned stack was discovered");
                    info.capabilities.check(id, &scenario).map_err(|e| e.to_string())
                });
                let auto = Process::auto(client, server);
                let processes: &[Process] = match (measure, choice, auto) {
                    (Measure::Rss, _, _) => &[Process::Split],
                    (Measure::Io | Measure::Heap, _, _) => &[Process::InProcess],
                    (_, ProcessChoice::Auto, _) => &[auto],
                    (_, ProcessChoice::Split, _) | (_, ProcessChoice::Both, Process::Split) => &[Process::Split],
                    (_, ProcessChoice::Both, Process::InProcess) => &[Process::InProcess, Process::Split],
                };
                for &process in processes {
                    let support = support.clone().and_then(|()| match (process, auto) {
                        (Process::InProcess, Process::Split) => Err(format!(
                            "measure {measure} is taken with both sides in one process, and no runner holds both {client} and {server}"
                        )),
                        _ => Ok(()),
                    });
                    let (client, server) = (client.clone(), server.clone());
                    cells.push(Cell { client, server, scenario, measure, process, support });
                }
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use tlsbench_harness::{Capabilities, Version};

    use super::*;

    #[test]
    fn globs_select_and_a_glob_matching_nothing_is_an_error() {
        let time = [Measure::Time];
        assert_eq!(select_scenarios(&[], &time).unwrap(), Scenario::defaults());
        let some = select_scenarios(&["transfer_1.3_*".into(), "handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".into()], &time).unwrap();
        let names: Vec<String> = some.iter().map(Scenario::name).collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert!(names.contains(&"handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".to_string()));
        let err = select_scenarios(&["handshake_*".into()], &time).unwrap_err().to_string();
        assert!(err.starts_with("no scenario matches `handshake_*` (names are kind_version_group_key_suite"), "{err}");
        assert!(err.contains("kinds: handshake-full, handshake-resume-id, handshake-resume-ticket, transfer, io-profile,"), "{err}");
        let err = select_scenarios(&["memory-1000_*".into()], &time).unwrap_err().to_string();
        assert!(err.starts_with("`memory-1000_*` selects memory-1000 scenarios, which no measure of this run applies to (time: handshake-full,"), "{err}");
        assert!(err.contains("rss: memory-100, memory-1000, memory-10000); add --measure"), "{err}");
    }

    #[test]
    fn a_stack_lacking_a_parameter_makes_its_cells_unsupported_with_the_reason() {
        let tls13_only = Capabilities { versions: vec![Version::Tls13], ..Capabilities::everything() };
        let infos = [
            StackInfo { id: "openssl".into(), library: "OpenSSL 3".into(), capabilities: Capabilities::everything() },
            StackInfo { id: "rustls-ring".into(), library: "rustls".into(), capabilities: tls13_only },
        ];
        let scenarios = select_scenarios(&["handshake-full_1.?_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
        assert_eq!(scenarios.len(), 2);
        let pairs = [("openssl".to_string(), "openssl".to_string()), ("openssl".to_string(), "rustls-ring".to_string())];
        let cells = cells(&pairs, &scenarios, &[Measure::Time], &infos, ProcessChoice::Auto);
        let unsupported: Vec<_> = cells.iter().filter_map(|c| c.support.clone().err()).collect();
        assert_eq!(unsupported, vec!["rustls-ring: TLS 1.2 not supported".to_string()]);
        assert!(cells.iter().all(|c| c.process == Process::InProcess));
    }

    #[test]
    fn both_process_models_give_each_pair_twice_where_it_can_share_a_process() {
        let infos: Vec<StackInfo> = ["openssl", "rustls-ring"]
            .map(|id| StackInfo { id: id.into(), library: "x".into(), capabilities: Capabilities::everything() })
            .into();
        let scenarios = select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
        let pairs = [("openssl".to_string(), "rustls-ring".to_string())];
        let processes = |choice| cells(&pairs, &scenarios, &[Measure::Time], &infos, choice).iter().map(|c| c.process).collect::<Vec<_>>();
        assert_eq!(processes(ProcessChoice::Auto), [Process::InProcess]);
        assert_eq!(processes(ProcessChoice::Split), [Process::Split]);
        assert_eq!(processes(ProcessChoice::Both), [Process::InProcess, Process::Split]);
    }

    #[test]
    fn each_measure_gets_the_scenarios_it_applies_to_in_its_own_process_model() {
        let infos: Vec<StackInfo> = ["openssl", "boringssl"]
            .map(|id| StackInfo { id: id.into(), library: "x".into(), capabilities: Capabilities::everything() })
            .into();
        let measures = [Measure::Time, Measure::Io, Measure::Heap, Measure::Rss];
        let globs = ["*_1.3_x25519_ecdsa-p256_aes-128-gcm".to_string()];
        let scenarios = select_scenarios(&globs, &measures).unwrap();
        let pairs = [("openssl".to_string(), "openssl".to_string()), ("openssl".to_string(), "boringssl".to_string())];
        let cells = cells(&pairs, &scenarios, &measures, &infos, ProcessChoice::Both);
        let planned = |measure: Measure| {
            let mut kinds: Vec<&str> = cells.iter().filter(|c| c.measure == measure).map(|c| c.scenario.kind.name()).collect();
            kinds.dedup();
            kinds
        };
        assert_eq!(planned(Measure::Io), ["handshake-full", "handshake-resume-ticket", "io-profile"]);
        assert_eq!(planned(Measure::Rss), ["memory-100", "memory-1000", "memory-10000"]);
        assert!(cells.iter().filter(|c| c.measure == Measure::Rss).all(|c| c.process == Process::Split));
        let heap_across_families: Vec<_> =
            cells.iter().filter(|c| c.measure == Measure::Heap && c.server == "boringssl").map(|c| c.support.clone()).collect();
        assert!(!heap_across_families.is_empty());
        assert!(heap_across_families.iter().all(|s| s
            == &Err("measure heap is taken with both sides in one process, and no runner holds both openssl and boringssl".into())));
    }
}
