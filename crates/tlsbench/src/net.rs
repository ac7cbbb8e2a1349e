//! The network mode's commands: `tlsbench serve` (a server of any stack on a TCP socket),
//! `tlsbench load` (clients of any stack against any TLS server) and `tlsbench merge` (several
//! load generators' partial results as one). Each runs the runner that holds the stack, which
//! does the work (the harness's `net` module); this side starts it, relays signals and shows
//! what it measured.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tlsbench_harness::net::plain::PLAIN_STACKS;
use tlsbench_harness::net::{NetReply, NetReport, Serving, DEFAULT_IO_TIMEOUT};
use tlsbench_harness::protocol::{SampleReport, SideNegotiated};
use tlsbench_harness::{pki, Pki, Scenario, Side};

use crate::builds::{self, Build};
use crate::cli::{LoadArgs, MergeArgs, NetArgs, ServeArgs};
use crate::cores::Split;
use crate::executor::Service;
use crate::output::format::{format_number, group_thousands};
use crate::plan::Cell;
use crate::results::Status;
use crate::runner_command::{strs, NetSettings, RunnerCommand};
use crate::runners::Runners;
use crate::sample_call::Settings;
use crate::{executor, stacks};

/// The handshake when no --scenario is given.
const DEFAULT_SCENARIO: &str = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

/// The runner (of the build asked for) and the scenario both ends take (generating its
/// certificates here, once); none for plain TCP.
fn runner_and_scenario(net: &NetArgs) -> Result<(PathBuf, Option<Scenario>)> {
    let plain = PLAIN_STACKS.contains(&net.stack.as_str());
    // Every runner has the plain TCP baselines; any one serves them.
    let id = match plain {
        true => stacks::all_ids()[0],
        false => net.stack.as_str(),
    };
    let runners = builds::one(Runners::find()?, net.build.built(), &[id.to_string()])?;
    let runner = runners.of(id)?.to_path_buf();
    match (plain, net.scenario) {
        (true, Some(scenario)) => {
            bail!("{} is plain TCP: it has no handshake, so no --scenario ({scenario})", net.stack)
        }
        (true, None) => Ok((runner, None)),
        (false, scenario) => {
            let scenario = scenario.unwrap_or_else(|| DEFAULT_SCENARIO.parse().expect("a valid scenario"));
            Pki::load_or_generate(&pki::default_data_dir(), &[scenario.key]).map_err(anyhow::Error::msg)?;
            Ok((runner, Some(scenario)))
        }
    }
}

/// What `serve` and `load` take of the user's options.
fn net_settings<'a>(net: &'a NetArgs, scenario: Option<&'a Scenario>) -> NetSettings<'a> {
    NetSettings { stack: &net.stack, scenario, io_timeout_ms: (net.io_timeout * 1000.0) as u64, data_dir: None }
}

pub fn serve(args: ServeArgs) -> Result<ExitCode> {
    let (runner, scenario) = runner_and_scenario(&args.net)?;
    let built = args.net.build.built();
    let build = built.build;
    let (net, listen) = (net_settings(&args.net, scenario.as_ref()), args.listen.to_string());
    let command = RunnerCommand::Serve { net, listen: &listen, workers: args.workers, response: Some(args.response) };
    let mut child = Command::new(&runner)
        .args(command.words())
        // Its own process group: a terminal's Ctrl-C reaches tlsbench, which passes it on.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", runner.display()))?;
    let pid = child.id() as libc::pid_t;
    ctrlc::set_handler(move || {
        // SAFETY: a signal to the child, which this process started and has not reaped.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    })
    .context("installing the signal handler")?;
    let mut replies = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
    let first = replies.next().transpose().context("reading the runner's reply")?;
    let Some(first) = first else {
        let status = child.wait()?;
        bail!("the server's runner ended ({status}) before it listened; see its messages above");
    };
    match serde_json::from_str::<Serving>(&first) {
        Ok(serving) => {
            crate::output::print(format!("{}\n", serving.listening));
            crate::output::stderr::line(format!(
                "{} ({}) serves on {} with {} worker(s), response {}; Ctrl-C or SIGTERM stops it",
                builds::label(&serving.stack, built),
                serving.library,
                serving.listening,
                serving.workers,
                args.response
            ));
        }
        Err(_) => {
            child.wait()?;
            return finish(of_build(parse_reply(&first)?, build)?, args.output.as_deref());
        }
    }
    let last = replies.next().transpose().context("reading the runner's reply")?;
    let status = child.wait()?;
    match last {
        Some(line) => finish(of_build(parse_reply(&line)?, build)?, args.output.as_deref()),
        None => bail!("the server's runner ended ({status}) without reporting what it measured"),
    }
}

pub fn load(args: LoadArgs) -> Result<ExitCode> {
    let (runner, scenario) = runner_and_scenario(&args.net)?;
    let duration = args.duration.unwrap_or(if args.connections.is_some() { 300.0 } else { 10.0 });
    if !(duration > 0.0 && duration.is_finite()) {
        bail!("--duration must be a positive number of seconds");
    }
    let (net, connect) = (net_settings(&args.net, scenario.as_ref()), args.connect.to_string());
    let command = RunnerCommand::Load {
        net,
        connect: &connect,
        connections: args.connections,
        duration,
        concurrency: args.concurrency,
        response: args.response,
    };
    // The warm-up (one connection per slot), the measured part, then the io timeout for those
    // in flight; the runner stops by itself, this only catches one that hangs.
    let warmup = args.net.io_timeout * 3.0;
    let limit = Duration::from_secs_f64(warmup + duration + args.net.io_timeout + 30.0);
    let output = executor::call(&runner, &strs(&command.words()), limit).context("the load generator")?;
    let reply = parse_reply(output.stdout.trim())?;
    let output_path = match (&args.output, &args.run_id) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(run)) => Some(PathBuf::from(format!("load-{run}-{}-{}.json", hostname(), std::process::id()))),
        (None, None) => None,
    };
    let reply = match of_build(reply, args.net.build.build)? {
        NetReply::Ok(mut report) => {
            report.run_id = args.run_id.clone();
            NetReply::Ok(report)
        }
        other => other,
    };
    finish(reply, output_path.as_deref())
}

pub fn merge(args: MergeArgs) -> Result<ExitCode> {
    let mut merged: Option<NetReport> = None;
    for path in &args.partials {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let report: NetReport = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a result of `tlsbench load`", path.display()))?;
        match &mut merged {
            None => merged = Some(report),
            Some(merged) => {
                if merged.run_id != report.run_id {
                    bail!(
                        "{} is of run {}, the first partial of run {}",
                        path.display(),
                        report.run_id.as_deref().unwrap_or("(none)"),
                        merged.run_id.as_deref().unwrap_or("(none)")
                    );
                }
                if merged.build != report.build {
                    bail!(
                        "{} is of build {}, the first partial of build {}: the builds are measured apart",
                        path.display(),
                        report.build.as_deref().unwrap_or(Build::Release.name()),
                        merged.build.as_deref().unwrap_or(Build::Release.name())
                    );
                }
                merged
                    .merge(&report)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("merging {}", path.display()))?;
            }
        }
    }
    let merged = merged.expect("clap requires a partial");
    crate::output::stderr::line(format!("merged {} partial result(s)", args.partials.len()));
    finish(NetReply::Ok(merged), args.output.as_deref())
}

/// One sample of a cell of `tlsbench run --transport tcp`: the server's runner on a loopback
/// port with N workers (`--workers`, one by default), N runners of the client's stack as load
/// generators of one connection at a time each (as `openssl s_time`) for the sample's time,
/// then SIGTERM to the server. A load generator is one thread, so N workers get N of them; their
/// reports merge into the client's. Each side's report becomes the metrics of the measure
/// `net`; a connection that failed fails the cell, as a gate does in memory.
pub fn sample(cell: &Cell, settings: &Settings) -> Result<SampleReport, (Status, String)> {
    let workers = cell.threads.unwrap_or(1);
    let step = step(cell, settings, &Placement { cpus: None, generators: workers, concurrency: 1 })?;
    sample_report(&step.client, &step.server)
}

/// Where the runners of a TCP sample run, and how hard its load pushes.
pub struct Placement<'a> {
    /// The server's CPUs and the load generators'; None: wherever the scheduler puts them.
    pub cpus: Option<&'a Split>,
    pub generators: u32,
    /// Connections in flight per generator.
    pub concurrency: u32,
}

/// What one load of a server measured: each side's report (the generators' merged), and where
/// the runners ran, as the kernel reported each one's CPUs once started.
pub struct Step {
    pub client: NetReport,
    pub server: NetReport,
    pub server_cpus: Option<Vec<usize>>,
    pub load_cpus: Vec<Option<Vec<usize>>>,
}

/// The server's runner with the cell's workers, loaded by `placement.generators` runners of the
/// client's stack with `placement.concurrency` connections in flight each for the sample's time,
/// then SIGTERM to the server. A runner that may run elsewhere than on the CPUs asked for, or a
/// failed connection, fails the cell.
pub fn step(cell: &Cell, settings: &Settings, placement: &Placement) -> Result<Step, (Status, String)> {
    let failed = |reason: String| (Status::Failed, reason);
    let runners = settings.runners_for(cell);
    let runner = |id: &str| runners.of(id).map(Path::to_path_buf).map_err(|e| failed(e.to_string()));
    let (server_runner, client_runner) = (runner(&cell.server)?, runner(&cell.client)?);
    let net = |stack| NetSettings {
        stack,
        scenario: Some(&cell.scenario),
        io_timeout_ms: DEFAULT_IO_TIMEOUT.as_millis() as u64,
        data_dir: Some(&settings.data_dir),
    };

    let workers = cell.threads.unwrap_or(1);
    let server_args =
        RunnerCommand::Serve { net: net(&cell.server), listen: "127.0.0.1:0", workers: Some(workers), response: None };
    let server_cpus = placement.cpus.map(|split| split.server.as_slice());
    let mut server = Service::start_on(&server_runner, &strs(&server_args.words()), server_cpus)
        .map_err(|e| failed(format!("server runner: {e:#}")))?;
    // A runner that declares a warm-up (a JIT's) takes it before it listens and before it loads.
    let warmup = Duration::from_millis(settings.warmup_ms(cell));
    let first = server.next_line(settings.timeout + warmup).map_err(|e| failed(format!("server runner: {e:#}")))?;
    let listening = match serde_json::from_str::<Serving>(&first) {
        Ok(serving) => serving.listening,
        // It could not serve: its one reply says why.
        Err(_) => {
            return side_outcome("server", Ok(first))
                .and_then(|_| Err(failed("the server's runner reported before serving".into())))
        }
    };
    let server_affinity = crate::cores::of_process(server.pid());
    let duration = settings.min_time_ms as f64 / 1000.0;
    let load_args = RunnerCommand::Load {
        net: net(&cell.client),
        connect: &listening,
        // Bounded in count as in time, each generator's share of a step.
        connections: placement.cpus.map(|_| STEP_CONNECTIONS_MAX),
        duration,
        concurrency: placement.concurrency,
        response: None,
    }
    .words();
    let limit = cell.time_limit(settings.timeout, Duration::from_millis(settings.min_time_ms), warmup);
    let load_cpus = placement.cpus.map(|split| split.load.as_slice());
    let generators: Vec<(Result<String>, Option<Vec<usize>>)> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..placement.generators)
            .map(|_| {
                scope.spawn(|| match load_cpus {
                    Some(cpus) => {
                        let (output, affinity) = executor::call_on(&client_runner, &strs(&load_args), cpus, limit);
                        (output.map(|output| output.stdout), affinity)
                    }
                    None => (executor::call(&client_runner, &strs(&load_args), limit).map(|o| o.stdout), None),
                })
            })
            .collect();
        calls.into_iter().map(|call| call.join().expect("a load generator's thread panicked")).collect()
    });
    // In flight at SIGTERM: nothing, once the load generators have ended; their io timeout
    // bounds it.
    let server = server.stop(DEFAULT_IO_TIMEOUT * 2);
    let server = side_outcome("server", server)?;
    let (replies, load_affinity): (Vec<_>, Vec<_>) = generators.into_iter().unzip();
    let client = merged_clients(replies)?;
    if server.concurrency != workers {
        return Err(failed(format!(
            "the server's runner served with {} worker(s), the cell asks for {workers}",
            server.concurrency
        )));
    }
    if let Some(split) = placement.cpus {
        check_cpus("the server's runner", server_affinity.as_deref(), &split.server)?;
        for (i, affinity) in load_affinity.iter().enumerate() {
            check_cpus(&format!("load generator {}", i + 1), affinity.as_deref(), &split.load)?;
        }
    }
    let reasons: Vec<String> = [&client, &server]
        .iter()
        .flat_map(|r| r.failures.iter().map(move |f| format!("{} × {} ({})", count(f.count), f.reason, r.side)))
        .collect();
    if !reasons.is_empty() {
        return Err(failed(format!("connections failed: {}", reasons.join("; "))));
    }
    Ok(Step { client, server, server_cpus: server_affinity, load_cpus: load_affinity })
}

/// The most connections a load generator makes in one step of a peak search: a bound in count
/// beside its time, far above what a second holds.
const STEP_CONNECTIONS_MAX: u64 = 1_000_000;

/// Fails unless the kernel reported that `what` may run on exactly `asked`.
fn check_cpus(what: &str, reported: Option<&[usize]>, asked: &[usize]) -> Result<(), (Status, String)> {
    match reported {
        Some(cpus) if cpus == asked => Ok(()),
        Some(cpus) => Err((
            Status::Failed,
            format!(
                "{what} may run on CPUs {}, it was pinned to {}",
                crate::cores::format_list(cpus),
                crate::cores::format_list(asked)
            ),
        )),
        None => Err((Status::Failed, format!("{what} ended before its CPUs could be read from /proc"))),
    }
}

/// A sample of the measure `net` from each side's report: each side's metrics.
pub fn sample_report(client: &NetReport, server: &NetReport) -> Result<SampleReport, (Status, String)> {
    let failed = |reason: String| (Status::Failed, reason);
    let values = |report: &NetReport| {
        report
            .metric_values()
            .ok_or_else(|| failed(format!("the {} completed no connection in {:.2} s", report.side, report.seconds())))
    };
    let negotiated = |report: &NetReport| {
        report.negotiated.clone().map(|negotiated| SideNegotiated { side: report.side, negotiated })
    };
    Ok(SampleReport {
        client_library: client.library.clone(),
        server_library: server.library.clone(),
        iterations: client.connections,
        values: [values(client)?, values(server)?].concat(),
        negotiated: negotiated(client).into_iter().chain(negotiated(server)).collect(),
        allocator: None,
        threads: Vec::new(),
        // What the runners said they are, checked against the cell's build as in memory.
        build: client.build.clone().or_else(|| server.build.clone()),
        cpu_speed: None,
    })
}

/// The load generators' reports as one, as `tlsbench merge` does with several machines'. Each
/// must have completed connections: a generator that did not loaded no worker.
fn merged_clients(generators: Vec<Result<String>>) -> Result<NetReport, (Status, String)> {
    let (n, mut merged) = (generators.len(), None::<NetReport>);
    for (i, generator) in generators.into_iter().enumerate() {
        let report = side_outcome("client", generator)?;
        if n > 1 && report.connections == 0 {
            return Err((
                Status::Failed,
                format!("load generator {} of {n} completed no connection in {:.2} s", i + 1, report.seconds()),
            ));
        }
        match &mut merged {
            None => merged = Some(report),
            Some(merged) => merged.merge(&report).map_err(|e| (Status::Failed, format!("client runners: {e}")))?,
        }
    }
    Ok(merged.expect("at least one load generator"))
}

/// One side's report from its runner's reply, or why the cell has none: unsupported, or the
/// side's failure.
fn side_outcome(side: &str, reply: Result<String>) -> Result<NetReport, (Status, String)> {
    match reply.and_then(|line| parse_reply(&line)) {
        Ok(NetReply::Ok(report)) => Ok(report),
        Ok(NetReply::Unsupported { reason }) => Err((Status::Unsupported, reason)),
        Ok(NetReply::Failed { reason }) => Err((Status::Failed, format!("{side} runner: {reason}"))),
        Err(e) => Err((Status::Failed, format!("{side} runner: {e:#}"))),
    }
}

/// A runner's report checked to be of `build` and named by it: unnamed in release (as `run`
/// leaves release unlabelled), so that a report of another build is never taken for release's.
fn of_build(reply: NetReply, build: Build) -> Result<NetReply> {
    let NetReply::Ok(mut report) = reply else { return Ok(reply) };
    builds::check_reply(build, report.build.as_deref()).map_err(anyhow::Error::msg)?;
    report.build = (build != Build::Release).then(|| build.name().to_string());
    Ok(NetReply::Ok(report))
}

fn parse_reply(line: &str) -> Result<NetReply> {
    serde_json::from_str(line).with_context(|| {
        format!("the runner's reply is not one tlsbench reads: {}", executor::last_lines(line).unwrap_or_default())
    })
}

/// Prints the report (and writes it to `output`); a failing exit status when any connection
/// failed or nothing could be measured.
fn finish(reply: NetReply, output: Option<&Path>) -> Result<ExitCode> {
    let report = match reply {
        NetReply::Ok(report) => report,
        NetReply::Unsupported { reason } => bail!("unsupported: {reason}"),
        NetReply::Failed { reason } => bail!("{reason}"),
    };
    crate::output::print(render(&report));
    if let Some(path) = output {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))?;
        crate::output::stderr::line(format!("wrote {}", path.display()));
    }
    Ok(match report.failed {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "host".into())
}

/// What one side measured, as lines of text.
pub fn render(r: &NetReport) -> String {
    let mut out = String::new();
    let mut line = |label: &str, text: String| out.push_str(&format!("{label:<26}{text}\n"));
    let what = match r.side {
        Side::Client => format!("client, {} connection(s) in flight", r.concurrency),
        Side::Server => format!("server, {} worker(s)", r.concurrency),
    };
    let stack = match &r.build {
        Some(build) => format!("{} [{build}]", r.stack),
        None => r.stack.clone(),
    };
    line(&format!("{stack} "), format!("{} — {what}", r.library));
    line("scenario", r.scenario.clone().unwrap_or_else(|| "plain TCP (no TLS)".into()));
    let page = match (r.page, r.side) {
        (Some(page), Side::Client) => format!("{page}, checked (length and digest)"),
        (Some(page), Side::Server) => format!("{page} ({} write(s) of {} B)", page.writes, page.size),
        (None, _) => "not checked (no --response)".into(),
    };
    line("response", page);
    if let Some(negotiated) = &r.negotiated {
        line("negotiated", negotiated.clone());
    }
    let rate = r.connections_per_s().map_or("-".into(), format_number);
    let mut of_which = Vec::new();
    if r.resumed > 0 {
        of_which.push(format!("{} resumed", count(r.resumed)));
    }
    if r.without_request > 0 {
        of_which.push(format!("{} closed after the handshake without a request", count(r.without_request)));
    }
    let of_which = match of_which.is_empty() {
        true => String::new(),
        false => format!(" ({})", of_which.join(", ")),
    };
    line(
        "connections",
        format!(
            "{}{of_which} ok, {} failed, in {:.2} s: {rate} per second",
            count(r.connections),
            count(r.failed),
            r.seconds()
        ),
    );
    let percentiles = |latency: &tlsbench_harness::net::Latency| match latency.count() {
        0 => "-".to_string(),
        _ => {
            let at = |p: f64| ms(latency.percentile(p).expect("recorded"));
            format!(
                "p50 {}  p90 {}  p99 {}  max {}",
                at(50.0),
                at(90.0),
                at(99.0),
                ms(latency.max().expect("recorded"))
            )
        }
    };
    line("handshake latency", percentiles(&r.handshake_latency));
    if r.side == Side::Client {
        line("first byte latency", percentiles(&r.first_byte_latency));
    }
    let per = |total: f64| r.per_connection(total).map_or("-".into(), format_number);
    line(
        "CPU per connection",
        format!("user {} µs, system {} µs", per(r.cpu_user_seconds * 1e6), per(r.cpu_system_seconds * 1e6)),
    );
    let s = &r.sockets;
    line(
        "syscalls per connection",
        format!(
            "read {} ({} EAGAIN), write {}, total {}",
            per(s.reads as f64),
            per(s.empty_reads as f64),
            per(s.writes as f64),
            per(r.syscalls() as f64)
        ),
    );
    let records = match s.records_written {
        0 => String::new(),
        n => format!(", {} TLS records written", per(n as f64)),
    };
    line(
        "bytes per connection",
        format!("written {}, read {}{records}", per(s.bytes_written as f64), per(s.bytes_read as f64)),
    );
    // Over the measured window, TLS records and handshakes included: for large responses, the
    // throughput of the seed's 10 KB to 100 MB messages.
    let rate = |bytes: u64| match r.seconds() {
        seconds if seconds > 0.0 => format_number(bytes as f64 / seconds / 1e6),
        _ => "-".into(),
    };
    line("throughput", format!("written {} MB/s, read {} MB/s", rate(s.bytes_written), rate(s.bytes_read)));
    if let (Some(start), Some(peak)) = (r.rss_start_bytes, r.rss_peak_bytes) {
        line(
            "server resident memory",
            format!(
                "{} KiB at start, {} KiB at peak, {} connection(s) open at most",
                start / 1024,
                peak / 1024,
                r.max_open
            ),
        );
    }
    for failure in &r.failures {
        line("failed", format!("{} × {}", count(failure.count), failure.reason));
    }
    out
}

/// A count with its thousands grouped.
fn count(n: u64) -> String {
    group_thousands(&n.to_string())
}

fn ms(d: Duration) -> String {
    format!("{} ms", format_number(d.as_secs_f64() * 1e3))
}
