package dev.tlsbench.runner;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the network mode's two ends share (harness net/mod.rs): the request, the scenario kinds it runs, the
 * JIT's warm-up, and the process's CPU time and resident size.
 */
final class Net {
    /** What a client sends: a request any HTTP server answers. */
    static final byte[] REQUEST = "GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    static final long DEFAULT_IO_TIMEOUT_MS = 10_000;
    /** The plain TCP baselines, which the Rust runners serve and load (net/plain.rs). */
    static final List<String> PLAIN_STACKS = List.of("tcp", "tcp-buffered");
    /** Linux reports process times in clock ticks of 1/100 s (USER_HZ, fixed for user space on every architecture). */
    private static final double TICKS_PER_SECOND = 100;

    private Net() {
    }

    /** The scenario kinds the network mode runs: each connection's handshake is the scenario's. */
    static void checkKind(Scenario scenario) {
        if (!scenario.kind.isHandshake()) {
            throw new Unsupported("the network mode runs handshake scenarios (handshake-full, handshake-resume-id, "
                    + "handshake-resume-ticket), not " + scenario.kind.text()
                    + ": the response after each handshake is set with --response");
        }
    }

    /**
     * Warms the JIT up before the first measured connection, whatever the peer does: a server cannot tell a load
     * generator's warm-up connections from its measured ones, and a Rust load generator warms up only one
     * connection per slot. So this runs the network mode itself for {@code ms} milliseconds, a server and a
     * client of {@code stack} over loopback in this process, on configs of their own (their sessions are not
     * the measured ones'): the handshake, the records, the Selector and the sockets, each connection checked.
     * Only the CPU time and the resident size of the measured part are reported.
     */
    static void warmUp(Stack stack, Scenario scenario, Pki pki, Page page, long ms) throws Exception {
        if (ms <= 0) {
            return;
        }
        Stack.Config serverConfig = Pair.config(stack, Scenario.Side.SERVER, scenario, pki);
        Stack.Config clientConfig = Pair.config(stack, Scenario.Side.CLIENT, scenario, pki);
        long ioTimeoutNs = DEFAULT_IO_TIMEOUT_MS * 1_000_000;
        NetReport[] served = new NetReport[1];
        Exception[] serverError = new Exception[1];
        AtomicBoolean stop = new AtomicBoolean();
        NetReport loaded;
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.INET)) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread server = new Thread(() -> {
                try {
                    served[0] = NetServe.serve(stack, serverConfig, scenario, listener,
                            new NetServe.Settings(1, page, ioTimeoutNs), stop);
                } catch (Exception e) {
                    serverError[0] = e;
                }
            }, "tlsbench-warm-up-server");
            server.start();
            try {
                InetSocketAddress address = (InetSocketAddress) listener.getLocalAddress();
                loaded = NetLoad.load(stack, clientConfig, scenario,
                        new NetLoad.Settings(address, null, ms * 1_000_000, 1, page, ioTimeoutNs));
            } finally {
                stop.set(true);
                server.join();
            }
        }
        String what = "warming up (" + stack.id() + " with itself over loopback, " + ms + " ms): ";
        if (serverError[0] != null) {
            throw Failure.other(what + "server: " + Failure.describe(serverError[0]));
        }
        for (NetReport report : new NetReport[] {loaded, served[0]}) {
            if (report.failures.total() > 0) {
                throw Failure.other(what + report.side.text() + ": " + report.failures.total()
                        + " connection(s) failed, first: " + report.failures.reasons.get(0));
            }
        }
    }

    /** A socket address as Rust's SocketAddr parses it: an IP literal and a port, IPv6 in brackets. */
    static InetSocketAddress address(String text, String flag) {
        String invalid = "invalid value '" + text + "' for '--" + flag + "': invalid socket address syntax";
        int colon = text.lastIndexOf(':');
        if (colon < 0) {
            throw Failure.other(invalid);
        }
        String host = text.substring(0, colon);
        boolean v6 = host.startsWith("[") && host.endsWith("]");
        if (v6) {
            host = host.substring(1, host.length() - 1);
        }
        boolean literal = v6 ? host.matches("[0-9a-fA-F:.]+") && host.contains(":")
                : host.matches("\\d{1,3}(\\.\\d{1,3}){3}");
        try {
            int port = Integer.parseInt(text.substring(colon + 1));
            if (!literal || port < 0 || port > 65535) {
                throw Failure.other(invalid);
            }
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (NumberFormatException | IOException e) {
            throw Failure.other(invalid);
        }
    }

    /** As Rust's SocketAddr prints it: 127.0.0.1:8443, [::1]:8443. */
    static String text(InetSocketAddress address) {
        String host = address.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host.replaceAll("%.*", "") + "]" : host) + ":" + address.getPort();
    }

    /** Seconds as Rust prints a Duration's as_secs_f64: 10, 0.5. */
    static String seconds(long ns) {
        double s = ns / 1e9;
        return s == Math.rint(s) ? Long.toString((long) s) : Double.toString(s);
    }

    static double unixNow() {
        Instant now = Instant.now();
        return now.getEpochSecond() + now.getNano() / 1e9;
    }

    /** Why a connection failed, in one line: a library's or the kernel's words, without trailing punctuation. */
    static String describe(Throwable error) {
        Throwable shown = error instanceof UncheckedIOException && error.getCause() != null ? error.getCause() : error;
        String text = shown instanceof IOException && shown.getMessage() != null ? shown.getMessage()
                : Failure.describe(shown);
        return oneLine(text);
    }

    static String oneLine(String text) {
        String line = text.lines().findFirst().orElse("").trim();
        while (line.endsWith(".") || line.endsWith(":")) {
            line = line.substring(0, line.length() - 1);
        }
        return line;
    }

    /**
     * CPU time in seconds, user and system apart: the whole process's (/proc/self/stat: every thread, the garbage
     * collector's included, whose work the connections cause) less the JIT compiler threads' (C1 and C2
     * CompilerThread, from /proc/self/task): compiling is a one-off cost of a fresh JVM that a long-running
     * server amortises to nothing, and what is left of it after the warm-up depends on how busy the machine
     * was, not on the connections. {@code jit} is theirs, told on stderr ({@link NetReport#tellJit}). Clock
     * ticks of 10 ms: over a sample of a second, within a few per cent.
     */
    record Cpu(double user, double system, double jit) {
        static Cpu now() {
            long[] process = ticks(Path.of("/proc/self/stat"));
            long[] jit = new long[2];
            try (var tasks = Files.list(Path.of("/proc/self/task"))) {
                for (Path task : tasks.toList()) {
                    long[] t = ticks(task.resolve("stat"));
                    if (t[2] == 1) {
                        jit[0] += t[0];
                        jit[1] += t[1];
                    }
                }
            } catch (IOException | RuntimeException e) {
                // None left out.
            }
            return new Cpu((process[0] - jit[0]) / TICKS_PER_SECOND, (process[1] - jit[1]) / TICKS_PER_SECOND,
                    (jit[0] + jit[1]) / TICKS_PER_SECOND);
        }

        /**
         * The time from {@code start} to this. The process's stat and its threads' are read one after the other, in
         * ticks, so a compiler thread's tick that lands between the reads can take the process's share below zero
         * over a short window: a CPU time is never negative, so that is 0.
         */
        Cpu since(Cpu start) {
            return new Cpu(Math.max(0, user - start.user), Math.max(0, system - start.system),
                    Math.max(0, jit - start.jit));
        }

        /**
         * utime and stime of a /proc stat file, and 1 if its thread is a JIT compiler's; zeros if unreadable (a thread
         * that ended).
         */
        private static long[] ticks(Path stat) {
            try {
                String text = Files.readString(stat);
                // The fields after the name (which may hold spaces) in parentheses: state is field 3, utime and
                // stime are fields 14 and 15.
                String name = text.substring(text.indexOf('(') + 1, text.lastIndexOf(')'));
                String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
                boolean compiler = name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre");
                return new long[] {Long.parseLong(fields[11]), Long.parseLong(fields[12]), compiler ? 1 : 0};
            } catch (IOException | RuntimeException e) {
                return new long[3];
            }
        }
    }

    /** A size from /proc/self/status in bytes (VmRSS: resident now; VmHWM: its peak); null if unreadable. */
    static Long residentBytes(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field + ":")) {
                    return Long.parseLong(line.substring(field.length() + 1).replace("kB", "").trim()) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not reported.
        }
        return null;
    }

    /**
     * Resets the process's peak resident size (VmHWM) to its current size; false where the kernel does not allow it.
     */
    static boolean resetPeakResident() {
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The gates after a handshake (as in memory), for {@code side}; returns whether it resumed. Resumed exactly
     * when {@code expectResumed} says, or, when it is null, either where the kind resumes (a server cannot tell a
     * load generator's warm-up from the rest; a client's warm-up gives it its sessions).
     */
    static boolean check(Gates gates, EngineConnection conn, Scenario.Side side, Scenario scenario,
            Boolean expectResumed)
            throws ConnectionFailed {
        try {
            Negotiated got = Pair.negotiated(conn, side);
            boolean expect = expectResumed != null ? expectResumed : got.resumed() && scenario.kind.isResumption();
            gates.check(side, scenario, got, expect);
            return got.resumed();
        } catch (Failure e) {
            throw new ConnectionFailed(oneLine(e.getMessage()));
        }
    }

    /** Why one connection failed; it is counted under this reason, and the others go on. */
    static final class ConnectionFailed extends Exception {
        private static final long serialVersionUID = 1L;

        ConnectionFailed(String reason) {
            super(reason, null, false, false);
        }
    }
}
