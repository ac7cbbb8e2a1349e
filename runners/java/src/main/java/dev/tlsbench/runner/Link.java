package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The in-memory transport between a client and a server (transport.rs): one byte pipe per direction.
 * Each side's {@link Endpoint} reads from one and writes to the other; reading an empty pipe finds
 * nothing, as a non-blocking socket would (EAGAIN). Every call is counted per side, and a link made
 * with an IO log ({@link #withIoLog()}) also records each call in order with the TLS records written.
 *
 * <p>The link also keeps each direction's plaintext handshake messages (until that direction's
 * change_cipher_spec or first encrypted record): SSLEngine does not tell the group, EMS or whether a
 * session was resumed, so {@link Hello} reads them from the hellos this transport carried.
 */
public final class Link {
    private final Pipe toServer = new Pipe();
    private final Pipe toClient = new Pipe();
    private final IoLog log;

    public Link() {
        this(null);
    }

    private Link(IoLog log) {
        this.log = log;
    }

    public static Link withIoLog() {
        return new Link(new IoLog());
    }

    public IoLog log() {
        return log;
    }

    public Endpoint client() {
        return new Endpoint(this, Side.CLIENT);
    }

    public Endpoint server() {
        return new Endpoint(this, Side.SERVER);
    }

    Pipe from(Side side) {
        return side == Side.CLIENT ? toServer : toClient;
    }

    Pipe to(Side side) {
        return side == Side.CLIENT ? toClient : toServer;
    }

    /** Bytes written and not yet read, in both directions. */
    public int inFlight() {
        return toServer.pending() + toClient.pending();
    }

    /** Bytes waiting for {@code side} to read. */
    public int unreadBy(Side side) {
        return to(side).pending();
    }

    /** Takes what {@code side} wrote and nobody has read yet (to relay it to another process). */
    public byte[] takeWrittenBy(Side side) {
        Pipe pipe = from(side);
        byte[] taken = Arrays.copyOfRange(pipe.bytes, pipe.start, pipe.end);
        pipe.consume(taken.length);
        return taken;
    }

    /** Hands {@code bytes} to {@code side} as if its peer had written them (relayed); not a call. */
    public void deliverTo(Side side, byte[] bytes) {
        Pipe pipe = to(side);
        pipe.append(bytes, 0, bytes.length);
        pipe.written += bytes.length;
    }

    /** The calls {@code side} has made on this link so far: reads, empty reads, writes, bytes written. */
    public long[] calls(Side side) {
        Pipe rx = to(side);
        Pipe tx = from(side);
        return new long[] {rx.readCalls, rx.emptyReads, tx.writeCalls, tx.written};
    }

    /** What the hellos carried on this link since it was last cleared. */
    public Hello hello() {
        return new Hello(toServer.observed, toClient.observed);
    }

    /** Drops whatever is in flight, between two independent connections; the IO log's record streams restart. */
    public void clear() {
        for (Pipe pipe : new Pipe[] {toServer, toClient}) {
            pipe.start = 0;
            pipe.end = 0;
            pipe.observed.reset();
        }
        if (log != null) {
            log.restartStreams();
        }
    }

    /**
     * Gives the link back the sizes it was made with, once nothing is in flight and its hellos have been read: a
     * pipe or hello buffer that grew inside a library's write is made anew at its first size (memory-N, which
     * reads the heap before and after, charges the harness's growth to neither side).
     */
    public void restoreCapacity() {
        for (Pipe pipe : new Pipe[] {toServer, toClient}) {
            if (pipe.bytes.length != Pipe.CAPACITY) {
                pipe.bytes = new byte[Pipe.CAPACITY];
            }
            pipe.start = 0;
            pipe.end = 0;
            pipe.observed.reset();
            if (pipe.observed.handshake.length != Observed.CAPACITY) {
                pipe.observed.handshake = new byte[Observed.CAPACITY];
            }
        }
    }

    /** Marks the start of a phase (e.g. "application data") in the IO log; nothing without a log. */
    public void phase(String name) {
        if (log != null) {
            log.phase(name);
        }
    }

    /** Bytes in flight in one direction, and the calls made on it. */
    static final class Pipe {
        static final int CAPACITY = 32 * 1024;
        byte[] bytes = new byte[CAPACITY];
        int start;
        int end;
        long written;
        long writeCalls;
        long readCalls;
        long emptyReads;
        final Observed observed = new Observed();

        int pending() {
            return end - start;
        }

        void consume(int n) {
            start += n;
            if (start == end) {
                start = 0;
                end = 0;
            }
        }

        void append(byte[] src, int offset, int length) {
            makeRoom(length);
            System.arraycopy(src, offset, bytes, end, length);
            observed.feed(bytes, end, length);
            end += length;
        }

        /** Appends what {@code src} holds; returns where in {@link #bytes} it went. */
        int append(ByteBuffer src) {
            int length = src.remaining();
            makeRoom(length);
            int at = end;
            src.get(bytes, at, length);
            observed.feed(bytes, at, length);
            end += length;
            return at;
        }

        private void makeRoom(int length) {
            if (end + length <= bytes.length) {
                return;
            }
            int pending = pending();
            if (pending + length <= bytes.length && start > 0) {
                System.arraycopy(bytes, start, bytes, 0, pending);
            } else {
                byte[] grown = new byte[Math.max(bytes.length * 2, pending + length)];
                System.arraycopy(bytes, start, grown, 0, pending);
                bytes = grown;
            }
            start = 0;
            end = pending;
        }
    }

    /**
     * One direction's plaintext handshake bytes: the bodies of its handshake records up to its first
     * change_cipher_spec or application_data record. A few hundred bytes per connection; kept in a
     * buffer reused across connections.
     */
    static final class Observed extends Frames {
        private static final int LIMIT = 64 * 1024;
        static final int CAPACITY = 4096;
        byte[] handshake = new byte[CAPACITY];
        int length;
        private boolean bodyIsHandshake;
        boolean done;

        Observed() {
            super(5, 2);
        }

        void reset() {
            length = 0;
            restart();
            done = false;
        }

        @Override
        void frame(int type, int bodyLength) {
            bodyIsHandshake = type == 22;
            if (type == 20 || type == 23 || type < 20 || type > 24) {
                done = true;
            }
        }

        @Override
        boolean readsBodies() {
            return bodyIsHandshake;
        }

        @Override
        void body(byte[] bytes, int offset, int n) {
            if (!bodyIsHandshake) {
                return;
            }
            if (length + n > LIMIT) {
                done = true;
                return;
            }
            if (length + n > handshake.length) {
                handshake = Arrays.copyOf(handshake, Math.max(handshake.length * 2, length + n));
            }
            System.arraycopy(bytes, offset, handshake, length, n);
            length += n;
        }

        @Override
        boolean stopped() {
            return done;
        }
    }

    /**
     * One side's end of the link, handed to its connection: reads find nothing when the pipe is empty.
     */
    public static final class Endpoint implements Transport {
        private final Link link;
        private final Side side;

        Endpoint(Link link, Side side) {
            this.link = link;
            this.side = side;
        }

        @Override
        public Side side() {
            return side;
        }

        public Link link() {
            return link;
        }

        @Override
        public Hello hello() {
            return link.hello();
        }

        @Override
        public boolean readable() {
            return link.to(side).pending() > 0;
        }

        /** One read call: as many bytes as wait, up to what {@code dst} has room for; 0 when none wait. */
        @Override
        public int read(ByteBuffer dst) {
            Pipe rx = link.to(side);
            rx.readCalls++;
            int want = dst.remaining();
            int n = Math.min(rx.pending(), want);
            if (n == 0) {
                rx.emptyReads++;
            } else {
                dst.put(rx.bytes, rx.start, n);
                rx.consume(n);
            }
            if (link.log != null) {
                link.log.read(side, want, n == 0 ? null : n);
            }
            return n;
        }

        /** One write call of everything {@code src} holds (the in-memory pipe takes every byte). */
        @Override
        public void write(ByteBuffer src) {
            Pipe tx = link.from(side);
            int n = src.remaining();
            int at = tx.append(src);
            tx.written += n;
            tx.writeCalls++;
            if (link.log != null) {
                link.log.write(side, tx.bytes, at, n);
            }
        }
    }
}
