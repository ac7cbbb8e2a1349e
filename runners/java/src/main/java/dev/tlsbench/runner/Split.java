package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Side;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * One side of a split-process pair (split.rs): this process runs one side on its own in-memory link;
 * between turns the bytes each side wrote are relayed to the peer runner over a socket, outside both
 * clocks. The client decides every step and the server follows, so both do the same iterations; the
 * messages and decisions are exactly those of split.rs, so a Rust, Go or Java runner can be either side.
 */
final class Split {
    /** What the client tells the server to do next: seed, warm-up, measure, stop. */
    static final int SEED = 0;
    static final int WARMUP = 1;
    static final int MEASURE = 2;
    static final int STOP = 3;

    private final Relay relay;
    private final Side side;
    private final Scenario scenario;
    private final EngineConnection.Opener opener;
    private final Link link = new Link();
    private final Gates gates = new Gates();

    private Split(Relay relay, Side side, Scenario scenario, EngineConnection.Opener opener) {
        this.relay = relay;
        this.side = side;
        this.scenario = scenario;
        this.opener = opener;
    }

    /** Measures this process's side of one time sample; the peer process runs the other side. */
    static Report sampleSide(Stack stack, Side side, Scenario scenario, Pki pki, Driver.Spec spec, InputStream in,
            OutputStream out) {
        Relay relay = new Relay(in, out);
        try {
            Split local = new Split(relay, side, scenario,
                    new EngineConnection.Opener(Pair.config(stack, side, scenario, pki)));
            Clock clock = new Clock();
            GcWindow gc = new GcWindow();
            long iterations = scenario.kind == Kind.TRANSFER ? local.transfer(spec, clock, gc)
                    : local.handshakes(spec, clock, gc);
            Report report = Report.ofSide(side, stack);
            report.iterations = iterations;
            report.rates(side, scenario.kind, iterations, clock);
            gc.report(report, side);
            report.negotiated = local.gates.negotiated();
            return report;
        } catch (RuntimeException e) {
            // Tell the peer why we stop, so that it reports the cause rather than a broken socket.
            relay.abort(e instanceof Failure || e instanceof Unsupported ? e.getMessage() : Failure.describe(e));
            throw e;
        }
    }

    /**
     * The seed (full, unmeasured), warm-up for as long as the client says, then measured handshakes until both clocks
     * did their part. The collectors are read before the first measured handshake and once the client said stop.
     */
    private long handshakes(Driver.Spec spec, Clock clock, GcWindow gc) {
        long started = System.nanoTime();
        long iterations = 0;
        int proposed = SEED;
        while (true) {
            int next = follow(proposed);
            if (next == STOP) {
                if (gc.began()) {
                    gc.end();
                }
                return iterations;
            }
            if (next == MEASURE && !gc.began()) {
                gc.begin();
            }
            Step.Meter timed = next == MEASURE ? clock : Step.Meter.NONE;
            EngineConnection conn = handshake(timed);
            boolean resumed = scenario.kind.isResumption() && next != SEED;
            gates.check(side, scenario, Pair.negotiated(conn, side), resumed);
            Pair.drop(opener, conn, side, timed);
            // Only the client's proposal counts; the server follows what it is told.
            if (next == MEASURE) {
                iterations++;
                proposed = bothReached(spec.reached(clock)) ? STOP : MEASURE;
            } else {
                proposed = spec.warming(started) ? WARMUP : MEASURE;
            }
        }
    }

    /**
     * After an unmeasured handshake the server writes 16 KiB per call and the client reads each, until at
     * least 64 MiB moved and both clocks reached the minimum; the client checks length and SHA-256
     * against the server's tally. The collectors are read before the first measured write and once the client said
     * stop.
     */
    private long transfer(Driver.Spec spec, Clock clock, GcWindow gc) {
        EngineConnection conn = handshake(Step.Meter.NONE);
        gates.check(side, scenario, Pair.negotiated(conn, side), false);
        byte[] payload = Driver.payload();
        byte[] inbox = new byte[Report.TRANSFER_WRITE_SIZE];
        MessageDigest digest = Driver.sha256();
        long tally = 0;
        int offset = 0;
        long writes = 0;
        long started = System.nanoTime();
        boolean peerReached = false;
        while (true) {
            int proposal;
            if (spec.warming(started)) {
                proposal = WARMUP;
            } else if (writes >= Report.TRANSFER_MIN_WRITES && spec.reached(clock) && peerReached) {
                proposal = STOP;
            } else {
                proposal = MEASURE;
            }
            int next = follow(proposal);
            if (next == STOP) {
                if (gc.began()) {
                    gc.end();
                }
                break;
            }
            if (next == MEASURE && !gc.began()) {
                gc.begin();
            }
            Step.Meter timed = next == MEASURE ? clock : Step.Meter.NONE;
            if (side == Side.SERVER) {
                int at = offset;
                offset = (offset + Report.TRANSFER_WRITE_SIZE) % payload.length;
                digest.update(payload, at, Report.TRANSFER_WRITE_SIZE);
                tally += Report.TRANSFER_WRITE_SIZE;
                timed.begin(side);
                try {
                    conn.send(payload, at, Report.TRANSFER_WRITE_SIZE);
                } catch (Exception e) {
                    throw Failure.library(side, "write", e);
                } finally {
                    timed.end(side);
                }
                relay.sendFlight(link.takeWrittenBy(side), spec.reached(clock), 0);
            } else {
                Message flight = relay.recv();
                if (flight.tag != 0) {
                    throw unexpected("a flight of records");
                }
                peerReached = flight.done;
                link.deliverTo(side, flight.flights.get(0));
                int n = receive(conn, inbox, timed);
                digest.update(inbox, 0, n);
                tally += n;
            }
            if (next == MEASURE) {
                writes++;
            }
        }
        if (side == Side.SERVER) {
            relay.sendTally(tally, digest.digest());
            return writes;
        }
        // Whatever the library still holds comes out now, outside the clock.
        int n;
        while ((n = receive(conn, inbox, Step.Meter.NONE)) > 0) {
            digest.update(inbox, 0, n);
            tally += n;
        }
        Message sent = relay.recv();
        if (sent.tag != 3) {
            throw unexpected("the sender's tally");
        }
        Gates.checkTransfer(sent.tallyBytes, sent.digest, tally, digest.digest());
        return writes;
    }

    private int receive(EngineConnection conn, byte[] inbox, Step.Meter meter) {
        meter.begin(side);
        try {
            return Driver.receiveAll(conn, inbox);
        } catch (Exception e) {
            throw Failure.library(side, "read", e);
        } finally {
            meter.end(side);
        }
    }

    /** One connection on an empty link, through its handshake in turns with the peer's. */
    private EngineConnection handshake(Step.Meter meter) {
        link.clear();
        EngineConnection conn = Pair.open(opener, side, side == Side.CLIENT ? link.client() : link.server(), meter);
        Step.completeHandshakes(new Lockstep(relay, side, List.of(conn), List.of(link), meter));
        return conn;
    }

    /**
     * This process's side of N connection pairs, the other side being the peer process's (split.rs's Split): a
     * turn of this side steps each connection and sends the peer one Flights message with a flight per connection
     * (and whether all have completed, and how many received bytes they left unread); the peer's turn is its
     * answer in kind, delivered to the same connections.
     */
    static final class Lockstep implements Step.Turns {
        private final Relay relay;
        private final Side side;
        private final List<EngineConnection> conns;
        private final List<Link> links;
        private final Step.Progress[] progress;
        private final Step.Meter meter;
        /** Bytes this side sent in its last turn, which the peer has not read yet. */
        private int sent;
        /** The bytes the peer left unread after its last turn. */
        private int peerUnread;

        Lockstep(Relay relay, Side side, List<EngineConnection> conns, List<Link> links, Step.Meter meter) {
            this.relay = relay;
            this.side = side;
            this.conns = conns;
            this.links = links;
            this.meter = meter;
            this.progress = new Step.Progress[conns.size()];
            for (int i = 0; i < progress.length; i++) {
                progress[i] = new Step.Progress();
            }
        }

        @Override
        public boolean turn(Side whose) {
            int n = conns.size();
            if (whose == side) {
                List<byte[]> flights = new ArrayList<>(n);
                boolean done = true;
                int unread = 0;
                sent = 0;
                for (int i = 0; i < n; i++) {
                    done &= Step.turnOne(conns.get(i), side, links.get(i), progress[i], meter);
                    byte[] flight = links.get(i).takeWrittenBy(side);
                    flights.add(flight);
                    sent += flight.length;
                    unread += links.get(i).unreadBy(side);
                }
                relay.sendFlights(flights, done, unread);
                return done;
            }
            Message message = relay.recv();
            if (message.tag != 5 || message.flights.size() != n) {
                throw unexpected("one flight per connection");
            }
            for (int i = 0; i < n; i++) {
                links.get(i).deliverTo(side, message.flights.get(i));
            }
            sent = 0;
            peerUnread = (int) message.unread;
            return message.done;
        }

        @Override
        public int unread() {
            int unread = sent + peerUnread;
            for (Link link : links) {
                unread += link.unreadBy(side);
            }
            return unread;
        }
    }

    /** The client's proposal becomes what both do next: the client sends it, the server receives it. */
    private int follow(int proposed) {
        if (side == Side.CLIENT) {
            relay.send(new byte[] {1, (byte) proposed});
            return proposed;
        }
        Message message = relay.recv();
        if (message.tag != 1) {
            throw unexpected("what to do next");
        }
        return message.next;
    }

    /** After a measured handshake: whether both clocks reached the minimum; only the client learns both. */
    private boolean bothReached(boolean mine) {
        if (side == Side.SERVER) {
            relay.send(new byte[] {2, (byte) (mine ? 1 : 0)});
            return false;
        }
        Message message = relay.recv();
        if (message.tag != 2) {
            throw unexpected("the server's clock");
        }
        return mine && message.done;
    }

    private static Failure unexpected(String what) {
        return Failure.other("the peer runner sent something else than " + what);
    }

    /** A relay message, by tag: 0 Flight, 1 Next, 2 Reached, 3 Tally, 5 Flights (4, Abort, is an error). */
    static final class Message {
        int tag;
        boolean done;
        long unread;
        int next;
        List<byte[]> flights = new ArrayList<>();
        long tallyBytes;
        byte[] digest;
    }

    /**
     * The socket to the peer: every message a frame of a u32 LE length, then the tag byte and its body
     * (split.rs, Relay; Tally carries SHA-256, since protocol v1).
     */
    static final class Relay {
        /** The largest message: a longer length is garbage, not a message. */
        static final long MAX_FRAME = 256L << 20;
        private final InputStream in;
        private final OutputStream out;

        Relay(InputStream in, OutputStream out) {
            this.in = in;
            this.out = out;
        }

        void send(byte[] frame) {
            byte[] message = new byte[4 + frame.length];
            ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN).putInt(frame.length).put(frame);
            try {
                out.write(message);
                out.flush();
            } catch (IOException e) {
                throw Failure.peer("the peer runner went away: " + e.getMessage());
            }
        }

        void sendFlight(byte[] bytes, boolean done, int unread) {
            ByteBuffer frame = ByteBuffer.allocate(6 + bytes.length).order(ByteOrder.LITTLE_ENDIAN);
            frame.put((byte) 0).put((byte) (done ? 1 : 0)).putInt(unread).put(bytes);
            send(frame.array());
        }

        void sendFlights(List<byte[]> flights, boolean done, int unread) {
            int size = 6;
            for (byte[] flight : flights) {
                size += 4 + flight.length;
            }
            ByteBuffer frame = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
            frame.put((byte) 5).put((byte) (done ? 1 : 0)).putInt(unread);
            for (byte[] flight : flights) {
                frame.putInt(flight.length).put(flight);
            }
            send(frame.array());
        }

        void sendTally(long bytes, byte[] digest) {
            ByteBuffer frame = ByteBuffer.allocate(41).order(ByteOrder.LITTLE_ENDIAN);
            frame.put((byte) 3).putLong(bytes).put(digest);
            send(frame.array());
        }

        /** Tells the peer why this side stops; the socket may already be gone. */
        void abort(String reason) {
            byte[] text = reason.getBytes(StandardCharsets.UTF_8);
            byte[] frame = new byte[1 + text.length];
            frame[0] = 4;
            System.arraycopy(text, 0, frame, 1, text.length);
            try {
                send(frame);
            } catch (Failure ignored) {
                // The peer is gone; our own reply says why we stopped.
            }
        }

        Message recv() {
            byte[] header = new byte[4];
            if (readFully(header) < header.length) {
                throw Failure.peer("the peer runner went away: failed to fill whole buffer");
            }
            long len = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xffffffffL;
            if (len > MAX_FRAME) {
                throw Failure.other("the peer runner announced a message of " + len + " bytes, more than the "
                        + MAX_FRAME + " any message can be");
            }
            byte[] frame = new byte[(int) len];
            int got = readFully(frame);
            if (got != len) {
                throw Failure.peer("the peer runner went away in the middle of a message (" + got + " of " + len
                        + " bytes)");
            }
            return parse(frame);
        }

        /** Reads until {@code buf} is full or the stream ends; returns how much arrived. */
        private int readFully(byte[] buf) {
            int got = 0;
            try {
                while (got < buf.length) {
                    int r = in.read(buf, got, buf.length - got);
                    if (r < 0) {
                        break;
                    }
                    got += r;
                }
            } catch (IOException e) {
                throw Failure.peer("the peer runner went away: " + e.getMessage());
            }
            return got;
        }

        static Message parse(byte[] frame) {
            Failure garbled = Failure.other("the peer runner sent a garbled message (tag "
                    + (frame.length == 0 ? "none" : String.valueOf(frame[0] & 0xff)) + ", " + frame.length + " bytes)");
            if (frame.length == 0) {
                throw garbled;
            }
            ByteBuffer body = ByteBuffer.wrap(frame, 1, frame.length - 1).order(ByteOrder.LITTLE_ENDIAN);
            Message m = new Message();
            m.tag = frame[0] & 0xff;
            switch (m.tag) {
                case 0, 5 -> {
                    if (body.remaining() < 5) {
                        throw garbled;
                    }
                    m.done = body.get() != 0;
                    m.unread = body.getInt() & 0xffffffffL;
                    if (m.tag == 0) {
                        byte[] bytes = new byte[body.remaining()];
                        body.get(bytes);
                        m.flights.add(bytes);
                    } else {
                        while (body.remaining() >= 4) {
                            long len = body.getInt() & 0xffffffffL;
                            if (len > body.remaining()) {
                                throw garbled;
                            }
                            byte[] bytes = new byte[(int) len];
                            body.get(bytes);
                            m.flights.add(bytes);
                        }
                        if (body.hasRemaining()) {
                            throw garbled;
                        }
                    }
                }
                case 1 -> {
                    if (body.remaining() != 1) {
                        throw garbled;
                    }
                    m.next = body.get() & 0xff;
                    if (m.next > STOP) {
                        throw garbled;
                    }
                }
                case 2 -> {
                    if (body.remaining() != 1) {
                        throw garbled;
                    }
                    m.done = body.get() != 0;
                }
                case 3 -> {
                    if (body.remaining() != 40) {
                        throw garbled;
                    }
                    m.tallyBytes = body.getLong();
                    m.digest = new byte[32];
                    body.get(m.digest);
                }
                case 4 -> throw Failure.peer("the peer stopped: "
                        + new String(frame, 1, frame.length - 1, StandardCharsets.UTF_8));
                default -> throw garbled;
            }
            return m;
        }
    }
}
