package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * A connection's TCP socket as its {@link Transport}: a non-blocking SocketChannel on its thread's event
 * loop, with the system calls made on it counted as the harness's SocketCounts defines them
 * (crates/harness/src/net/socket.rs). Each SocketChannel read or write is one read(2) or write(2).
 *
 * <p>Reads: the event loop marks the socket readable when its Selector says so ({@link #markReadable()}),
 * and the adapter reads only then, as in memory. A read that fills the buffer it was given leaves the socket
 * readable (more may wait); one that returns less, nothing (EAGAIN, counted as an empty read) or the end of
 * the stream clears it until the Selector reports it again. The Selector is level-triggered, so nothing
 * left in the kernel is forgotten.
 *
 * <p>Writes hand every byte to the kernel before they return, as the Rust Socket's do: when the send buffer
 * is full, the thread waits for room on a second Selector of its own ({@link RoomWaiter}), bounded by the io
 * timeout. Each written byte also goes through a TLS record counter (the headers only) and, until the
 * handshake's plaintext ends, the hello parser ({@link Hello}), which the negotiated parameters come from.
 */
final class NetSocket implements Transport {
    /**
     * The JDK's system calls on an accepted socket besides its reads and writes, counted with strace on JDK 17.0.15
     * (the README says how): accept(2), getsockname(2) twice, fcntl(2) three times (configureBlocking among them),
     * setsockopt(2) for TCP_NODELAY, epoll_ctl(2) to add it to the Selector and to remove it, and on close
     * getsockopt(2) for SO_LINGER, shutdown(2) of its output (the JDK does that before it closes a connected
     * socket) and close(2).
     */
    static final int SERVER_OTHER_CALLS = 12;
    /**
     * The same for a client's socket: socket(2), fcntl(2) twice, setsockopt(2), connect(2), getsockname(2) twice,
     * poll(2) and getsockopt(2) in finishConnect, epoll_ctl(2) three times (added for OP_CONNECT, switched to
     * OP_READ, removed), and getsockopt(2), shutdown(2) and close(2) on close.
     */
    static final int CLIENT_OTHER_CALLS = 15;

    /** The system calls made on one socket, and what went through it (net/socket.rs, SocketCounts). */
    static final class Counts {
        /** read(2) calls, those that found nothing (EAGAIN) and the end of the stream included. */
        long reads;
        /** Reads that found nothing; also in {@link #reads}. */
        long emptyReads;
        /** write(2) calls, partial ones included. */
        long writes;
        /** Selector calls inside a write, waiting for room in the send buffer. */
        long writeWaits;
        long bytesRead;
        long bytesWritten;
        /** TLS records in what was written, from the record headers. */
        long recordsWritten;
        /** The other calls on the socket: see {@link #SERVER_OTHER_CALLS} and {@link #CLIENT_OTHER_CALLS}. */
        long other;

        void add(Counts o) {
            reads += o.reads;
            emptyReads += o.emptyReads;
            writes += o.writes;
            writeWaits += o.writeWaits;
            bytesRead += o.bytesRead;
            bytesWritten += o.bytesWritten;
            recordsWritten += o.recordsWritten;
            other += o.other;
        }

        Json toJson() {
            return Json.object().put("reads", reads).put("empty_reads", emptyReads).put("writes", writes)
                    .put("write_waits", writeWaits).put("bytes_read", bytesRead).put("bytes_written", bytesWritten)
                    .put("records_written", recordsWritten).put("other", other);
        }
    }

    /** Counts TLS records from their 5-byte headers, across writes; bodies are skipped, not parsed. */
    private static final class Records extends Frames {
        long count;

        Records() {
            super(5, 2);
        }

        @Override
        void frame(int type, int length) {
            count++;
        }

        @Override
        boolean readsBodies() {
            return false;
        }
    }

    /**
     * Waits for room in a socket's send buffer on a Selector of the calling thread's, opened at its first wait
     * (most runs never fill a loopback socket's buffer). The socket is added for one select and removed at once,
     * so that closing it is never held up by this Selector: two epoll_wait(2) and two epoll_ctl(2) per wait.
     */
    static final class RoomWaiter implements AutoCloseable {
        private Selector selector;

        void await(NetSocket socket, long deadlineNs) throws IOException {
            long leftNs = deadlineNs - System.nanoTime();
            if (leftNs <= 0) {
                throw new IOException("the peer read nothing for " + Net.seconds(socket.ioTimeoutNs)
                        + " s while this side was writing");
            }
            if (selector == null) {
                selector = Selector.open();
            }
            SelectionKey key = socket.channel.register(selector, SelectionKey.OP_WRITE);
            try {
                selector.select(Math.max(1, leftNs / 1_000_000));
            } finally {
                key.cancel();
                selector.selectNow();
            }
            socket.counts.writeWaits += 2;
            socket.counts.other += 2;
        }

        @Override
        public void close() throws IOException {
            if (selector != null) {
                selector.close();
            }
        }
    }

    final SocketChannel channel;
    final Counts counts = new Counts();
    private final Side side;
    private final long ioTimeoutNs;
    private final RoomWaiter waiter;
    private final Records records = new Records();
    private final Link.Observed fromClient = new Link.Observed();
    private final Link.Observed fromServer = new Link.Observed();
    private boolean readable;
    private boolean eof;
    private boolean broken;

    NetSocket(SocketChannel channel, Side side, long ioTimeoutNs, RoomWaiter waiter) {
        this.channel = channel;
        this.side = side;
        this.ioTimeoutNs = ioTimeoutNs;
        this.waiter = waiter;
    }

    /** The Selector reported the socket readable. */
    void markReadable() {
        readable = true;
    }

    /** Whether a read found the end of the stream. */
    boolean atEof() {
        return eof;
    }

    /** Whether the peer has closed the connection: its end of stream, or a read that failed (a reset). */
    boolean peerGone() {
        return eof || broken;
    }

    @Override
    public Side side() {
        return side;
    }

    @Override
    public boolean readable() {
        return readable;
    }

    @Override
    public int read(ByteBuffer dst) {
        int at = dst.position();
        counts.reads++;
        int n;
        try {
            n = channel.read(dst);
        } catch (IOException e) {
            broken = true;
            readable = false;
            throw new UncheckedIOException(e);
        }
        if (n == 0) {
            counts.emptyReads++;
            readable = false;
        } else if (n < 0) {
            eof = true;
            readable = false;
        } else {
            counts.bytesRead += n;
            readable = !dst.hasRemaining();
            (side == Side.CLIENT ? fromServer : fromClient).feed(dst, at, at + n);
        }
        return n;
    }

    @Override
    public void write(ByteBuffer src) {
        int from = src.position();
        long deadline = 0;
        try {
            while (true) {
                int n = channel.write(src);
                counts.writes++;
                counts.bytesWritten += n;
                if (!src.hasRemaining()) {
                    break;
                }
                if (deadline == 0) {
                    deadline = System.nanoTime() + ioTimeoutNs;
                }
                waiter.await(this, deadline);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            records.feed(src, from, src.position());
            counts.recordsWritten = records.count;
            (side == Side.CLIENT ? fromClient : fromServer).feed(src, from, src.position());
        }
    }

    @Override
    public Hello hello() {
        return new Hello(fromClient, fromServer);
    }

    /** Closes the socket (its close(2) is counted with the other calls). */
    void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // Nothing to do about it: the connection has ended.
        }
    }
}
