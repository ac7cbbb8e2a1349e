package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A split transfer, in a JVM of its own: its pins (no tickets) are not SplitTest's. */
class SplitTransferTest {
    @Test
    void aTransferIsCheckedByTheServersTally() throws Exception {
        String[] replies = SplitTest.pair(new JsseStack(), new JsseStack(),
                "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm");
        assertTrue(replies[0].contains("{\"side\":\"client\",\"metric\":\"mb_per_s\""), replies[0]);
        assertTrue(Long.parseLong(SplitTest.iterations(replies[1])) >= 4096, replies[1]);
        assertEquals(SplitTest.iterations(replies[0]), SplitTest.iterations(replies[1]));
    }
}
