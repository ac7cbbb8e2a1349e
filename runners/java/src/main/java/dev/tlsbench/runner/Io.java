package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Side;
import java.util.List;

/**
 * The io measure and the trace (io.rs): every transport call of both sides in one measured connection,
 * from the link's IO log, with both sides in this process. Handshake kinds: the calls of one handshake
 * after an unmeasured seed (a resumption kind's measured handshake resumes the seed's session).
 * io-profile: a whole short connection: handshake, one byte each way, close_notify each way.
 *
 * <p>The counts are those of {@link EngineConnection}'s IO policy: SSLEngine does no IO of its own.
 */
final class Io {
    static final byte CLIENT_BYTE = 0x42;
    static final byte SERVER_BYTE = 0x24;
    /** How many times a side is asked to read before what it waits for counts as missing. */
    private static final int MAX_READ_ATTEMPTS = 4;

    private Io() {
    }

    static Report sample(Pair pair) {
        List<IoLog.Event> events = trace(pair);
        Report report = pair.report();
        report.iterations = 1;
        for (Side side : Side.values()) {
            long[] t = IoLog.totals(events, side);
            report.value(side, "read_calls", t[0], 0);
            report.value(side, "empty_read_calls", t[1], 0);
            report.value(side, "write_calls", t[2], 0);
            report.value(side, "io_calls", t[0] + t[2], 0);
            report.value(side, "records_written", t[3], 0);
            report.value(side, "bytes_written", t[4], 0);
        }
        return report;
    }

    /** The trace reply: every call of the measured connection, in order. */
    static Json traceReply(Pair pair) {
        List<IoLog.Event> events = trace(pair);
        return Json.object().put("status", "ok").put("scenario", pair.scenario.name())
                .put("client_stack", pair.clientStack.id()).put("server_stack", pair.serverStack.id())
                .put("client_library", pair.clientStack.library()).put("server_library", pair.serverStack.library())
                .put("negotiated", pair.gates.negotiated())
                .put("events", events.stream().map(IoLog.Event::toJson).toList());
    }

    static List<IoLog.Event> trace(Pair pair) {
        return pair.scenario.kind == Kind.IO_PROFILE ? profile(pair) : measuredHandshake(pair);
    }

    private static List<IoLog.Event> measuredHandshake(Pair pair) {
        pair.checkedHandshake(Step.Meter.NONE, false);
        pair.link.log().take();
        pair.link.phase("handshake");
        EngineConnection[] conns = pair.handshake(Step.Meter.NONE);
        pair.check(conns[0], conns[1], pair.scenario.kind.isResumption());
        List<IoLog.Event> events = pair.link.log().take();
        Pair.drop(pair.client, conns[0], Side.CLIENT, Step.Meter.NONE);
        Pair.drop(pair.server, conns[1], Side.SERVER, Step.Meter.NONE);
        return events;
    }

    private static List<IoLog.Event> profile(Pair pair) {
        pair.link.phase("handshake");
        EngineConnection[] conns = pair.handshake(Step.Meter.NONE);
        EngineConnection client = conns[0];
        EngineConnection server = conns[1];
        pair.check(client, server, false);

        pair.link.phase("application data");
        call(Side.CLIENT, "write", () -> client.send(new byte[] {CLIENT_BYTE}, 0, 1));
        expectByte(server, Side.SERVER, CLIENT_BYTE, pair.link);
        call(Side.SERVER, "write", () -> server.send(new byte[] {SERVER_BYTE}, 0, 1));
        expectByte(client, Side.CLIENT, SERVER_BYTE, pair.link);

        pair.link.phase("close_notify");
        call(Side.CLIENT, "close", client::close);
        expectClose(server, Side.SERVER, pair.link);
        call(Side.SERVER, "close", server::close);
        expectClose(client, Side.CLIENT, pair.link);
        int inFlight = pair.link.inFlight();
        if (inFlight != 0) {
            throw Failure.gate("both sides read the other's close_notify, and " + inFlight + " bytes stay unread");
        }
        List<IoLog.Event> events = pair.link.log().take();
        Pair.drop(pair.client, client, Side.CLIENT, Step.Meter.NONE);
        Pair.drop(pair.server, server, Side.SERVER, Step.Meter.NONE);
        return events;
    }

    interface Call {
        void run() throws Exception;
    }

    private static void call(Side side, String stage, Call call) {
        try {
            call.run();
        } catch (Exception e) {
            throw Failure.library(side, stage, e);
        }
    }

    /** Reads, while the peer's bytes wait, until its one byte arrives, and checks it. */
    private static void expectByte(EngineConnection conn, Side side, byte want, Link link) {
        byte[] buf = new byte[16];
        for (int i = 0; i < MAX_READ_ATTEMPTS && link.unreadBy(side) > 0; i++) {
            int n;
            try {
                n = conn.receive(buf, 0, buf.length);
            } catch (Exception e) {
                throw Failure.library(side, "read", e);
            }
            if (n == 0) {
                continue;
            }
            if (n == 1 && buf[0] == want) {
                return;
            }
            throw Failure.gate(n == 1
                    ? String.format("%s received byte %#04x, the peer sent %#04x", side.text(), buf[0], want)
                    : side.text() + " received " + n + " bytes, the peer sent one");
        }
        throw Failure.gate(side.text() + " did not receive the peer's byte in " + MAX_READ_ATTEMPTS + " reads");
    }

    /** Reads, while the peer's bytes wait, until its close_notify has arrived. */
    private static void expectClose(EngineConnection conn, Side side, Link link) {
        for (int i = 0; i < MAX_READ_ATTEMPTS && link.unreadBy(side) > 0; i++) {
            try {
                if (conn.peerClosed()) {
                    return;
                }
            } catch (Exception e) {
                throw Failure.library(side, "read close_notify", e);
            }
        }
        throw Failure.gate(side.text() + " did not receive the peer's close_notify in " + MAX_READ_ATTEMPTS + " reads");
    }
}
