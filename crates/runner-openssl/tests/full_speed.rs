//! A measured loop judged at full speed (`sample --full-speed`, tlsbench_harness::speed) with
//! real stacks: what counts where every stretch is at full speed and where none is, and that the
//! handshakes and the transfer are still checked.

use std::time::Duration;

use tlsbench_harness::driver::{self, SampleSpec, GATE_BOUND};
use tlsbench_harness::protocol::{Metric, SampleReport};
use tlsbench_harness::speed::{self, FULL_SPEED};
use tlsbench_harness::testing::{pki, scenario};
use tlsbench_harness::{Side, Stack};
use tlsbench_stack_openssl::OpenSsl;
use tlsbench_stack_rustls::Rustls;

const MIN_TIME: Duration = Duration::from_millis(5);

fn sample<C: Stack, S: Stack>(client: &C, server: &S, name: &str, full_speed: Option<f64>) -> SampleReport {
    let spec = SampleSpec::Timed { warmup: Duration::ZERO, min_time: MIN_TIME, full_speed };
    driver::sample(client, server, &scenario(name), pki(), &spec)
        .unwrap_or_else(|e| panic!("{} -> {} {name}: {e}", client.id(), server.id()))
}

/// Each side's measured seconds, from its wall-time rate's value.
fn seconds(report: &SampleReport, side: Side) -> f64 {
    let wall = [Metric::HandshakesPerS, Metric::MbPerS];
    let value = report.values.iter().find(|v| v.side == side && wall.contains(&v.metric));
    value.unwrap_or_else(|| panic!("no {side} rate: {report:?}")).seconds
}

#[test]
fn the_probe_times_this_cpu() {
    let speed = speed::probe();
    assert!(speed.is_finite() && speed > 0.0, "{speed}");
}

#[test]
fn a_loop_whose_cpu_is_always_at_full_speed_counts_every_stretch() {
    // A reference so low that every probe is above it.
    for name in
        ["handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm"]
    {
        let report = sample(&Rustls::ring(), &OpenSsl, name, Some(1e-9));
        let judged = report.cpu_speed.unwrap_or_else(|| panic!("{name}: no cpu_speed: {report:?}"));
        assert!(judged.gated, "{name}: {judged:?}");
        assert_eq!(judged.full_speed_share, 1.0, "{name}: {judged:?}");
        assert!(judged.speed >= FULL_SPEED, "{name}: {judged:?}");
        assert!(report.iterations > 0, "{name}: {report:?}");
        for side in [Side::Client, Side::Server] {
            assert!(seconds(&report, side) >= MIN_TIME.as_secs_f64(), "{name} {side}: {report:?}");
        }
        assert!(report.negotiated_by_side().iter().all(|n| n.is_some_and(|n| n.starts_with("1.3 aes-128-gcm"))));
    }
}

#[test]
fn a_loop_never_at_full_speed_goes_on_to_its_bound_and_counts_every_stretch_saying_so() {
    // A reference no CPU reaches: no stretch counts, and at the bound the figures are of all.
    for name in ["handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm"] {
        let report = sample(&OpenSsl, &Rustls::ring(), name, Some(1e12));
        let judged = report.cpu_speed.unwrap_or_else(|| panic!("{name}: no cpu_speed: {report:?}"));
        assert!(!judged.gated, "{name}: {judged:?}");
        assert_eq!(judged.full_speed_share, 0.0, "{name}: {judged:?}");
        assert!(judged.speed < FULL_SPEED, "{name}: {judged:?}");
        for side in [Side::Client, Side::Server] {
            let bound = (GATE_BOUND * MIN_TIME).as_secs_f64();
            assert!(seconds(&report, side) >= bound, "{name} {side}: went on to {bound} s: {report:?}");
        }
    }
}

#[test]
fn a_loop_not_asked_to_judge_reports_no_cpu_speed() {
    let report = sample(&OpenSsl, &OpenSsl, "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm", None);
    assert_eq!(report.cpu_speed, None);
}
