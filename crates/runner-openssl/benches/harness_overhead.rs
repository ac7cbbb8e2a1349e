//! How much the harness adds to what it measures: tlsbench's driver against a bare loop of the
//! same rustls calls (plain `Vec<u8>` buffers, no traits, no gates), in one run, interleaved.
//!
//!     cargo bench -p tlsbench-runner-openssl --bench harness_overhead [-- ROUNDS]
//!
//! Both use the same configs (built by the adapter, outside any clock) and time the same
//! regions: each side's connection setup, handshake steps and drop; the server's writes and
//! the client's reads of 16 KiB records. The harness runs with its CPU figure on and off, so
//! that what the CPU figure costs the wall figure shows as their ratio.

use std::io::{ErrorKind, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};
use rustls_pki_types::ServerName;
use tlsbench_harness::driver::{self, SampleSpec, TRANSFER_MIN_BYTES, TRANSFER_WRITE_SIZE};
use tlsbench_harness::pki::{default_data_dir, SERVER_NAME};
use tlsbench_harness::{cpu_time, KeyType, Kind, Pki, Scenario, Side, Stack};
use tlsbench_stack_rustls::Rustls;

const MIN_TIME: Duration = Duration::from_millis(200);
const WARMUP: Duration = Duration::from_millis(50);

fn main() {
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10);
    let pki = Pki::load_or_generate(&default_data_dir(), &[KeyType::EcdsaP256]).expect("certificates");
    let stack = Rustls::aws_lc_rs();
    let handshake: Scenario = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap();
    let transfer: Scenario = "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm".parse().unwrap();
    let configs = |s: &Scenario| (stack.client_config(s, &pki).unwrap(), stack.server_config(s, &pki).unwrap());
    let spec = SampleSpec::timed(WARMUP, MIN_TIME);
    // One harness sample with the CPU figure on or off: (the side's wall rate, its CPU rate).
    let harness = |s: &Scenario, side: Side, cpu: bool| {
        cpu_time::set_enabled(cpu);
        let report = driver::sample(&stack, &stack, s, &pki, &spec).expect("harness sample");
        let rates: Vec<f64> = report.values.iter().filter(|v| v.side == side).map(|v| v.value).collect();
        (rates[0], rates.get(1).copied())
    };

    // Per scenario: wall rates with the CPU figure on, off, the bare loop's; and CPU / wall.
    let mut rows: [[Vec<f64>; 4]; 2] = Default::default();
    let record = |row: &mut [Vec<f64>; 4], cpu_on: (f64, Option<f64>), cpu_off: (f64, Option<f64>), bare: f64| {
        row[0].push(cpu_on.0);
        row[1].push(cpu_off.0);
        row[2].push(bare);
        row[3].push(cpu_on.0 / cpu_on.1.expect("a CPU figure with the clock on"));
    };
    for round in 0..rounds {
        // Rotate which goes first so that none always gets the warmer machine.
        let order = [round % 3, (round + 1) % 3, (round + 2) % 3];
        for (row, (scenario, side)) in rows.iter_mut().zip([(&handshake, Side::Server), (&transfer, Side::Client)]) {
            let (mut on, mut off, mut bare) = ((0.0, None), (0.0, None), 0.0);
            for arm in order {
                match arm {
                    0 => on = harness(scenario, side, true),
                    1 => off = harness(scenario, side, false),
                    _ => {
                        let (cc, sc) = configs(scenario);
                        bare = match scenario.kind {
                            Kind::Transfer => bare_transfer(&cc, &sc),
                            _ => bare_handshakes(&cc, &sc),
                        };
                    }
                }
            }
            record(row, on, off, bare);
        }
        eprintln!("round {}/{rounds}", round + 1);
    }

    println!(
        "rustls-aws-lc-rs, {rounds} interleaved samples each, {} ms of measured time per side and sample",
        MIN_TIME.as_millis()
    );
    println!(
        "{:<46} {:>6} {:>11} {:>11} {:>11} {:>7} {:>7} {:>8}",
        "scenario", "side", "cpu on", "cpu off", "bare loop", "on/off", "on/bare", "wall/cpu"
    );
    for (row, (scenario, side, unit)) in
        rows.iter_mut().zip([(&handshake, "server", "handshakes/s"), (&transfer, "client", "MB/s recv")])
    {
        let [on, off, bare, wall_per_cpu] = row.each_mut().map(|v| median(v));
        println!(
            "{:<46} {side:>6} {on:>11.1} {off:>11.1} {bare:>11.1} {:>7.3} {:>7.3} {wall_per_cpu:>8.3}",
            scenario.name(),
            on / off,
            on / bare,
        );
        println!("{:<46} ({unit}, medians; wall/cpu is the wall rate over the CPU rate, at most 1)", "");
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}

fn name() -> ServerName<'static> {
    ServerName::try_from(SERVER_NAME).unwrap()
}

/// Full handshakes until both sides' clocks reach MIN_TIME (after WARMUP); the server's rate.
fn bare_handshakes(cc: &Arc<ClientConfig>, sc: &Arc<ServerConfig>) -> f64 {
    let (mut to_server, mut to_client) = (Vec::new(), Vec::new());
    let mut one = |clocks: &mut [Duration; 2]| {
        let t = Instant::now();
        let mut client = ClientConnection::new(cc.clone(), name()).unwrap();
        clocks[0] += t.elapsed();
        let t = Instant::now();
        let mut server = ServerConnection::new(sc.clone()).unwrap();
        clocks[1] += t.elapsed();
        while client.is_handshaking() || server.is_handshaking() {
            let t = Instant::now();
            let mut input = &to_client[..];
            while !input.is_empty() {
                client.read_tls(&mut input).unwrap();
                client.process_new_packets().unwrap();
            }
            while client.wants_write() {
                client.write_tls(&mut to_server).unwrap();
            }
            clocks[0] += t.elapsed();
            to_client.clear();

            let t = Instant::now();
            let mut input = &to_server[..];
            while !input.is_empty() {
                server.read_tls(&mut input).unwrap();
                server.process_new_packets().unwrap();
            }
            while server.wants_write() {
                server.write_tls(&mut to_client).unwrap();
            }
            clocks[1] += t.elapsed();
            to_server.clear();
        }
        let t = Instant::now();
        drop(client);
        clocks[0] += t.elapsed();
        let t = Instant::now();
        drop(server);
        clocks[1] += t.elapsed();
        to_client.clear();
    };
    let warmup_end = Instant::now() + WARMUP;
    while Instant::now() < warmup_end {
        one(&mut [Duration::ZERO; 2]);
    }
    let mut clocks = [Duration::ZERO; 2];
    let mut handshakes = 0u64;
    while clocks[0] < MIN_TIME || clocks[1] < MIN_TIME {
        one(&mut clocks);
        handshakes += 1;
    }
    handshakes as f64 / clocks[1].as_secs_f64()
}

/// 16 KiB writes from the server, each read by the client; the client's MB/s.
fn bare_transfer(cc: &Arc<ClientConfig>, sc: &Arc<ServerConfig>) -> f64 {
    let mut client = ClientConnection::new(cc.clone(), name()).unwrap();
    let mut server = ServerConnection::new(sc.clone()).unwrap();
    let (mut to_server, mut to_client) = (Vec::new(), Vec::new());
    while client.is_handshaking() || server.is_handshaking() {
        client.read_tls(&mut &to_client[..]).unwrap();
        client.process_new_packets().unwrap();
        to_client.clear();
        client.write_tls(&mut to_server).unwrap();
        server.read_tls(&mut &to_server[..]).unwrap();
        server.process_new_packets().unwrap();
        to_server.clear();
        server.write_tls(&mut to_client).unwrap();
    }
    let mut payload = vec![0u8; 1 << 20];
    fastrand_fill(&mut payload);
    let mut inbox = vec![0u8; TRANSFER_WRITE_SIZE];
    let mut offset = 0;
    let mut one = |clocks: &mut [Duration; 2]| {
        let data = &payload[offset..offset + TRANSFER_WRITE_SIZE];
        offset = (offset + TRANSFER_WRITE_SIZE) % payload.len();
        let t = Instant::now();
        server.writer().write_all(data).unwrap();
        while server.wants_write() {
            server.write_tls(&mut to_client).unwrap();
        }
        clocks[1] += t.elapsed();

        let t = Instant::now();
        let mut input = &to_client[..];
        while !input.is_empty() {
            client.read_tls(&mut input).unwrap();
            client.process_new_packets().unwrap();
        }
        let mut filled = 0;
        while filled < inbox.len() {
            match client.reader().read(&mut inbox[filled..]) {
                Ok(n) => filled += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("{e}"),
            }
        }
        clocks[0] += t.elapsed();
        to_client.clear();
        assert_eq!(filled, TRANSFER_WRITE_SIZE);
    };
    let warmup_end = Instant::now() + WARMUP;
    while Instant::now() < warmup_end {
        one(&mut [Duration::ZERO; 2]);
    }
    let mut clocks = [Duration::ZERO; 2];
    let mut writes = 0u64;
    while writes * (TRANSFER_WRITE_SIZE as u64) < TRANSFER_MIN_BYTES || clocks[0] < MIN_TIME || clocks[1] < MIN_TIME {
        one(&mut clocks);
        writes += 1;
    }
    (writes * TRANSFER_WRITE_SIZE as u64) as f64 / 1e6 / clocks[0].as_secs_f64()
}

/// Random-looking payload without pulling another crate into the bench.
fn fastrand_fill(buf: &mut [u8]) {
    let mut x = 0x7152_be4c_u64;
    for b in buf {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
}
