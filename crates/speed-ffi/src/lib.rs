//! The measured loop's judge (`tlsbench_harness::speed::Gate`) over a C ABI, for a runner in
//! another language whose compiler cannot give the probe's workload the harness's instructions
//! (the Java runner, through JNA: runners/java, `FullSpeed`). Its probes are then the harness's
//! own, in the units of the orchestrator's reference (docs/runner-protocol.md), and so are its
//! moves among the CPUs: the calling thread's affinity, set by the kernel's call, which Java 17
//! cannot make itself.
//!
//! One gate per measured loop, on the thread that runs it: `tlsbench_gate_new` before the first
//! iteration, `tlsbench_gate_judge` at the end of each stretch, `tlsbench_gate_finish` once.

// The harness's judge and the affinity calls it makes, compiled into this library from the
// harness's own files rather than linked from its crate: the harness links the allocators of its
// allocator axis, and jemalloc's thread-locals ask for the static TLS block, which a JVM cannot
// give a library it loads later ("cannot allocate memory in static TLS block").
#[allow(dead_code)] // CPU lists: the harness's, not the judge's
#[path = "../../harness/src/pin.rs"]
mod pin;
#[path = "../../harness/src/speed.rs"]
mod speed;
/// The two types of the harness that those files name: plain data, no code of the harness's.
mod protocol {
    pub use tlsbench_harness::protocol::CpuSpeed;
}
use tlsbench_harness::Error;

use speed::{Gate, PROBE_EVERY};

/// A gate judging against `reference` (the probe workload's rounds per microsecond at full
/// speed, `--full-speed`), after its first probe (and move). `tlsbench_gate_finish` frees it.
#[no_mangle]
pub extern "C" fn tlsbench_gate_new(reference: f64) -> *mut Gate {
    Box::into_raw(Box::new(Gate::new(reference)))
}

/// Ends the stretch since the last probe: 1 where it counts (the CPU at full speed at both of its
/// ends), else 0.
///
/// # Safety
/// `gate` is one that `tlsbench_gate_new` returned on this thread and not yet finished.
#[no_mangle]
pub unsafe extern "C" fn tlsbench_gate_judge(gate: *mut Gate) -> i32 {
    i32::from(unsafe { &mut *gate }.judge())
}

/// Frees the gate and puts the thread back on every CPU it had; writes what the loop did to
/// `out`: the CPU's mean speed around the stretches the figures are of (a fraction of the
/// reference), the share of stretches at full speed, and the moves to a faster CPU. `gated`: 1
/// where the figures are of the stretches at full speed alone, 0 where of every stretch.
///
/// # Safety
/// `gate` as for `tlsbench_gate_judge`, not used again; `out` points to three writable doubles.
#[no_mangle]
pub unsafe extern "C" fn tlsbench_gate_finish(gate: *mut Gate, gated: i32, out: *mut f64) {
    let speed = unsafe { Box::from_raw(gate) }.finish(gated != 0);
    let out = unsafe { std::slice::from_raw_parts_mut(out, 3) };
    out.copy_from_slice(&[speed.speed, speed.full_speed_share, f64::from(speed.moves)]);
}

/// How often the loop is judged ([`PROBE_EVERY`]), in nanoseconds: a stretch ends at the first
/// iteration's end after this long.
#[no_mangle]
pub extern "C" fn tlsbench_gate_probe_every_ns() -> u64 {
    PROBE_EVERY.as_nanos() as u64
}

/// How long a judged loop goes on for stretches at full speed, in times each side's minimum
/// ([`tlsbench_harness::driver::GATE_BOUND`]): then every stretch counts.
#[no_mangle]
pub extern "C" fn tlsbench_gate_bound() -> u32 {
    tlsbench_harness::driver::GATE_BOUND
}
