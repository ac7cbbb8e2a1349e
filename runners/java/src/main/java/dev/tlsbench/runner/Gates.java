package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.ClientAuth;
import dev.tlsbench.runner.Scenario.Side;
import dev.tlsbench.runner.Scenario.Version;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Correctness gates (gate.rs): after each handshake and each transfer, what happened must be what the
 * scenario asked, or the cell fails with the gate's words. Keeps what each side's last passed handshake
 * negotiated, which the reply reports.
 */
public final class Gates {
    private final Negotiated[] seen = new Negotiated[2];

    public void check(Side side, Scenario scenario, Negotiated got, boolean expectResumed) {
        checkHandshake(side, scenario, got, expectResumed);
        seen[side.ordinal()] = got;
    }

    /** What {@code side}'s last passed handshake negotiated; null before the first. */
    public Negotiated last(Side side) {
        return seen[side.ordinal()];
    }

    /** Each side's view of its last passed handshake, client first, as the reply's {@code negotiated}. */
    public List<Json> negotiated() {
        List<Json> list = new ArrayList<>();
        for (Side side : Side.values()) {
            if (seen[side.ordinal()] != null) {
                list.add(Json.object().put("side", side.text()).put("negotiated", seen[side.ordinal()].toString()));
            }
        }
        return list;
    }

    static void checkHandshake(Side side, Scenario scenario, Negotiated got, boolean expectResumed) {
        String who = side.text();
        if (got.version() != scenario.version) {
            throw mismatch(who, "TLS", got.version().text(), scenario.version.text());
        }
        if (scenario.isPinned()) {
            if (got.suite() != scenario.suite) {
                throw mismatch(who, "cipher suite", got.suite().text(), scenario.suite.text());
            }
            if (got.group() != null && got.group() != scenario.group) {
                throw mismatch(who, "group", got.group().text(), scenario.group.text());
            }
        }
        if (got.resumed() && !expectResumed) {
            throw Failure.gate(who + " resumed a session where a full handshake was asked");
        }
        if (!got.resumed() && expectResumed) {
            throw Failure.gate(who + " did a full handshake where resumption was asked");
        }
        if (scenario.version == Version.TLS12 && got.ems() != null && got.ems() != scenario.ems) {
            throw mismatch(who, "extended master secret", got.ems() ? "on" : "off", scenario.ems ? "on" : "off");
        }
        if (side == Side.SERVER) {
            boolean required = scenario.clientAuth == ClientAuth.REQUIRED;
            if (got.clientCertVerified() == null) {
                throw Failure.gate("server does not report whether it verified a client certificate");
            }
            if (!got.clientCertVerified() && required) {
                throw Failure.gate("server did not verify a client certificate, the scenario requires one");
            }
            if (got.clientCertVerified() && !required) {
                throw Failure.gate("server verified a client certificate, the scenario's client has none");
            }
        }
    }

    private static Failure mismatch(String side, String what, String got, String want) {
        return Failure.gate(side + " negotiated " + what + " " + got + ", the scenario asks for " + want);
    }

    /** Checks that the receiver got exactly what the sender sent: byte count and digest. */
    static void checkTransfer(long sentBytes, byte[] sentDigest, long receivedBytes, byte[] receivedDigest) {
        if (sentBytes != receivedBytes) {
            throw Failure.gate("sent " + sentBytes + " bytes, received " + receivedBytes);
        }
        if (!Arrays.equals(sentDigest, receivedDigest)) {
            throw Failure.gate("received " + receivedBytes + " bytes whose digest differs from the sent data's");
        }
    }
}
