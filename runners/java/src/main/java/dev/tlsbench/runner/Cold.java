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
 * side, the server's first), a first full handshake, then a second full one (handshake-full) or a first resumption
 * and a second one (resumption scenarios), each side timed only inside its own calls, as the time measure times
 * it. Time only: callgrind cannot follow a JVM's code (the instructions measure's limit), so --count-side is
 * unsupported. Everything runs as a fresh JVM
 * runs it: classes load on first use (JSSE's, the JCA providers', Netty's and tcnative's JNI library) and the
 * code is interpreted until the JIT compiles it, which it does on its own threads meanwhile.
 */
final class Cold {
    /** The kinds cold takes: the handshakes, and context-client-system (the client's first default trust store). */
    static final List<Kind> KINDS = List.of(Kind.HANDSHAKE_FULL, Kind.HANDSHAKE_RESUME_ID, Kind.HANDSHAKE_RESUME_TICKET,
            Kind.CONTEXT_CLIENT_SYSTEM);

    private Cold() {
    }

    static Json run(Map<String, String> flags) {
        Stack client = Main.stack(Main.required(flags, "client"));
        Stack server = Main.stack(Main.required(flags, "server"));
        Scenario scenario = Main.scenario(flags);
        if (!KINDS.contains(scenario.kind)) {
            throw new Unsupported("cold takes a handshake scenario (handshake-full, handshake-resume-id, "
                    + "handshake-resume-ticket; the Java runner also context-client-system), not "
                    + scenario.kind.text());
        }
        if (flags.containsKey("count-side")) {
            client.capabilities().checkMeasure(Measure.INSTRUCTIONS);
        }
        Main.check(client, scenario, Measure.TIME);
        Main.check(server, scenario, Measure.TIME);
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
        Clock.Pair clocks = new Clock.Pair();
        Stack.Config[] configs = new Stack.Config[2];
        for (Side side : new Side[] {Side.SERVER, Side.CLIENT}) {
            clocks.begin(side);
            try {
                Stack stack = side == Side.CLIENT ? client : server;
                configs[side.ordinal()] = Contexts.build(stack, scenario, side, dataDir);
            } finally {
                clocks.end(side);
            }
        }
        Scenario handshake = Contexts.handshakeOf(scenario);
        Pair pair = new Pair(client, server, handshake, configs[0], configs[1], new Link());
        Json[] sides = {Json.object(), Json.object()};
        take(clocks, sides, "context_ns");
        try {
            // A resumption scenario's first handshake is the seed whose session the next resumes: its client keeps
            // sessions, so it makes no second full handshake.
            handshake(pair, sides, "first_ns", false);
            if (scenario.kind.isResumption()) {
                handshake(pair, sides, "first_resume_ns", true);
                handshake(pair, sides, "second_resume_ns", true);
            } else {
                handshake(pair, sides, "second_ns", false);
            }
        } catch (Failure e) {
            throw Failure.other(Contexts.trustHint(scenario, e.getMessage()));
        } finally {
            configs[0].close();
            configs[1].close();
        }
        cold.put("client", sides[0]).put("server", sides[1]);
        return Json.object().put("status", "ok").put("cold", cold).put("client_library", client.library())
                .put("server_library", server.library());
    }

    /** One handshake on new connections, each side timed inside its calls (creating and dropping included). */
    private static void handshake(Pair pair, Json[] sides, String field, boolean resumed) {
        Clock.Pair clocks = new Clock.Pair();
        pair.checkedHandshake(clocks, resumed);
        take(clocks, sides, field);
    }

    private static void take(Clock.Pair clocks, Json[] sides, String field) {
        for (Side side : Side.values()) {
            sides[side.ordinal()].put(field, clocks.of(side).elapsedNs);
        }
    }
}
