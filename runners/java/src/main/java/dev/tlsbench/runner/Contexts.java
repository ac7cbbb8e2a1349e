package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Measure;
import dev.tlsbench.runner.Scenario.Side;
import java.nio.file.Path;

/**
 * The context scenarios (context-server, context-client, context-client-system): one operation builds one side's
 * config (JSSE's SSLContext, Netty's SslContext over an SSL_CTX) with its files read and parsed, and drops it
 * (Netty's SSL_CTX freed), as a process that makes a context pays. Only that side is measured. After the measured
 * loop, one handshake from a config built the same way, against the scenario's other side, must pass the gates:
 * nothing is measured that did not load.
 */
final class Contexts {
    private Contexts() {
    }

    /** Builds one side's config as the scenario says, files read now. */
    static Stack.Config build(Stack stack, Scenario scenario, Side side, Path dataDir) {
        boolean system = side == Side.CLIENT && scenario.kind == Scenario.Kind.CONTEXT_CLIENT_SYSTEM;
        return Pair.config(stack, side, scenario, Pki.loadSide(dataDir, scenario, side, system));
    }

    static Json sample(Stack client, Stack server, Scenario scenario, Measure measure, Path dataDir, Driver.Spec spec) {
        Side side = scenario.kind.contextSide();
        Stack stack = side == Side.CLIENT ? client : server;
        if (scenario.kind == Scenario.Kind.CONTEXT_CLIENT_SYSTEM) {
            SystemTrust.useBundle();
        }
        // The first build unmeasured: the JDK loads the default store here and keeps it while it is in use.
        build(stack, scenario, side, dataDir).close();
        long started = System.nanoTime();
        long warmupNs = measure == Measure.HEAP ? Math.max(spec.warmupNs(), Common.FIXED_WARMUP_MS * 1_000_000)
                : spec.warmupNs();
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
        } else {
            throw new Unsupported("measure " + measure.text() + " is not taken by the Java runner");
        }
        report.iterations = iterations;
        Stack.Config last = build(stack, scenario, side, dataDir);
        Pair pair = verify(client, server, scenario, side, last, dataDir);
        report.clientLibrary = client.library();
        report.serverLibrary = server.library();
        report.negotiated = pair.gates.negotiated();
        if (last.trustRoots() >= 0) {
            report.value(side, "trust_roots", last.trustRoots(), 0);
        }
        return report.toJson();
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

    /** One full handshake from {@code built} against the other side's config of the scenario, through the gates. */
    static Pair verify(Stack client, Stack server, Scenario scenario, Side side, Stack.Config built, Path dataDir) {
        Pki pki = Pki.load(dataDir, scenario.key);
        Stack.Config clientConfig = side == Side.CLIENT ? built : Pair.config(client, Side.CLIENT, scenario, pki);
        Stack.Config serverConfig = side == Side.SERVER ? built : Pair.config(server, Side.SERVER, scenario, pki);
        Pair pair = new Pair(client, server, scenario, clientConfig, serverConfig, new Link());
        try {
            pair.checkedHandshake(Step.Meter.NONE, false);
        } catch (Failure e) {
            throw trustHint(scenario, e);
        } finally {
            clientConfig.close();
            serverConfig.close();
        }
        return pair;
    }

    /** A failure of a context-client-system handshake says where the store came from. */
    static Failure trustHint(Scenario scenario, Failure e) {
        if (scenario.kind != Scenario.Kind.CONTEXT_CLIENT_SYSTEM) {
            return e;
        }
        return Failure.other(e.getMessage() + SystemTrust.hint());
    }
}
