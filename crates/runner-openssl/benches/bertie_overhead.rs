//! How far tlsbench's Bertie figures are from Bertie's own: tlsbench's driver and adapter against
//! a bare loop of Bertie's API (plain `Vec<u8>` wires, no traits, no gates), in one run,
//! interleaved, as `harness_overhead` does for rustls.
//!
//!     cargo bench -p tlsbench-runner-openssl --bench bertie_overhead [-- ROUNDS] [SUITE]
//!
//! SUITE is aes-128-gcm (the default), aes-256-gcm or chacha20-poly1305.
//!
//! Both use the same configs (the adapter's, built outside any clock) and time the same regions:
//! each side's calls into Bertie, what it takes to put Bertie's records on a wire and to take
//! them off it (Bertie hands out and takes its own `Bytes`), and the drop of each side's state;
//! in transfer, the server's 16 KiB writes and the client's reads, from plaintext to plaintext.
//!
//! A third column times only what Bertie's own benchmark times (benches/client.rs and
//! benches/server.rs in Bertie's repository): the handshake calls alone, each side's records
//! handed to the other as the `Bytes` Bertie returned, and no drops; in transfer, the `write`
//! call alone (its "Application" figure of the client) and the `read` call alone (that of the
//! server), with "MB/s" in MiB/s as Bertie's benchmark counts them.
//!
//! Last, what libcrux's AEAD costs alone here, for the part of the gap to Bertie's published
//! figures that is neither tlsbench's nor the adapter's: libcrux 0.0.2-pre.2 checks the CPU's
//! features (`EverCrypt_AutoConfig2_init`, 11 CPUID instructions) on every AES-GCM call, and a
//! CPUID in a virtual machine is a trap to the hypervisor.

use std::time::{Duration, Instant};

use bertie::tls13utils::{AppData, Bytes};
use bertie::{Client, Server};
use tlsbench_harness::driver::{self, SampleSpec, TRANSFER_MIN_BYTES, TRANSFER_WRITE_SIZE};
use tlsbench_harness::pki::{default_data_dir, SERVER_NAME};
use tlsbench_harness::{KeyType, Pki, Scenario, Side, Stack, Suite};
use tlsbench_stack_bertie::{Bertie, ClientConfig, ServerConfig};

const MIN_TIME: Duration = Duration::from_millis(200);
const WARMUP: Duration = Duration::from_millis(50);
const MIB: f64 = (1 << 20) as f64;

/// One side's clocks in the bare loop: everything tlsbench times, and Bertie's calls alone.
#[derive(Clone, Copy, Default)]
struct Clocks {
    all: Duration,
    calls: Duration,
}

impl Clocks {
    /// Runs `f` as a call into Bertie: on both clocks.
    fn call<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        let spent = t.elapsed();
        self.all += spent;
        self.calls += spent;
        out
    }

    /// Runs `f` as the work around Bertie's calls (wire conversions, drops): on the first clock.
    fn around<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.all += t.elapsed();
        out
    }
}

/// Per side (client, server): tlsbench's figure, the bare loop's, and the bare loop's with
/// Bertie's own timed regions.
type Row = [Vec<f64>; 3];

fn main() {
    let rounds: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10);
    let suite: Suite = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(Suite::Aes128Gcm);
    let pki = Pki::load_or_generate(&default_data_dir(), &[KeyType::EcdsaP256]).expect("certificates");
    let handshake: Scenario = format!("handshake-full_1.3_x25519_ecdsa-p256_{suite}").parse().expect("a valid name");
    let transfer: Scenario = format!("transfer_1.3_x25519_ecdsa-p256_{suite}").parse().expect("a valid name");
    let configs = |s: &Scenario| {
        (Bertie.client_config(s, &pki).expect("client config"), Bertie.server_config(s, &pki).expect("server config"))
    };
    let spec = SampleSpec::timed(WARMUP, MIN_TIME);
    let harness_values = |s: &Scenario| {
        let report = driver::sample(&Bertie, &Bertie, s, &pki, &spec).unwrap_or_else(|e| panic!("{s}: {e}"));
        let side = |side| report.values.iter().find(|v| v.side == side).expect("a value per side").value;
        [side(Side::Client), side(Side::Server)]
    };

    // Rows: handshake client, handshake server, transfer client (receive), transfer server (send).
    let mut rows: [Row; 4] = Default::default();
    for round in 0..rounds {
        // Alternate which goes first so that neither always gets the warmer machine.
        for harness_first in [round % 2 == 0, round % 2 == 1] {
            if harness_first {
                let [c, s] = harness_values(&handshake);
                rows[0][0].push(c);
                rows[1][0].push(s);
                let [c, s] = harness_values(&transfer);
                rows[2][0].push(c);
                rows[3][0].push(s);
            } else {
                let (cc, sc) = configs(&handshake);
                let [client, server] = bare_handshakes(&cc, &sc);
                push(&mut rows[0], client, 1.0, 1.0);
                push(&mut rows[1], server, 1.0, 1.0);
                let (cc, sc) = configs(&transfer);
                let [client, server] = bare_transfer(&cc, &sc);
                let write = TRANSFER_WRITE_SIZE as f64;
                push(&mut rows[2], client, write / 1e6, write / MIB);
                push(&mut rows[3], server, write / 1e6, write / MIB);
            }
        }
        eprintln!("round {}/{rounds}", round + 1);
    }

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{}, {rounds} interleaved samples each, {} ms of measured time per side and sample",
        Bertie.library(),
        MIN_TIME.as_millis()
    );
    println!(
        "libcrux at run time: AES-NI {}, AVX2 {}, BMI2+ADX {}; load average {}",
        libcrux_platform::aes_ni_support(),
        libcrux_platform::simd256_support(),
        libcrux_platform::bmi2_adx_support(),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!(
        "{:<52} {:>6} {:>10} {:>10} {:>7} {:>14}",
        "scenario", "side", "tlsbench", "bare loop", "ratio", "Bertie's regions"
    );
    let labels = [
        (&handshake, "client", "handshakes/s", "handshakes/s"),
        (&handshake, "server", "handshakes/s", "handshakes/s"),
        (&transfer, "client", "MB/s recv", "MiB/s, read() alone"),
        (&transfer, "server", "MB/s send", "MiB/s, write() alone"),
    ];
    for (row, (scenario, side, unit, own_unit)) in rows.iter_mut().zip(labels) {
        let [harness, bare, own] = row.each_mut().map(|values| median(values));
        println!(
            "{:<52} {:>6} {:>10.1} {:>10.1} {:>7.3} {:>14.1}   ({unit}, medians; last column {own_unit})",
            scenario.name(),
            side,
            harness,
            bare,
            harness / bare,
            own
        );
    }
    libcrux_alone();
}

/// The AEAD calls Bertie makes for each record, alone, and the price of one CPUID here.
fn libcrux_alone() {
    use libcrux::aead::{encrypt, Algorithm, Iv, Key};
    const CALLS: u32 = 2_000;
    // SAFETY: CPUID exists on every x86_64 CPU; leaf 1 is the basic feature leaf. (Newer Rust
    // releases declare `__cpuid` safe.)
    #[allow(unused_unsafe)]
    let cpuid = per_call(CALLS, || unsafe { std::arch::x86_64::__cpuid(1) }.ecx);
    let mut record = vec![0u8; TRANSFER_WRITE_SIZE + 1];
    let mut aead = |alg: Algorithm, key_len: usize| {
        let key = Key::from_slice(alg, vec![7u8; key_len]).expect("a key of the algorithm's length");
        per_call(CALLS, || encrypt(&key, &mut record, Iv([0; 12]), &[23, 3, 3, 0x40, 0x11]).expect("encrypting"))
    };
    let (aes, chacha) = (aead(Algorithm::Aes128Gcm, 16), aead(Algorithm::Chacha20Poly1305, 32));
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "libcrux alone: one 16 KiB record, libcrux::aead::encrypt: AES-128-GCM {:.1} us, ChaCha20-Poly1305 {:.1} us; \
         one CPUID {:.2} us, and each AES-GCM call runs 11 ({:.1} us)",
        us(aes),
        us(chacha),
        us(cpuid),
        11.0 * us(cpuid)
    );
    // The handshake's heaviest calls: the server's CertificateVerify signature and the client's
    // check of it (ECDSA P-256 with SHA-256, HACL's portable C in libcrux).
    use libcrux::signature::{self, DigestAlgorithm};
    let alg = signature::Algorithm::EcDsaP256(DigestAlgorithm::Sha256);
    let mut rng = rand::thread_rng();
    let (secret, public) = signature::key_gen(alg, &mut rng).expect("a P-256 key");
    let transcript_hash = [0x20u8; 130];
    let signed = signature::sign(alg, &transcript_hash, &secret, &mut rng).expect("signing");
    let sign = per_call(200, || signature::sign(alg, &transcript_hash, &secret, &mut rng).expect("signing"));
    let verify = per_call(200, || signature::verify(&transcript_hash, &signed, &public).expect("verifying"));
    println!("libcrux alone: ECDSA P-256 sign {:.0} us, verify {:.0} us", us(sign), us(verify));
}

/// The median time of `f` over `n` calls, in batches of a tenth.
fn per_call<T>(n: u32, mut f: impl FnMut() -> T) -> Duration {
    let mut batches: Vec<f64> = (0..10)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n / 10 {
                std::hint::black_box(f());
            }
            t.elapsed().as_secs_f64() / f64::from(n / 10)
        })
        .collect();
    Duration::from_secs_f64(median(&mut batches))
}

/// Adds one bare-loop sample to a row: the rate over the whole region in tlsbench's unit, and
/// over Bertie's calls alone in the unit of Bertie's benchmark; one count (a handshake, a
/// write) is worth `unit` and `own_unit` of them.
fn push(row: &mut Row, (count, clocks): (u64, Clocks), unit: f64, own_unit: f64) {
    row[1].push(count as f64 * unit / clocks.all.as_secs_f64());
    row[2].push(count as f64 * own_unit / clocks.calls.as_secs_f64());
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    (values[(n - 1) / 2] + values[n / 2]) / 2.0
}

/// Full handshakes until both sides' clocks reach MIN_TIME (after WARMUP): the number of
/// handshakes and each side's clocks.
fn bare_handshakes(cc: &ClientConfig, sc: &ServerConfig) -> [(u64, Clocks); 2] {
    let name: Bytes = SERVER_NAME.as_bytes().into();
    let one = |clocks: &mut [Clocks; 2]| {
        let [client_clock, server_clock] = clocks;
        let mut rng = rand::thread_rng();
        let (hello, client) =
            client_clock.call(|| Client::connect(cc.algorithms(), &name, None, None, &mut rng).expect("ClientHello"));
        let hello_wire = client_clock.around(|| hello.declassify());
        let hello = server_clock.around(|| Bytes::from(&hello_wire[..]));
        let (server_hello, flight, server) = server_clock
            .call(|| Server::accept(sc.algorithms(), sc.db().clone(), &hello, &mut rng).expect("the server's flight"));
        let wire = server_clock.around(|| [server_hello.declassify(), flight.declassify()]);
        let records = client_clock.around(|| wire.each_ref().map(|w| Bytes::from(&w[..])));
        let (finished, client) = client_clock.call(|| {
            let (_, client) = client.read_handshake(&records[0]).expect("the ServerHello");
            client.read_handshake(&records[1]).expect("the server's Finished")
        });
        let finished = finished.expect("the client's Finished");
        let finished_wire = client_clock.around(|| finished.declassify());
        let finished = server_clock.around(|| Bytes::from(&finished_wire[..]));
        let server = server_clock.call(|| server.read_handshake(&finished).expect("the client's Finished"));
        // The gate: both completed.
        assert!(matches!(client, Client::Client1(..)) && matches!(server, Server::Server1(..)));
        client_clock.around(|| drop((client, hello, hello_wire, records)));
        server_clock.around(|| drop((server, server_hello, flight, wire, finished, finished_wire)));
    };
    let warmup_end = Instant::now() + WARMUP;
    while Instant::now() < warmup_end {
        one(&mut Default::default());
    }
    let mut clocks = [Clocks::default(); 2];
    let mut handshakes = 0u64;
    while clocks[0].all < MIN_TIME || clocks[1].all < MIN_TIME {
        one(&mut clocks);
        handshakes += 1;
    }
    clocks.map(|c| (handshakes, c))
}

/// 16 KiB writes from the server, each read by the client: the number of writes and each
/// side's clocks.
fn bare_transfer(cc: &ClientConfig, sc: &ServerConfig) -> [(u64, Clocks); 2] {
    let (mut client, mut server) = connected(cc, sc);
    // The payload tlsbench's driver sends: 1 MiB from the same generator and seed.
    let mut payload = vec![0u8; 1 << 20];
    fastrand::Rng::with_seed(0x7152_be4c).fill(&mut payload);
    let mut inbox = vec![0u8; TRANSFER_WRITE_SIZE];
    let mut offset = 0;
    let mut one = |clocks: &mut [Clocks; 2]| {
        let [client_clock, server_clock] = clocks;
        let data = &payload[offset..offset + TRANSFER_WRITE_SIZE];
        offset = (offset + TRANSFER_WRITE_SIZE) % payload.len();

        let plaintext = server_clock.around(|| AppData::new(data.into()));
        let (record, next) =
            server_clock.call(|| server.take().expect("connected").write(plaintext).expect("encrypting"));
        server = Some(next);
        let wire = server_clock.around(|| {
            let wire = record.declassify();
            drop(record);
            wire
        });

        let record = client_clock.around(|| Bytes::from(&wire[..]));
        let (received, next) =
            client_clock.call(|| client.take().expect("connected").read(&record).expect("decrypting"));
        client = Some(next);
        let n = client_clock.around(|| {
            let received = received.expect("application data").into_raw().declassify();
            inbox[..received.len()].copy_from_slice(&received);
            drop((record, wire));
            received.len()
        });
        // The gate: what arrived is what was sent.
        assert!(n == TRANSFER_WRITE_SIZE && inbox == data);
    };
    let warmup_end = Instant::now() + WARMUP;
    while Instant::now() < warmup_end {
        one(&mut Default::default());
    }
    let mut clocks = [Clocks::default(); 2];
    let mut writes = 0u64;
    while writes * (TRANSFER_WRITE_SIZE as u64) < TRANSFER_MIN_BYTES
        || clocks[0].all < MIN_TIME
        || clocks[1].all < MIN_TIME
    {
        one(&mut clocks);
        writes += 1;
    }
    clocks.map(|c| (writes, c))
}

/// A completed handshake, unmeasured.
fn connected(cc: &ClientConfig, sc: &ServerConfig) -> (Option<Client>, Option<Server>) {
    let mut rng = rand::thread_rng();
    let name: Bytes = SERVER_NAME.as_bytes().into();
    let (hello, client) = Client::connect(cc.algorithms(), &name, None, None, &mut rng).expect("ClientHello");
    let (server_hello, flight, server) =
        Server::accept(sc.algorithms(), sc.db().clone(), &hello, &mut rng).expect("the server's flight");
    let (_, client) = client.read_handshake(&server_hello).expect("the ServerHello");
    let (finished, client) = client.read_handshake(&flight).expect("the server's Finished");
    let server = server.read_handshake(&finished.expect("the client's Finished")).expect("the client's Finished");
    (Some(client), Some(server))
}
