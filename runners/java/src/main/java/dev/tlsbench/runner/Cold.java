package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Measure;
import dev.tlsbench.runner.Scenario.Side;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The cold command: what a fresh JVM pays before and at its first handshakes, both sides in this process. The
 * orchestrator reads CLOCK_MONOTONIC just before it spawns the runner (--spawned-at-ns); {@link Main#STARTED_NS}
 * is the same clock (System.nanoTime is CLOCK_MONOTONIC on Linux) as the main class initialises, so
 * process_start_ns is the launcher script, the JVM's start (libjvm, the heap, the module system, the class data
 * sharing archive) and loading the main class. Then each side's config is built with its files read (timed per
 * side), and a first full handshake, a second one, and for a resumption scenario a first resumption and a second
 * one, each side timed only inside its own calls, as the time measure times it. Everything runs as a fresh JVM
 * runs it: classes load on first use (JSSE's, the JCA providers', Netty's and tcnative's JNI library) and the
 * code is interpreted until the JIT compiles it, which it does on its own threads meanwhile.
 */
final class Cold {
    /** The kinds cold takes: handshakes, and a context kind as a full handshake whose side builds that context. */
    static final List<Kind> KINDS = List.of(Kind.HANDSHAKE_FULL, Kind.HANDSHAKE_RESUME_ID, Kind.HANDSHAKE_RESUME_TICKET,
            Kind.CONTEXT_SERVER, Kind.CONTEXT_CLIENT, Kind.CONTEXT_CLIENT_SYSTEM);

    private Cold() {
    }

    static Json run(Map<String, String> flags) {
        Stack client = Main.stack(Main.required(flags, "client"));
        Stack server = Main.stack(Main.required(flags, "server"));
        Scenario scenario = Main.scenario(flags);
        Main.check(client, scenario, Measure.TIME);
        Main.check(server, scenario, Measure.TIME);
        if (!KINDS.contains(scenario.kind)) {
            throw new Unsupported("cold does not apply to " + scenario.kind.text() + " scenarios (it applies to: "
                    + KINDS.stream().map(Kind::text).collect(Collectors.joining(", ")) + ")");
        }
        Json cold = Json.object();
        if (flags.containsKey("spawned-at-ns")) {
            long spawnedAt = Main.number(flags, "spawned-at-ns", -1);
            if (spawnedAt < 0 || spawnedAt > Main.STARTED_NS) {
                throw Failure.other("cold: --spawned-at-ns " + spawnedAt + " is not a CLOCK_MONOTONIC reading before "
                        + "this process began (" + Main.STARTED_NS + ")");
            }
            cold.put("process_start_ns", Main.STARTED_NS - spawnedAt);
        }
        JvmPins.apply(scenario, Main.jsseSides(client, server));
        Main.available(client);
        Main.available(server);
        Path dataDir = Pki.dataDir(flags.get("data-dir"));
        if (scenario.kind == Kind.CONTEXT_CLIENT_SYSTEM) {
            // The PKCS12 store a deployment would have: made outside the clocks.
            SystemTrust.useBundle();
        }
        Clock.Pair contexts = new Clock.Pair();
        Stack.Config[] configs = new Stack.Config[2];
        for (Side side : Side.values()) {
            contexts.begin(side);
            try {
                configs[side.ordinal()] = Contexts.build(side == Side.CLIENT ? client : server, scenario, side, dataDir);
            } finally {
                contexts.end(side);
            }
        }
        Pair pair = new Pair(client, server, scenario, configs[0], configs[1], new Link());
        Json[] sides = {Json.object(), Json.object()};
        for (Side side : Side.values()) {
            sides[side.ordinal()].put("context_ns", contexts.of(side).elapsedNs);
        }
        try {
            handshake(pair, sides, "first_ns", false);
            handshake(pair, sides, "second_ns", false);
            if (scenario.kind.isResumption()) {
                handshake(pair, sides, "first_resume_ns", true);
                handshake(pair, sides, "second_resume_ns", true);
            }
        } catch (Failure e) {
            throw Contexts.trustHint(scenario, e);
        } finally {
            configs[0].close();
            configs[1].close();
        }
        cold.put("client", sides[0]).put("server", sides[1]);
        return Json.object().put("status", "ok").put("cold", cold);
    }

    /**
     * One handshake on new connections, each side timed, through the gates. After a full one the client's session
     * is invalidated, so that the second full handshake of a resumption scenario is full; the resumptions resume the
     * session the second left.
     */
    private static void handshake(Pair pair, Json[] sides, String field, boolean resumed) {
        Clock.Pair clocks = new Clock.Pair();
        EngineConnection[] conns = pair.handshake(clocks);
        pair.check(conns[0], conns[1], resumed);
        if (!resumed && field.equals("first_ns")) {
            pair.client.config().forgetSessions(conns[0].engine());
        }
        Pair.drop(pair.client, conns[0], Side.CLIENT, clocks);
        Pair.drop(pair.server, conns[1], Side.SERVER, clocks);
        for (Side side : Side.values()) {
            sides[side.ordinal()].put(field, clocks.of(side).elapsedNs);
        }
    }
}
