package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;

/**
 * How the two sides take turns (step.rs): the one handshake loop of every driver. A side gets a turn
 * only when it has something to do: the client's first turn, or its peer's bytes waiting to be read, as
 * an application on a non-blocking socket calls its library when the socket is readable.
 */
public final class Step {
    /** A handshake that needs more turns per side than this is stuck, not slow. */
    static final int MAX_HANDSHAKE_STEPS = 64;

    private Step() {
    }

    /** Whatever is taken around each call into a side's library: its clock, its allocation count, or nothing. */
    public interface Meter {
        void begin(Side side);

        void end(Side side);

        Meter NONE = new Meter() {
            @Override
            public void begin(Side side) {
            }

            @Override
            public void end(Side side) {
            }
        };
    }

    /** The two sides of one connection as the handshake loop sees them. */
    interface Turns {
        /** Gives {@code side} its turn; returns whether its handshake has completed. */
        boolean turn(Side side);

        /** Bytes written by either side and not yet read. */
        int unread();
    }

    /**
     * Turns the client, then the server, until both have completed and read everything the other sent
     * (tickets arrive after the handshake); bytes still unread two rounds after both completed fail the gate.
     */
    static void completeHandshakes(Turns turns) {
        int roundsSinceDone = 0;
        for (int i = 0; i < MAX_HANDSHAKE_STEPS; i++) {
            boolean clientDone = turns.turn(Side.CLIENT);
            boolean serverDone = turns.turn(Side.SERVER);
            if (clientDone && serverDone) {
                int unread = turns.unread();
                if (unread == 0) {
                    return;
                }
                if (roundsSinceDone == 2) {
                    throw Failure.gate("both sides completed the handshake, and " + unread + " bytes stay unread");
                }
                roundsSinceDone++;
            }
        }
        throw Failure.other("the handshake did not complete in " + MAX_HANDSHAKE_STEPS + " turns per side ("
                + turns.unread() + " bytes unread)");
    }

    /** Where one connection pair stands. */
    static final class Progress {
        boolean clientStarted;
        boolean clientDone;
        boolean serverDone;
    }

    /** One side's connection, stepped when it has something to do; returns whether it has completed. */
    static boolean turnOne(EngineConnection conn, Side side, Link link, Progress progress, Meter meter) {
        boolean started;
        if (side == Side.CLIENT) {
            started = progress.clientStarted;
            progress.clientStarted = true;
        } else {
            started = true; // The server's first turn comes with the client's hello.
        }
        if (!started || link.unreadBy(side) > 0) {
            boolean done;
            meter.begin(side);
            try {
                done = conn.handshake();
            } catch (Exception e) {
                throw Failure.library(side, "handshake", e);
            } finally {
                meter.end(side);
            }
            if (side == Side.CLIENT) {
                progress.clientDone = done;
            } else {
                progress.serverDone = done;
            }
        }
        return side == Side.CLIENT ? progress.clientDone : progress.serverDone;
    }

    /** A client and a server connection in one process, on one link, through their handshakes. */
    static void handshakePair(EngineConnection client, EngineConnection server, Link link, Meter meter) {
        Progress progress = new Progress();
        completeHandshakes(new Turns() {
            @Override
            public boolean turn(Side side) {
                return turnOne(side == Side.CLIENT ? client : server, side, link, progress, meter);
            }

            @Override
            public int unread() {
                return link.inFlight();
            }
        });
    }
}
