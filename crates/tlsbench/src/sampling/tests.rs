//! The tests of sampling/: a cell's samples and results, a stored run's cells, `--target-ci`'s
//! rounds, and the rates per thread and per worker.

use std::time::Duration;

use tlsbench_harness::allocator::Allocator;
use tlsbench_harness::protocol::{Metric, MetricValue, SampleReport};
use tlsbench_harness::{Contexts, Measure, Side};

use super::one_shot::aggregate_threads;
use super::*;
use crate::plan::Process;
use crate::results::{CellResult, RunInfo};
use crate::sample_call::tests::report;
use crate::store::{StoredCell, StoredRun};

fn cell() -> Cell {
    Cell {
        client: "rustls-ring".into(),
        server: "openssl".into(),
        scenario: "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap(),
        measure: tlsbench_harness::Measure::Time,
        process: Process::InProcess,
        allocator: None,
        threads: None,
        contexts: None,
        build: None,
        compiler: None,
        support: Ok(()),
    }
}

#[test]
fn samples_are_kept_per_side_with_the_libraries() {
    let mut state = CellState::planned(cell());
    state.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None, None).unwrap();
    state.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None, None).unwrap();
    assert_eq!(state.missing(3), 1);
    let results = state.results();
    // Per side: handshakes per second.
    assert_eq!(results.len(), 2);
    assert_eq!(
        (results[0].side, results[0].metric.as_str(), results[0].key.measure.as_str()),
        (Side::Client, "handshakes_per_s", "time")
    );
    assert_eq!(results[0].samples, vec![1000.0, 1000.0]);
    assert_eq!((results[1].side, results[1].median), (Side::Server, Some(2000.0)));
    assert_eq!(results[1].server_library.as_deref(), Some("OpenSSL 3.0.19 27 Jan 2026"));
    assert_eq!(results[1].key.pair_label(), "rustls-ring -> openssl");
}

#[test]
fn a_stored_run_rebuilds_the_same_document() {
    use crate::results::fixture;
    use crate::store::StoredSample;

    let other = Cell { scenario: "handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".parse().unwrap(), ..cell() };
    let (mut ok, mut failed) = (CellState::planned(cell()), CellState::planned(other));
    let mut stored: Vec<StoredCell> = [&ok, &failed].map(CellState::as_planned).to_vec();
    for state in [&mut ok, &mut failed] {
        state.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None, None).unwrap();
    }
    ok.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None, None).unwrap();
    failed.outcome = Err((Status::Failed, "runner was killed by signal 9 (SIGKILL)".into()));
    // What the database holds after those samples and that end.
    let sample = StoredSample { iterations: 100, values: report("").values, fork: None, cpus: None, cpu_speed: None };
    stored[0].samples = vec![sample.clone(), sample.clone()];
    stored[1].samples = vec![sample];
    stored[1].status = Status::Failed;
    stored[1].reason = Some("runner was killed by signal 9 (SIGKILL)".into());
    for cell in &mut stored {
        cell.client_library = Some("rustls 0.23.46 (ring 0.17.14)".into());
        cell.server_library = Some("OpenSSL 3.0.19 27 Jan 2026".into());
    }

    let info = fixture::document().run;
    let live = document(info.clone(), &[ok, failed]);
    let run = StoredRun {
        info: info.clone(),
        timeout: Duration::from_secs(1),
        forks: None,
        warmup_max: None,
        count_samples: None,
        cells: stored,
    };
    let restored = restore(&run).unwrap();
    assert_eq!(restored.iter().map(|s| s.missing(3)).collect::<Vec<_>>(), [1, 0]);
    assert_eq!(document(info, &restored), live);
}

/// A cell whose client and server samples are `values` (one sample each), wall time and
/// CPU time alike.
fn sampled(values: &[f64]) -> CellState {
    let placed: Vec<(f64, Option<f64>)> = values.iter().map(|&value| (value, None)).collect();
    sampled_at(&placed)
}

/// `sampled`, each sample with the speed of the CPU the sentinel placed it on (noise/sentinel.rs).
fn sampled_at(samples: &[(f64, Option<f64>)]) -> CellState {
    let mut state = CellState::planned(cell());
    for &(value, cpu_speed) in samples {
        let values: Vec<MetricValue> = [Side::Client, Side::Server]
            .into_iter()
            .flat_map(|side| {
                [Metric::HandshakesPerS, Metric::CpuHandshakesPerS].map(|metric| MetricValue {
                    side,
                    metric,
                    value,
                    seconds: 0.1,
                })
            })
            .collect();
        state.push(&values, None, None, cpu_speed);
    }
    state
}

#[test]
fn samples_that_ran_where_no_cpu_was_at_full_speed_are_set_aside_while_six_others_ran_at_it() {
    // Six samples at full speed, and two on a slowed CPU whose values alone (within the others'
    // spread) would not set them aside.
    let full = [100.0, 104.0, 96.0, 102.0, 98.0, 100.0].map(|v| (v, Some(0.97)));
    let slowed = [97.0, 99.0].map(|v| (v, Some(0.6)));
    let state = sampled_at(&[&full[..3], &slowed[..1], &full[3..], &slowed[1..]].concat());
    let rate = |state: &CellState| {
        state.results().into_iter().find(|r| r.metric == "handshakes_per_s" && r.side == Side::Client).unwrap()
    };
    let kept = rate(&state);
    assert_eq!(kept.slowed, vec![3, 7]);
    // The figure: the faster half of the six at full speed.
    assert_eq!(kept.faster_half_mean, Some((104.0 + 102.0 + 100.0) / 3.0));
    assert!(!state.replaces_slowed(6, 12), "six at full speed are enough");
    // A count is never set aside.
    assert!(state.results().iter().filter(|r| r.metric.starts_with("contended")).all(|r| r.slowed.is_empty()));

    // Five at full speed: the figure is of all eight, and the cell takes another in their place.
    let state = sampled_at(&[&full[..5], &slowed[..]].concat());
    let all = rate(&state);
    assert!(all.slowed.is_empty(), "{:?}", all.slowed);
    assert_eq!(all.faster_half_mean, Some((104.0 + 102.0 + 100.0 + 99.0) / 4.0));
    assert!(state.replaces_slowed(6, 12));
    assert!(!state.replaces_slowed(6, 7), "at most `most` samples");
    // A run of 2 samples (interop's) takes none in place of a slowed CPU's: its figure could not
    // set them aside.
    assert!(!sampled_at(&[(100.0, Some(0.97)), (99.0, Some(0.5))]).replaces_slowed(2, 8));
    // Samples the sentinel did not place (None) are never set aside for their CPU.
    let unplaced = sampled_at(&[(100.0, None), (99.0, None), (101.0, None)]);
    assert!(rate(&unplaced).slowed.is_empty());
}

#[test]
fn target_ci_takes_rounds_of_the_wide_cells_until_all_are_within_it() {
    let target = Target { ci_percent: 2.0, budget: Duration::from_secs(60) };
    // 10 samples of a time rate: the figure is the mean of the faster five, its interval reaches
    // the fastest sample. Tight: 100.36, up to 101 (±0.64%); wide: 105.2, up to 111 (±5.5%).
    let tight = [100.0, 99.0, 101.0, 100.5, 99.5, 100.0, 100.2, 99.8, 100.0, 100.1];
    let wide = [100.0, 90.0, 110.0, 89.0, 111.0, 100.0, 95.0, 105.0, 100.0, 100.0];
    let states = [sampled(&tight), sampled(&wide), sampled(&tight), sampled(&wide)];
    let near = |ci: Option<f64>, expected: f64| ci.is_some_and(|ci| (ci - expected).abs() < 1e-9);
    assert!(near(states[0].widest_ci(), 0.64 / 100.36 * 100.0), "{:?}", states[0].widest_ci());
    assert!(near(states[1].widest_ci(), 5.8 / 105.2 * 100.0), "{:?}", states[1].widest_ci());
    // Contended waits near 0 (here 1 or 3 waits per 10,000 handshakes) never hold a cell back.
    let mut waits = sampled(&tight);
    for value in [0.0001, 0.0003, 0.0001, 0.0003, 0.0001, 0.0003, 0.0001, 0.0003, 0.0001, 0.0003] {
        let metric = Metric::ContendedWaitsPerHandshake;
        waits.push(&[MetricValue { side: Side::Server, metric, value, seconds: 0.0 }], None, None, None);
    }
    assert_eq!(waits.widest_ci(), states[0].widest_ci());
    assert_eq!(next(&states, &target, Duration::from_secs(10)), Next::Round(vec![1, 3]));
    assert_eq!(next(&states[..1], &target, Duration::from_secs(10)), Next::Reached);
    // Met even after the budget: nothing is left to say.
    assert_eq!(next(&states[..1], &target, Duration::from_secs(600)), Next::Reached);
}

#[test]
fn target_ci_stops_at_the_budget_and_names_the_cells_still_wide() {
    let target = Target { ci_percent: 2.0, budget: Duration::from_secs(60) };
    let wide = [100.0, 90.0, 110.0, 89.0, 111.0, 100.0, 95.0, 105.0, 100.0, 100.0];
    let mut ended = sampled(&wide);
    ended.outcome = Err((Status::Failed, "runner was killed by signal 9 (SIGKILL)".into()));
    let states = [sampled(&wide), ended, CellState::planned(cell())];
    // A cell that ended, or has no samples, gets no further round.
    assert_eq!(next(&states, &target, Duration::from_secs(59)), Next::Round(vec![0]));
    assert_eq!(next(&states, &target, Duration::from_secs(60)), Next::BudgetSpent(vec![0]));
}

#[test]
fn a_metric_the_samples_lack_is_left_out_of_the_results() {
    // A sample of a runner without the CPU clock, or of a run stored before it was taken.
    let mut state = CellState::planned(cell());
    state.record(&report("OpenSSL 3.0.19 27 Jan 2026"), None, None).unwrap();
    let metrics: Vec<String> = state.results().into_iter().map(|r| r.metric).collect();
    assert_eq!(metrics, ["handshakes_per_s", "handshakes_per_s"]);
    // Before any sample, every metric of the measure has its place.
    let cell = cell();
    let metrics = tlsbench_harness::protocol::Metric::of(cell.measure, cell.scenario.kind).len();
    assert_eq!(CellState::planned(cell).results().len(), 2 * metrics);
}

#[test]
fn a_result_from_another_allocator_is_refused_and_the_environment_says_what_ran() {
    use tlsbench_harness::allocator::AllocatorInUse;
    let used = |name, version: &str| Some(AllocatorInUse { name, version: version.into() });
    let with = |allocator| SampleReport { allocator, ..report("OpenSSL 3.0.19 27 Jan 2026") };
    let jemalloc_cell = || CellState::planned(Cell { allocator: Some(Allocator::Jemalloc), ..cell() });

    let mut state = jemalloc_cell();
    state.record(&with(used(Allocator::Jemalloc, "5.3.1")), None, None).unwrap();
    assert_eq!(state.results()[0].key.pair_label(), "rustls-ring -> openssl (jemalloc)");
    assert_eq!(state.results()[0].key.allocator.as_deref(), Some("jemalloc"));
    let (status, reason) = jemalloc_cell().record(&with(used(Allocator::Glibc, "2.36")), None, None).unwrap_err();
    assert_eq!(
        (status, reason.as_str()),
        (Status::Failed, "the runner allocated with glibc 2.36, the cell asks for jemalloc; result refused")
    );
    // A runner from before the allocator axis says nothing: not taken as jemalloc.
    let (_, reason) = jemalloc_cell().record(&with(None), None, None).unwrap_err();
    assert_eq!(reason, "the runner did not report its allocator, the cell asks for jemalloc; result refused");
    // Without the axis, glibc's is expected from a runner that reports.
    let (_, reason) =
        CellState::planned(cell()).record(&with(used(Allocator::Mimalloc, "3.3.2")), None, None).unwrap_err();
    assert_eq!(reason, "the runner allocated with mimalloc 3.3.2, the cell asks for glibc; result refused");

    let mut glibc = CellState::planned(cell());
    glibc.record(&with(used(Allocator::Glibc, "2.36")), None, None).unwrap();
    let mut runtime = CellState::planned(Cell { client: "go".into(), server: "go".into(), ..cell() });
    runtime
        .record(
            &SampleReport {
                client_library: "Go crypto/tls go1.26".into(),
                server_library: "Go crypto/tls go1.26".into(),
                ..with(None)
            },
            None,
            None,
        )
        .unwrap();
    assert_eq!(
        allocators_used(&[state, glibc, runtime, CellState::planned(cell())]),
        "jemalloc 5.3.1, glibc 2.36, behind tlsbench's malloc interposer; go: their runtime's own"
    );
    assert_eq!(allocators_used(&[CellState::planned(cell())]), "none reported (no sample was taken)");
}

#[test]
fn a_sample_of_threads_is_the_sum_of_its_threads_and_each_must_have_measured() {
    use tlsbench_harness::protocol::ThreadSample;
    let two = Cell { threads: Some(2), ..cell() };
    let thread = |client: f64, server: f64, iterations| ThreadSample {
        iterations,
        cpu: None,
        values: vec![
            MetricValue { side: Side::Client, metric: Metric::HandshakesPerS, value: client, seconds: 0.1 },
            MetricValue { side: Side::Server, metric: Metric::HandshakesPerS, value: server, seconds: 0.2 },
        ],
    };
    // The runner's own sums are not taken on trust.
    let reported = SampleReport {
        threads: vec![thread(900.0, 1800.0, 90), thread(700.0, 1500.0, 70)],
        ..report("OpenSSL 3.0.19 27 Jan 2026")
    };
    let kept = aggregate_threads(&two, reported.clone()).unwrap();
    assert_eq!(kept.iterations, 160);
    let value = |side| kept.values.iter().find(|v| v.side == side).unwrap().value;
    assert_eq!((value(Side::Client), value(Side::Server)), (900.0 + 700.0, 1800.0 + 1500.0));

    let one_thread = SampleReport { threads: vec![thread(900.0, 1800.0, 90)], ..reported.clone() };
    assert_eq!(
        aggregate_threads(&two, one_thread).unwrap_err(),
        (Status::Failed, "the runner reported 1 thread(s)' results, the cell asks for 2; result refused".into())
    );
    let idle = SampleReport { threads: vec![thread(900.0, 1800.0, 90), thread(0.0, 0.0, 0)], ..reported.clone() };
    assert_eq!(aggregate_threads(&two, idle).unwrap_err().1, "thread 2 of 2 measured no iteration; result refused");
    // A cell of one pair keeps the report as it is.
    assert_eq!(aggregate_threads(&cell(), report("x")).unwrap(), report("x"));
}

#[test]
fn a_run_with_threads_gives_rates_per_thread_and_efficiency_against_one_thread() {
    // Two threads: the client scales perfectly, the server's rate per thread falls.
    let measured = |threads, client_factor: f64, server_factor: f64| {
        let mut state = CellState::planned(Cell { threads, ..cell() });
        for (client, server) in [(1000.0, 2000.0), (1010.0, 2020.0), (990.0, 1980.0)] {
            let value = |side, value| MetricValue { side, metric: Metric::HandshakesPerS, value, seconds: 0.1 };
            let values = vec![value(Side::Client, client * client_factor), value(Side::Server, server * server_factor)];
            state.record(&SampleReport { values, ..report("OpenSSL 3.0.19 27 Jan 2026") }, None, None).unwrap();
        }
        state
    };
    let (one, two) = (measured(None, 1.0, 1.0), measured(Some(2), 2.0, 1.5));
    let doc = document(fixture_info(), &[one, two]);
    let find = |metric: &str, side, threads| {
        doc.results
            .iter()
            .find(|r| r.metric == metric && r.side == side && r.key.threads == threads)
            .unwrap_or_else(|| panic!("{metric} {side:?} {threads:?}"))
    };
    assert_eq!(find("handshakes_per_s", Side::Server, Some(2)).key.pair_label(), "rustls-ring -> openssl (2 threads)");
    assert_eq!(find("handshakes_per_s", Side::Server, Some(2)).median, Some(3000.0));
    let per_thread = find("handshakes_per_s_per_thread", Side::Server, Some(2));
    assert_eq!((per_thread.median, per_thread.samples.len()), (Some(1500.0), 3));
    assert_eq!(per_thread.scaling_efficiency, Some(0.75));
    // Its interval: the two threads' lowest over one thread's highest, and the other way. Each
    // rate's interval lies about its faster half's mean: two threads' 3,015 ± 45, one's 2,010 ± 30.
    let [low, high] = per_thread.scaling_efficiency_ci.expect("both rates have an interval");
    assert!((low - 2970.0 / 4080.0).abs() < 1e-12 && (high - 3060.0 / 3960.0).abs() < 1e-12, "{low} {high}");
    assert_eq!(find("handshakes_per_s_per_thread", Side::Client, Some(2)).scaling_efficiency, Some(1.0));
    // One thread's row of the per-thread block: its own rate, the reference, no efficiency.
    let reference = find("handshakes_per_s_per_thread", Side::Server, None);
    assert_eq!((reference.median, reference.scaling_efficiency), (Some(2000.0), None));
    assert!(
        crate::output::table::render(&doc).contains("1,508 ±1.5% (75 ±2%)"),
        "{}",
        crate::output::table::render(&doc)
    );
    // A run without threads gains nothing.
    assert!(document(fixture_info(), &[measured(None, 1.0, 1.0)])
        .results
        .iter()
        .all(|r| !r.metric.ends_with("_per_thread")));
}

#[test]
fn contended_waits_of_a_run_with_threads_come_after_the_rates_per_thread_and_a_run_without_has_none() {
    let measured = |threads, waits: f64| {
        let mut state = CellState::planned(Cell { threads, ..cell() });
        for rate in [2000.0, 2020.0, 1980.0] {
            let value = |metric, value, seconds| MetricValue { side: Side::Server, metric, value, seconds };
            let values =
                vec![value(Metric::HandshakesPerS, rate, 0.1), value(Metric::ContendedWaitsPerHandshake, waits, 0.0)];
            state.record(&SampleReport { values, ..report("OpenSSL 3.0.19 27 Jan 2026") }, None, None).unwrap();
        }
        state
    };
    let doc = document(fixture_info(), &[measured(None, 0.0), measured(Some(2), 0.25)]);
    let metrics: Vec<_> = doc.results.iter().map(|r| (r.metric.as_str(), r.key.threads, r.median)).collect();
    assert_eq!(
        metrics,
        [
            ("handshakes_per_s", None, Some(2000.0)),
            ("handshakes_per_s", Some(2), Some(2000.0)),
            ("handshakes_per_s_per_thread", None, Some(2000.0)),
            ("handshakes_per_s_per_thread", Some(2), Some(1000.0)),
            ("contended_waits_per_handshake", None, Some(0.0)),
            ("contended_waits_per_handshake", Some(2), Some(0.25)),
        ]
    );
    let waits = doc.results.iter().find(|r| r.metric == "contended_waits_per_handshake").unwrap();
    assert_eq!((waits.unit.as_str(), waits.better.as_str()), ("waits", "lower"));
    let table = crate::output::table::render(&doc);
    let (per_thread, contended) = (
        table.find("handshakes_per_s_per_thread").unwrap(),
        table.find("contended_waits_per_handshake (waits").unwrap(),
    );
    assert!(per_thread < contended, "{table}");
    // A run without threads: one pair has no one to wait for, and its document says nothing of it.
    let alone = document(fixture_info(), &[measured(None, 0.0)]);
    assert!(alone.results.iter().all(|r| r.metric == "handshakes_per_s"), "{:?}", alone.results);
}

#[test]
fn threads_with_their_own_configs_and_with_shared_ones_are_each_a_cell_with_its_efficiency() {
    // One thread, then two of each mode: their own configs scale perfectly, shared ones reach
    // 60% on the server.
    let measured = |threads, contexts, server_factor: f64| {
        let mut state = CellState::planned(Cell { threads, contexts, ..cell() });
        for server in [2000.0, 2020.0, 1980.0] {
            let value = MetricValue { side: Side::Server, metric: Metric::HandshakesPerS, value: 0.0, seconds: 0.1 };
            let values = vec![MetricValue { value: server * server_factor, ..value }];
            state.record(&SampleReport { values, ..report("OpenSSL 3.0.19 27 Jan 2026") }, None, None).unwrap();
        }
        state
    };
    let (own, shared) = (Some(Contexts::Own), Some(Contexts::Shared));
    let doc = document(
        fixture_info(),
        &[measured(None, None, 1.0), measured(Some(2), own, 2.0), measured(Some(2), shared, 1.2)],
    );
    let per_thread: Vec<_> = doc.results.iter().filter(|r| r.metric == "handshakes_per_s_per_thread").collect();
    let rows: Vec<_> = per_thread.iter().map(|r| (r.key.pair_label(), r.median, r.scaling_efficiency)).collect();
    assert_eq!(
        rows,
        [
            ("rustls-ring -> openssl".to_string(), Some(2000.0), None),
            ("rustls-ring -> openssl (2 threads, own contexts)".to_string(), Some(2000.0), Some(1.0)),
            ("rustls-ring -> openssl (2 threads, shared context)".to_string(), Some(1200.0), Some(0.6)),
        ]
    );
    // Each with its own interval, from its own samples and the one thread's.
    let [low, high] = per_thread[2].scaling_efficiency_ci.expect("an interval");
    assert!((low - 2376.0 / 4080.0).abs() < 1e-12 && (high - 2448.0 / 3960.0).abs() < 1e-12, "{low} {high}");
    let table = crate::output::table::render(&doc);
    assert!(table.contains("(60 ±"), "{table}");
    assert!(table.contains("(2 threads, shared context)"), "{table}");
}

#[test]
fn a_server_of_workers_gets_its_rate_per_worker_its_efficiency_and_how_busy_it_was() {
    // One worker: 500 connections/s at 1,200 µs of CPU each; two: 800/s at 1,250 µs.
    let measured = |threads, rate: f64, cpu_user: f64| {
        let mut state = CellState::planned(Cell { measure: Measure::Net, process: Process::Tcp, threads, ..cell() });
        for jitter in [1.0, 1.01, 0.99] {
            let value = |side, metric, value| MetricValue { side, metric, value, seconds: 1.0 };
            let values = [Side::Client, Side::Server].into_iter().flat_map(|side| {
                [
                    value(side, Metric::ConnectionsPerS, rate * jitter),
                    value(side, Metric::CpuUserUsPerConnection, cpu_user),
                    value(side, Metric::CpuSystemUsPerConnection, 200.0),
                ]
            });
            state
                .record(&SampleReport { values: values.collect(), ..report("OpenSSL 3.0.19 27 Jan 2026") }, None, None)
                .unwrap();
        }
        state
    };
    // The server's runner reports its workers' counts together: kept as they are.
    let tcp = Cell { process: Process::Tcp, threads: Some(2), ..cell() };
    assert_eq!(aggregate_threads(&tcp, report("x")).unwrap(), report("x"));

    let doc = document(fixture_info(), &[measured(None, 500.0, 1000.0), measured(Some(2), 800.0, 1050.0)]);
    let per_worker: Vec<&CellResult> =
        doc.results.iter().filter(|r| r.metric == "connections_per_s_per_worker").collect();
    // The server's only: the load generators' rate is the same connections seen from the client.
    assert!(per_worker.iter().all(|r| r.side == Side::Server), "{per_worker:?}");
    let two = per_worker.iter().find(|r| r.key.threads == Some(2)).expect("two workers' row");
    assert_eq!((two.median, two.scaling_efficiency), (Some(400.0), Some(0.8)));
    assert_eq!(two.key.pair_label(), "rustls-ring -> openssl (2 workers) [tcp]");
    assert!(doc.results.iter().all(|r| !r.metric.ends_with("_per_thread")));
    // Busy: 500/s × 1,200 µs = 60% of one worker; 800/s × 1,250 µs over two = 50%.
    let busy = crate::output::notes::workers_busy(&doc.results).expect("a run with workers says how busy they were");
    let expected = concat!(
        "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm: ",
        "rustls-ring -> openssl [tcp] 60%, rustls-ring -> openssl (2 workers) [tcp] 50%",
    );
    assert!(busy.contains(expected), "{busy}");
    assert!(
        crate::output::table::render(&doc).contains("400.0 ±1.0% (80 ±2%)"),
        "{}",
        crate::output::table::render(&doc)
    );
    // Without workers, no such line.
    assert_eq!(
        crate::output::notes::workers_busy(&document(fixture_info(), &[measured(None, 500.0, 1000.0)]).results),
        None
    );
}

#[test]
fn each_build_scales_against_its_own_one_thread_cell() {
    use crate::builds::Build;
    let measured = |build, threads, factor: f64| {
        let mut state = CellState::planned(Cell { build: Some(build), threads, ..cell() });
        for rate in [1000.0, 1010.0, 990.0] {
            let values = vec![MetricValue {
                side: Side::Server,
                metric: Metric::HandshakesPerS,
                value: rate * factor,
                seconds: 0.1,
            }];
            state
                .record(
                    &SampleReport { values, build: Some(build.name().into()), ..report("OpenSSL 3.0.19 27 Jan 2026") },
                    None,
                    None,
                )
                .unwrap();
        }
        state
    };
    // native's one thread is twice release's; each build's two threads scale perfectly.
    let cells = [
        measured(Build::Release, None, 1.0),
        measured(Build::Release, Some(2), 2.0),
        measured(Build::Native, None, 2.0),
        measured(Build::Native, Some(2), 4.0),
    ];
    let doc = document(fixture_info(), &cells);
    for build in ["release", "native"] {
        let per_thread = doc
            .results
            .iter()
            .find(|r| {
                r.metric == "handshakes_per_s_per_thread"
                    && r.key.threads == Some(2)
                    && r.key.build.as_deref() == Some(build)
            })
            .unwrap();
        assert_eq!(per_thread.scaling_efficiency, Some(1.0), "{build}");
    }
}

fn fixture_info() -> RunInfo {
    crate::results::fixture::document().run
}

#[test]
fn a_result_from_another_library_is_refused() {
    let mut state = CellState::planned(cell());
    // What rust-openssl reports when BoringSSL's symbols captured its calls.
    let (status, reason) = state.record(&report("BoringSSL"), None, None).unwrap_err();
    assert_eq!(status, Status::Failed);
    assert_eq!(reason, "stack `openssl` reported library `BoringSSL`, which is not its own; result refused");
    state.outcome = Err((status, reason));
    let results = state.results();
    assert!(results.iter().all(|r| r.status == Status::Failed && r.median.is_none() && r.samples.is_empty()));
    assert_eq!(state.missing(3), 0);
}

#[test]
fn a_warm_up_reads_each_side_s_rate_and_a_context_kind_s_measured_side_alone() {
    let handshakes = report("OpenSSL 3.0.19");
    assert_eq!(warm::rate(&handshakes, Side::Client), Some(1000.0));
    assert_eq!(warm::rate(&handshakes, Side::Server), Some(2000.0));
    // A context kind's warm-up follows its measured side's contexts per second (a warm-up with no
    // rate never becomes steady and runs to its bound).
    let context = |metric, value| MetricValue { side: Side::Server, metric, value, seconds: 0.1 };
    let contexts = SampleReport {
        values: vec![context(Metric::ContextsPerS, 900.0), context(Metric::CpuContextsPerS, 950.0)],
        ..handshakes
    };
    assert_eq!(warm::rate(&contexts, Side::Server), Some(900.0));
    assert_eq!(warm::rate(&contexts, Side::Client), None);
}
