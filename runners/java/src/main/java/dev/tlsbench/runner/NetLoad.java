package dev.tlsbench.runner;

import dev.tlsbench.runner.Net.ConnectionFailed;
import dev.tlsbench.runner.Scenario.Side;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The load generator of the network mode (harness net/load.rs): one thread with up to {@code concurrency}
 * connections in flight on one Selector, each a new connection from connect to close, until a count or a
 * duration is reached. Each connection: the handshake, the request, the response up to the server's
 * close_notify, the gates, the response's length and content, then close_notify.
 */
final class NetLoad {
    /** When neither bound is given. */
    static final long DEFAULT_DURATION_NS = 10_000_000_000L;

    /**
     * @param connections measured connections, or null: the duration alone bounds them
     * @param durationNs no connection starts after this long, or null: the count alone bounds them
     * @param page the server's response, checked when known (null: counted, not checked)
     */
    record Settings(InetSocketAddress connect, Long connections, Long durationNs, int concurrency, Page page,
            long ioTimeoutNs) {
    }

    private final Scenario scenario;
    private final Settings settings;
    private final EngineConnection.Opener opener;
    private final Gates gates = new Gates();
    private final byte[] buf = new byte[16 * 1024];
    /** One write of the expected page. */
    private final byte[] expected;
    /** Null during the warm-up (resumed or not, either), then whether every handshake must resume. */
    private Boolean expectResumed;
    private long connections;
    private long resumed;
    private NetReport.Failures failures = new NetReport.Failures();
    private NetSocket.Counts sockets = new NetSocket.Counts();
    private long polls;
    private Latency handshakeLatency = new Latency();
    private Latency firstByteLatency = new Latency();
    private Selector selector;
    private NetSocket.RoomWaiter waiter;

    private NetLoad(Stack.Config config, Scenario scenario, Settings settings) {
        this.scenario = scenario;
        this.settings = settings;
        this.opener = new EngineConnection.Opener(config);
        this.expected = settings.page == null ? null : settings.page.chunk();
    }

    /**
     * {@code concurrency} connections at once to warm up (and, when resuming, to give the client a session for each
     * connection in flight: a TLS 1.3 ticket may be used once), then the measured ones. Failed connections are
     * counted with their reasons; they never stop the others. CPU time is the process's over the measured part.
     */
    static NetReport load(Stack stack, Stack.Config config, Scenario scenario, Settings settings) throws IOException {
        NetLoad load = new NetLoad(config, scenario, settings);
        int concurrency = Math.max(1, settings.concurrency);
        NetReport report = new NetReport();
        try (Selector selector = Selector.open(); NetSocket.RoomWaiter waiter = new NetSocket.RoomWaiter()) {
            load.selector = selector;
            load.waiter = waiter;
            load.run(concurrency, concurrency, System.nanoTime() + settings.ioTimeoutNs * 2);
            load.expectResumed = scenario.kind.isResumption();
            NetReport.Failures warmFailures = load.failures;
            load.reset();
            report.startedUnix = Net.unixNow();
            Net.Cpu cpuStart = Net.Cpu.now();
            long started = System.nanoTime();
            long deadline = started + (settings.durationNs != null ? settings.durationNs
                    : settings.connections != null ? 24 * 3600 * 1_000_000_000L : DEFAULT_DURATION_NS);
            load.run(settings.connections != null ? settings.connections : Long.MAX_VALUE, concurrency, deadline);
            Net.Cpu cpu = Net.Cpu.now().since(cpuStart);
            report.endedUnix = Net.unixNow();
            report.cpuUserSeconds = cpu.user();
            report.cpuSystemSeconds = cpu.system();
            report.jitCpuSeconds = cpu.jit();
            report.failures.addAll(warmFailures);
        }
        report.side = Side.CLIENT;
        report.stack = stack.id();
        report.library = stack.library();
        report.scenario = scenario.name();
        report.page = settings.page;
        report.concurrency = concurrency;
        Negotiated last = load.gates.last(Side.CLIENT);
        report.negotiated = last == null ? null : last.toString();
        report.connections = load.connections;
        report.resumed = load.resumed;
        report.failures.addAll(load.failures);
        report.sockets.add(load.sockets);
        report.polls = load.polls;
        report.handshakeLatency.add(load.handshakeLatency);
        report.firstByteLatency.add(load.firstByteLatency);
        report.maxOpen = concurrency;
        return report;
    }

    /** Forgets what the warm-up counted. */
    private void reset() {
        connections = 0;
        resumed = 0;
        polls = 0;
        failures = new NetReport.Failures();
        sockets = new NetSocket.Counts();
        handshakeLatency = new Latency();
        firstByteLatency = new Latency();
    }

    private enum Stage {
        CONNECTING("while connecting"),
        HANDSHAKE("during the handshake"),
        /** The request is sent; reading the response up to the server's close_notify. */
        RESPONSE("during the response");

        final String during;

        Stage(String during) {
            this.during = during;
        }
    }

    /** One connection of the generator. */
    private static final class Dialled {
        final NetSocket socket;
        final long startedNs;
        SelectionKey key;
        EngineConnection conn;
        Stage stage = Stage.CONNECTING;
        long lastProgressNs;
        boolean selected;
        long received;
        /** Whether a byte of the response differed from the page's. */
        boolean differs;

        Dialled(NetSocket socket, long startedNs) {
            this.socket = socket;
            this.startedNs = startedNs;
            this.lastProgressNs = startedNs;
        }
    }

    /**
     * Runs {@code count} connections, {@code concurrency} at a time, starting none after {@code deadline}; those in
     * flight then get the io timeout to finish.
     */
    private void run(long count, int concurrency, long deadline) throws IOException {
        List<Dialled> live = new ArrayList<>(concurrency);
        long started = 0;
        long ioTimeoutNs = settings.ioTimeoutNs;
        long hardStop = deadline + ioTimeoutNs;
        while (true) {
            while (live.size() < concurrency && started < count && System.nanoTime() - deadline < 0) {
                started++;
                try {
                    live.add(dial());
                } catch (ConnectionFailed e) {
                    failures.add(e.getMessage());
                }
            }
            if (live.isEmpty()) {
                return;
            }
            selector.select(Math.max(1, Math.min(ioTimeoutNs / 1_000_000, 100)));
            polls++;
            for (SelectionKey key : selector.selectedKeys()) {
                Dialled dialled = (Dialled) key.attachment();
                dialled.selected = true;
                if (key.isReadable()) {
                    dialled.socket.markReadable();
                }
            }
            selector.selectedKeys().clear();
            long now = System.nanoTime();
            for (int i = live.size() - 1; i >= 0; i--) {
                Dialled dialled = live.get(i);
                String failure = null;
                if (now - hardStop > 0) {
                    failure = "still open when the load's time ran out (" + dialled.stage.during + ")";
                } else if (dialled.selected) {
                    dialled.selected = false;
                    dialled.lastProgressNs = now;
                    try {
                        if (!advance(dialled, now)) {
                            continue;
                        }
                    } catch (ConnectionFailed e) {
                        failure = e.getMessage();
                    }
                } else if (now - dialled.lastProgressNs > ioTimeoutNs) {
                    failure = "the server sent nothing for " + Net.seconds(ioTimeoutNs) + " s " + dialled.stage.during;
                } else {
                    continue;
                }
                live.set(i, live.get(live.size() - 1));
                live.remove(live.size() - 1);
                end(dialled, failure);
            }
        }
    }

    /** A connection has ended: completed (failure null) on its socket, whose counts it adds, or failed. */
    private void end(Dialled dialled, String failure) {
        dialled.socket.close();
        dialled.socket.counts.other += NetSocket.CLIENT_OTHER_CALLS;
        if (dialled.conn != null) {
            opener.drop(dialled.conn);
        }
        if (failure == null) {
            // Per-connection figures are of the connections that completed.
            sockets.add(dialled.socket.counts);
            connections++;
        } else {
            failures.add(failure);
        }
    }

    /** A new non-blocking socket, connecting (connect returns at once, in progress). */
    private Dialled dial() throws ConnectionFailed {
        InetSocketAddress address = settings.connect;
        long started = System.nanoTime();
        SocketChannel channel;
        try {
            channel = SocketChannel.open(address.getAddress() instanceof Inet6Address ? StandardProtocolFamily.INET6
                    : StandardProtocolFamily.INET);
        } catch (IOException e) {
            throw new ConnectionFailed("creating a socket: " + Net.describe(e));
        }
        NetSocket socket = new NetSocket(channel, Side.CLIENT, settings.ioTimeoutNs, waiter);
        Dialled dialled = new Dialled(socket, started);
        String stage = "setting TCP_NODELAY: ";
        try {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            stage = "connecting to " + Net.text(address) + ": ";
            boolean connected = channel.connect(address);
            // Connected at once (rare): the socket is writable at once, and the connection goes on from there.
            dialled.key = channel.register(selector, connected ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT,
                    dialled);
            stage = "client connection: ";
            dialled.conn = opener.open(socket);
            return dialled;
        } catch (Exception e) {
            socket.close();
            if (dialled.conn != null) {
                opener.drop(dialled.conn);
            }
            throw new ConnectionFailed(stage + Net.describe(e));
        }
    }

    /** Moves a connection on with what its socket says; true once it has ended cleanly. */
    private boolean advance(Dialled dialled, long now) throws ConnectionFailed {
        EngineConnection conn = dialled.conn;
        if (dialled.stage == Stage.CONNECTING) {
            try {
                if (dialled.socket.channel.isConnectionPending() && !dialled.socket.channel.finishConnect()) {
                    return false;
                }
            } catch (IOException e) {
                throw new ConnectionFailed("connecting to " + Net.text(settings.connect) + ": " + Net.describe(e));
            }
            dialled.key.interestOps(SelectionKey.OP_READ);
            dialled.stage = Stage.HANDSHAKE;
        }
        if (dialled.stage == Stage.HANDSHAKE) {
            boolean done;
            try {
                done = conn.handshake();
            } catch (Exception e) {
                throw new ConnectionFailed("handshake: " + Net.describe(e));
            }
            if (!done) {
                return checkOpen(dialled);
            }
            handshakeLatency.record(now - dialled.startedNs);
            try {
                conn.send(Net.REQUEST, 0, Net.REQUEST.length);
            } catch (Exception e) {
                throw new ConnectionFailed("sending the request: " + Net.describe(e));
            }
            dialled.stage = Stage.RESPONSE;
        }
        // Until the server has closed, then once more: looking for its close_notify, an engine may decrypt data
        // that arrived just before it, which is the response's.
        boolean closed = false;
        while (true) {
            int n;
            try {
                n = conn.receive(buf, 0, buf.length);
            } catch (Exception e) {
                throw new ConnectionFailed("reading the response: " + Net.describe(e));
            }
            if (n > 0) {
                if (dialled.received == 0) {
                    firstByteLatency.record(System.nanoTime() - dialled.startedNs);
                }
                compare(dialled, n);
                dialled.received += n;
                continue;
            }
            if (closed) {
                break;
            }
            try {
                closed = conn.peerClosed();
            } catch (Exception e) {
                throw new ConnectionFailed("reading the server's close_notify: " + Net.describe(e));
            }
            if (!closed) {
                return checkOpen(dialled);
            }
        }
        // The gates once the server has said all it will: TLS 1.3 tickets arrive after the handshake.
        resumed += Net.check(gates, conn, Side.CLIENT, scenario, expectResumed) ? 1 : 0;
        Page page = settings.page;
        if (page != null && dialled.received != page.bytes()) {
            throw new ConnectionFailed("the response: gate failed: sent " + page.bytes() + " bytes, received "
                    + dialled.received);
        }
        if (page != null && dialled.differs) {
            throw new ConnectionFailed("the response: gate failed: received " + dialled.received
                    + " bytes that differ from the page's");
        }
        try {
            conn.close();
        } catch (Exception e) {
            throw new ConnectionFailed("sending close_notify: " + Net.describe(e));
        }
        return true;
    }

    /** Compares the {@code n} bytes just received with the page's at their place in the response. */
    private void compare(Dialled dialled, int n) {
        Page page = settings.page;
        if (page == null || dialled.differs) {
            return;
        }
        if (dialled.received + n > page.bytes()) {
            return; // Too long: the length check says so.
        }
        // Each write of the page is the same chunk: compare run by run, from the received bytes' place in it.
        int at = 0;
        while (at < n) {
            int offset = (int) ((dialled.received + at) % page.size());
            int run = Math.min(n - at, page.size() - offset);
            if (!Arrays.equals(buf, at, at + run, expected, offset, offset + run)) {
                dialled.differs = true;
                return;
            }
            at += run;
        }
    }

    /** Fails the connection once the server has closed its end before it was done. */
    private boolean checkOpen(Dialled dialled) throws ConnectionFailed {
        if (dialled.socket.atEof()) {
            throw new ConnectionFailed("the server closed the connection " + dialled.stage.during + " ("
                    + dialled.received + " bytes of response)");
        }
        return false;
    }
}
