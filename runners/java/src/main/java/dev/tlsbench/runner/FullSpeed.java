package dev.tlsbench.runner;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

/**
 * The measured loop's judge (docs/sampling.md, "Inside the sample: the stretches at full speed"): the
 * harness's own ({@code tlsbench_harness::speed::Gate}), in {@code libtlsbench_speed.so} (crates/speed-ffi),
 * called through JNA. About every 250 µs, between iterations and outside both clocks, it times the CPU on the
 * probe's workload; a stretch of iterations counts only where the probes at both of its ends found the CPU at
 * full speed, and a slowed probe moves the thread to the fastest CPU it may use.
 *
 * <p>Not written in Java: the orchestrator's reference is in the harness probe's units (rounds per µs of eight
 * 64-by-64-bit multiply chains), and C2 compiles such a workload into other instructions (a high and a low
 * multiply each), as Go's compiler did (runners/go/probe_amd64.s); and Java 17 cannot set a thread's CPU
 * affinity. The library lies beside the launcher ({@code -Djna.library.path}, runners/java/tlsbench-runner-java);
 * without it the runner's list does not say {@code full_speed}, and its samples are not judged.
 */
final class FullSpeed {
    private static final String LIBRARY = "tlsbench_speed";
    /** Why the library could not be loaded; null when it was. */
    private static final String UNAVAILABLE = load();
    /** How often the loop is judged, and how long it goes on for stretches at full speed (times each minimum). */
    static final long PROBE_EVERY_NS = UNAVAILABLE == null ? tlsbench_gate_probe_every_ns() : 0;
    static final int BOUND = UNAVAILABLE == null ? tlsbench_gate_bound() : 0;

    private FullSpeed() {
    }

    private static String load() {
        try {
            Native.register(FullSpeed.class, LIBRARY);
            return null;
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            return "lib" + LIBRARY + ".so could not be loaded (" + e.getMessage() + ")";
        }
    }

    /** Null when samples can be judged, else why not (for an error and the list's stderr). */
    static String unavailability() {
        return UNAVAILABLE;
    }

    private static native Pointer tlsbench_gate_new(double reference);

    private static native int tlsbench_gate_judge(Pointer gate);

    private static native void tlsbench_gate_finish(Pointer gate, int gated, double[] out);

    private static native long tlsbench_gate_probe_every_ns();

    private static native int tlsbench_gate_bound();

    /** The reply's {@code cpu_speed} (protocol.rs, CpuSpeed). */
    record CpuSpeed(boolean gated, double speed, double fullSpeedShare, int moves) {
        Json toJson() {
            return Json.object().put("gated", gated).put("speed", speed).put("full_speed_share", fullSpeedShare)
                    .put("moves", moves);
        }
    }

    /**
     * One measured loop's judge, on the thread that runs the loop, against {@code reference} (the workload's
     * rounds per µs at full speed, {@code --full-speed}); it probes (and moves) once when made. {@link #finish}
     * must be called once, also when an iteration failed: it gives the thread back every CPU it had.
     */
    static final class Gate {
        private Pointer gate;
        private long lastProbeNs;
        private final double[] out = new double[3];

        Gate(double reference) {
            if (UNAVAILABLE != null) {
                throw Failure.other("--full-speed: " + UNAVAILABLE);
            }
            gate = tlsbench_gate_new(reference);
            lastProbeNs = System.nanoTime();
        }

        /** Whether the stretch since the last probe is long enough to be judged. */
        boolean due() {
            return System.nanoTime() - lastProbeNs >= PROBE_EVERY_NS;
        }

        /** Ends the stretch since the last probe: whether it counts (full speed at both of its ends). */
        boolean judge() {
            boolean fast = tlsbench_gate_judge(gate) != 0;
            lastProbeNs = System.nanoTime();
            return fast;
        }

        /** What the loop did ({@code gated}: its figures are of the stretches at full speed alone). */
        CpuSpeed finish(boolean gated) {
            if (gate == null) {
                throw new IllegalStateException("the gate was finished already");
            }
            tlsbench_gate_finish(gate, gated ? 1 : 0, out);
            gate = null;
            return new CpuSpeed(gated, out[0], out[1], (int) out[2]);
        }

        /** After a failed iteration: the thread back on its CPUs; nothing is reported. */
        void abandon() {
            if (gate != null) {
                finish(false);
            }
        }
    }
}
