package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;

/** A client stack and a server stack with their configs for one scenario, in one process, on one link. */
final class Pair {
    final Stack clientStack;
    final Stack serverStack;
    final Scenario scenario;
    final EngineConnection.Opener client;
    final EngineConnection.Opener server;
    final Link link;
    final Gates gates = new Gates();

    Pair(Stack clientStack, Stack serverStack, Scenario scenario, Pki pki, Link link) {
        this(clientStack, serverStack, scenario, config(clientStack, Side.CLIENT, scenario, pki),
                config(serverStack, Side.SERVER, scenario, pki), link);
    }

    /** A pair on configs built already (a context scenario's, the cold command's). */
    Pair(Stack clientStack, Stack serverStack, Scenario scenario, Stack.Config client, Stack.Config server, Link link) {
        this.clientStack = clientStack;
        this.serverStack = serverStack;
        this.scenario = scenario;
        this.link = link;
        this.client = new EngineConnection.Opener(client);
        this.server = new EngineConnection.Opener(server);
    }

    static Stack.Config config(Stack stack, Side side, Scenario scenario, Pki pki) {
        try {
            return side == Side.CLIENT ? stack.clientConfig(scenario, pki) : stack.serverConfig(scenario, pki);
        } catch (Exception e) {
            throw Failure.library(side, "config", e);
        }
    }

    /** New connections on an empty link, through their handshakes; creating them is on each side's meter. */
    EngineConnection[] handshake(Step.Meter meter) {
        link.clear();
        EngineConnection c = open(client, Side.CLIENT, link.client(), meter);
        EngineConnection s = open(server, Side.SERVER, link.server(), meter);
        Step.handshakePair(c, s, link, meter);
        return new EngineConnection[] {c, s};
    }

    static EngineConnection open(EngineConnection.Opener opener, Side side, Link.Endpoint io, Step.Meter meter) {
        meter.begin(side);
        try {
            return opener.open(io);
        } catch (Exception e) {
            throw Failure.library(side, "setup", e);
        } finally {
            meter.end(side);
        }
    }

    /** Drops a connection (frees its engine), on the side's meter. */
    static void drop(EngineConnection.Opener opener, EngineConnection conn, Side side, Step.Meter meter) {
        meter.begin(side);
        try {
            opener.drop(conn);
        } finally {
            meter.end(side);
        }
    }

    void check(EngineConnection c, EngineConnection s, boolean resumed) {
        gates.check(Side.CLIENT, scenario, negotiated(c, Side.CLIENT), resumed);
        gates.check(Side.SERVER, scenario, negotiated(s, Side.SERVER), resumed);
    }

    static Negotiated negotiated(EngineConnection conn, Side side) {
        try {
            return conn.negotiated();
        } catch (RuntimeException e) {
            throw Failure.library(side, "negotiated parameters", e);
        }
    }

    /** A handshake, checked, then both connections dropped: on {@code meter}. */
    void checkedHandshake(Step.Meter meter, boolean resumed) {
        EngineConnection[] pair = handshake(meter);
        check(pair[0], pair[1], resumed);
        drop(client, pair[0], Side.CLIENT, meter);
        drop(server, pair[1], Side.SERVER, meter);
    }

    Report report() {
        Report report = new Report();
        report.clientLibrary = clientStack.library();
        report.serverLibrary = serverStack.library();
        report.negotiated = gates.negotiated();
        return report;
    }
}
