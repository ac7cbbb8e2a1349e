package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;

/**
 * Why a measurement stopped, worded as the Rust harness words it (error.rs), so that a cell fails with
 * the same reason whichever runner ran it.
 */
public final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Whether a new process could take the request that this one refused (a session's {@code needs_new_process}). */
    final boolean needsNewProcess;
    /**
     * Whether the failure only echoes the peer runner's (error.rs, Error::Peer): it stopped, and its abort says why,
     * or it went away. The reply says so ({@code "cause": "peer"}), so that the peer's own reason is reported.
     */
    final boolean peer;

    private Failure(String message, Throwable cause) {
        this(message, cause, false, false);
    }

    private Failure(String message, Throwable cause, boolean needsNewProcess, boolean peer) {
        super(message, cause);
        this.needsNewProcess = needsNewProcess;
        this.peer = peer;
    }

    /** This process fixed a setting process-wide that the request needs otherwise: a new process can take it. */
    public static Failure needsNewProcess(String why) {
        return new Failure(why, null, true, false);
    }

    /** The peer runner of a split pair stopped ("the peer stopped: ...") or went away. */
    public static Failure peer(String what) {
        return new Failure(what, null, false, true);
    }

    /** A library call failed: "client handshake failed: ...". */
    public static Failure library(Side side, String stage, Throwable cause) {
        return new Failure(side.text() + " " + stage + " failed: " + describe(cause), cause);
    }

    /** A correctness gate caught a difference between what was asked and what happened. */
    public static Failure gate(String what) {
        return new Failure("gate failed: " + what, null);
    }

    /** Anything else that stops a measurement (certificates, a stuck handshake, a garbled message from the peer). */
    public static Failure other(String what) {
        return new Failure(what, null);
    }

    /** A throwable's message with its causes' messages, as one line. */
    public static String describe(Throwable error) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = error; t != null; t = t.getCause()) {
            String message = t.getMessage();
            if (message == null || message.isEmpty()) {
                message = t.getClass().getName();
            } else if (!(t instanceof Failure) && !(t instanceof Unsupported)) {
                message = t.getClass().getSimpleName() + ": " + message;
            }
            if (text.indexOf(message) < 0) {
                if (text.length() > 0) {
                    text.append(" (caused by ");
                }
                text.append(message);
            }
            if (t.getCause() == t) {
                break;
            }
        }
        int open = text.toString().split("\\(caused by ", -1).length - 1;
        text.append(")".repeat(open));
        return text.toString();
    }
}
