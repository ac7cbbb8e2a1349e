package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * One side's clock (driver.rs, Clock): wall time inside the side's library calls, and the thread's CPU
 * time over the same calls (ThreadMXBean.getCurrentThreadCpuTime, which is CLOCK_THREAD_CPUTIME_ID on
 * Linux: a system call each). The CPU clock is read outside the wall clock's pair, and what reading it
 * adds to each region is measured once per process, on compiled code, and taken off.
 */
public final class Clock implements Step.Meter {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static boolean cpuEnabled = true;
    private static long overheadNs = -1;
    /** Batches of empty regions that {@link #overhead()} times: enough for the JIT to compile the reads. */
    static final int OVERHEAD_BATCHES = 40;

    long elapsedNs;
    private long cpuTotalNs;
    private long regions;
    private long cpuStart;
    private long start;

    /** The runner's {@code --cpu-clock}: off, a sample reports wall time only. */
    static void setCpuEnabled(boolean on) {
        cpuEnabled = on;
    }

    @Override
    public void begin(Side side) {
        if (cpuEnabled) {
            cpuStart = THREADS.getCurrentThreadCpuTime();
        }
        start = System.nanoTime();
    }

    @Override
    public void end(Side side) {
        elapsedNs += System.nanoTime() - start;
        if (cpuEnabled) {
            cpuTotalNs += Math.max(0, THREADS.getCurrentThreadCpuTime() - cpuStart);
            regions++;
        }
    }

    /** Adds what {@code stretch} timed (a judged loop's stretches, Driver.gated). */
    void add(Clock stretch) {
        elapsedNs += stretch.elapsedNs;
        cpuTotalNs += stretch.cpuTotalNs;
        regions += stretch.regions;
    }

    void reset() {
        elapsedNs = 0;
        cpuTotalNs = 0;
        regions = 0;
    }

    public double seconds() {
        return elapsedNs / 1e9;
    }

    /**
     * The CPU seconds of the timed calls less the clock's own cost per region; NaN when the CPU clock was off,
     * or when that cost is all it counted (its calls too short for it to tell, and a rate of them infinite).
     */
    public double cpuSeconds() {
        return regions == 0 ? Double.NaN : netCpuSeconds(cpuTotalNs, regions, overhead());
    }

    /** {@code cpuNs} over {@code regions} less {@code overheadNs} for each; NaN where nothing is left. */
    static double netCpuSeconds(long cpuNs, long regions, long overheadNs) {
        double seconds = (cpuNs - overheadNs * regions) / 1e9;
        return seconds > 0 ? seconds : Double.NaN;
    }

    /**
     * What the CPU clock counts in an empty region beyond the wall clock: the least median of {@link
     * #OVERHEAD_BATCHES} batches of 301 empty regions (20 to 30 ms). The first batches run interpreted, at
     * two to three times the cost of the compiled reads that time the samples (1.1 to 1.3 µs against 0.3 to
     * 0.5 here). Taken from every region, one batch's median made JSSE's CPU-time rates of TLS 1.2 resumption
     * 1.06 to 1.11 times its wall-time rates (short calls), and once 1.2 times a transfer's.
     */
    static synchronized long overhead() {
        if (overheadNs < 0) {
            long[] extra = new long[301];
            long least = Long.MAX_VALUE;
            for (int batch = 0; batch < OVERHEAD_BATCHES; batch++) {
                least = Math.min(least, emptyRegionsMedian(extra));
            }
            overheadNs = least;
        }
        return overheadNs;
    }

    /** The median of as many empty regions as {@code extra} holds: what the CPU clock counts beyond the wall's. */
    static long emptyRegionsMedian(long[] extra) {
        for (int i = 0; i < extra.length; i++) {
            long cpu = THREADS.getCurrentThreadCpuTime();
            long wallStart = System.nanoTime();
            long wall = System.nanoTime() - wallStart;
            extra[i] = Math.max(0, THREADS.getCurrentThreadCpuTime() - cpu - wall);
        }
        Arrays.sort(extra);
        return extra[extra.length / 2];
    }

    /** Both sides' clocks, for a pair in one process. */
    public static final class Pair implements Step.Meter {
        final Clock client = new Clock();
        final Clock server = new Clock();

        @Override
        public void begin(Side side) {
            (side == Side.CLIENT ? client : server).begin(side);
        }

        @Override
        public void end(Side side) {
            (side == Side.CLIENT ? client : server).end(side);
        }

        void add(Pair stretch) {
            client.add(stretch.client);
            server.add(stretch.server);
        }

        void reset() {
            client.reset();
            server.reset();
        }

        Clock of(Side side) {
            return side == Side.CLIENT ? client : server;
        }
    }
}
