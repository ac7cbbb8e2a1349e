//! `tlsbench run` and `tlsbench interop`: plan the cells (or take a stored run's to resume it),
//! measure them, record every sample, and print and export the results.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use tlsbench_harness::protocol::SampleReport;
use tlsbench_harness::{pki, Measure, Pki, Scenario};

use super::{write_exports, View, STOP};
use crate::builds::{self, Build, Built, Compiler};
use crate::cli::{RunArgs, Transport};
use crate::cores::Split;
use crate::order::first_seen;
use crate::output;
use crate::results::{RunInfo, Status};
use crate::runners::Runners;
use crate::sample_call::{Settings, Target};
use crate::sampling::{self, CellState, Finish};
use crate::store::{self, Store, StoredRun, StoredSample};
use crate::{cores, environment, instructions, plan, steady};

/// `--time-budget` when --target-ci is given without it: 5 minutes of measuring, a bound a user
/// waits for without planning to, whatever the run's size.
const DEFAULT_TIME_BUDGET_S: f64 = 300.0;

/// `--warmup-max-ms` of a run: a JSSE handshake from a cold JVM settles in 10 to 14 s on an
/// idle machine here, later on a busy one.
const DEFAULT_WARMUP_MAX_MS: u64 = 30_000;

/// Interop asks whether each pair works and at what rate, not the rate to a few percent: its
/// processes warm up for at most this long, and each cell takes `INTEROP_SAMPLES` samples.
const INTEROP_WARMUP_MAX_MS: u64 = 5_000;
const INTEROP_SAMPLES: usize = 2;

/// What `tlsbench interop` measures when no --scenario is given: the two headline full
/// handshakes, as the quick comparison's (the globs `..._ecdsa-p256_*` it took before matched 27
/// scenarios, every suite and client-auth variant: hours of pairs).
const INTEROP_SCENARIOS: &[&str] =
    &["handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm"];

pub(super) fn run(args: RunArgs, view: View) -> Result<ExitCode> {
    // Opened first, so that a database tlsbench cannot use fails before anything is measured.
    let mut store = Store::create_or_open(&args.db.db)?;
    let (info, mut states, settings) = match &args.resume {
        Some(id) => resume(&store, id)?,
        None => {
            let (info, states, settings) = plan_run(&args, view)?;
            let cells = states.iter().map(CellState::as_planned).collect();
            store.insert_run(&StoredRun {
                info: info.clone(),
                timeout: settings.timeout,
                forks: Some(settings.forks),
                warmup_max: Some(settings.warmup_max),
                count_samples: Some(settings.count_samples),
                cells,
            })?;
            (info, states, settings)
        }
    };
    ctrlc::set_handler(|| {
        // A second Ctrl-C stops at once: every sample taken is already stored.
        if STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        crate::output::stderr::line("\nstopping after the current sample (Ctrl-C again to stop at once)");
    })
    .context("installing the Ctrl-C handler")?;

    if let Some(target) = &settings.target {
        crate::output::stderr::line(format!(
            "--target-ci {}%: after {} samples per cell, further rounds of the cells still wider, \
             for at most {} s of measuring (--time-budget)",
            target.ci_percent,
            settings.samples,
            target.budget.as_secs_f64()
        ));
    }
    // What the machine allows, first: its noise decides how many slowed samples a cell may
    // take again, and the line says what differences the run can tell.
    let watch = environment::Watch::start();
    let mut sentinel = crate::noise::Sentinel::new().filter(|_| std::env::var_os("TLSBENCH_SENTINEL_OFF").is_none());
    let mut settings = settings;
    let slowed_cpu = sentinel.as_ref().is_some_and(crate::noise::Sentinel::saw_slowed);
    settings.replacements = replacements(watch.noise(), slowed_cpu, settings.samples);
    if sampling::planned_samples(&states, &settings) > 0 {
        let line = watch.noise().line(settings.samples, settings.samples + settings.replacements);
        let varying = sentinel.as_ref().and_then(crate::noise::Sentinel::varying);
        crate::output::stderr::line(match varying {
            Some(varying) => format!("{line}; {varying}"),
            None => line,
        });
    }
    let mut progress = output::progress::Progress::new(sampling::planned_samples(&states, &settings), settings.samples);
    let mut recorder = DbRecorder { store: &mut store, run: &info.id };
    let finish = sampling::measure(&mut states, &settings, &mut progress, &mut recorder, &STOP, &mut sentinel);
    progress.finish();
    let mut conditions = watch.finish();
    conditions.sentinel = sentinel.map(|s| s.summary()).filter(|s| s.samples > 0);
    store.record_conditions(&info.id, &conditions)?;
    let mut info = info;
    info.environment.conditions = Some(conditions);
    // What the runners said they allocated with, not what was asked of them.
    info.environment.allocator = sampling::allocators_used(&states);
    store.record_allocators(&info.id, &info.environment.allocator)?;
    if finish? == Finish::Interrupted {
        crate::output::stderr::line(format!(
            "interrupted with {} sample(s) still to take; everything measured is stored in {}: `{}` measures the rest",
            sampling::planned_samples(&states, &settings),
            args.db.db.display(),
            resume_command(&info.id, &args.db.db)
        ));
        return Ok(ExitCode::from(130));
    }

    let doc = sampling::document(info, &states);
    match view {
        View::Table => output::print(output::table::render(&doc)),
        View::Matrix => output::print(format!("{}{}", output::matrix::render(&doc), output::notes::precision(&doc))),
    }
    if view == View::Matrix && args.samples.is_none() {
        crate::output::stderr::line(format!(
            "interop takes {INTEROP_SAMPLES} short samples per pair, \
             to tell whether each pair works and roughly at what rate.\nTo measure one pair precisely:\n  \
             tlsbench run --client CLIENT --server SERVER --scenario SCENARIO (20 samples of 50 ms)"
        ));
    }
    write_exports(&args.exports, &doc)?;
    if args.quick && args.scenarios.is_empty() && view == View::Table {
        // Neither selection can fail: no glob takes the defaults, and `*` matches every scenario.
        if let Ok(hint) = beyond_quick(&args) {
            crate::output::stderr::line(&hint);
        }
    }
    let failed = doc.results.iter().filter(|r| r.status == Status::Failed).count();
    if failed > 0 {
        crate::output::stderr::line(format!("{failed} result(s) failed; the reasons are listed under the table"));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// How many samples a time cell may take beyond its own in place of slowed ones: as many again
/// where the noise probe saw slowed stretches or the sentinel's first probes a slowed CPU, else
/// two (a quiet machine's rare slowed sample).
fn replacements(noise: &crate::noise::NoiseProbe, slowed_cpu: bool, samples: usize) -> usize {
    match noise.slowed_percent > 0.0 || slowed_cpu {
        true => samples.max(2),
        false => 2,
    }
}

/// A new run: the pairs and scenarios asked for, each stack's library, the settings.
fn plan_run(args: &RunArgs, view: View) -> Result<(RunInfo, Vec<CellState>, Settings)> {
    let started = SystemTime::now();
    let runners = Runners::find()?;
    let ids: Vec<String> = match args.stacks.is_empty() {
        true => plan::default_stacks::of_a_run(&runners),
        false => first_seen(args.stacks.clone()),
    };
    let (pairs, globs) = match (view, &args.client, &args.server) {
        (View::Matrix, Some(_), _) | (View::Matrix, _, Some(_)) => {
            bail!("interop pairs every client with every server; choose the stacks with --stack")
        }
        (View::Matrix, None, None) => {
            let all_pairs = ids.iter().flat_map(|c| ids.iter().map(move |s| (c.clone(), s.clone()))).collect();
            let globs = match args.scenarios.is_empty() {
                true => INTEROP_SCENARIOS.iter().map(|g| g.to_string()).collect(),
                false => args.scenarios.clone(),
            };
            (all_pairs, globs)
        }
        (View::Table, Some(client), Some(server)) => (vec![(client.clone(), server.clone())], args.scenarios.clone()),
        (View::Table, _, _) => (ids.iter().map(|id| (id.clone(), id.clone())).collect(), args.scenarios.clone()),
    };
    let measures = measures(args)?;
    let tcp = args.transport == Transport::Tcp;
    let peak = peak_split(args)?;
    let scenarios = match args.quick && globs.is_empty() {
        true => first_seen(measures.iter().flat_map(|&m| Scenario::quick_for(m))),
        false => plan::select_scenarios(&globs, &measures)?,
    };
    let samples = args.samples.map(|n| n as usize);
    let settings = Settings {
        samples: samples.unwrap_or(match view {
            View::Matrix => INTEROP_SAMPLES,
            View::Table if peak.is_some() => PEAK_SAMPLES[usize::from(args.quick)],
            View::Table => default_samples(&measures, args.quick),
        }),
        count_samples: samples.unwrap_or(match view {
            View::Matrix => INTEROP_SAMPLES,
            View::Table => COUNT_SAMPLES[usize::from(args.quick)],
        }),
        min_time_ms: args.min_time_ms.unwrap_or(match (tcp, args.quick || view == View::Matrix) {
            (false, false) => DEFAULT_MIN_TIME_MS,
            (false, true) => 20,
            // A connection takes about a millisecond; a sample of a second holds hundreds.
            (true, false) => 1000,
            (true, true) => 300,
        }),
        warmup_ms: args.warmup_ms.unwrap_or(if args.quick { 10 } else { DEFAULT_WARMUP_MS }),
        timeout: Duration::from_secs_f64(args.timeout),
        data_dir: pki::default_data_dir(),
        runners,
        builds: Vec::new(),
        target: args.target_ci.map(|ci_percent| Target {
            ci_percent,
            budget: Duration::from_secs_f64(args.time_budget.unwrap_or(DEFAULT_TIME_BUDGET_S)),
        }),
        // One warm process per cell in a quick run and in interop (two short samples a pair): a
        // JIT's warm-up is most of their time.
        forks: args.forks.unwrap_or(if args.quick || view == View::Matrix { 1 } else { 2 }) as usize,
        warmup_max: Duration::from_millis(args.warmup_max_ms.unwrap_or(match (view, args.quick) {
            (View::Matrix, _) => INTEROP_WARMUP_MAX_MS,
            (View::Table, true) => 10_000,
            (View::Table, false) => DEFAULT_WARMUP_MAX_MS,
        })),
        threaded: args.threads.iter().any(|&n| n > 1),
        pinning: match (tcp, args.threads.iter().copied().max()) {
            (false, Some(n)) if n > 1 => cores::Pinning::of_this_process(n),
            _ => None,
        },
        peak,
        // Set from the noise probe as measuring starts.
        replacements: 0,
    };
    prepare_certificates(&settings, &scenarios)?;
    let ids = first_seen(pairs.iter().flat_map(|(c, s)| [c.clone(), s.clone()]));
    let infos = settings.runners.infos(&ids)?;
    let build_axis = plan::build_axis(&args.builds, &args.compilers);
    let mut settings = settings;
    let built = build_axis.iter().map(|&(b, c)| Built::new(b.unwrap_or_default(), c.unwrap_or_default()));
    settings.builds = find_builds(&settings.runners, built, &ids)?;
    let states = plan::cells(
        &pairs,
        &scenarios,
        &measures,
        &settings.runners,
        args.process,
        &plan::allocator_axis(&args.allocators),
        &match tcp {
            true => plan::thread_axis(&args.workers, None),
            false => plan::thread_axis(&args.threads, args.contexts),
        },
        &build_axis,
    )
    .into_iter()
    .map(|cell| match settings.peak.is_some() && cell.process == plan::Process::Tcp {
        true => plan::Cell { process: plan::Process::TcpPeak, ..cell },
        false => cell,
    })
    .map(CellState::planned)
    .collect();
    let mut environment = environment::detect();
    environment.builds = Some(describe_builds(&settings, &build_axis));
    // Each CPU the threads use, before anything is measured on them.
    if let Some(pinning) = &settings.pinning {
        environment.core_speeds = cores::measure_speeds(&pinning.reference);
    }
    let info = RunInfo {
        id: run_id(started),
        started: humantime::format_rfc3339_seconds(started).to_string(),
        tlsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: std::env::args().collect(),
        environment,
        stacks: infos,
        samples: settings.samples,
        min_time_ms: settings.min_time_ms,
        warmup_ms: settings.warmup_ms,
        target_ci: settings.target.map(|t| t.ci_percent),
        time_budget_s: settings.target.map(|t| t.budget.as_secs_f64()),
    };
    Ok((info, states, settings))
}

/// The runners of each build (with its C compiler) other than today's that the run measures,
/// each checked to be that build and to hold every stack of `ids` that release's Rust runners
/// hold.
fn find_builds(
    release: &Runners,
    chosen: impl Iterator<Item = Built>,
    ids: &[String],
) -> Result<Vec<(Built, Runners)>> {
    let mut found = Vec::new();
    builds::check(Built::default(), release)?;
    for built in first_seen(chosen.filter(|b| !b.is_default())) {
        found.push((built, builds::of_build(release, built, ids)?));
    }
    Ok(found)
}

/// The environment's line on builds: each build of the run as its runners reported it, and
/// what a build does not reach.
fn describe_builds(settings: &Settings, axis: &[(Option<Build>, Option<Compiler>)]) -> String {
    let reported = |runners: &Runners| {
        first_seen(runners.all().iter().filter_map(|r| r.build.as_ref().map(ToString::to_string))).join("; ")
    };
    let mut parts: Vec<String> = Vec::new();
    for &(build, compiler) in axis {
        let built = Built::new(build.unwrap_or_default(), compiler.unwrap_or_default());
        let runners = match built.is_default() {
            true => &settings.runners,
            false => &settings.builds.iter().find(|(x, _)| *x == built).expect("found above").1,
        };
        match reported(runners) {
            r if r.is_empty() => parts.push(format!("{built}: runners that report no build")),
            r => parts.push(r),
        }
    }
    // What no build's flags reach, said once.
    parts.push(
        "BoringSSL, AWS-LC (aws-lc-rs, s2n-tls), s2n-tls, ring, jemalloc and mimalloc are compiled from source \
         with the build's CFLAGS and C compiler; the system's OpenSSL, GnuTLS and libtls are Debian's builds, \
         the same in every build; Go's and Java's runners are built by their own toolchains"
            .to_string(),
    );
    parts.join("; ")
}

/// Samples per cell unless `--samples` says: counts that repeat (instructions and sync under
/// callgrind, io's calls, records and bytes per handshake) take `COUNT_SAMPLES`, and a run of
/// those only says so; wall time needs more.
fn default_samples(measures: &[Measure], quick: bool) -> usize {
    match (measures.iter().all(|m| crate::compare::judged_by_range(m.name())), quick) {
        (true, quick) => COUNT_SAMPLES[usize::from(quick)],
        (false, true) => 6,
        // The time measure takes more, shorter samples (see DEFAULT_TIME_SAMPLES).
        (false, false) if measures.contains(&Measure::Time) => DEFAULT_TIME_SAMPLES,
        (false, false) => 10,
    }
}

/// The time measure's samples and each side's measured and warmup time in ms, without --quick.
/// On the 2-core KVM guest tlsbench is developed on, under load, 20 samples of 50 ms narrowed the
/// median interval of wall time from ±24% to ±16% and of CPU time from ±23% to ±12%, against 10
/// of 100 ms, for a tenth more run time (40 of 25 ms: ±13% and ±5%, for a third more); quiet, the
/// run-to-run spread (±4% to ±38% either way) hid any difference (scripts/noise-check.sh).
const DEFAULT_TIME_SAMPLES: usize = 20;
const DEFAULT_MIN_TIME_MS: u64 = 50;
const DEFAULT_WARMUP_MS: u64 = 25;

/// Samples per cell of a measure whose counts repeat, without and with --quick: a few show that
/// they do. In a quick comparison's six samples, io's calls and records per handshake did not
/// move at all, and its bytes by two at most (a signature's length), where a change is a call, a
/// record or tens of bytes (docs/measures.md).
const COUNT_SAMPLES: [usize; 2] = [3, 2];

/// Samples per cell of a server's peak, without and with --quick: each is a search of up to
/// seven steps of --min-time-ms.
const PEAK_SAMPLES: [usize; 2] = [3, 2];

/// Where the server and its load run in a run of a server's peak (--peak, --server-cores,
/// --load-cores); None in any other run.
fn peak_split(args: &RunArgs) -> Result<Option<Split>> {
    if !(args.peak || args.server_cores.is_some() || args.load_cores.is_some()) {
        return Ok(None);
    }
    if args.transport != Transport::Tcp {
        bail!("--peak, --server-cores and --load-cores measure a server's peak over TCP: add --transport tcp");
    }
    Split::choose(args.server_cores.as_deref(), args.load_cores.as_deref()).map(Some)
}

/// The measures asked for, or the transport's default; net is the measure of TCP, and only of
/// TCP.
fn measures(args: &RunArgs) -> Result<Vec<Measure>> {
    let tcp = args.transport == Transport::Tcp;
    let measures = match (args.measures.is_empty(), tcp) {
        (true, false) => vec![Measure::Time],
        (true, true) => vec![Measure::Net],
        (false, _) => first_seen(args.measures.clone()),
    };
    if let Some(other) = measures.iter().find(|&&m| (m == Measure::Net) != tcp) {
        match tcp {
            true => bail!(
                "over --transport tcp the measure is net (connections per second, latency, CPU, syscalls, \
                 bytes and records per connection); {other} is taken in memory: run it without --transport tcp"
            ),
            false => bail!("measure net is taken over a real socket: add --transport tcp"),
        }
    }
    if measures.contains(&Measure::Instructions) || measures.contains(&Measure::Sync) {
        instructions::Callgrind::find()?;
    }
    if tcp && args.process != plan::ProcessChoice::Auto {
        bail!("--process places the two sides in memory; over --transport tcp each side is its own runner on a socket");
    }
    if !tcp && !args.workers.is_empty() {
        bail!(
            "--workers is the server's worker threads over --transport tcp; \
             in memory, --threads N measures N pairs side by side"
        );
    }
    if args.contexts.is_some() && !args.threads.iter().any(|&n| n > 1) {
        bail!(
            "--contexts chooses what the threads of --threads N share (valid: own, shared, both), so it needs \
             --threads N with N > 1, e.g. --threads 2 --contexts both{}",
            match tcp {
                true => "; over --transport tcp a server's workers always share its context",
                false => "",
            }
        );
    }
    if args.threads.iter().any(|&n| n > 1) {
        if tcp {
            bail!(
                "--threads runs N pairs inside one runner, in memory; \
                 over --transport tcp a server scales with --workers N"
            );
        }
        if !measures.contains(&Measure::Time) {
            let names: Vec<&str> = measures.iter().map(|m| m.name()).collect();
            bail!(
                "--threads applies to the time measure (valid: --measure time); this run measures {}",
                names.join(", ")
            );
        }
        if args.process == plan::ProcessChoice::Split {
            bail!(
                "--threads runs N pairs inside one runner, in-process; \
                 --process split runs one side per runner (valid with --threads: auto, both)"
            );
        }
    }
    Ok(measures)
}

/// After a quick comparison, the commands that measure more: the same without --quick (each
/// measure's focused default set, with full samples), and the whole matrix.
fn beyond_quick(args: &RunArgs) -> Result<String> {
    let measures = measures(args)?;
    let defaults = plan::select_scenarios(&[], &measures)?.len();
    let all = plan::select_scenarios(&["*".to_string()], &measures)?.len();
    let shell_word = |arg: String| match arg.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@".contains(c)) {
        true => arg,
        false => format!("'{}'", arg.replace('\'', r"'\''")),
    };
    let command: Vec<String> = std::env::args().filter(|a| a != "--quick").map(shell_word).collect();
    let whole = [&command[..], &["--scenario".to_string(), "'*'".to_string()]].concat();
    let all = output::format::format_number(all as f64);
    Ok(format!(
        "This was the quick comparison: the headline scenarios, short samples.\n\
         Each measure's focused default set ({defaults} scenarios), full-length samples:\n{}\n\
         The whole matrix ({all} scenarios):\n{}",
        shell_lines(&command),
        shell_lines(&whole)
    ))
}

/// A command to copy into a shell, indented by two, on as many lines as keep each within
/// [`output::WIDTH`]: every line but the last ends in ` \`, so that the shell reads one command.
fn shell_lines(words: &[String]) -> String {
    let mut lines = vec![String::from(" ")];
    for word in words {
        let line = lines.last_mut().expect("one line at least");
        if !line.trim().is_empty() && line.chars().count() + 1 + word.chars().count() + 2 > output::WIDTH {
            line.push_str(" \\");
            lines.push(String::from("   "));
        }
        let line = lines.last_mut().expect("one line at least");
        line.push(' ');
        line.push_str(word);
    }
    lines.join("\n")
}

/// A stored run with its original settings, to take the samples it is missing.
fn resume(store: &Store, id: &str) -> Result<(RunInfo, Vec<CellState>, Settings)> {
    let stored = store.load(id)?;
    let states = sampling::restore(&stored)?;
    let info = stored.info;
    let settings = Settings {
        samples: info.samples,
        min_time_ms: info.min_time_ms,
        warmup_ms: info.warmup_ms,
        timeout: stored.timeout,
        data_dir: pki::default_data_dir(),
        runners: Runners::find()?,
        builds: Vec::new(),
        // A resumed run takes the samples it planned; its further rounds are not resumed.
        target: None,
        // As the run had them; a run stored before they were kept had today's defaults of
        // `run` without --quick (those of --quick and interop came later).
        forks: stored.forks.unwrap_or(2),
        warmup_max: stored.warmup_max.unwrap_or(Duration::from_millis(DEFAULT_WARMUP_MAX_MS)),
        // A run stored before it was kept took the run's samples in every cell.
        count_samples: stored.count_samples.unwrap_or(info.samples),
        threaded: states.iter().any(|s| s.cell.threads.is_some_and(|n| n > 1)),
        pinning: match states
            .iter()
            .filter(|s| !matches!(s.cell.process, plan::Process::Tcp | plan::Process::TcpPeak))
            .filter_map(|s| s.cell.threads)
            .max()
        {
            Some(n) if n > 1 => cores::Pinning::of_this_process(n),
            _ => None,
        },
        // Its command line's CPUs, checked again against those tlsbench may use now.
        peak: match states.iter().any(|s| s.cell.process == plan::Process::TcpPeak) {
            true => Some(Split::of_command_line(&info.command_line)?),
            false => None,
        },
        replacements: 0,
    };
    let mut settings = settings;
    let ids: Vec<String> = info.stacks.iter().map(|s| s.id.clone()).collect();
    settings.builds = find_builds(&settings.runners, states.iter().map(|s| s.cell.built()), &ids)?;
    if sampling::planned_samples(&states, &settings) == 0 {
        crate::output::stderr::line(format!("run {id} is complete: nothing to measure"));
        return Ok((info, states, settings));
    }
    let scenarios: Vec<Scenario> = states.iter().map(|s| s.cell.scenario).collect();
    prepare_certificates(&settings, &scenarios)?;
    // Samples of one cell must come from one library version: refuse if a stack changed since.
    let ids: Vec<String> = info.stacks.iter().map(|s| s.id.clone()).collect();
    for (now, then) in settings.runners.infos(&ids)?.iter().zip(&info.stacks) {
        if now.library != then.library {
            bail!(
                "stack `{}` now reports {}, but run {id} measured {}; a resumed run must not mix the two",
                now.id,
                now.library,
                then.library
            );
        }
    }
    let here = environment::detect();
    if (&here.cpu, here.cores, &here.kernel)
        != (&info.environment.cpu, info.environment.cores, &info.environment.kernel)
    {
        crate::output::stderr::line(format!(
            "warning: run {id} started on another machine or kernel; its samples will mix the two"
        ));
    }
    Ok((info, states, settings))
}

/// Generated here, once, rather than by runners racing each other.
fn prepare_certificates(settings: &Settings, scenarios: &[Scenario]) -> Result<()> {
    let keys = first_seen(scenarios.iter().map(|s| s.key));
    Pki::load_or_generate(&settings.data_dir, &keys).map_err(anyhow::Error::msg)?;
    if scenarios.iter().any(|s| s.kind == tlsbench_harness::Kind::ContextClientSystem) {
        crate::trust::prepare(&settings.data_dir, &keys, std::path::Path::new(crate::trust::SYSTEM_BUNDLE))?;
    }
    Ok(())
}

pub(super) fn resume_command(id: &str, db: &Path) -> String {
    match db == Path::new(store::DEFAULT_PATH) {
        true => format!("tlsbench run --resume {id}"),
        false => format!("tlsbench run --resume {id} --db {}", db.display()),
    }
}

/// Writes each sample and each cell's end to the results database as the run goes.
struct DbRecorder<'a> {
    store: &'a mut Store,
    run: &'a str,
}

impl sampling::Recorder for DbRecorder<'_> {
    fn sample(
        &mut self,
        cell: usize,
        index: usize,
        report: &SampleReport,
        fork: Option<u32>,
        cpu_speed: Option<f64>,
    ) -> Result<()> {
        let cpus = cores::pinned_cpus(report);
        let sample =
            StoredSample { iterations: report.iterations, values: report.values.clone(), fork, cpus, cpu_speed };
        let libraries = [&report.client_library[..], &report.server_library[..]];
        self.store.record_sample(self.run, cell, index, &sample, libraries, report.negotiated_by_side())?;
        if let Some(used) = &report.allocator {
            self.store.record_allocator_used(self.run, cell, &used.to_string())?;
        }
        Ok(())
    }

    fn warmed(&mut self, cell: usize, warmup: &steady::Warmup) -> Result<()> {
        Ok(self.store.record_warmup(self.run, cell, warmup)?)
    }

    fn ended(&mut self, cell: usize, status: Status, reason: &str) -> Result<()> {
        Ok(self.store.record_end(self.run, cell, status, reason)?)
    }
}

/// A run id that sorts by time: `20261122T031500Z-3fa2`.
pub(crate) fn run_id(started: SystemTime) -> String {
    let stamp: String =
        humantime::format_rfc3339_seconds(started).to_string().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    format!("{stamp}-{:04x}", fastrand::u16(..))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_command_goes_on_lines_that_a_shell_reads_as_one() {
        let words: Vec<String> = ["tlsbench", "run"].into_iter().map(String::from).collect();
        assert_eq!(shell_lines(&words), "  tlsbench run");
        let long: Vec<String> = (0..40).map(|i| format!("--export-json=/tmp/{i}")).collect();
        let text = shell_lines(&long);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 1 && lines.iter().all(|l| l.chars().count() <= output::WIDTH), "{text}");
        assert!(lines[..lines.len() - 1].iter().all(|l| l.ends_with(" \\")), "{text}");
        assert!(lines[1..].iter().all(|l| l.starts_with("    --export")), "{text}");
        assert_eq!(text.replace(" \\\n   ", "").trim(), long.join(" "));
    }
}
