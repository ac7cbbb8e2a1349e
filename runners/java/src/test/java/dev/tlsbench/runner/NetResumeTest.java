package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Resumption in the network mode: after its warm-up a client resumes every connection, or the connection fails its
 * gate.
 */
class NetResumeTest {
    private static final Scenario TICKETS = Scenario.parse("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm");

    /**
     * One connection at a time, as tlsbench run does: JSSE 17's client keeps one session per server, and in TLS 1.3
     * uses its ticket once, so of connections in flight together only one resumes.
     */
    @Test
    void afterTheWarmUpEveryConnectionResumes() throws Exception {
        for (Stack client : List.of(new JsseStack(), new NettyTcnativeStack())) {
            for (Stack server : List.of(new JsseStack(), new NettyTcnativeStack())) {
                NetPair pair = NetPair.run(client, server, TICKETS, Page.parse("1KiB"), Page.parse("1KiB"), 6, 1);
                String what = client.id() + " -> " + server.id() + ": " + pair.client.failures.toJson()
                        + pair.server.failures.toJson();
                assertEquals(0, pair.client.failures.total() + pair.server.failures.total(), what);
                assertEquals(6, pair.client.connections, what);
                assertEquals(6, pair.client.resumed, what);
                assertEquals(6, pair.server.resumed, what + ": the warm-up's one was a full handshake");
                assertEquals("1.3 aes-128-gcm x25519, resumed", pair.client.negotiated, what);
            }
        }
        // Netty's client keeps a session for each connection in flight.
        NetPair concurrent = NetPair.run(new NettyTcnativeStack(), new NettyTcnativeStack(), TICKETS, Page.EMPTY,
                Page.EMPTY, 8, 2);
        assertEquals(8, concurrent.client.resumed, concurrent.client.failures.toJson().toString());
    }
}
