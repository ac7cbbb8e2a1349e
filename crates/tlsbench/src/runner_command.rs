//! Every command line tlsbench gives a runner, built from types in one place
//! (docs/runner-protocol.md, "Commands"): a flag's name is spelled once, and a command cannot be
//! given a flag that is not its own.

use std::path::Path;

use tlsbench_harness::net::Page;
use tlsbench_harness::{Contexts, Measure, Scenario, Side};

/// A runner command and its flags, as the protocol's table of commands has them.
pub enum RunnerCommand<'a> {
    /// Both sides of an in-process pair (`threads`: N > 1 pairs, with `contexts` their own
    /// configs or shared ones where the run chose).
    Sample {
        client: &'a str,
        server: &'a str,
        threads: Option<u32>,
        contexts: Option<Contexts>,
        /// The CPUs its threads are pinned to, in thread order (`--cpus`, with `threads`).
        cpus: Option<&'a [u32]>,
        settings: SampleSettings<'a>,
    },
    /// One side of a split-process pair, its peer runner reached through `peer`.
    Side { role: Side, stack: &'a str, peer_stack: &'a str, peer: Peer<'a>, settings: SampleSettings<'a> },
    /// Every transport call of one connection, both sides in the runner.
    Trace { client: &'a str, server: &'a str, scenario: &'a Scenario, data_dir: &'a Path },
    /// A fresh process's first context and handshakes (`spawned_at_ns`: the orchestrator's
    /// CLOCK_MONOTONIC just before the spawn; `count_side`: under callgrind).
    Cold {
        client: &'a str,
        server: &'a str,
        scenario: &'a Scenario,
        data_dir: &'a Path,
        spawned_at_ns: Option<u64>,
        count_side: Option<Side>,
    },
    /// The network mode's server.
    Serve { net: NetSettings<'a>, listen: &'a str, workers: Option<u32>, response: Option<Page> },
    /// The network mode's load generator.
    Load {
        net: NetSettings<'a>,
        connect: &'a str,
        connections: Option<u64>,
        duration: f64,
        concurrency: u32,
        response: Option<Page>,
    },
}

/// Where a `side` runner finds its peer.
pub enum Peer<'a> {
    /// The socket on its stdin (a one-shot pair).
    Stdin,
    /// A Unix socket at this path (a pair of sessions).
    Socket(&'a Path),
}

/// The sample settings `sample` and `side` share.
pub struct SampleSettings<'a> {
    pub scenario: &'a Scenario,
    pub measure: Measure,
    pub work: Work,
    pub data_dir: &'a Path,
}

impl SampleSettings<'_> {
    /// These settings with a timed loop judged at `full_speed` where given (`--full-speed`).
    pub fn judged_at(mut self, full_speed: Option<f64>) -> Self {
        if let Work::Timed { full_speed: asked, .. } = &mut self.work {
            *asked = full_speed;
        }
        self
    }
}

/// How much a sample measures.
pub enum Work {
    /// For at least this long, after a warm-up this long (time and the other timed measures);
    /// counting only the stretches at `full_speed` where given (`--full-speed`, the probe
    /// workload's rounds per microsecond at full speed: tlsbench_harness::speed).
    Timed { min_time_ms: u64, warmup_ms: u64, full_speed: Option<f64> },
    /// This many handshakes or writes after warm-up ones, under callgrind; `count_side`, when the
    /// process runs both sides, is the one callgrind collects.
    Counted { iterations: u64, warmup_iterations: u64, count_side: Option<Side> },
}

/// What `serve` and `load` share: the stack, its scenario (none for plain TCP), the io timeout.
pub struct NetSettings<'a> {
    pub stack: &'a str,
    pub scenario: Option<&'a Scenario>,
    pub io_timeout_ms: u64,
    pub data_dir: Option<&'a Path>,
}

impl RunnerCommand<'_> {
    /// The command line, one word each, as a runner's argv after its program (or a session's
    /// request line, tab-separated).
    pub fn words(&self) -> Vec<String> {
        let mut line = Line(Vec::with_capacity(24));
        match self {
            RunnerCommand::Sample { client, server, threads, contexts, cpus, settings } => {
                line.word("sample").flag("--client", client).flag("--server", server);
                if let Some(n) = threads {
                    line.flag("--threads", n);
                }
                if let Some(contexts) = contexts {
                    line.flag("--contexts", contexts);
                }
                if let Some(cpus) = cpus {
                    line.flag("--cpus", tlsbench_harness::pin::list(cpus));
                }
                line.sample(settings);
            }
            RunnerCommand::Side { role, stack, peer_stack, peer, settings } => {
                line.word("side").flag("--role", role).flag("--stack", stack).flag("--peer-stack", peer_stack);
                match peer {
                    Peer::Stdin => line.flag("--peer-fd", 0),
                    Peer::Socket(path) => line.flag("--peer-socket", path.display()),
                };
                line.sample(settings);
            }
            RunnerCommand::Trace { client, server, scenario, data_dir } => {
                line.word("trace").flag("--client", client).flag("--server", server);
                line.flag("--scenario", scenario.name()).flag("--data-dir", data_dir.display());
            }
            RunnerCommand::Cold { client, server, scenario, data_dir, spawned_at_ns, count_side } => {
                line.word("cold").flag("--client", client).flag("--server", server);
                line.flag("--scenario", scenario.name()).flag("--data-dir", data_dir.display());
                if let Some(ns) = spawned_at_ns {
                    line.flag("--spawned-at-ns", ns);
                }
                if let Some(side) = count_side {
                    line.flag("--count-side", side);
                }
            }
            RunnerCommand::Serve { net, listen, workers, response } => {
                line.word("serve").net(net).flag("--listen", listen);
                if let Some(n) = workers {
                    line.flag("--workers", n);
                }
                if let Some(page) = response {
                    line.flag("--response", page);
                }
            }
            RunnerCommand::Load { net, connect, connections, duration, concurrency, response } => {
                line.word("load").net(net).flag("--connect", connect);
                line.flag("--duration", duration).flag("--concurrency", concurrency);
                if let Some(n) = connections {
                    line.flag("--connections", n);
                }
                if let Some(page) = response {
                    line.flag("--response", page);
                }
            }
        }
        line.0
    }
}

/// Words as the executor takes them.
pub fn strs(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

/// A command line being written.
struct Line(Vec<String>);

impl Line {
    fn word(&mut self, word: &str) -> &mut Self {
        self.0.push(word.to_string());
        self
    }

    fn flag(&mut self, name: &str, value: impl std::fmt::Display) -> &mut Self {
        self.0.push(name.to_string());
        self.0.push(value.to_string());
        self
    }

    fn sample(&mut self, settings: &SampleSettings) -> &mut Self {
        self.flag("--scenario", settings.scenario.name()).flag("--measure", settings.measure.name());
        match settings.work {
            Work::Timed { min_time_ms, warmup_ms, full_speed } => {
                self.flag("--min-time-ms", min_time_ms).flag("--warmup-ms", warmup_ms);
                if let Some(full_speed) = full_speed {
                    self.flag("--full-speed", format!("{full_speed:.3}"));
                }
            }
            Work::Counted { iterations, warmup_iterations, count_side } => {
                if let Some(side) = count_side {
                    self.flag("--count-side", side);
                }
                self.flag("--iterations", iterations).flag("--warmup-iterations", warmup_iterations);
            }
        }
        self.flag("--data-dir", settings.data_dir.display())
    }

    fn net(&mut self, net: &NetSettings) -> &mut Self {
        self.flag("--stack", net.stack);
        if let Some(scenario) = net.scenario {
            self.flag("--scenario", scenario.name());
        }
        self.flag("--io-timeout-ms", net.io_timeout_ms);
        if let Some(dir) = net.data_dir {
            self.flag("--data-dir", dir.display());
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap()
    }

    /// The flags of `words`, each with its value.
    fn flags(words: &[String]) -> Vec<(&str, &str)> {
        words[1..].chunks(2).map(|pair| (pair[0].as_str(), pair[1].as_str())).collect()
    }

    #[test]
    fn every_flag_has_its_value_and_appears_once() {
        let (scenario, dir) = (scenario(), Path::new("/data"));
        let timed = || SampleSettings {
            scenario: &scenario,
            measure: Measure::Time,
            work: Work::Timed { min_time_ms: 100, warmup_ms: 50, full_speed: None },
            data_dir: dir,
        };
        let net = || NetSettings { stack: "openssl", scenario: Some(&scenario), io_timeout_ms: 10_000, data_dir: None };
        let commands = [
            RunnerCommand::Sample {
                client: "rustls",
                server: "openssl",
                threads: Some(2),
                contexts: Some(Contexts::Shared),
                cpus: Some(&[0, 1]),
                settings: timed(),
            },
            RunnerCommand::Side {
                role: Side::Server,
                stack: "openssl",
                peer_stack: "rustls",
                peer: Peer::Socket(Path::new("/tmp/s")),
                settings: timed(),
            },
            RunnerCommand::Trace { client: "rustls", server: "openssl", scenario: &scenario, data_dir: dir },
            RunnerCommand::Serve { net: net(), listen: "127.0.0.1:0", workers: Some(2), response: None },
            RunnerCommand::Load {
                net: net(),
                connect: "127.0.0.1:4433",
                connections: Some(5),
                duration: 1.5,
                concurrency: 1,
                response: None,
            },
        ];
        for command in &commands {
            let words = command.words();
            assert_eq!(words.len() % 2, 1, "a command word, then flag-value pairs: {words:?}");
            let flags = flags(&words);
            assert!(flags.iter().all(|(name, value)| name.starts_with("--") && !value.starts_with("--")), "{words:?}");
            let mut names: Vec<&str> = flags.iter().map(|f| f.0).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), flags.len(), "a flag given twice: {words:?}");
        }
    }

    #[test]
    fn a_counted_in_process_sample_names_the_side_callgrind_collects() {
        let scenario = scenario();
        let settings = SampleSettings {
            scenario: &scenario,
            measure: Measure::Instructions,
            work: Work::Counted { iterations: 20, warmup_iterations: 2, count_side: Some(Side::Server) },
            data_dir: Path::new("/data"),
        };
        let words =
            RunnerCommand::Sample { client: "a", server: "b", threads: None, contexts: None, cpus: None, settings };
        let words = words.words();
        let flags = flags(&words);
        assert_eq!(words[0], "sample");
        for expected in [
            ("--measure", "instructions"),
            ("--count-side", "server"),
            ("--iterations", "20"),
            ("--warmup-iterations", "2"),
            ("--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"),
        ] {
            assert!(flags.contains(&expected), "{expected:?} in {words:?}");
        }
        assert!(!flags.iter().any(|f| ["--min-time-ms", "--threads", "--contexts"].contains(&f.0)), "{words:?}");
    }

    #[test]
    fn a_side_in_one_shot_reaches_its_peer_on_stdin() {
        let scenario = scenario();
        let settings = SampleSettings {
            scenario: &scenario,
            measure: Measure::Heap,
            work: Work::Timed { min_time_ms: 1, warmup_ms: 0, full_speed: None },
            data_dir: Path::new("/d"),
        };
        let words =
            RunnerCommand::Side { role: Side::Client, stack: "go", peer_stack: "jsse", peer: Peer::Stdin, settings }
                .words();
        let flags = flags(&words);
        for expected in [("--role", "client"), ("--stack", "go"), ("--peer-stack", "jsse"), ("--peer-fd", "0")] {
            assert!(flags.contains(&expected), "{expected:?} in {words:?}");
        }
    }

    #[test]
    fn plain_tcp_has_no_scenario() {
        let net = NetSettings { stack: "tcp", scenario: None, io_timeout_ms: 3000, data_dir: None };
        let words = RunnerCommand::Serve { net, listen: "[::1]:0", workers: None, response: None }.words();
        assert_eq!(words, ["serve", "--stack", "tcp", "--io-timeout-ms", "3000", "--listen", "[::1]:0"]);
    }
}
