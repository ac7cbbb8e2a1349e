package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Measure;
import dev.tlsbench.runner.Scenario.Side;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The context scenarios (context-server, context-client, context-client-system): one operation builds one side's
 * config (JSSE's SSLContext, Netty's SslContext over an SSL_CTX) with its files read and parsed, and drops it
 * (Netty's SSL_CTX freed), as a process that makes a context pays. Only that side is measured. After the measured
 * loop, one handshake from a config built the same way, against the scenario's other side, must pass the gates:
 * nothing is measured that did not load. Under rss, {@link #RSS_CONTEXTS} are built and held.
 */
final class Contexts {
    private Contexts() {
    }

    /** Where the orchestrator points the runner at the system's bundle with the test CA appended. */
    static final String CERT_FILE_VAR = "SSL_CERT_FILE";
    /** Debian's bundle holds about 140 roots: fewer means the store loaded was not the system's (protocol.rs). */
    static final int MIN_TRUST_ROOTS = 100;
    /** How many contexts the rss measure builds and holds (context.rs, RSS_CONTEXTS). */
    static final int RSS_CONTEXTS = 100;

    /** The handshake whose contexts a context scenario builds: a full one, with its name's parts. */
    static Scenario handshakeOf(Scenario scenario) {
        return scenario.kind.isContext() ? scenario.withKind(Scenario.Kind.HANDSHAKE_FULL) : scenario;
    }

    /** Builds one side's config as the scenario's handshake builds it, files read now. */
    static Stack.Config build(Stack stack, Scenario scenario, Side side, Path dataDir) {
        boolean system = side == Side.CLIENT && scenario.kind == Scenario.Kind.CONTEXT_CLIENT_SYSTEM;
        return Pair.config(stack, side, handshakeOf(scenario), Pki.loadSide(dataDir, scenario, side, system));
    }

    static Json sample(Stack client, Stack server, Scenario scenario, Measure measure, Path dataDir, Driver.Spec spec) {
        Side side = scenario.kind.contextSide();
        Stack stack = side == Side.CLIENT ? client : server;
        if (scenario.kind == Scenario.Kind.CONTEXT_CLIENT_SYSTEM) {
            String file = System.getenv(CERT_FILE_VAR);
            if (file == null || !java.nio.file.Files.isRegularFile(Path.of(file))) {
                throw Failure.other("context-client-system needs " + CERT_FILE_VAR + ": the system's bundle with the "
                        + "test CA appended (tlsbench writes it as DATA_DIR/pki-v2/KEY/system-bundle.pem and sets the "
                        + "variable)");
            }
            SystemTrust.useBundle();
        }
        // The first build unmeasured: a process's first context pays for the library's initialisation, and the
        // JDK loads the default store here (it keeps it while the file is unchanged).
        build(stack, scenario, side, dataDir).close();
        long started = System.nanoTime();
        // No warm-up under rss: the heap it grows would hold the contexts measured after it.
        long warmupNs = switch (measure) {
            case HEAP -> Math.max(spec.warmupNs(), Common.FIXED_WARMUP_MS * 1_000_000);
            case RSS -> 0;
            default -> spec.warmupNs();
        };
        while (System.nanoTime() - started < warmupNs) {
            build(stack, scenario, side, dataDir).close();
        }
        Report report = new Report();
        long iterations = 0;
        if (measure == Measure.TIME) {
            Clock clock = new Clock();
            GcWindow gc = new GcWindow();
            gc.begin();
            while (iterations == 0 || !spec.reached(clock)) {
                timed(clock, stack, scenario, side, dataDir);
                iterations++;
            }
            gc.end();
            report.rates(side, scenario.kind, iterations, clock);
            gc.report(report, side);
        } else if (measure == Measure.HEAP) {
            Heap.Meter meter = new Heap.Meter();
            started = System.nanoTime();
            while (iterations < Heap.MIN_HANDSHAKES || System.nanoTime() - started < spec.minTimeNs()) {
                timed(meter, stack, scenario, side, dataDir);
                iterations++;
            }
            report.value(side, "runtime_alloc_bytes_per_context", meter.bytes[side.ordinal()] / (double) iterations, 0);
        } else if (measure == Measure.RSS) {
            iterations = RSS_CONTEXTS;
            report.value(side, "rss_context_bytes", rssPerContext(stack, scenario, side, dataDir), 0);
        } else {
            throw new Unsupported("measure " + measure.text() + " is not taken by the Java runner");
        }
        report.iterations = iterations;
        Stack.Config last = build(stack, scenario, side, dataDir);
        int roots = last.trustRoots();
        Pair pair = verify(client, server, scenario, side, last, dataDir);
        report.clientLibrary = client.library();
        report.serverLibrary = server.library();
        report.negotiated = pair.gates.negotiated();
        if (roots >= 0 && scenario.kind == Scenario.Kind.CONTEXT_CLIENT_SYSTEM) {
            if (roots < MIN_TRUST_ROOTS) {
                throw Failure.gate("the system's trust store held " + roots + " roots (fewer than " + MIN_TRUST_ROOTS
                        + "): is " + CERT_FILE_VAR + " read?");
            }
            report.value(side, "trust_roots", roots, 0);
        }
        return report.toJson();
    }

    /**
     * The growth of the process's peak resident size while {@link #RSS_CONTEXTS} contexts are built and held, per
     * context, from a full collection. It includes the garbage the builds left for a collection that had not come
     * yet, and the heap the JVM committed for it: what the process pays, by the JVM's own policy.
     */
    private static double rssPerContext(Stack stack, Scenario scenario, Side side, Path dataDir) {
        List<Stack.Config> held = new ArrayList<>(RSS_CONTEXTS);
        Memory.liveHeap();
        long before = Memory.resetPeak();
        try {
            for (int i = 0; i < RSS_CONTEXTS; i++) {
                held.add(build(stack, scenario, side, dataDir));
            }
            Long peak = Net.residentBytes("VmHWM");
            if (peak == null) {
                throw Failure.other("/proc/self/status has no VmHWM");
            }
            return (peak - before) / (double) RSS_CONTEXTS;
        } finally {
            for (Stack.Config config : held) {
                config.close();
            }
        }
    }

    /** One build and drop on the side's meter. */
    private static void timed(Step.Meter meter, Stack stack, Scenario scenario, Side side, Path dataDir) {
        meter.begin(side);
        try {
            build(stack, scenario, side, dataDir).close();
        } finally {
            meter.end(side);
        }
    }

    /**
     * One full handshake from {@code built} against a fresh config of the other side, with handshake-full's gates:
     * a client store that lacks the test CA fails here.
     */
    static Pair verify(Stack client, Stack server, Scenario scenario, Side side, Stack.Config built, Path dataDir) {
        Scenario handshake = handshakeOf(scenario);
        Pki pki = Pki.load(dataDir, scenario.key);
        Stack.Config clientConfig = side == Side.CLIENT ? built : Pair.config(client, Side.CLIENT, handshake, pki);
        Stack.Config serverConfig = side == Side.SERVER ? built : Pair.config(server, Side.SERVER, handshake, pki);
        Pair pair = new Pair(client, server, handshake, clientConfig, serverConfig, new Link());
        try {
            pair.checkedHandshake(Step.Meter.NONE, false);
        } catch (Failure e) {
            throw Failure.gate("the handshake (" + handshake.name() + ") from the last context built did not complete: "
                    + trustHint(scenario, e.getMessage()));
        } finally {
            clientConfig.close();
            serverConfig.close();
        }
        return pair;
    }

    /** A context-client-system handshake's failure says where the store came from. */
    static String trustHint(Scenario scenario, String reason) {
        return scenario.kind == Scenario.Kind.CONTEXT_CLIENT_SYSTEM ? reason + SystemTrust.hint() : reason;
    }
}
