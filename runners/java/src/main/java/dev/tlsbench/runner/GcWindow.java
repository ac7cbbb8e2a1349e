package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * What the collectors did while a time sample measured (docs/runner-protocol.md: the reply's {@code gc_collections},
 * {@code gc_ms} and {@code measured_ms}, and each measured side's {@code gc_percent}). The collectors' beans and a
 * monotonic clock are read once before the measured loop ({@link #begin}) and once after it ({@link #end}): never
 * inside the measured calls, and nothing between the two allocates.
 *
 * <p>The beans counted are those whose collections stop the application: every bean but those whose name contains
 * {@code Concurrent} (JDK 20+'s "G1 Concurrent GC", whose time is the concurrent cycle's) or {@code Cycles} (ZGC's
 * and Shenandoah's "... Cycles", whose time is mostly concurrent; their "... Pauses" beans count). So with G1 (the
 * default): "G1 Young Generation" and "G1 Old Generation"; with the serial collector "Copy" and
 * "MarkSweepCompact". Their time is {@code getCollectionTime}: the pauses, in whole milliseconds.
 */
final class GcWindow {
    private static final GarbageCollectorMXBean[] PAUSING = pausing();

    private long collectionsAtStart;
    private long msAtStart;
    private long startNs;
    private boolean began;

    /** Collections completed in the window; meaningful after {@link #end}. */
    long collections;
    /** The counted collectors' time in the window, in ms. */
    double gcMs;
    /** The window's wall time, in ms. */
    double measuredMs;
    private boolean ended;

    private static GarbageCollectorMXBean[] pausing() {
        List<GarbageCollectorMXBean> beans = new ArrayList<>();
        for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (counts(bean.getName())) {
                beans.add(bean);
            }
        }
        return beans.toArray(new GarbageCollectorMXBean[0]);
    }

    /** Whether a collector bean of this name reports stop-the-world collections (see the class's comment). */
    static boolean counts(String beanName) {
        return !beanName.contains("Concurrent") && !beanName.contains("Cycles");
    }

    /** The names of the beans counted in this JVM. */
    static List<String> counted() {
        List<String> names = new ArrayList<>();
        for (GarbageCollectorMXBean bean : PAUSING) {
            names.add(bean.getName());
        }
        return names;
    }

    private static long collectionCount() {
        long sum = 0;
        for (GarbageCollectorMXBean bean : PAUSING) {
            sum += Math.max(0, bean.getCollectionCount());
        }
        return sum;
    }

    private static long collectionMs() {
        long sum = 0;
        for (GarbageCollectorMXBean bean : PAUSING) {
            sum += Math.max(0, bean.getCollectionTime());
        }
        return sum;
    }

    boolean began() {
        return began;
    }

    /** Before the first measured call: the beans first, then the clock, so that reading them is outside. */
    void begin() {
        collectionsAtStart = collectionCount();
        msAtStart = collectionMs();
        began = true;
        startNs = System.nanoTime();
    }

    /** After the last measured call: the clock first, then the beans. */
    void end() {
        long endNs = System.nanoTime();
        measuredMs = (endNs - startNs) / 1e6;
        collections = Math.max(0, collectionCount() - collectionsAtStart);
        gcMs = Math.max(0, collectionMs() - msAtStart);
        ended = true;
    }

    /** The fields of the reply, and gc_percent for each side this process measured. */
    void report(Report report, Side... sides) {
        if (!ended) {
            return;
        }
        report.gc = this;
        if (measuredMs <= 0) {
            return;
        }
        for (Side side : sides) {
            report.value(side, "gc_percent", 100 * gcMs / measuredMs, measuredMs / 1000);
        }
    }
}
