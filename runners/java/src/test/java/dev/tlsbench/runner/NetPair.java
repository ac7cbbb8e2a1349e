package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/** A server and a load generator of the network mode in one JVM, over loopback: their two reports. */
final class NetPair {
    final NetReport client;
    final NetReport server;

    private NetPair(NetReport client, NetReport server) {
        this.client = client;
        this.server = server;
    }

    /**
     * The JVM-wide pins of a scenario whose both sides may be JSSE (one scenario per test class: they are read once).
     */
    static Pki prepare(Scenario scenario) throws Exception {
        JvmPins.apply(scenario, EnumSet.allOf(Side.class));
        return Pki.load(TestPki.dataDir(), scenario.key);
    }

    /** {@code connections} measured connections, {@code concurrency} at a time (and as many to warm up). */
    static NetPair run(Stack clientStack, Stack serverStack, Scenario scenario, Page served, Page expected,
                       long connections, int concurrency) throws Exception {
        Pki pki = prepare(scenario);
        Stack.Config serverConfig = Pair.config(serverStack, Side.SERVER, scenario, pki);
        Stack.Config clientConfig = Pair.config(clientStack, Side.CLIENT, scenario, pki);
        long ioTimeoutNs = 5_000_000_000L;
        AtomicBoolean stop = new AtomicBoolean();
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            CompletableFuture<NetReport> server = CompletableFuture.supplyAsync(() -> {
                try {
                    return NetServe.serve(serverStack, serverConfig, scenario, listener,
                            new NetServe.Settings(1, served, ioTimeoutNs), stop);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            NetReport client;
            try {
                InetSocketAddress address = (InetSocketAddress) listener.getLocalAddress();
                client = NetLoad.load(clientStack, clientConfig, scenario,
                        new NetLoad.Settings(address, connections, null, concurrency, expected, ioTimeoutNs));
            } finally {
                stop.set(true);
            }
            return new NetPair(client, server.get());
        }
    }
}
