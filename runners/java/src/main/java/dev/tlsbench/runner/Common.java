package dev.tlsbench.runner;

import dev.tlsbench.runner.Capabilities.MeasureLimit;
import dev.tlsbench.runner.Scenario.Measure;

/** What both stacks of this runner share: the limits of measuring a JVM. */
final class Common {
    private Common() {
    }

    /**
     * The warm-up a fresh JVM needs before its figures settle: the JIT compiles the handshake and record
     * paths with C2 only after they have run a while. Measured with {@link Settle} on the 2-core guest
     * (JDK 17.0.15, G1, 100 ms windows, per-second medians): JSSE's full handshakes come within 10% of
     * their plateau after 10 to 14 s (ECDSA; RSA about 8 s), its transfers after 6 to 8 s; netty-tcnative's
     * client side (Java's share of its handshake) after 7 to 10 s, its transfers after 4 s. Pinned to one
     * CPU, as split pairs are, the compiler threads share that CPU and none of these had settled after
     * 20 s. This is the warm-up of what takes a fixed one: the heap measure (a fresh JVM per sample) and
     * the network mode's server and load generator.
     */
    static final long FIXED_WARMUP_MS = 10_000;

    /**
     * The capability {@code min_warmup_ms}: the least a new JVM warms up before tlsbench, which keeps it up
     * for many samples, starts testing whether its rate has stopped rising (docs/sampling.md). Before
     * about a second C2 has compiled none of the hot paths, and a window's rate can be flat while the
     * interpreter runs.
     */
    static final long MIN_WARMUP_MS = 1_000;

    static Capabilities capabilities() {
        Capabilities caps = new Capabilities();
        caps.minWarmupMs = MIN_WARMUP_MS;
        caps.measureLimits.add(new MeasureLimit(Measure.INSTRUCTIONS,
                "the Java runner cannot be counted by callgrind: its collection toggles are client requests that "
                        + "JIT-compiled code cannot issue, and under valgrind a JVM spends its instructions "
                        + "interpreting and compiling"));
        caps.measureLimits.add(new MeasureLimit(Measure.SYNC,
                "the Java runner cannot be counted by callgrind (see instructions), and the JVM's locks "
                        + "(monitors, java.util.concurrent) are its own, taken in JIT-compiled code, not calls "
                        + "into a C library"));
        return caps;
    }
}
