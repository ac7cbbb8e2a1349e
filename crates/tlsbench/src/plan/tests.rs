//! The tests of plan/: scenario globs, each axis's cells and their support, process models,
//! and each cell's time limit.

use std::path::Path;
use std::time::Duration;

use tlsbench_harness::protocol::StackInfo;
use tlsbench_harness::{Capabilities, PeerLimit, Side, Version};

use super::*;
use crate::runners::Runner;

/// Runners as their `list` replies would describe them: each with its stacks.
fn runners(families: &[(&str, &[(&str, &Capabilities)])]) -> Runners {
    let runner = |(name, stacks): &(&str, &[(&str, &Capabilities)])| Runner {
        path: Path::new("/runners").join(name),
        stacks: stacks.iter().map(|(id, caps)| StackInfo::new(*id, "x", (*caps).clone())).collect(),
        build: None,
        full_speed: false,
    };
    Runners::new(families.iter().map(runner).collect(), Path::new("/runners"))
}

#[test]
fn globs_select_and_a_glob_matching_nothing_is_an_error() {
    let time = [Measure::Time];
    assert_eq!(select_scenarios(&[], &time).unwrap(), Scenario::defaults());
    let some =
        select_scenarios(&["transfer_1.3_*".into(), "handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".into()], &time)
            .unwrap();
    let names: Vec<String> = some.iter().map(Scenario::name).collect();
    // Three pinned transfers, one with each library's defaults, and the named handshake.
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(names.contains(&"transfer_1.3_default_ecdsa-p256_default".to_string()), "{names:?}");
    assert!(names.contains(&"handshake-full_1.2_x25519_rsa-2048_aes-128-gcm".to_string()));
    let err = select_scenarios(&["handshake_*".into()], &time).unwrap_err().to_string();
    assert!(err.starts_with("no scenario matches `handshake_*` (names are kind_version_group_key_suite"), "{err}");
    assert!(
        err.contains("kinds: handshake-full, handshake-resume-id, handshake-resume-ticket, transfer, io-profile,"),
        "{err}"
    );
    let err = select_scenarios(&["memory-1000_*".into()], &time).unwrap_err().to_string();
    let expected = concat!(
        "`memory-1000_*` selects memory-1000 scenarios, ",
        "which no measure of this run applies to (time: handshake-full,",
    );
    assert!(err.starts_with(expected), "{err}");
    assert!(err.contains("; rss: memory-100, memory-1000, memory-10000") && err.ends_with("; add --measure"), "{err}");
}

#[test]
fn a_stack_lacking_a_parameter_makes_its_cells_unsupported_with_the_reason() {
    let tls13_only = Capabilities { versions: vec![Version::Tls13], ..Capabilities::everything() };
    let infos =
        runners(&[("tlsbench-runner-a", &[("openssl", &Capabilities::everything()), ("rustls-ring", &tls13_only)])]);
    let scenarios =
        select_scenarios(&["handshake-full_1.?_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
    assert_eq!(scenarios.len(), 2);
    let pairs = [("openssl".to_string(), "openssl".to_string()), ("openssl".to_string(), "rustls-ring".to_string())];
    let cells = cells(
        &pairs,
        &scenarios,
        &[Measure::Time],
        &infos,
        ProcessChoice::Auto,
        &[None],
        &[(None, None)],
        &[(None, None)],
    );
    let unsupported: Vec<_> = cells.iter().filter_map(|c| c.support.clone().err()).collect();
    assert_eq!(unsupported, vec!["rustls-ring: TLS 1.2 not supported".to_string()]);
    assert!(cells.iter().all(|c| c.process == Process::InProcess));
}

#[test]
fn each_allocator_is_a_cell_of_the_stacks_whose_runner_can_switch_to_it() {
    let interposed = Capabilities { allocators: Allocator::ALL.to_vec(), ..Capabilities::everything() };
    let (runtime, all) = (Capabilities::everything(), Capabilities::everything());
    let infos = runners(&[
        ("tlsbench-runner-a", &[("openssl", &interposed)]),
        ("tlsbench-runner-go", &[("go", &runtime)]),
        ("tlsbench-runner-b", &[("bertie", &all)]),
    ]);
    let scenarios =
        select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
    let pairs = [
        ("openssl".to_string(), "openssl".to_string()),
        ("go".to_string(), "go".to_string()),
        ("openssl".to_string(), "go".to_string()),
    ];
    // glibc alone is the default: no axis, no label, every stack as before.
    assert_eq!(allocator_axis(&[]), [None]);
    assert_eq!(allocator_axis(&[Allocator::Glibc, Allocator::Glibc]), [None]);
    let plain = cells(
        &pairs,
        &scenarios,
        &[Measure::Time],
        &infos,
        ProcessChoice::Auto,
        &allocator_axis(&[]),
        &[(None, None)],
        &[(None, None)],
    );
    assert!(plain.iter().all(|c| c.allocator.is_none() && c.support.is_ok()));

    let axis = allocator_axis(&[Allocator::Jemalloc, Allocator::Glibc, Allocator::Jemalloc]);
    assert_eq!(axis, [Some(Allocator::Jemalloc), Some(Allocator::Glibc)]);
    let planned = cells(
        &pairs,
        &scenarios,
        &[Measure::Time],
        &infos,
        ProcessChoice::Auto,
        &axis,
        &[(None, None)],
        &[(None, None)],
    );
    let support = |client: &str, server: &str, allocator| {
        planned
            .iter()
            .find(|c| c.client == client && c.server == server && c.allocator == Some(allocator))
            .expect("planned")
            .support
            .clone()
    };
    for allocator in [Allocator::Jemalloc, Allocator::Glibc] {
        assert_eq!(support("openssl", "openssl", allocator), Ok(()));
        let runtime =
            "go: allocates through its language's runtime, not through tlsbench's malloc, so it takes no part in the \
                       allocator axis (--allocator)";
        assert_eq!(support("go", "go", allocator), Err(runtime.into()));
        // Split across runners: each side's runner must switch.
        assert_eq!(support("openssl", "go", allocator), Err(runtime.into()));
    }
    assert_eq!(planned.len(), pairs.len() * axis.len());
    // A runner that declares some allocators and not this one.
    let glibc_only = Capabilities { allocators: vec![Allocator::Glibc], ..Capabilities::everything() };
    assert_eq!(
        check_allocator("x", &glibc_only, Some(Allocator::Mimalloc), Process::InProcess),
        Err("x: its runner cannot switch its malloc to mimalloc".into())
    );
    assert!(check_allocator("x", &interposed, Some(Allocator::Mimalloc), Process::Tcp)
        .unwrap_err()
        .contains("--transport tcp"));
    assert_eq!(check_allocator("x", &interposed, Some(Allocator::Glibc), Process::Tcp), Ok(()));
}

#[test]
fn thread_counts_are_time_cells_of_the_stacks_whose_runner_takes_threads() {
    // One thread is always in the axis: efficiency is against it, in the same run.
    assert_eq!(thread_axis(&[], None), [(None, None)]);
    assert_eq!(thread_axis(&[1], None), [(None, None)]);
    assert_eq!(thread_axis(&[4, 2, 1, 2], None), [(None, None), (Some(2), None), (Some(4), None)]);
    // What the threads share: each mode of each count; one thread has its own configs.
    let (own, shared) = (Some(Contexts::Own), Some(Contexts::Shared));
    assert_eq!(thread_axis(&[2], Some(ContextsChoice::Shared)), [(None, None), (Some(2), shared)]);
    assert_eq!(
        thread_axis(&[4, 2], Some(ContextsChoice::Both)),
        [(None, None), (Some(2), own), (Some(2), shared), (Some(4), own), (Some(4), shared)]
    );

    let threads = Capabilities { threads: true, shared_contexts: true, ..Capabilities::everything() };
    let before_contexts = Capabilities { threads: true, ..Capabilities::everything() };
    let runtime = Capabilities::everything();
    let infos = runners(&[
        ("tlsbench-runner-a", &[("openssl", &threads), ("rustls-ring", &threads)]),
        ("tlsbench-runner-go", &[("go", &runtime)]),
        ("tlsbench-runner-old", &[("gnutls", &before_contexts)]),
    ]);
    let scenarios =
        select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time, Measure::Heap])
            .unwrap();
    let pairs = [
        ("openssl".to_string(), "openssl".to_string()),
        ("go".to_string(), "go".to_string()),
        ("openssl".to_string(), "go".to_string()),
        ("gnutls".to_string(), "gnutls".to_string()),
    ];
    let planned = cells(
        &pairs,
        &scenarios,
        &[Measure::Time, Measure::Heap],
        &infos,
        ProcessChoice::Both,
        &[None],
        &thread_axis(&[2], Some(ContextsChoice::Both)),
        &[(None, None)],
    );
    let support = |client: &str, server: &str, process, threads, contexts| {
        let found = planned.iter().find(|c| {
            (&c.client[..], &c.server[..], c.process, c.threads, c.contexts, c.measure)
                == (client, server, process, threads, contexts, Measure::Time)
        });
        found.expect("planned").support.clone()
    };
    assert_eq!(support("openssl", "openssl", Process::InProcess, None, None), Ok(()));
    assert_eq!(support("openssl", "openssl", Process::InProcess, Some(2), own), Ok(()));
    assert_eq!(support("openssl", "openssl", Process::InProcess, Some(2), shared), Ok(()));
    assert_eq!(
        support("openssl", "openssl", Process::Split, Some(2), shared),
        Err(concat!(
            "--threads runs 2 pairs inside one runner, so it applies to in-process cells; ",
            "a split-process pair runs one side per process",
        )
        .into())
    );
    assert_eq!(support("go", "go", Process::Split, None, None), Ok(()));
    assert!(support("go", "go", Process::Split, Some(2), own).unwrap_err().contains("in-process cells"));
    assert!(check_threads("go", &runtime, (Some(2), None), Process::InProcess)
        .unwrap_err()
        .starts_with("go: its runner measures one pair per sample"));
    // A runner from before --contexts takes threads, but not the flag: its threads' cells of
    // either mode are n/a where the run chose the mode, and measured as before where it did not.
    assert_eq!(support("gnutls", "gnutls", Process::InProcess, None, None), Ok(()));
    for contexts in [own, shared] {
        assert_eq!(
            support("gnutls", "gnutls", Process::InProcess, Some(2), contexts),
            Err("gnutls: its runner gives each thread its own configs and takes no `sample --contexts` (built \
                 before the option: rebuild it), so it takes no part in --contexts"
                .into())
        );
    }
    assert_eq!(check_threads("gnutls", &before_contexts, (Some(2), None), Process::InProcess), Ok(()));
    // Over TCP, threads are the server's workers: every runner serves with several.
    assert_eq!(check_threads("go", &runtime, (Some(2), None), Process::Tcp), Ok(()));
    // Heap is taken with one pair: no thread variants.
    assert!(planned.iter().filter(|c| c.measure == Measure::Heap).all(|c| c.threads.is_none() && c.contexts.is_none()));
    assert_eq!(planned.iter().filter(|c| c.measure == Measure::Heap).count(), pairs.len());
}

#[test]
fn each_build_is_a_cell_and_a_runtime_stack_is_n_a_outside_release() {
    let all = Capabilities::everything();
    let mut infos = runners(&[("tlsbench-runner-a", &[("openssl", &all)]), ("tlsbench-runner-go", &[("go", &all)])]);
    // The Rust runner says its build; Go's says none.
    let built = Runner {
        path: Path::new("/runners/tlsbench-runner-a").into(),
        stacks: infos.info("openssl").into_iter().cloned().collect(),
        build: Some(tlsbench_harness::build::BuildInfo {
            name: "release".into(),
            profile: "release".into(),
            opt_level: "3".into(),
            rustflags: String::new(),
            cflags: String::new(),
            cxxflags: String::new(),
            c_compiler: "gcc 12.2.0".into(),
        }),
        full_speed: true,
    };
    let go = infos.all().iter().find(|r| r.path.ends_with("tlsbench-runner-go")).unwrap().clone();
    infos = Runners::new(vec![built, go], Path::new("/runners"));
    let scenarios =
        select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
    let pairs = [("openssl".to_string(), "openssl".to_string()), ("go".to_string(), "go".to_string())];
    assert_eq!(build_axis(&[], &[]), [(None, None)]);
    assert_eq!(build_axis(&[Build::Release], &[Compiler::Gcc]), [(None, None)]);
    let axis = build_axis(&[Build::Release, Build::Native, Build::Release], &[]);
    assert_eq!(axis, [(Some(Build::Release), None), (Some(Build::Native), None)]);
    let planned =
        cells(&pairs, &scenarios, &[Measure::Time], &infos, ProcessChoice::Auto, &[None], &[(None, None)], &axis);
    assert_eq!(planned.len(), pairs.len() * axis.len());
    let support = |id: &str, build| {
        planned.iter().find(|c| c.client == id && c.build == Some(build)).expect("planned").support.clone()
    };
    assert_eq!(support("openssl", Build::Release), Ok(()));
    assert_eq!(support("openssl", Build::Native), Ok(()));
    assert_eq!(support("go", Build::Release), Ok(()));
    let reason = support("go", Build::Native).unwrap_err();
    assert!(reason.starts_with("go: its runner (tlsbench-runner-go) is built by its own toolchain"), "{reason}");

    // The C compiler is an axis of its own: each build with each compiler, clang's runners
    // holding the Rust stacks only.
    let axis = build_axis(&[Build::Native], &[Compiler::Gcc, Compiler::Clang]);
    assert_eq!(axis, [(Some(Build::Native), Some(Compiler::Gcc)), (Some(Build::Native), Some(Compiler::Clang))]);
    assert_eq!(build_axis(&[], &[Compiler::Clang]), [(None, Some(Compiler::Clang))]);
    let axis = build_axis(&[], &[Compiler::Gcc, Compiler::Clang]);
    let planned =
        cells(&pairs, &scenarios, &[Measure::Time], &infos, ProcessChoice::Auto, &[None], &[(None, None)], &axis);
    assert_eq!(planned.len(), pairs.len() * 2);
    let support = |id: &str, compiler| {
        let found = planned.iter().find(|c| c.client == id && c.compiler == Some(compiler));
        found.expect("planned").support.clone()
    };
    assert_eq!(support("openssl", Compiler::Clang), Ok(()));
    assert_eq!(support("go", Compiler::Gcc), Ok(()));
    let reason = support("go", Compiler::Clang).unwrap_err();
    assert!(reason.contains("which `--compiler clang` does not reach"), "{reason}");
    let clang = planned.iter().find(|c| c.client == "openssl" && c.compiler == Some(Compiler::Clang)).unwrap();
    assert_eq!(clang.key().compiler.as_deref(), Some("clang"));
    assert_eq!(Cell::from_key(&clang.key()).unwrap().built(), Built::new(Build::Release, Compiler::Clang));
}

#[test]
fn both_process_models_give_each_pair_twice_where_it_can_share_a_process() {
    let all = Capabilities::everything();
    let infos = runners(&[("tlsbench-runner-a", &[("openssl", &all), ("rustls-ring", &all)])]);
    let scenarios =
        select_scenarios(&["handshake-full_1.3_x25519_rsa-2048_aes-128-gcm".into()], &[Measure::Time]).unwrap();
    let pairs = [("openssl".to_string(), "rustls-ring".to_string())];
    let processes = |choice| {
        cells(&pairs, &scenarios, &[Measure::Time], &infos, choice, &[None], &[(None, None)], &[(None, None)])
            .iter()
            .map(|c| c.process)
            .collect::<Vec<_>>()
    };
    assert_eq!(processes(ProcessChoice::Auto), [Process::InProcess]);
    assert_eq!(processes(ProcessChoice::Split), [Process::Split]);
    assert_eq!(processes(ProcessChoice::Both), [Process::InProcess, Process::Split]);
}

#[test]
fn each_measure_gets_the_scenarios_it_applies_to_in_its_own_process_model() {
    let all = Capabilities::everything();
    let infos = runners(&[("tlsbench-runner-a", &[("openssl", &all)]), ("tlsbench-runner-b", &[("boringssl", &all)])]);
    let measures = [Measure::Time, Measure::Io, Measure::Heap, Measure::Rss];
    let globs = ["*_1.3_x25519_ecdsa-p256_aes-128-gcm".to_string()];
    let scenarios = select_scenarios(&globs, &measures).unwrap();
    let pairs = [("openssl".to_string(), "openssl".to_string()), ("openssl".to_string(), "boringssl".to_string())];
    let cells =
        cells(&pairs, &scenarios, &measures, &infos, ProcessChoice::Both, &[None], &[(None, None)], &[(None, None)]);
    let planned = |measure: Measure| {
        let mut kinds: Vec<&str> =
            cells.iter().filter(|c| c.measure == measure).map(|c| c.scenario.kind.name()).collect();
        kinds.dedup();
        kinds
    };
    assert_eq!(planned(Measure::Io), ["handshake-full", "handshake-resume-ticket", "io-profile"]);
    assert!(planned(Measure::Rss).starts_with(&["memory-100", "memory-1000", "memory-10000"]));
    // A process has one peak: memory-N's sides in one process each, a context in one of its own.
    for cell in cells.iter().filter(|c| c.measure == Measure::Rss) {
        match cell.scenario.kind.context_side() {
            None => assert_eq!(cell.process, Process::Split, "{}", cell.scenario),
            Some(_) => assert_eq!((cell.process, &cell.server[..]), (Process::InProcess, "openssl"), "{cell:?}"),
        }
    }
    assert!(cells.iter().any(|c| c.measure == Measure::Rss && c.scenario.kind == Kind::ContextClientSystem));
    let heap_across_families: Vec<_> = cells
        .iter()
        .filter(|c| c.measure == Measure::Heap && c.server == "boringssl")
        .map(|c| c.support.clone())
        .collect();
    assert!(!heap_across_families.is_empty());
    assert!(heap_across_families.iter().all(|s| s
        == &Err(
            "measure heap is taken with both sides in one process, and no runner holds both openssl and boringssl"
                .into()
        )));
}

#[test]
fn the_net_measure_takes_handshakes_over_tcp_whatever_the_process_choice() {
    let all = Capabilities::everything();
    let infos = runners(&[("tlsbench-runner-a", &[("openssl", &all)]), ("tlsbench-runner-b", &[("boringssl", &all)])]);
    let scenarios = select_scenarios(&["*_1.3_x25519_ecdsa-p256_aes-128-gcm".to_string()], &[Measure::Net]).unwrap();
    assert!(
        !scenarios.is_empty()
            && scenarios
                .iter()
                .all(|s| matches!(s.kind, Kind::HandshakeFull | Kind::HandshakeResumeId | Kind::HandshakeResumeTicket)),
        "{scenarios:?}"
    );
    let pairs = [("openssl".to_string(), "boringssl".to_string())];
    for choice in [ProcessChoice::Auto, ProcessChoice::Both] {
        let cells =
            cells(&pairs, &scenarios, &[Measure::Net], &infos, choice, &[None], &[(None, None)], &[(None, None)]);
        // Across link families too: each side is its own runner.
        assert!(cells.iter().all(|c| c.process == Process::Tcp && c.support.is_ok()));
    }
}

#[test]
fn a_cell_is_given_time_in_proportion_to_its_planned_work_on_top_of_the_timeout() {
    let timeout = Duration::from_secs(120);
    let (min_time, warmup) = (Duration::from_millis(100), Duration::from_millis(50));
    let cell = |measure: Measure, scenario: &str| Cell {
        client: "openssl".into(),
        server: "openssl".into(),
        scenario: scenario.parse().unwrap(),
        measure,
        process: Process::InProcess,
        allocator: None,
        threads: None,
        contexts: None,
        build: None,
        compiler: None,
        support: Ok(()),
    };
    let memory = |n: usize, key: &str| cell(Measure::Heap, &format!("memory-{n}_1.3_x25519_{key}_aes-128-gcm"));
    let budget = |c: &Cell| c.time_limit(timeout, min_time, warmup) - timeout;

    // 10,000 RSA-4096 connections get more time than 100 ECDSA ones, and the same time on
    // top of any --timeout: the user's limit still applies.
    let (big, small) = (memory(10_000, "rsa-4096"), memory(100, "ecdsa-p256"));
    assert!(big.time_limit(timeout, min_time, warmup) > small.time_limit(timeout, min_time, warmup));
    for user in [Duration::from_secs(1), Duration::from_secs(600)] {
        assert_eq!(big.time_limit(user, min_time, warmup) - user, budget(&big));
    }
    // In proportion to the connections, and growing with the key's cost.
    for key in ["ecdsa-p256", "ed25519", "ecdsa-p384", "rsa-2048", "rsa-3072", "rsa-4096"] {
        assert_eq!(budget(&memory(10_000, key)), budget(&memory(1_000, key)) * 10, "{key}");
        assert_eq!(budget(&memory(1_000, key)), budget(&memory(100, key)) * 10, "{key}");
        let rss = Cell { measure: Measure::Rss, process: Process::Split, ..memory(1_000, key) };
        assert_eq!(budget(&rss), budget(&memory(1_000, key)), "the same connections, one process per side");
    }
    let costs: Vec<Duration> =
        ["ecdsa-p256", "rsa-2048", "rsa-3072", "rsa-4096"].map(|k| budget(&memory(100, k))).into();
    assert!(costs.windows(2).all(|w| w[0] < w[1]), "{costs:?}");

    // A time sample is given more than both sides' measured time and warmup, and more when
    // they are longer; a one-connection io sample, the --timeout alone.
    let handshakes = cell(Measure::Time, "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
    let long = Duration::from_secs(5);
    assert!(handshakes.time_limit(timeout, long, warmup) > timeout + (long + warmup) * 2);
    assert!(handshakes.time_limit(timeout, long, warmup) > handshakes.time_limit(timeout, min_time, warmup));
    let io = cell(Measure::Io, "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
    assert_eq!(io.time_limit(timeout, long, warmup), timeout);
}

#[test]
fn a_server_that_only_its_own_client_can_complete_makes_its_other_pairs_unsupported_with_the_reason() {
    let reason = "bertie: its server sends the leaf certificate without the intermediate";
    let limit = PeerLimit { side: Side::Server, only: vec!["bertie".into()], reason: reason.into() };
    let bertie =
        Capabilities { versions: vec![Version::Tls13], peer_limits: vec![limit], ..Capabilities::everything() };
    let all = Capabilities::everything();
    let infos = runners(&[("tlsbench-runner-a", &[("openssl", &all), ("bertie", &bertie)])]);
    let scenarios =
        select_scenarios(&["handshake-full_1.?_x25519_ecdsa-p256_aes-128-gcm".into()], &[Measure::Time]).unwrap();
    let ids = ["openssl", "bertie"];
    let pairs: Vec<(String, String)> = ids.iter().flat_map(|c| ids.map(|s| (c.to_string(), s.to_string()))).collect();
    let support = |client: &str, server: &str, version: &str| {
        let cells = cells(
            &pairs,
            &scenarios,
            &[Measure::Time],
            &infos,
            ProcessChoice::Auto,
            &[None],
            &[(None, None)],
            &[(None, None)],
        );
        let cell = cells
            .into_iter()
            .find(|c| c.client == client && c.server == server && c.scenario.version.to_string() == version);
        cell.expect("planned").support
    };
    assert_eq!(support("openssl", "bertie", "1.3"), Err(reason.into()));
    assert_eq!(support("bertie", "bertie", "1.3"), Ok(()));
    assert_eq!(support("bertie", "openssl", "1.3"), Ok(()), "a limit of bertie's server, not its client");
    // A scenario the stack cannot do at all names that reason, not the peer's.
    assert_eq!(support("openssl", "bertie", "1.2"), Err("bertie: TLS 1.2 not supported".into()));
}
