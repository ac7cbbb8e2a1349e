package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tlsbench.runner.Scenario.Side;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Both sides of a split pair in one JVM, on two threads joined by pipes as two runners are by a socket. One
 * scenario's pins per test class (JvmPins refuses others): the transfer is {@link SplitTransferTest}'s.
 */
class SplitTest {
    static String[] pair(Stack client, Stack server, String name) throws Exception {
        Scenario scenario = Scenario.parse(name);
        EnumSet<Side> jsse = EnumSet.noneOf(Side.class);
        if (client instanceof JsseStack) {
            jsse.add(Side.CLIENT);
        }
        if (server instanceof JsseStack) {
            jsse.add(Side.SERVER);
        }
        JvmPins.apply(scenario, jsse);
        Pki pki = Pki.load(TestPki.dataDir(), scenario.key);
        PipedOutputStream toServer = new PipedOutputStream();
        PipedOutputStream toClient = new PipedOutputStream();
        PipedInputStream serverIn = new PipedInputStream(toServer, 1 << 20);
        PipedInputStream clientIn = new PipedInputStream(toClient, 1 << 20);
        Driver.Spec spec = new Driver.Spec(0, 20_000_000);
        CompletableFuture<String> serverSide = CompletableFuture.supplyAsync(
                () -> Split.sampleSide(server, Side.SERVER, scenario, pki, spec, serverIn, toClient)
                        .toJson().toString());
        String clientReply = Split.sampleSide(client, Side.CLIENT, scenario, pki, spec, clientIn, toServer)
                .toJson().toString();
        return new String[] {clientReply, serverSide.get()};
    }

    static String iterations(String reply) {
        return reply.replaceAll(".*\"iterations\":(\\d+),.*", "$1");
    }

    @Test
    void bothSidesDoTheSameIterationsAndResume() throws Exception {
        String[] replies = pair(new JsseStack(), new NettyTcnativeStack(),
                "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm");
        assertTrue(replies[0].contains("\"client_library\":\"JSSE") && replies[0].contains("\"server_library\":\"\""),
                replies[0]);
        assertTrue(replies[1].contains(
                "\"negotiated\":[{\"side\":\"server\",\"negotiated\":\"1.3 aes-128-gcm x25519, resumed\"}]"),
                replies[1]);
        assertEquals(iterations(replies[0]), iterations(replies[1]));
    }
}
