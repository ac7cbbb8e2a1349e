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

    /**
     * How long a sample lasts: warm up this long, then measure until both clocks reached the minimum; judged
     * against {@code fullSpeed} ({@code --full-speed}, {@link FullSpeed}) where it is above 0.
     */
    record Spec(long warmupNs, long minTimeNs, double fullSpeed) {
        Spec(long warmupNs, long minTimeNs) {
            this(warmupNs, minTimeNs, 0);
        }

        boolean warming(long startedNs) {
            return System.nanoTime() - startedNs < warmupNs;
        }

        boolean reached(Clock clock) {
            return clock.elapsedNs >= minTimeNs;
        }

        /** Whether {@code iterations} (at least {@code minIterations}) timed by {@code clocks} make a sample. */
        boolean done(long iterations, long minIterations, Clock.Pair clocks) {
            return iterations >= minIterations && reached(clocks.client) && reached(clocks.server);
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
        GcWindow gc = new GcWindow();
        gc.begin();
        Measured loop = measure(spec, 0, clocks -> pair.checkedHandshake(clocks, resumed));
        gc.end();
        Report report = pair.report();
        loop.report(report, pair.scenario.kind);
        gc.report(report, Side.CLIENT, Side.SERVER);
        return report;
    }

    /** One iteration of a measured loop on both sides' clocks: a handshake, or a 16 KiB write. */
    interface Iteration {
        void run(Clock.Pair clocks);
    }

    /** What a measured loop's figures are of: its iterations and clocks, and the judge's verdict (or null). */
    record Measured(long iterations, Clock.Pair clocks, FullSpeed.CpuSpeed cpuSpeed) {
        void report(Report report, Kind kind) {
            report.iterations = iterations;
            report.rates(Side.CLIENT, kind, iterations, clocks.client);
            report.rates(Side.SERVER, kind, iterations, clocks.server);
            report.cpuSpeed = cpuSpeed;
        }
    }

    /** Runs {@code iteration} until at least {@code minIterations} and both sides' minimum time; judged if asked. */
    static Measured measure(Spec spec, long minIterations, Iteration iteration) {
        if (spec.fullSpeed > 0) {
            return gated(spec, new FullSpeed.Gate(spec.fullSpeed), minIterations, iteration);
        }
        Clock.Pair clocks = new Clock.Pair();
        long iterations = 0;
        while (!spec.done(iterations, minIterations, clocks)) {
            iteration.run(clocks);
            iterations++;
        }
        return new Measured(iterations, clocks, null);
    }

    /**
     * {@link #measure} judged at full speed ({@link FullSpeed}): a stretch of iterations between two probes counts
     * only where both found the CPU at full speed, until the counted ones make a sample. Where they have not by
     * {@code FullSpeed.BOUND} times each side's minimum, every stretch counts, and the verdict says so.
     */
    private static Measured gated(Spec spec, FullSpeed.Gate gate, long minIterations, Iteration iteration) {
        Clock.Pair counted = new Clock.Pair();
        Clock.Pair all = new Clock.Pair();
        Clock.Pair stretch = new Clock.Pair();
        Spec bound = new Spec(0, FullSpeed.BOUND * spec.minTimeNs);
        long countedIterations = 0;
        long allIterations = 0;
        try {
            while (true) {
                stretch.reset();
                long n = 0;
                do {
                    iteration.run(stretch);
                    n++;
                } while (!gate.due());
                if (gate.judge()) {
                    counted.add(stretch);
                    countedIterations += n;
                }
                all.add(stretch);
                allIterations += n;
                if (spec.done(countedIterations, minIterations, counted)) {
                    return new Measured(countedIterations, counted, gate.finish(true));
                }
                // The bound is a multiple of the minimum, so reaching it makes a sample of every stretch.
                if (bound.done(allIterations, minIterations, all)) {
                    return new Measured(allIterations, all, gate.finish(false));
                }
            }
        } finally {
            gate.abandon();
        }
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
        GcWindow gc = new GcWindow();
        gc.begin();
        Measured loop = measure(spec, Report.TRANSFER_MIN_WRITES,
                clocks -> stream.sendOne(client, server, clocks.server, clocks.client));
        gc.end();
        // Whatever the client's engine still holds comes out now, outside the clocks.
        while (stream.receive(client, scratch) > 0) {
            // drained
        }
        Gates.checkTransfer(stream.sentBytes, crc(stream.sent), stream.receivedBytes, crc(stream.received));
        Report report = pair.report();
        loop.report(report, Kind.TRANSFER);
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
