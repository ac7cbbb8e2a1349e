package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import dev.tlsbench.runner.Scenario.Suite;
import dev.tlsbench.runner.Scenario.Version;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The one adapter: a connection of any stack, over javax.net.ssl.SSLEngine and a {@link Transport}: the in-memory
 * link, or a TCP socket in the network mode.
 *
 * <p>SSLEngine does no IO: the application moves bytes between the engine and its socket, so the IO
 * counted here is this adapter's, the record reader and writer its users write. It does what a typical
 * NIO application does, as Netty's SslHandler (the usual home of both engines) and Tomcat's NIO
 * connector do:
 * <ul>
 * <li><b>Reads</b>: when the engine needs bytes and the packet buffer holds no complete record, and
 *     only when the socket is readable (what a selector reports, here {@link Transport#readable()},
 *     not a call), one read of everything available, up to the packet buffer's free space; then every
 *     complete record in the buffer is unwrapped. No read is made to find out that nothing is there,
 *     so no read comes back empty: the side waits for the next readiness instead.</li>
 * <li><b>Writes</b>: everything wrap produces while the engine has something to send (a whole flight:
 *     JSSE wraps one record per call) is gathered in one buffer and written in one call before the side
 *     waits for its peer, as Netty's flush writes a flight with one gathering write.</li>
 * <li><b>After the handshake</b> completes, wraps until the engine produces nothing more, as SslHandler wraps
 *     after FINISHED: that sends what an engine still holds (BoringSSL's TLS 1.3 tickets, with the
 *     stack's {@link Stack.Config#handshakeDone} hook).</li>
 * <li><b>Delegated tasks</b> (JSSE's certificate checks, key exchange) run inline on the calling thread,
 *     inside the side's clock.</li>
 * <li><b>Buffers</b>: packet and application buffers of the engine's sizes, direct for engines over native
 *     memory (netty-tcnative) and on the heap for JSSE, as SslHandler picks them, and reused across
 *     connections as a pooled allocator would.</li>
 * </ul>
 *
 * <p>What the API does not tell (the group, EMS, whether the session was resumed) is read from the
 * plaintext hellos the transport carried ({@link Hello}).
 */
public final class EngineConnection {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SSLEngine engine;
    private final Stack.Config config;
    private final Transport io;
    private final Side side;
    /** Bytes read and not yet unwrapped (write mode). */
    private ByteBuffer netIn;
    /** Bytes wrapped and not yet written (write mode). */
    private ByteBuffer netOut;
    /** Plaintext unwrapped and not yet received (write mode). */
    private ByteBuffer appIn;
    private boolean started;
    private boolean done;

    private EngineConnection(SSLEngine engine, Stack.Config config, Transport io, ByteBuffer[] buffers) {
        this.engine = engine;
        this.config = config;
        this.io = io;
        this.side = io.side();
        this.netIn = buffers[0];
        this.netOut = buffers[1];
        this.appIn = buffers[2];
    }

    SSLEngine engine() {
        return engine;
    }

    /**
     * Moves the handshake on as far as the available bytes allow, writing what this side has to send.
     * True once this side's handshake has completed; after that it reads what arrives (TLS 1.3 tickets).
     */
    public boolean handshake() throws SSLException {
        if (!started) {
            started = true;
            engine.beginHandshake();
        }
        if (done) {
            while (unwrap()) {
                // Post-handshake messages: a ticket, or application data kept for receive().
            }
            flush();
            return true;
        }
        while (true) {
            switch (engine.getHandshakeStatus()) {
                case NEED_TASK -> runTasks();
                case NEED_WRAP -> wrap(EMPTY);
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    if (!unwrap()) {
                        // Waiting for the peer: what this turn wrapped goes out now, in one write.
                        flush();
                        return false;
                    }
                }
                default -> {
                    // NOT_HANDSHAKING after beginHandshake: complete (FINISHED is only ever a result's status).
                    // One more wrap sends what the engine still holds, as SslHandler wraps after FINISHED:
                    // BoringSSL queues its TLS 1.3 tickets when the handshake completes and no status says so.
                    do {
                        config.handshakeDone(engine);
                        // Netty's engine hands out what BoringSSL queued in pieces of its BIO's size (2 KiB).
                    } while (wrap(EMPTY) > 0);
                    flush();
                    done = true;
                    return true;
                }
            }
        }
    }

    /** Encrypts all of {@code data} and writes the records in one call. */
    public void send(byte[] data, int offset, int length) throws SSLException {
        ByteBuffer src = ByteBuffer.wrap(data, offset, length);
        while (src.hasRemaining()) {
            wrap(src);
        }
        flush();
    }

    /** Decrypts into {@code buf} what the available records hold; 0 when nothing more is available now. */
    public int receive(byte[] buf, int offset, int length) throws SSLException {
        while (appIn.position() == 0) {
            if (!unwrap()) {
                return 0;
            }
        }
        appIn.flip();
        int n = Math.min(appIn.remaining(), length);
        appIn.get(buf, offset, n);
        appIn.compact();
        return n;
    }

    /** Sends close_notify: writes the alert. */
    public void close() throws SSLException {
        engine.closeOutbound();
        while (!engine.isOutboundDone()) {
            int before = netOut.position();
            wrap(EMPTY);
            if (netOut.position() == before) {
                break;
            }
        }
        flush();
    }

    /** Reads what has arrived; true once the peer's close_notify has been received. */
    public boolean peerClosed() throws SSLException {
        while (!engine.isInboundDone() && unwrap()) {
            // Application data, if any, stays for receive(); the close_notify is behind it.
        }
        return engine.isInboundDone();
    }

    /** What the handshake negotiated, as this side sees it. */
    public Negotiated negotiated() {
        SSLSession session = engine.getSession();
        Version version = switch (session.getProtocol()) {
            case "TLSv1.3" -> Version.TLS13;
            case "TLSv1.2" -> Version.TLS12;
            default -> throw new IllegalStateException("negotiated an unexpected protocol version: "
                    + session.getProtocol());
        };
        Suite suite = Suite.negotiated(session.getCipherSuite(), version);
        Hello hello = io.hello();
        if (!hello.serverHelloSeen) {
            throw new IllegalStateException("no ServerHello went over the transport");
        }
        boolean tls13 = version == Version.TLS13;
        boolean resumed = tls13 ? hello.pskSelected : hello.abbreviated;
        Boolean ems = tls13 ? null : hello.emsExtension;
        Boolean clientCertVerified = side == Side.SERVER ? peerCertificateVerified(session) : null;
        Boolean ticketReceived = side == Side.CLIENT && !tls13 ? hello.ticketSeen : null;
        return new Negotiated(version, suite, hello.group(), resumed, ems, clientCertVerified, ticketReceived);
    }

    /**
     * Server side: the client presented a certificate that the handshake verified. Both engines verify a
     * client chain against the trust manager before the handshake completes and fail it otherwise, so a
     * peer certificate in the session is a verified one (for a resumed session, verified when it was made).
     */
    private static boolean peerCertificateVerified(SSLSession session) {
        try {
            return session.getPeerCertificates().length > 0;
        } catch (SSLPeerUnverifiedException e) {
            return false;
        }
    }

    private void runTasks() {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run();
        }
    }

    /** One wrap into the outgoing buffer (grown until the record fits); returns the bytes produced. */
    private int wrap(ByteBuffer src) throws SSLException {
        while (true) {
            SSLEngineResult result = engine.wrap(src, netOut);
            if (result.getStatus() != SSLEngineResult.Status.BUFFER_OVERFLOW) {
                return result.bytesProduced();
            }
            netOut = grow(netOut, netOut.capacity() * 2);
        }
    }

    /**
     * Unwraps one record, reading first if none is buffered and the socket is readable; false when nothing
     * moved. An engine may also complete its handshake on an unwrap that consumes nothing (Netty's server
     * does, after it consumed the client's Finished), so an empty packet buffer is still offered once.
     */
    private boolean unwrap() throws SSLException {
        if (netIn.position() == 0) {
            readOnce();
        }
        while (true) {
            netIn.flip();
            SSLEngineResult result;
            try {
                result = engine.unwrap(netIn, appIn);
            } finally {
                netIn.compact();
            }
            boolean finished = result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.FINISHED;
            switch (result.getStatus()) {
                case OK, CLOSED -> {
                    if (result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                        runTasks();
                    }
                    return finished || result.bytesConsumed() > 0 || result.bytesProduced() > 0;
                }
                case BUFFER_UNDERFLOW -> {
                    if (finished) {
                        return true;
                    }
                    if (!netIn.hasRemaining()) {
                        netIn = grow(netIn, engine.getSession().getPacketBufferSize() + netIn.capacity());
                    }
                    if (!readOnce()) {
                        return false;
                    }
                }
                case BUFFER_OVERFLOW -> appIn = grow(appIn, appIn.capacity() + engine.getSession()
                        .getApplicationBufferSize());
            }
        }
    }

    /** One read when the socket is readable: everything available, up to the packet buffer's free space. */
    private boolean readOnce() {
        return io.readable() && io.read(netIn) > 0;
    }

    /** Writes what wrap produced, in one call. */
    private void flush() {
        if (netOut.position() > 0) {
            netOut.flip();
            io.write(netOut);
            netOut.clear();
        }
    }

    private static ByteBuffer grow(ByteBuffer buffer, int capacity) {
        ByteBuffer grown = buffer.isDirect() ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
        buffer.flip();
        grown.put(buffer);
        return grown;
    }

    /**
     * Opens and drops the connections of one side's config, reusing their buffers as a pooled allocator
     * would (Netty's SslHandler takes its buffers from one).
     */
    public static final class Opener {
        private final Stack.Config config;
        private final ArrayDeque<ByteBuffer[]> pool = new ArrayDeque<>();

        public Opener(Stack.Config config) {
            this.config = config;
        }

        public EngineConnection open(Transport io) throws Exception {
            SSLEngine engine = config.newEngine();
            ByteBuffer[] buffers = pool.poll();
            if (buffers == null) {
                SSLSession session = engine.getSession();
                int packet = session.getPacketBufferSize();
                int app = session.getApplicationBufferSize();
                buffers = new ByteBuffer[] {allocate(packet), allocate(packet), allocate(app)};
            }
            return new EngineConnection(engine, config, io, buffers);
        }

        /**
         * Makes the buffers of {@code n} more connections now, as a pool that has served n connections at once
         * holds them (memory-N: the application's buffers, made before the heap is read, so that they are charged
         * to neither side).
         */
        public void reserve(int n) throws Exception {
            SSLEngine engine = config.newEngine();
            SSLSession session = engine.getSession();
            int packet = session.getPacketBufferSize();
            int app = session.getApplicationBufferSize();
            config.free(engine);
            for (int i = 0; i < n; i++) {
                pool.push(new ByteBuffer[] {allocate(packet), allocate(packet), allocate(app)});
            }
        }

        private ByteBuffer allocate(int size) {
            return config.directBuffers() ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
        }

        /** Frees the engine's native state (netty-tcnative) and takes the buffers back. */
        public void drop(EngineConnection connection) {
            config.free(connection.engine);
            connection.netIn.clear();
            connection.netOut.clear();
            connection.appIn.clear();
            pool.push(new ByteBuffer[] {connection.netIn, connection.netOut, connection.appIn});
        }
    }
}
