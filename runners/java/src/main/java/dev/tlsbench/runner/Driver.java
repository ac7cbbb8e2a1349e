package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Side;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * The time measure with both sides in this process (driver.rs): each side's clock runs only inside
 * calls into its own library (creating, stepping and dropping its connections, each write and read);
 * gates, digests and bookkeeping are outside both clocks. The collectors' work is read around the measured loop
 * ({@link GcWindow}).
 */
final class Driver {
    private Driver() {
    }

    /** How long a sample lasts: warm up this long, then measure until both clocks reached the minimum. */
    record Spec(long warmupNs, long minTimeNs) {
        boolean warming(long startedNs) {
            return System.nanoTime() - startedNs < warmupNs;
        }

        boolean reached(Clock clock) {
            return clock.elapsedNs >= minTimeNs;
        }
    }

    static Report sample(Pair pair, Spec spec) {
        return pair.scenario.kind == Kind.TRANSFER ? transfer(pair, spec) : handshakes(pair, spec);
    }

    /**
     * A first, unmeasured full handshake leaves the session that the first resumption resumes; then warm-up,
     * then measured handshakes, each on new connections, until both clocks reach the minimum.
     */
    private static Report handshakes(Pair pair, Spec spec) {
        pair.checkedHandshake(Step.Meter.NONE, false);
        boolean resumed = pair.scenario.kind.isResumption();
        long started = System.nanoTime();
        while (spec.warming(started)) {
            pair.checkedHandshake(Step.Meter.NONE, resumed);
        }
        Clock.Pair clocks = new Clock.Pair();
        GcWindow gc = new GcWindow();
        long iterations = 0;
        gc.begin();
        while (!(spec.reached(clocks.client) && spec.reached(clocks.server))) {
            pair.checkedHandshake(clocks, resumed);
            iterations++;
        }
        gc.end();
        Report report = pair.report();
        report.iterations = iterations;
        report.rates(Side.CLIENT, pair.scenario.kind, iterations, clocks.client);
        report.rates(Side.SERVER, pair.scenario.kind, iterations, clocks.server);
        gc.report(report, Side.CLIENT, Side.SERVER);
        return report;
    }

    /**
     * After an unmeasured handshake the server writes 16 KiB per call and the client reads each, until at
     * least 64 MiB moved and both clocks reached the minimum; length and CRC-32C are checked at the end.
     */
    private static Report transfer(Pair pair, Spec spec) {
        EngineConnection[] conns = pair.handshake(Step.Meter.NONE);
        pair.check(conns[0], conns[1], false);
        EngineConnection client = conns[0];
        EngineConnection server = conns[1];
        Stream stream = new Stream();
        long started = System.nanoTime();
        Clock scratch = new Clock();
        while (spec.warming(started)) {
            stream.sendOne(client, server, scratch, scratch);
        }
        Clock.Pair clocks = new Clock.Pair();
        GcWindow gc = new GcWindow();
        long writes = 0;
        gc.begin();
        while (!(writes >= Report.TRANSFER_MIN_WRITES && spec.reached(clocks.client) && spec.reached(clocks.server))) {
            stream.sendOne(client, server, clocks.server, clocks.client);
            writes++;
        }
        gc.end();
        // Whatever the client's engine still holds comes out now, outside the clocks.
        while (stream.receive(client, scratch) > 0) {
            // drained
        }
        Gates.checkTransfer(stream.sentBytes, crc(stream.sent), stream.receivedBytes, crc(stream.received));
        Report report = pair.report();
        report.iterations = writes;
        report.rates(Side.CLIENT, Kind.TRANSFER, writes, clocks.client);
        report.rates(Side.SERVER, Kind.TRANSFER, writes, clocks.server);
        gc.report(report, Side.CLIENT, Side.SERVER);
        return report;
    }

    /** What the server sends in a transfer: 1 MiB of random-looking bytes, the same in every run. */
    static byte[] payload() {
        byte[] payload = new byte[1 << 20];
        new SplittableRandom(0x7152be4cL).nextBytes(payload);
        return payload;
    }

    /** The digest of a split pair's Tally, which a runner of another language checks (docs/runner-protocol.md). */
    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] crc(CRC32C crc) {
        return ByteBuffer.allocate(Long.BYTES).putLong(crc.getValue()).array();
    }

    /** Reads what the connection can decrypt now into {@code inbox}, until it is full or nothing is left. */
    static int receiveAll(EngineConnection conn, byte[] inbox) throws Exception {
        int filled = 0;
        while (filled < inbox.length) {
            int n = conn.receive(inbox, filled, inbox.length - filled);
            if (n == 0) {
                break;
            }
            filled += n;
        }
        return filled;
    }

    /** The application data of a transfer and what each side has seen of it. */
    private static final class Stream {
        final byte[] payload = payload();
        final byte[] inbox = new byte[Report.TRANSFER_WRITE_SIZE];
        // Both tallies are this process's, so a CRC-32C: SHA-256 ran at about 1.5 GB/s here, slower than the
        // stacks' AES-GCM, and twice per record it took most of a transfer sample's wall time (outside the
        // clocks). CRC-32C is a compiler intrinsic; its 32 bits catch any corrupted stretch of up to 32 bits
        // and miss one random corruption in 2^32, enough to tell whether the library handed back what was sent.
        final CRC32C sent = new CRC32C();
        final CRC32C received = new CRC32C();
        int offset;
        long sentBytes;
        long receivedBytes;

        void sendOne(EngineConnection client, EngineConnection server, Clock serverClock, Clock clientClock) {
            int at = offset;
            offset = (offset + Report.TRANSFER_WRITE_SIZE) % payload.length;
            sent.update(payload, at, Report.TRANSFER_WRITE_SIZE);
            sentBytes += Report.TRANSFER_WRITE_SIZE;
            serverClock.begin(Side.SERVER);
            try {
                server.send(payload, at, Report.TRANSFER_WRITE_SIZE);
            } catch (Exception e) {
                throw Failure.library(Side.SERVER, "write", e);
            } finally {
                serverClock.end(Side.SERVER);
            }
            receive(client, clientClock);
        }

        /** Drains what the client can decrypt now into the inbox (one timed region), then digests it. */
        int receive(EngineConnection client, Clock clock) {
            int filled;
            clock.begin(Side.CLIENT);
            try {
                filled = receiveAll(client, inbox);
            } catch (Exception e) {
                throw Failure.library(Side.CLIENT, "read", e);
            } finally {
                clock.end(Side.CLIENT);
            }
            received.update(inbox, 0, filled);
            receivedBytes += filled;
            return filled;
        }
    }
}
