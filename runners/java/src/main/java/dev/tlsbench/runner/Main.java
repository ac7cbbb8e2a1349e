package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Measure;
import dev.tlsbench.runner.Scenario.Side;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Proxy;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The Java runner of tlsbench (docs/runner-protocol.md, version 2): commands and flags as runner.rs's,
 * one JSON reply on the reply channel, exit status 0 after any reply. A one-shot command is one sample in
 * a fresh JVM; {@code session} answers sample and side requests, one line each on stdin, until stdin ends,
 * so that the JIT warms up once and not per sample.
 *
 * <h2>The reply channel</h2>
 * The reply goes to the descriptor the process was given as stdout, and nothing else may. The launcher
 * script starts the JVM with that descriptor moved to 3 and descriptor 1 pointed at stderr
 * ({@code 3>&1 1>&2}), so whatever the JVM or a native library (BoringSSL) writes to descriptor 1 lands
 * on stderr; it names the descriptor in {@code -Dtlsbench.replyFd}. Started without the launcher
 * ({@code java -jar}), the reply goes to FileDescriptor.out and only Java's System.out is redirected.
 * Either way System.out becomes System.err before anything else runs.
 */
public final class Main {
    /**
     * CLOCK_MONOTONIC (System.nanoTime on Linux) as this class initialises, before main: where the cold
     * command's process start ends ({@link Cold}).
     */
    static final long STARTED_NS = System.nanoTime();
    static final int PROTOCOL_VERSION = 4;

    private Main() {
    }

    public static void main(String[] args) {
        OutputStream replies;
        try {
            replies = takeReplyChannel();
        } catch (Throwable e) {
            System.err.println("tlsbench runner: setting up the reply channel: " + e);
            System.exit(1);
            return;
        }
        if (args.length == 1 && args[0].equals("session")) {
            try {
                session(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), replies);
            } catch (IOException e) {
                System.err.println("tlsbench runner: writing the reply: " + e);
                System.exit(1);
            }
            System.exit(0);
        }
        Json reply = reply(args, replies, false);
        try {
            write(replies, reply);
        } catch (IOException e) {
            System.err.println("tlsbench runner: writing the reply: " + e);
            System.exit(1);
        }
        System.exit(0);
    }

    /** A command's reply, whatever happens: a reason for what went wrong, a stack trace on stderr for a bug. */
    static Json reply(String[] args, OutputStream replies, boolean inSession) {
        try {
            return run(args, replies, inSession);
        } catch (Unsupported e) {
            return Report.unsupported(e.getMessage());
        } catch (Failure e) {
            return Report.of(e);
        } catch (Throwable e) {
            e.printStackTrace();
            return Report.failed(Failure.describe(e));
        }
    }

    /**
     * Answers requests until {@code requests} ends: each line the words of a sample or side command,
     * tab-separated, each reply one line, flushed. No reply ends the session; the orchestrator does, by
     * closing stdin. Throws only when the reply channel is gone.
     */
    static void session(BufferedReader requests, OutputStream replies) throws IOException {
        while (true) {
            String line;
            try {
                line = requests.readLine();
            } catch (IOException e) {
                // Not a request the session could go on after: stdin itself broke.
                write(replies, Report.failed("reading the request: " + Net.describe(e)));
                return;
            }
            if (line == null) {
                return;
            }
            write(replies, request(line));
        }
    }

    /** One request's reply; a request of another command fails, and the session goes on. */
    static Json request(String line) {
        String[] words = line.split("\t", -1);
        if (!words[0].equals("sample") && !words[0].equals("side")) {
            return Report.failed("a session takes sample and side requests (got `" + words[0] + "`)");
        }
        return reply(words, null, true);
    }

    static void write(OutputStream replies, Json reply) throws IOException {
        replies.write((reply + "\n").getBytes(StandardCharsets.UTF_8));
        replies.flush();
    }

    /** The stdout this process was given, kept for the reply alone; System.out becomes System.err. */
    static OutputStream takeReplyChannel() {
        String fd = System.getProperty("tlsbench.replyFd");
        FileOutputStream out = new FileOutputStream(fd == null ? FileDescriptor.out : descriptor(Integer.parseInt(fd)));
        System.setOut(System.err);
        return out;
    }

    /**
     * A FileDescriptor for an inherited descriptor number. Java has no public constructor for one: the
     * launcher opens java.io to this code for the private one, else a pipe or file is reopened through
     * /proc (a socket cannot be).
     */
    static FileDescriptor descriptor(int fd) {
        switch (fd) {
            case 0:
                return FileDescriptor.in;
            case 1:
                return FileDescriptor.out;
            case 2:
                return FileDescriptor.err;
            default:
                break;
        }
        try {
            Constructor<FileDescriptor> constructor = FileDescriptor.class.getDeclaredConstructor(int.class);
            constructor.setAccessible(true);
            return constructor.newInstance(fd);
        } catch (ReflectiveOperationException | RuntimeException e) {
            try {
                return new FileOutputStream("/proc/self/fd/" + fd, true).getFD();
            } catch (IOException io) {
                throw new IllegalStateException("cannot use descriptor " + fd + ": " + e + "; " + io);
            }
        }
    }

    /**
     * SIGTERM and SIGINT end serve's loop, which then writes its report: a shutdown hook would run as the JVM
     * exits, too late to reply. sun.misc.Signal (module jdk.unsupported) is the JDK's only signal handler;
     * reached by reflection, as javac's warning on that API cannot be silenced under --release (the lint gate).
     */
    private static void stopServingOnSignals() {
        try {
            Class<?> signal = Class.forName("sun.misc.Signal");
            Class<?> handler = Class.forName("sun.misc.SignalHandler");
            // Only SignalHandler.handle stops serving; the Object methods answer as an object's would.
            Object stop = Proxy.newProxyInstance(handler.getClassLoader(), new Class<?>[] {handler},
                    (proxy, method, args) ->
                    switch (method.getName()) {
                        case "handle" -> {
                            STOP_SERVING.set(true);
                            yield null;
                        }
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> "stop serving on a signal";
                    });
            for (String name : List.of("TERM", "INT")) {
                signal.getMethod("handle", signal, handler)
                        .invoke(null, signal.getConstructor(String.class).newInstance(name), stop);
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot handle SIGTERM: " + e, e);
        }
    }

    /**
     * The one stack a runner of a stack at another release holds (docs/versions.md), and that release: the
     * label it is listed and asked for under, as {@code ID@LABEL}.
     * <ul>
     * <li>JSSE at its JDK's release ({@code -Dtlsbench.jsseRelease}, set by the runner script that
     * scripts/build-jsse.sh writes into target/versions/jsse@N/): {@code jsse@N}, N the JDK's feature version.
     * <li>netty-tcnative at another tcnative release ({@code -Dtlsbench.nettyRelease=LABEL}, set by the runner
     * script that scripts/build-netty.sh writes into target/versions/netty-tcnative@LABEL/, beside the jar it built
     * against that release): {@code netty-tcnative@LABEL}, LABEL the tcnative release (2.0.84). The label is a
     * name: the library string says what loaded, and tlsbench checks that it is that release.
     * </ul>
     */
    record Release(Stack stack, String label) {
        /**
         * The release the system properties ask for ({@code jsse}, {@code netty}: the two properties' values,
         * null when not set), {@code feature} the running JDK's feature version; null for the default runner,
         * which holds every stack under its own id.
         */
        static Release of(String jsse, String netty, int feature) {
            if (jsse != null && netty != null) {
                throw new IllegalArgumentException("tlsbench.jsseRelease and tlsbench.nettyRelease are both set: "
                        + "a runner at another release holds one stack");
            }
            if (jsse != null) {
                return new Release(new JsseStack(), String.valueOf(feature));
            }
            if (netty != null) {
                if (!netty.matches("[0-9][0-9A-Za-z.+-]*")) {
                    throw new IllegalArgumentException("tlsbench.nettyRelease=" + netty + " is not a release "
                            + "(a tcnative release such as 2.0.84)");
                }
                return new Release(new NettyTcnativeStack(), netty);
            }
            return null;
        }

        /** The stacks a runner at {@code release} holds: that one, or every stack for the default runner. */
        static List<Stack> stacks(Release release) {
            return release == null ? List.of(new JsseStack(), new NettyTcnativeStack()) : List.of(release.stack());
        }

        /** The id {@code stack} is listed and asked for under in a runner at {@code release}. */
        static String listedId(Stack stack, Release release) {
            return release == null ? stack.id() : stack.id() + "@" + release.label();
        }
    }

    static final Release RELEASE = Release.of(System.getProperty("tlsbench.jsseRelease"),
            System.getProperty("tlsbench.nettyRelease"), Runtime.version().feature());

    static final List<Stack> STACKS = Release.stacks(RELEASE);

    /** The id a stack is listed and asked for under: its own, or {@code ID@RELEASE}. */
    static String listedId(Stack stack) {
        return Release.listedId(stack, RELEASE);
    }

    static Stack stack(String id) {
        for (Stack stack : STACKS) {
            if (listedId(stack).equals(id)) {
                return stack;
            }
        }
        List<String> ids = STACKS.stream().map(Main::listedId).toList();
        throw Failure.other("stack `" + id + "` is not in this runner (it has: " + String.join(", ", ids) + ")");
    }

    static Json run(String[] args) throws Exception {
        return run(args, null, false);
    }

    /**
     * Runs a command; {@code replies} takes serve's first reply (its listening line). {@code inSession}: a
     * request of a session, whose stdin is not the peer's socket.
     */
    static Json run(String[] args, OutputStream replies, boolean inSession) throws Exception {
        if (args.length == 0) {
            throw Failure.other(
                    "usage: tlsbench-runner-java list|sample|side|cold|trace|serve|load|session [--flag value]...");
        }
        String command = args[0];
        Map<String, String> flags = flags(command, args);
        return switch (command) {
            case "list" -> list();
            case "sample" -> sample(flags);
            case "side" -> side(flags, inSession);
            case "cold" -> Cold.run(flags);
            case "trace" -> trace(flags);
            case "serve" -> serve(flags, replies);
            case "load" -> load(flags);
            // main runs a session; here it could only be one nested in another.
            case "session" -> throw Failure.other(
                    "a session is a process of its own: `session` takes no flags and is no request");
            default -> throw Failure.other("unknown command `" + command
                    + "` (valid: list, sample, side, cold, trace, serve, load, session)");
        };
    }

    private static final List<String> SETTINGS = List.of("scenario", "measure", "min-time-ms", "warmup-ms", "cpu-clock",
            "count-side", "iterations", "warmup-iterations", "data-dir");

    /** The flags each command takes (runner.rs's clap definitions); every one is accepted, used or not. */
    static Map<String, String> flags(String command, String[] args) {
        List<String> known = new ArrayList<>();
        switch (command) {
            case "sample" -> {
                known.addAll(List.of("client", "server", "full-speed"));
                known.addAll(SETTINGS);
            }
            case "side" -> {
                known.addAll(List.of("role", "stack", "peer-stack", "peer-fd", "peer-socket"));
                known.addAll(SETTINGS);
            }
            case "trace" -> known.addAll(List.of("client", "server", "scenario", "data-dir"));
            case "cold" -> known.addAll(List.of("client", "server", "scenario", "data-dir", "spawned-at-ns",
                    "count-side"));
            // --warmup-ms: this runner's own, the JIT's warm-up before the first connection (NetServe, NetLoad).
            case "serve" -> known.addAll(List.of("stack", "scenario", "io-timeout-ms", "data-dir", "listen", "workers",
                    "response", "warmup-ms"));
            case "load" -> known.addAll(List.of("stack", "scenario", "io-timeout-ms", "data-dir", "connect",
                    "connections", "duration", "concurrency", "response", "warmup-ms"));
            default -> { }
        }
        Map<String, String> flags = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw Failure.other("unexpected argument '" + arg + "'");
            }
            String name = arg.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw Failure.other("a value is required for '--" + name + "'");
            }
            if (!known.contains(name)) {
                throw Failure.other("unexpected argument '--" + name + "' for " + command);
            }
            flags.put(name, value);
        }
        return flags;
    }

    static String required(Map<String, String> flags, String name) {
        String value = flags.get(name);
        if (value == null) {
            throw Failure.other("the following required argument was not provided: --" + name);
        }
        return value;
    }

    static long number(Map<String, String> flags, String name, long fallback) {
        String value = flags.get(name);
        try {
            return value == null ? fallback : Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw Failure.other("invalid value '" + value + "' for '--" + name + "': not a number");
        }
    }

    static Scenario scenario(Map<String, String> flags) {
        try {
            return Scenario.parse(required(flags, "scenario"));
        } catch (IllegalArgumentException e) {
            throw Failure.other("invalid value '" + flags.get("scenario") + "' for '--scenario': " + e.getMessage());
        }
    }

    static Json list() {
        List<Json> stacks = new ArrayList<>();
        for (Stack stack : STACKS) {
            if (stack instanceof NettyTcnativeStack && NettyTcnativeStack.unavailability() != null) {
                System.err.println("netty-tcnative is not available: "
                        + Failure.describe(NettyTcnativeStack.unavailability()));
                continue;
            }
            // min_warmup_ms is one of the capabilities (docs/runner-protocol.md).
            stacks.add(Json.object().put("id", listedId(stack)).put("library", stack.library())
                    .put("tls_library", stack.tlsLibrary()).put("backend", stack.backend().toJson())
                    .put("capabilities", stack.capabilities().toJson()));
        }
        Json list = Json.object().put("protocol_version", PROTOCOL_VERSION).put("stacks", stacks);
        // Its samples take --full-speed where the judge's library loads (FullSpeed).
        if (FullSpeed.unavailability() == null) {
            list.put("full_speed", true);
        } else {
            System.err.println("samples are not judged at full speed: " + FullSpeed.unavailability());
        }
        return list;
    }

    /** A sample's settings, checked: the measure, and the sample's length. */
    private static Measure measure(Map<String, String> flags) {
        String text = flags.getOrDefault("measure", "time");
        try {
            return Scenario.parse(Measure.class, "measure", text);
        } catch (IllegalArgumentException e) {
            throw Failure.other("invalid value '" + text + "' for '--measure': " + e.getMessage());
        }
    }

    private static Driver.Spec spec(Map<String, String> flags) {
        return new Driver.Spec(number(flags, "warmup-ms", 50) * 1_000_000,
                number(flags, "min-time-ms", 100) * 1_000_000, fullSpeed(flags));
    }

    /** {@code --full-speed R}: the measured loop is judged against R ({@link FullSpeed}); 0 when not given. */
    static double fullSpeed(Map<String, String> flags) {
        String value = flags.get("full-speed");
        if (value == null) {
            return 0;
        }
        double reference;
        try {
            reference = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            reference = Double.NaN;
        }
        if (!(reference > 0) || Double.isInfinite(reference)) {
            throw Failure.other("invalid value '" + value + "' for '--full-speed': a speed above 0 (rounds per µs)");
        }
        if (FullSpeed.unavailability() != null) {
            throw Failure.other("--full-speed: " + FullSpeed.unavailability() + "; this runner's list does not say "
                    + "full_speed");
        }
        return reference;
    }

    /**
     * The stack's own limits, then whether it can do the scenario (as check_pair does for its half). Its
     * declarations only: no TLS class is touched, so a scenario refused here fixes no JVM-wide pins.
     */
    static void check(Stack stack, Scenario scenario, Measure measure) {
        Capabilities caps = stack.capabilities();
        caps.check(stack.id(), scenario);
        caps.checkMeasure(measure);
    }

    /** The sides a JSSE stack plays in an in-process pair. */
    static Set<Side> jsseSides(Stack client, Stack server) {
        Set<Side> sides = EnumSet.noneOf(Side.class);
        if (client instanceof JsseStack) {
            sides.add(Side.CLIENT);
        }
        if (server instanceof JsseStack) {
            sides.add(Side.SERVER);
        }
        return sides;
    }

    /** Whether netty-tcnative's native library loaded: after the pins, which loading it reads. */
    static void available(Stack stack) {
        if (stack instanceof NettyTcnativeStack && NettyTcnativeStack.unavailability() != null) {
            throw Failure.other("netty-tcnative is not available: "
                    + Failure.describe(NettyTcnativeStack.unavailability()));
        }
    }

    /**
     * The CPU clock and the certificates. The JVM-wide pins ({@link JvmPins}) come before this and before
     * anything touches a TLS class, netty-tcnative's availability check included.
     */
    private static Pki prepare(Map<String, String> flags, Scenario scenario, Measure measure) {
        cpuClock(flags, measure);
        return Pki.load(Pki.dataDir(flags.get("data-dir")), scenario.key);
    }

    private static void cpuClock(Map<String, String> flags, Measure measure) {
        String cpu = flags.getOrDefault("cpu-clock", "on");
        if (!cpu.equals("on") && !cpu.equals("off")) {
            throw Failure.other("invalid value '" + cpu + "' for '--cpu-clock' (valid: on, off)");
        }
        Clock.setCpuEnabled(cpu.equals("on") && measure == Measure.TIME);
    }

    static Json sample(Map<String, String> flags) {
        Stack client = stack(required(flags, "client"));
        Stack server = stack(required(flags, "server"));
        Scenario scenario = scenario(flags);
        Measure measure = measure(flags);
        if (measure == Measure.RSS && !scenario.kind.isContext()) {
            throw new Unsupported("measure rss of memory-N is taken one process per side (split-process)");
        }
        if (measure == Measure.NET) {
            throw new Unsupported("measure net is taken over TCP, by the commands serve and load");
        }
        check(client, scenario, measure);
        check(server, scenario, measure);
        measure.check(scenario);
        JvmPins.apply(scenario, jsseSides(client, server));
        available(client);
        available(server);
        if (scenario.kind.isContext()) {
            cpuClock(flags, measure);
            return Contexts.sample(client, server, scenario, measure, Pki.dataDir(flags.get("data-dir")), spec(flags));
        }
        Pki pki = prepare(flags, scenario, measure);
        return switch (measure) {
            case TIME -> Driver.sample(new Pair(client, server, scenario, pki, new Link()), spec(flags)).toJson();
            case IO -> Io.sample(new Pair(client, server, scenario, pki, Link.withIoLog())).toJson();
            case HEAP -> scenario.connections() > 0 ? memory(client, server, scenario, pki)
                    : Heap.sample(new Pair(client, server, scenario, pki, new Link()), spec(flags)).toJson();
            default -> throw new Unsupported("measure " + measure.text() + " is not taken by the Java runner");
        };
    }

    private static Json memory(Stack client, Stack server, Scenario scenario, Pki pki) {
        try {
            return Memory.sample(client, server, scenario, pki).toJson();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw Failure.other(Failure.describe(e));
        }
    }

    /**
     * One side of a split pair. The peer is met first, as runner.rs meets it, so that a side that cannot
     * measure tells its peer why (Abort) rather than leaving it waiting.
     */
    static Json side(Map<String, String> flags, boolean inSession) throws IOException {
        Side role = Side.parse(required(flags, "role"));
        Stack stack = stack(required(flags, "stack"));
        required(flags, "peer-stack");
        if (inSession && flags.containsKey("peer-fd")) {
            throw Failure.other("in a session the peer is reached with --peer-socket PATH, not --peer-fd");
        }
        if (flags.containsKey("peer-fd") == flags.containsKey("peer-socket")) {
            throw Failure.other("side: give exactly one of --peer-fd and --peer-socket");
        }
        int peerFd = (int) number(flags, "peer-fd", -1);
        Path peerSocket = null;
        if (flags.containsKey("peer-socket")) {
            try {
                peerSocket = Path.of(flags.get("peer-socket"));
            } catch (InvalidPathException e) {
                throw Failure.other("invalid value '" + flags.get("peer-socket") + "' for '--peer-socket': "
                        + e.getMessage());
            }
        } else if (peerFd < 0) {
            throw Failure.other("invalid value '" + flags.get("peer-fd") + "' for '--peer-fd': not a descriptor");
        }
        Scenario scenario = scenario(flags);
        Measure measure = measure(flags);
        Driver.Spec spec = spec(flags);
        if (peerSocket == null) {
            FileDescriptor peer = descriptor(peerFd);
            return side(flags, stack, role, scenario, measure, spec, new FileInputStream(peer),
                    new FileOutputStream(peer));
        }
        // Closed when the sample ends, whichever way: the next sample meets its peer anew.
        try (SocketChannel peer = PeerSocket.meet(peerSocket, role)) {
            return side(flags, stack, role, scenario, measure, spec, Channels.newInputStream(peer),
                    Channels.newOutputStream(peer));
        }
    }

    /** A side's sample once its peer is on {@code in} and {@code out}; what stops it early is told to the peer. */
    private static Json side(Map<String, String> flags, Stack stack, Side role, Scenario scenario, Measure measure,
                             Driver.Spec spec, InputStream in, OutputStream out) {
        Pki pki;
        try {
            check(stack, scenario, measure);
            if (measure != Measure.TIME && measure != Measure.RSS) {
                throw new Unsupported("measure " + measure.text() + " is taken in one process, not split-process");
            }
            measure.check(scenario);
            if (scenario.kind.isContext()) {
                throw new Unsupported("a context scenario is measured in one process (sample), where its gate's "
                        + "handshake runs against this runner's other side");
            }
            JvmPins.apply(scenario, stack instanceof JsseStack ? EnumSet.of(role) : EnumSet.noneOf(Side.class));
            available(stack);
            pki = prepare(flags, scenario, measure);
        } catch (RuntimeException e) {
            new Split.Relay(in, out)
                    .abort(e instanceof Failure || e instanceof Unsupported ? e.getMessage() : Failure.describe(e));
            throw e;
        }
        // Split and Memory tell the peer why they stop themselves.
        if (measure == Measure.RSS) {
            return Memory.side(stack, role, scenario, pki, in, out).toJson();
        }
        return Split.sampleSide(stack, role, scenario, pki, spec, in, out).toJson();
    }

    /**
     * What both ends of the network mode take (runner.rs, net_setup): a stack of this runner and a handshake
     * scenario it supports, its JVM-wide pins for {@code side}, and the certificates.
     */
    private record NetSetup(Stack stack, Scenario scenario, Pki pki, long ioTimeoutNs, long warmupMs) {
    }

    private static NetSetup netSetup(Map<String, String> flags, Side side) {
        String id = required(flags, "stack");
        if (Net.PLAIN_STACKS.contains(id)) {
            throw new Unsupported(id
                    + " is plain TCP, which the Rust runners serve and load (tlsbench runs one of them for it); "
                    + "the Java runner has " + String.join(", ", STACKS.stream().map(Main::listedId).toList()));
        }
        Stack stack = stack(id);
        if (!flags.containsKey("scenario")) {
            throw Failure.other(id + " is a TLS stack: name its handshake with --scenario");
        }
        Scenario scenario = scenario(flags);
        Net.checkKind(scenario);
        check(stack, scenario, Measure.NET);
        JvmPins.apply(scenario, stack instanceof JsseStack ? EnumSet.of(side) : EnumSet.noneOf(Side.class));
        available(stack);
        Pki pki = Pki.load(Pki.dataDir(flags.get("data-dir")), scenario.key);
        long ioTimeoutMs = number(flags, "io-timeout-ms", Net.DEFAULT_IO_TIMEOUT_MS);
        return new NetSetup(stack, scenario, pki, ioTimeoutMs * 1_000_000,
                number(flags, "warmup-ms", Common.FIXED_WARMUP_MS));
    }

    private static Page page(String text, String flag) {
        try {
            return Page.parse(text);
        } catch (IllegalArgumentException e) {
            throw Failure.other("invalid value '" + text + "' for '--" + flag + "': " + e.getMessage());
        }
    }

    /** Set by SIGTERM or SIGINT: the server stops accepting and finishes what is in flight. */
    static final AtomicBoolean STOP_SERVING = new AtomicBoolean();

    /**
     * Serves until SIGTERM or SIGINT: warms the JIT up, replies where it listens, then, once stopped, with what
     * it measured.
     */
    static Json serve(Map<String, String> flags, OutputStream replies) throws Exception {
        NetSetup setup = netSetup(flags, Side.SERVER);
        InetSocketAddress listen = Net.address(flags.getOrDefault("listen", "127.0.0.1:0"), "listen");
        int workers = (int) number(flags, "workers", Runtime.getRuntime().availableProcessors());
        NetServe.Settings settings = new NetServe.Settings(Math.max(1, workers),
                page(flags.getOrDefault("response", "0"), "response"),
                setup.ioTimeoutNs);
        try (ServerSocketChannel listener = ServerSocketChannel.open(listen.getAddress() instanceof Inet6Address
                ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET)) {
            try {
                listener.bind(listen, 1024);
            } catch (IOException e) {
                throw Failure.other("listening on " + Net.text(listen) + ": " + Net.describe(e));
            }
            stopServingOnSignals();
            Stack.Config config = Pair.config(setup.stack, Side.SERVER, setup.scenario, setup.pki);
            Net.warmUp(setup.stack, setup.scenario, setup.pki, settings.page(), setup.warmupMs);
            Json serving = Json.object().put("listening", Net.text((InetSocketAddress) listener.getLocalAddress()))
                    .put("stack", setup.stack.id()).put("library", setup.stack.library())
                    .put("workers", (long) settings.workers());
            write(replies != null ? replies : System.err, serving);
            NetReport report = NetServe.serve(setup.stack, config, setup.scenario, listener, settings, STOP_SERVING);
            report.tellJit();
            return report.toJson();
        }
    }

    /** Connections of one client stack against a server, bounded in count and time, after the JIT's warm-up. */
    static Json load(Map<String, String> flags) throws Exception {
        NetSetup setup = netSetup(flags, Side.CLIENT);
        InetSocketAddress connect = Net.address(required(flags, "connect"), "connect");
        Long connections = flags.containsKey("connections") ? number(flags, "connections", 0) : null;
        Long durationNs = null;
        if (flags.containsKey("duration")) {
            try {
                double seconds = Double.parseDouble(flags.get("duration"));
                if (!(seconds >= 0) || Double.isInfinite(seconds)) {
                    throw new NumberFormatException();
                }
                durationNs = (long) (seconds * 1e9);
            } catch (NumberFormatException e) {
                throw Failure.other("invalid value '" + flags.get("duration")
                        + "' for '--duration': not a number of seconds");
            }
        }
        int concurrency = (int) number(flags, "concurrency", 1);
        Page page = flags.containsKey("response") ? page(flags.get("response"), "response") : null;
        Stack.Config config = Pair.config(setup.stack, Side.CLIENT, setup.scenario, setup.pki);
        Net.warmUp(setup.stack, setup.scenario, setup.pki, page != null ? page : Page.EMPTY, setup.warmupMs);
        NetLoad.Settings settings = new NetLoad.Settings(connect, connections, durationNs, concurrency, page,
                setup.ioTimeoutNs);
        NetReport report = NetLoad.load(setup.stack, config, setup.scenario, settings);
        report.tellJit();
        return report.toJson();
    }

    static Json trace(Map<String, String> flags) {
        Stack client = stack(required(flags, "client"));
        Stack server = stack(required(flags, "server"));
        Scenario scenario = scenario(flags);
        check(client, scenario, Measure.IO);
        check(server, scenario, Measure.IO);
        Measure.IO.check(scenario);
        JvmPins.apply(scenario, jsseSides(client, server));
        available(client);
        available(server);
        Pki pki = prepare(flags, scenario, Measure.IO);
        return Io.traceReply(new Pair(client, server, scenario, pki, Link.withIoLog()));
    }
}
