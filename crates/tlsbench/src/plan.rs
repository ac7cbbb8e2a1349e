//! Planning: which pairs and scenarios a run measures, and which cells a stack cannot do.

use anyhow::{bail, Result};
use tlsbench_harness::protocol::StackInfo;
use tlsbench_harness::{Kind, Scenario};

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

/// One (pair, scenario) to measure, and whether both stacks declared support for it.
#[derive(Clone, Debug)]
pub struct Cell {
    pub client: String,
    pub server: String,
    pub scenario: Scenario,
    pub process: Process,
    /// `Err(reason)` when a stack does not support the scenario; such a cell is never run.
    pub support: Result<(), String>,
}

/// Scenarios whose names match any of the globs (the focused defaults when there are none).
/// Each glob must match something: a typo should not silently shrink the run.
pub fn select_scenarios(globs: &[String]) -> Result<Vec<Scenario>> {
    if globs.is_empty() {
        return Ok(Scenario::defaults());
    }
    let all = Scenario::all();
    let mut patterns = Vec::new();
    for glob in globs {
        let pattern = glob::Pattern::new(glob).map_err(|e| anyhow::anyhow!("scenario glob `{glob}` is malformed: {e}"))?;
        if !all.iter().any(|s| pattern.matches(&s.name())) {
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

/// The cells of every scenario, pair and process model.
pub fn cells(pairs: &[(String, String)], scenarios: &[Scenario], infos: &[StackInfo], choice: ProcessChoice) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &scenario in scenarios {
        for (client, server) in pairs {
            let support = [client, server].into_iter().try_for_each(|id| {
                let info = infos.iter().find(|i| &i.id == id).expect("every planned stack was discovered");
                info.capabilities.check(id, &scenario).map_err(|e| e.to_string())
            });
            let auto = Process::auto(client, server);
            let processes: &[Process] = match (choice, auto) {
                (ProcessChoice::Auto, _) => &[auto],
                (ProcessChoice::Split, _) | (ProcessChoice::Both, Process::Split) => &[Process::Split],
                (ProcessChoice::Both, Process::InProcess) => &[Process::InProcess, Process::Split],
            };
            for &process in processes {
                let (client, server, support) = (client.clone(), server.clone(), support.clone());
                cells.push(Cell { client, server, scenario, process, support });
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
        assert_eq!(select_scenarios(&[]).unwrap(), Scenario::defaults());
        let some = select_scenarios(&["transfer_1.3_*".into(), "handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".into()]).unwrap();
        let names: Vec<String> = some.iter().map(Scenario::name).collect();
        assert_eq!(names.len(), 4, "{names:?}");
        assert!(names.contains(&"handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".to_string()));
        let err = select_scenarios(&["handshake_*".into()]).unwrap_err().to_string();
        assert!(err.starts_with("no scenario matches `handshake_*` (names are kind_version_group_key_suite"), "{err}");
        assert!(err.contains("kinds: handshake-full, handshake-resume-id, handshake-resume-ticket, transfer;"), "{err}");
    }

    #[test]
    fn a_stack_lacking_a_parameter_makes_its_cells_unsupported_with_the_reason() {
        let tls13_only = Capabilities { versions: vec![Version::Tls13], ..Capabilities::everything() };
        let infos = [
            StackInfo { id: "openssl".into(), library: "OpenSSL 3".into(), capabilities: Capabilities::everything() },
            StackInfo { id: "rustls-ring".into(), library: "rustls".into(), capabilities: tls13_only },
        ];
        let scenarios = select_scenarios(&["handshake-full_1.?_x25519_rsa-2048_aes-128-gcm".into()]).unwrap();
        assert_eq!(scenarios.len(), 2);
        let pairs = [("openssl".to_string(), "openssl".to_string()), ("openssl".to_string(), "rustls-ring".to_string())];
        let cells = cells(&pairs, &scenarios, &infos, ProcessChoice::Auto);
        let unsupported: Vec<_> = cells.iter().filter_map(|c| c.support.clone().err()).collect();
        assert_eq!(unsupported, vec!["rustls-ring: TLS 1.2 not supported".to_string()]);
        assert!(cells.iter().all(|c| c.process == Process::InProcess));
    }

    #[test]
    fn both_process_models_give_each_pair_twice_where_it_can_share_a_process() {
        let infos: Vec<StackInfo> = ["openssl", "rustls-ring"]
            .map(|id| StackInfo { id: id.into(), library: "x".into(), capabilities: Capabilities::everything() })
            .into();
        let scenarios = select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()]).unwrap();
        let pairs = [("openssl".to_string(), "rustls-ring".to_string())];
        let processes = |choice| cells(&pairs, &scenarios, &infos, choice).iter().map(|c| c.process).collect::<Vec<_>>();
        assert_eq!(processes(ProcessChoice::Auto), [Process::InProcess]);
        assert_eq!(processes(ProcessChoice::Split), [Process::Split]);
        assert_eq!(processes(ProcessChoice::Both), [Process::InProcess, Process::Split]);
    }
}
