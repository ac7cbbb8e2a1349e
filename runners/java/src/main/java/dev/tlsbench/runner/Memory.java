package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The memory-N kinds on a JVM (memory.rs, and split.rs's memory_side): N connection pairs created, stepped
 * through their handshakes in lockstep and held open.
 *
 * <p>heap, both sides in this process: {@code gc_live_heap_per_connection_bytes}, the Java heap in use after a
 * full collection. The JVM keeps no tally per side, so each side's share is found by letting it go: the live heap
 * with every connection held, then with the servers dropped, then before any was made; each difference over N.
 * The harness's objects (the links, the adapter's pooled buffers, the arrays) are made before the first reading
 * and kept to the last. netty-tcnative's BoringSSL state (its SSL objects, keys, record buffers) is native
 * memory, not in the Java heap: its figure is the Java objects that stand for it, and rss is the measure that
 * counts the rest.
 *
 * <p>rss, one side per process: the process's peak resident size, and its growth per connection from just
 * before the N connections (after a full collection), as the harness reads them from /proc. The growth includes
 * the heap the JVM took for the handshakes' garbage before it collected it.
 */
final class Memory {
    /** The most full collections a reading takes while the heap in use still changes. */
    private static final int MAX_COLLECTIONS = 8;

    private Memory() {
    }

    /**
     * The Java heap in use after full collections: System.gc() (a full, stop-the-world collection with G1, the
     * default, unless -XX:+ExplicitGCInvokesConcurrent), then each heap pool's usage as the collection left it
     * (MemoryPoolMXBean.getCollectionUsage: nothing allocated after it), summed; again until two readings in a row
     * agree (objects waiting for finalizers or reference processing go in a later collection).
     */
    static long liveHeap() {
        long last = -1;
        for (int i = 0; i < MAX_COLLECTIONS; i++) {
            System.gc();
            long used = 0;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                MemoryUsage usage = pool.getType() == MemoryType.HEAP ? pool.getCollectionUsage() : null;
                used += usage != null ? usage.getUsed() : 0;
            }
            if (used == last) {
                break;
            }
            last = used;
        }
        return last;
    }

    /** The heap measure of memory-N with both sides in this process. */
    static Report sample(Stack clientStack, Stack serverStack, Scenario scenario, Pki pki) throws Exception {
        int n = scenario.connections();
        EngineConnection.Opener client = new EngineConnection.Opener(Pair.config(clientStack, Side.CLIENT, scenario,
                pki));
        EngineConnection.Opener server = new EngineConnection.Opener(Pair.config(serverStack, Side.SERVER, scenario,
                pki));
        Gates gates = new Gates();
        // One pair first: what the stacks set up once per process is then in every reading.
        Link first = new Link();
        EngineConnection[] warm = {Pair.open(client, Side.CLIENT, first.client(), Step.Meter.NONE),
            Pair.open(server, Side.SERVER, first.server(), Step.Meter.NONE)};
        lockstep(List.of(warm[0]), List.of(warm[1]), List.of(first));
        check(gates, scenario, warm[0], Side.CLIENT);
        check(gates, scenario, warm[1], Side.SERVER);
        client.drop(warm[0]);
        server.drop(warm[1]);

        List<Link> links = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            links.add(new Link());
        }
        client.reserve(n);
        server.reserve(n);
        List<EngineConnection> clients = new ArrayList<>(n);
        List<EngineConnection> servers = new ArrayList<>(n);
        long base = liveHeap();
        for (Link link : links) {
            clients.add(Pair.open(client, Side.CLIENT, link.client(), Step.Meter.NONE));
            servers.add(Pair.open(server, Side.SERVER, link.server(), Step.Meter.NONE));
        }
        lockstep(clients, servers, links);
        for (int i = 0; i < n; i++) {
            check(gates, scenario, clients.get(i), Side.CLIENT);
            check(gates, scenario, servers.get(i), Side.SERVER);
        }
        for (Link link : links) {
            link.restoreCapacity();
        }
        long held = liveHeap();
        // The servers go (their native state freed, their buffers back in the pool); the clients stay.
        for (int i = 0; i < n; i++) {
            server.drop(servers.set(i, null));
        }
        long clientsOnly = liveHeap();
        for (EngineConnection conn : clients) {
            client.drop(conn);
        }
        Report report = new Report();
        report.clientLibrary = clientStack.library();
        report.serverLibrary = serverStack.library();
        report.negotiated = gates.negotiated();
        report.iterations = n;
        report.value(Side.CLIENT, "gc_live_heap_per_connection_bytes", (clientsOnly - base) / (double) n, 0);
        report.value(Side.SERVER, "gc_live_heap_per_connection_bytes", (held - clientsOnly) / (double) n, 0);
        return report;
    }

    private static void check(Gates gates, Scenario scenario, EngineConnection conn, Side side) {
        gates.check(side, scenario, Pair.negotiated(conn, side), false);
    }

    /** Every client, then every server, round after round, until all have completed and read everything. */
    private static void lockstep(List<EngineConnection> clients, List<EngineConnection> servers, List<Link> links) {
        Step.Progress[] progress = progress(links.size());
        Step.completeHandshakes(new Step.Turns() {
            @Override
            public boolean turn(Side side) {
                List<EngineConnection> conns = side == Side.CLIENT ? clients : servers;
                boolean done = true;
                for (int i = 0; i < conns.size(); i++) {
                    done &= Step.turnOne(conns.get(i), side, links.get(i), progress[i], Step.Meter.NONE);
                }
                return done;
            }

            @Override
            public int unread() {
                int unread = 0;
                for (Link link : links) {
                    unread += link.inFlight();
                }
                return unread;
            }
        });
    }

    private static Step.Progress[] progress(int n) {
        Step.Progress[] progress = new Step.Progress[n];
        for (int i = 0; i < n; i++) {
            progress[i] = new Step.Progress();
        }
        return progress;
    }

    /** The rss measure of memory-N, this process's side; the peer process runs the other. */
    static Report side(Stack stack, Side side, Scenario scenario, Pki pki, InputStream in, OutputStream out) {
        Split.Relay relay = new Split.Relay(in, out);
        try {
            int n = scenario.connections();
            EngineConnection.Opener opener = new EngineConnection.Opener(Pair.config(stack, side, scenario, pki));
            Gates gates = new Gates();
            // One connection first (lazy initialisation), then the peak is reset and N are opened.
            for (EngineConnection conn : heldOpen(relay, side, scenario, opener, gates, 1)) {
                opener.drop(conn);
            }
            opener.reserve(n);
            liveHeap();
            long before = resetPeak();
            List<EngineConnection> conns = heldOpen(relay, side, scenario, opener, gates, n);
            Long peak = Net.residentBytes("VmHWM");
            if (peak == null) {
                throw Failure.other("/proc/self/status has no VmHWM");
            }
            for (EngineConnection conn : conns) {
                opener.drop(conn);
            }
            Report report = Report.ofSide(side, stack);
            report.iterations = n;
            report.negotiated = gates.negotiated();
            report.value(side, "rss_peak_bytes", peak, 0);
            report.value(side, "rss_per_connection_bytes", (peak - before) / (double) n, 0);
            return report;
        } catch (Exception e) {
            // Tell the peer why we stop, so that it reports the cause rather than a broken socket.
            relay.abort(e instanceof Failure || e instanceof Unsupported ? e.getMessage() : Failure.describe(e));
            if (e instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw Failure.other(Failure.describe(e));
        }
    }

    /**
     * Resets the peak resident size to the current one (Linux: 5 into clear_refs) and returns the peak as reset: the
     * JVM's own threads move the resident size between the reset and a later reading of it, which a growth from that
     * reading would count (below zero, where they gave memory back).
     */
    static long resetPeak() {
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
        } catch (IOException e) {
            throw Failure.other("resetting the peak RSS: " + e.getMessage());
        }
        Long peak = Net.residentBytes("VmHWM");
        if (peak == null) {
            throw Failure.other("/proc/self/status has no VmHWM");
        }
        return peak;
    }

    /** N connections of this side through their handshakes in lockstep with the peer process's N, gates passed. */
    private static List<EngineConnection> heldOpen(Split.Relay relay, Side side, Scenario scenario,
            EngineConnection.Opener opener, Gates gates, int n) {
        List<Link> links = new ArrayList<>(n);
        List<EngineConnection> conns = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Link link = new Link();
            links.add(link);
            conns.add(Pair.open(opener, side, side == Side.CLIENT ? link.client() : link.server(), Step.Meter.NONE));
        }
        Step.completeHandshakes(new Split.Lockstep(relay, side, conns, links, Step.Meter.NONE));
        for (EngineConnection conn : conns) {
            check(gates, scenario, conn, side);
        }
        return conns;
    }
}
