package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.lang.management.ManagementFactory;

/**
 * The heap measure as a JVM can take it: {@code runtime_alloc_bytes_per_handshake}, the bytes the JVM
 * allocated on its garbage-collected heap inside each side's calls (creating, handshaking and dropping
 * its connections), from the thread's allocation counter (com.sun.management.ThreadMXBean, exact to the
 * byte, TLAB refills included). It is allocation, not bytes held, and not comparable byte for byte with
 * malloc. Native memory is not in it: BoringSSL's allocations under netty-tcnative (its SSL objects,
 * sessions, record buffers) and direct buffers are outside the Java heap.
 *
 * <p>Measured after the warm-up a time sample takes, because the JIT's escape analysis removes
 * allocations once the hot paths are compiled.
 */
final class Heap {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    /** At least this many measured handshakes, whatever --min-time-ms says. */
    static final int MIN_HANDSHAKES = 50;

    private Heap() {
    }

    /** Each side's allocated bytes inside its calls. */
    static final class Meter implements Step.Meter {
        final long[] bytes = new long[2];
        private long start;

        @Override
        public void begin(Side side) {
            start = THREADS.getCurrentThreadAllocatedBytes();
        }

        @Override
        public void end(Side side) {
            bytes[side.ordinal()] += THREADS.getCurrentThreadAllocatedBytes() - start;
        }
    }

    static Report sample(Pair pair, Driver.Spec spec) {
        if (!THREADS.isThreadAllocatedMemorySupported() || !THREADS.isThreadAllocatedMemoryEnabled()) {
            throw new Unsupported("this JVM does not count the bytes each thread allocates");
        }
        pair.checkedHandshake(Step.Meter.NONE, false);
        boolean resumed = pair.scenario.kind.isResumption();
        long warmupNs = Math.max(spec.warmupNs(), Common.FIXED_WARMUP_MS * 1_000_000);
        long started = System.nanoTime();
        while (System.nanoTime() - started < warmupNs) {
            pair.checkedHandshake(Step.Meter.NONE, resumed);
        }
        Meter meter = new Meter();
        long iterations = 0;
        started = System.nanoTime();
        while (iterations < MIN_HANDSHAKES || System.nanoTime() - started < spec.minTimeNs()) {
            pair.checkedHandshake(meter, resumed);
            iterations++;
        }
        Report report = pair.report();
        report.iterations = iterations;
        for (Side side : Side.values()) {
            report.value(side, "runtime_alloc_bytes_per_handshake", meter.bytes[side.ordinal()] / (double) iterations,
                    0);
        }
        return report;
    }
}
