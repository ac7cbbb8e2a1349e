package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Where the two sides of a split pair meet when the peer is not an inherited descriptor ({@code side
 * --peer-socket PATH}, as in a session, whose stdin carries the requests): the server listens on a Unix
 * stream socket at PATH and accepts one connection, the client connects to it (runner.rs, meet_peer).
 * Each waits at most {@link #waitMs}. The connection is a blocking channel, so that Split's reads and
 * writes on its streams are one read(2) or write(2) each, as on the descriptor.
 */
final class PeerSocket {
    /** How long a side waits for its peer: 30 s; a test shortens it. */
    static volatile long waitMs = 30_000;

    private PeerSocket() {
    }

    /** The connection to the peer at {@code path}, as {@code role} meets it. */
    static SocketChannel meet(Path path, Side role) {
        long deadline = System.nanoTime() + waitMs * 1_000_000;
        return role == Side.SERVER ? accept(path, deadline) : connect(path, deadline);
    }

    /**
     * Removes a stale file at {@code path}, listens there and accepts one connection, then closes the
     * listener and removes the path. A blocking accept cannot time out, so the listener is non-blocking,
     * on a Selector.
     */
    private static SocketChannel accept(Path path, long deadline) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            // bind says why, if the file is still in the way.
        }
        try {
            try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
                 Selector selector = Selector.open()) {
                try {
                    listener.bind(UnixDomainSocketAddress.of(path), 1);
                    listener.configureBlocking(false);
                    listener.register(selector, SelectionKey.OP_ACCEPT);
                } catch (IOException e) {
                    throw Failure.other("listening for the peer at " + path + ": " + Net.describe(e));
                }
                while (true) {
                    SocketChannel peer;
                    try {
                        peer = listener.accept();
                        if (peer != null) {
                            // An accepted channel blocks whatever its listener does; said here, not assumed.
                            peer.configureBlocking(true);
                            return peer;
                        }
                        long leftMs = (deadline - System.nanoTime()) / 1_000_000;
                        if (leftMs <= 0) {
                            throw Failure.other("no peer connected to " + path + " within " + seconds(waitMs) + " s");
                        }
                        selector.select(leftMs);
                        selector.selectedKeys().clear();
                    } catch (IOException e) {
                        throw Failure.other("accepting the peer at " + path + ": " + Net.describe(e));
                    }
                }
            } catch (IOException e) {
                throw Failure.other("listening for the peer at " + path + ": " + Net.describe(e));
            }
        } finally {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                // The next server at this path removes it.
            }
        }
    }

    /**
     * Connects to {@code path}, retrying every millisecond while nothing listens there: the file does not
     * exist yet (the server has not bound) or refuses (a stale file, or one the server is replacing).
     */
    private static SocketChannel connect(Path path, long deadline) {
        UnixDomainSocketAddress address = UnixDomainSocketAddress.of(path);
        // The JDK tells a missing file only by its message, so an error other than refused counts as a missing
        // file while the path is not there; on a path that is there, a second one in a row is the answer (the
        // server may have bound just after an attempt found nothing).
        boolean failedOnFile = false;
        while (true) {
            IOException error;
            try {
                SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    channel.connect(address);
                    return channel;
                } catch (IOException | RuntimeException e) {
                    channel.close();
                    throw e;
                }
            } catch (IOException e) {
                error = e;
            }
            boolean waiting = error instanceof ConnectException
                    || (error instanceof SocketException
                            && !(failedOnFile && Files.exists(path, LinkOption.NOFOLLOW_LINKS)));
            failedOnFile = !(error instanceof ConnectException) && Files.exists(path, LinkOption.NOFOLLOW_LINKS);
            if (!waiting || System.nanoTime() - deadline >= 0) {
                throw Failure.other("cannot connect to the peer at " + path + ": " + Net.describe(error));
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Failure.other("cannot connect to the peer at " + path + ": interrupted");
            }
        }
    }

    /** Milliseconds as seconds, without a fraction when whole: "30", "0.2". */
    static String seconds(long ms) {
        return BigDecimal.valueOf(ms, 3).stripTrailingZeros().toPlainString();
    }
}
