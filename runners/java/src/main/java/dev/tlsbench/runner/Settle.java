package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Side;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * How long the JIT needs before a fresh JVM's figures settle: the measurement behind
 * {@link Common#FIXED_WARMUP_MS}. Not part of the protocol; run it by hand:
 *
 * <pre>
 * java [-Dsettle.raw=true] -cp tlsbench-runner-java.jar dev.tlsbench.runner.Settle \
 *     CLIENT SERVER SCENARIO [SECONDS [WINDOW_MS [DATA_DIR]]]
 * </pre>
 *
 * It runs the sample's work (handshakes on new connections, or 16 KiB records) from the JVM's start,
 * with each side's clock, and prints each window's rate per side (handshakes/s or MB/s by the side's
 * wall clock inside its calls), then when each side's rate stayed within 10% of its plateau (the median
 * of the last third of the windows).
 */
public final class Settle {
    private Settle() {
    }

    public static void main(String[] args) throws Exception {
        long jvmStart = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
        Stack client = Main.stack(args[0]);
        Stack server = Main.stack(args[1]);
        Scenario scenario = Scenario.parse(args[2]);
        double seconds = args.length > 3 ? Double.parseDouble(args[3]) : 15;
        long windowMs = args.length > 4 ? Long.parseLong(args[4]) : 100;
        Path dataDir = Pki.dataDir(args.length > 5 ? args[5] : null);
        Set<Side> jsse = EnumSet.noneOf(Side.class);
        if (client instanceof JsseStack) {
            jsse.add(Side.CLIENT);
        }
        if (server instanceof JsseStack) {
            jsse.add(Side.SERVER);
        }
        JvmPins.apply(scenario, jsse);
        Pair pair = new Pair(client, server, scenario, Pki.load(dataDir, scenario.key), new Link());
        boolean transfer = scenario.kind == Kind.TRANSFER;
        boolean resumed = scenario.kind.isResumption();
        EngineConnection[] conns = pair.handshake(Step.Meter.NONE);
        pair.check(conns[0], conns[1], false);
        byte[] payload = Driver.payload();
        byte[] inbox = new byte[Report.TRANSFER_WRITE_SIZE];
        int offset = 0;
        List<double[]> windows = new ArrayList<>();
        // -Dsettle.raw=true: each window too, with the JIT's and the collectors' time so far.
        boolean raw = Boolean.getBoolean("settle.raw");
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        long start = System.nanoTime();
        System.out.printf("# %s -> %s %s: first window starts %d ms after the JVM started%n",
                client.id(), server.id(), scenario.name(), System.currentTimeMillis() - jvmStart);
        while (System.nanoTime() - start < seconds * 1e9) {
            Clock.Pair clocks = new Clock.Pair();
            long windowStart = System.nanoTime();
            long n = 0;
            while (System.nanoTime() - windowStart < windowMs * 1_000_000) {
                if (transfer) {
                    clocks.begin(Side.SERVER);
                    conns[1].send(payload, offset, Report.TRANSFER_WRITE_SIZE);
                    clocks.end(Side.SERVER);
                    offset = (offset + Report.TRANSFER_WRITE_SIZE) % payload.length;
                    clocks.begin(Side.CLIENT);
                    Driver.receiveAll(conns[0], inbox);
                    clocks.end(Side.CLIENT);
                } else {
                    pair.checkedHandshake(clocks, resumed);
                }
                n++;
            }
            double work = transfer ? n * (double) Report.TRANSFER_WRITE_SIZE / 1e6 : n;
            double at = (System.nanoTime() - start) / 1e9;
            windows.add(new double[] {at, work / clocks.client.seconds(), work / clocks.server.seconds()});
            if (raw) {
                System.out.printf("w %.3f %.0f %.0f jit_ms %d gc_ms %d gc_count %d%n", at,
                        work / clocks.client.seconds(), work / clocks.server.seconds(), jit.getTotalCompilationTime(),
                        gcMs(), gcCount());
            }
        }
        String unit = transfer ? "MB/s" : "handshakes/s";
        // Per-second medians of the windows, then when each side's medians stayed within 10% of its plateau
        // (the median of the last third of the run's windows).
        int perSecond = (int) Math.max(1, 1000 / windowMs);
        int seconds0 = windows.size() / perSecond;
        System.out.printf("# second: client_%s server_%s (median of its %d windows)%n", unit, unit, perSecond);
        double[][] medians = new double[3][seconds0];
        for (int sec = 0; sec < seconds0; sec++) {
            for (int side = 1; side <= 2; side++) {
                final int s = side;
                double[] block = windows.subList(sec * perSecond, (sec + 1) * perSecond).stream().mapToDouble(w -> w[s])
                        .sorted().toArray();
                medians[side][sec] = block[block.length / 2];
            }
            System.out.printf("%d %.0f %.0f%n", sec + 1, medians[1][sec], medians[2][sec]);
        }
        for (int side = 1; side <= 2; side++) {
            final int s = side;
            double[] tail = windows.subList(windows.size() * 2 / 3, windows.size()).stream().mapToDouble(w -> w[s])
                    .sorted().toArray();
            double plateau = tail[tail.length / 2];
            int settled = seconds0;
            for (int sec = seconds0 - 1; sec >= 0 && Math.abs(medians[side][sec] / plateau - 1) <= 0.10; sec--) {
                settled = sec;
            }
            System.out.printf(
                    "# %s: plateau %.0f %s; per-second medians within 10%% from second %d on; first window %.0f "
                            + "(%.0f%% of plateau)%n",
                    side == 1 ? "client" : "server", plateau, unit, settled + 1, windows.get(0)[s],
                    100 * windows.get(0)[s] / plateau);
        }
        System.out.println("# " + Arrays.toString(new String[] {client.library(), server.library()}));
        System.exit(0);
    }

    private static long gcMs() {
        return java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().stream()
                .mapToLong(java.lang.management.GarbageCollectorMXBean::getCollectionTime).sum();
    }

    private static long gcCount() {
        return java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().stream()
                .mapToLong(java.lang.management.GarbageCollectorMXBean::getCollectionCount).sum();
    }
}
