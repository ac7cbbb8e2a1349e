package dev.tlsbench.runner;

import dev.tlsbench.runner.Net.ConnectionFailed;
import dev.tlsbench.runner.Scenario.Side;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server of the network mode (harness net/serve.rs): worker threads that share one listening socket,
 * each with an event loop on a Selector of its own over the connections it accepted. Each connection: the
 * handshake and its gates, the request (up to its empty line), the page, close_notify, then the client's.
 */
final class NetServe {
    /** How often a worker looks at the stop flag while nothing happens. */
    private static final long STOP_CHECK_MS = 100;
    /** Connections one worker accepts per wake-up before it serves the ones it has. */
    private static final int ACCEPT_BATCH = 16;
    /** The last four bytes of a complete request: its empty line. */
    private static final int REQUEST_END = 0x0d0a0d0a;

    record Settings(int workers, Page page, long ioTimeoutNs) {
    }

    private final Stack stack;
    private final Stack.Config config;
    private final Scenario scenario;
    private final ServerSocketChannel listener;
    private final Settings settings;
    private final AtomicBoolean stop;
    private final byte[] chunk;
    private final AtomicLong open = new AtomicLong();
    private final AtomicLong maxOpen = new AtomicLong();

    private NetServe(Stack stack, Stack.Config config, Scenario scenario, ServerSocketChannel listener,
                     Settings settings, AtomicBoolean stop) {
        this.stack = stack;
        this.config = config;
        this.scenario = scenario;
        this.listener = listener;
        this.settings = settings;
        this.stop = stop;
        this.chunk = settings.page.chunk();
    }

    /**
     * Serves connections on {@code listener} until {@code stop} is set, then finishes those in flight (each
     * bounded by the io timeout) and reports. CPU time and the peak resident size are the process's over that time.
     */
    static NetReport serve(Stack stack, Stack.Config config, Scenario scenario, ServerSocketChannel listener,
                           Settings settings, AtomicBoolean stop) throws Exception {
        listener.configureBlocking(false);
        NetServe serve = new NetServe(stack, config, scenario, listener, settings, stop);
        NetReport report = new NetReport();
        report.rssStartBytes = Net.residentBytes("VmRSS");
        // The peak from here on, not the warm-up's or the start-up's.
        Net.resetPeakResident();
        Net.Cpu cpuStart = Net.Cpu.now();
        List<Worker> workers = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < Math.max(1, settings.workers); i++) {
            Worker worker = serve.new Worker();
            workers.add(worker);
            Thread thread = new Thread(worker, "tlsbench-serve-" + i);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        Net.Cpu cpu = Net.Cpu.now().since(cpuStart);
        report.side = Side.SERVER;
        report.stack = stack.id();
        report.library = stack.library();
        report.scenario = scenario.name();
        report.page = settings.page;
        report.concurrency = Math.max(1, settings.workers);
        report.startedUnix = Double.MAX_VALUE;
        report.endedUnix = 0;
        for (Worker w : workers) {
            report.connections += w.connections;
            report.resumed += w.resumed;
            report.withoutRequest += w.withoutRequest;
            report.failures.addAll(w.failures);
            if (w.firstEnd > 0) {
                report.startedUnix = Math.min(report.startedUnix, w.firstEnd);
                report.endedUnix = Math.max(report.endedUnix, w.lastEnd);
            }
            report.sockets.add(w.sockets);
            report.polls += w.polls;
            report.handshakeLatency.add(w.handshakeLatency);
            Negotiated last = w.gates.last(Side.SERVER);
            if (report.negotiated == null && last != null) {
                report.negotiated = last.toString();
            }
        }
        if (report.startedUnix > report.endedUnix) {
            report.startedUnix = 0;
            report.endedUnix = 0;
        }
        report.cpuUserSeconds = cpu.user();
        report.cpuSystemSeconds = cpu.system();
        report.jitCpuSeconds = cpu.jit();
        report.rssPeakBytes = Net.residentBytes("VmHWM");
        report.maxOpen = serve.maxOpen.get();
        return report;
    }

    private enum Stage {
        /** Accepted; the handshake begins when the client hello arrives. */
        HANDSHAKE("during the handshake"),
        /** Reading the request, up to its empty line. */
        REQUEST("before its request was complete"),
        /** The response and close_notify are written; waiting for the client's close. */
        CLOSING("before its close_notify");

        final String during;

        Stage(String during) {
            this.during = during;
        }
    }

    /** One accepted connection. */
    private static final class Served {
        final NetSocket socket;
        final EngineConnection conn;
        final long acceptedNs;
        Stage stage = Stage.HANDSHAKE;
        long lastProgressNs;
        boolean selected;
        /** Whether any of the request has arrived, and its last four bytes so far. */
        boolean requested;
        int requestTail;
        boolean resumed;
        boolean withoutRequest;

        Served(NetSocket socket, EngineConnection conn, long acceptedNs) {
            this.socket = socket;
            this.conn = conn;
            this.acceptedNs = acceptedNs;
            this.lastProgressNs = acceptedNs;
        }
    }

    /** One worker thread: its event loop and its share of the report. */
    private final class Worker implements Runnable {
        final Gates gates = new Gates();
        final EngineConnection.Opener opener = new EngineConnection.Opener(config);
        final NetReport.Failures failures = new NetReport.Failures();
        final NetSocket.Counts sockets = new NetSocket.Counts();
        final Latency handshakeLatency = new Latency();
        final List<Served> live = new ArrayList<>();
        final byte[] buf = new byte[16 * 1024];
        long connections;
        long resumed;
        long withoutRequest;
        long polls;
        /**
         * Unix times of the first connection's end and the last's: the window opens at the first completion, since the
         * first connection carries the load generator's one-off set-up.
         */
        double firstEnd;
        double lastEnd;
        Selector selector;
        NetSocket.RoomWaiter waiter;

        @Override
        public void run() {
            try (Selector selector = Selector.open(); NetSocket.RoomWaiter waiter = new NetSocket.RoomWaiter()) {
                this.selector = selector;
                this.waiter = waiter;
                loop(listener.register(selector, SelectionKey.OP_ACCEPT));
            } catch (IOException | RuntimeException e) {
                failures.add("the event loop: " + Net.describe(e));
                for (Served served : live) {
                    end(served, "the event loop stopped: " + Net.describe(e));
                }
            }
        }

        private void loop(SelectionKey acceptKey) throws IOException {
            long ioTimeoutNs = settings.ioTimeoutNs;
            while (true) {
                boolean stopping = stop.get();
                if (stopping && live.isEmpty()) {
                    return;
                }
                if (stopping && acceptKey.isValid()) {
                    acceptKey.cancel();
                }
                selector.select(STOP_CHECK_MS);
                polls++;
                boolean acceptable = false;
                for (SelectionKey key : selector.selectedKeys()) {
                    if (key == acceptKey) {
                        acceptable = true;
                    } else {
                        Served served = (Served) key.attachment();
                        served.selected = true;
                        if (key.isReadable()) {
                            served.socket.markReadable();
                        }
                    }
                }
                selector.selectedKeys().clear();
                long now = System.nanoTime();
                // In reverse, so that removing one leaves the indices of the rest.
                for (int i = live.size() - 1; i >= 0; i--) {
                    Served served = live.get(i);
                    String failure = null;
                    if (served.selected) {
                        served.selected = false;
                        served.lastProgressNs = now;
                        try {
                            if (!advance(served, now)) {
                                continue;
                            }
                        } catch (ConnectionFailed e) {
                            failure = e.getMessage();
                        }
                    } else if (now - served.lastProgressNs > ioTimeoutNs) {
                        failure = "the client sent nothing for " + Net.seconds(ioTimeoutNs) + " s "
                                + served.stage.during;
                    } else {
                        continue;
                    }
                    live.set(i, live.get(live.size() - 1));
                    live.remove(live.size() - 1);
                    end(served, failure);
                }
                if (acceptable && !stopping) {
                    accept();
                }
            }
        }

        /** Accepts what waits, up to a batch; another worker may take it first. */
        private void accept() {
            for (int i = 0; i < ACCEPT_BATCH; i++) {
                SocketChannel channel;
                try {
                    channel = listener.accept();
                } catch (IOException e) {
                    channel = null;
                }
                if (channel == null) {
                    // Nothing left (or another worker took it): part of the event loop's cost.
                    polls++;
                    return;
                }
                long now = System.nanoTime();
                maxOpen.accumulateAndGet(open.incrementAndGet(), Math::max);
                NetSocket socket = new NetSocket(channel, Side.SERVER, settings.ioTimeoutNs, waiter);
                String stage = "setting TCP_NODELAY: ";
                try {
                    channel.configureBlocking(false);
                    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    stage = "server connection: ";
                    Served served = new Served(socket, opener.open(socket), now);
                    channel.register(selector, SelectionKey.OP_READ, served);
                    live.add(served);
                } catch (Exception e) {
                    failures.add(stage + Net.describe(e));
                    socket.close();
                    open.decrementAndGet();
                }
            }
        }

        /** Moves a connection on with what arrived; true once it has ended cleanly. */
        private boolean advance(Served served, long now) throws ConnectionFailed {
            EngineConnection conn = served.conn;
            if (served.stage == Stage.HANDSHAKE) {
                boolean done;
                try {
                    done = conn.handshake();
                } catch (Exception e) {
                    throw new ConnectionFailed("handshake: " + Net.describe(e));
                }
                if (!done) {
                    return checkOpen(served);
                }
                served.resumed = Net.check(gates, conn, Side.SERVER, scenario, null);
                handshakeLatency.record(now - served.acceptedNs);
                served.stage = Stage.REQUEST;
                // The request may have come with the client's last handshake flight.
            }
            if (served.stage == Stage.REQUEST) {
                Exception error = null;
                try {
                    int n;
                    while ((n = conn.receive(buf, 0, buf.length)) > 0) {
                        served.requested = true;
                        for (int i = Math.max(0, n - 4); i < n; i++) {
                            served.requestTail = (served.requestTail << 8) | (buf[i] & 0xff);
                        }
                    }
                } catch (Exception e) {
                    error = e;
                }
                if (!served.requested && served.socket.peerGone()) {
                    // The client left after the handshake without a request, as `openssl s_time` does without
                    // -www: a connection that only shook hands, not a failure.
                    served.withoutRequest = true;
                    return true;
                }
                if (error != null) {
                    throw new ConnectionFailed("reading the request: " + Net.describe(error));
                }
                if (served.requestTail != REQUEST_END) {
                    return checkOpen(served);
                }
                try {
                    for (long i = 0; i < settings.page.writes(); i++) {
                        conn.send(chunk, 0, chunk.length);
                    }
                    conn.close();
                } catch (Exception e) {
                    throw new ConnectionFailed("writing the response: " + Net.describe(e));
                }
                served.stage = Stage.CLOSING;
            }
            // The response and close_notify are written: a client may close its socket without close_notify
            // (as many HTTP clients do), or reset it (`openssl s_time` does).
            try {
                return conn.peerClosed() || served.socket.peerGone();
            } catch (Exception e) {
                if (served.socket.peerGone()) {
                    return true;
                }
                throw new ConnectionFailed("reading the client's close_notify: " + Net.describe(e));
            }
        }

        /** Fails the connection once the client has closed its end before it was done. */
        private boolean checkOpen(Served served) throws ConnectionFailed {
            if (served.socket.atEof()) {
                throw new ConnectionFailed("the client closed the connection " + served.stage.during);
            }
            return false;
        }

        /** A connection has ended: completed (failure null), whose counts it adds, or failed. */
        private void end(Served served, String failure) {
            served.socket.close();
            served.socket.counts.other += NetSocket.SERVER_OTHER_CALLS;
            opener.drop(served.conn);
            if (failure == null) {
                // Per-connection figures are of the connections that completed.
                sockets.add(served.socket.counts);
                connections++;
                resumed += served.resumed ? 1 : 0;
                withoutRequest += served.withoutRequest ? 1 : 0;
            } else {
                failures.add(failure);
            }
            lastEnd = Net.unixNow();
            if (firstEnd == 0) {
                firstEnd = lastEnd;
            }
            open.decrementAndGet();
        }
    }
}
