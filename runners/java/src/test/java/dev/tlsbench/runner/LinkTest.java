package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tlsbench.runner.Scenario.Side;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

class LinkTest {
    private static byte[] record(int type, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(5 + body.length);
        b.put((byte) type).put((byte) 3).put((byte) 3).putShort((short) body.length).put(body);
        return b.array();
    }

    @Test
    void bytesCrossInOrderAndAnEmptyPipeFindsNothing() {
        Link link = new Link();
        link.client().write(ByteBuffer.wrap("hello".getBytes()));
        ByteBuffer got = ByteBuffer.allocate(3);
        assertEquals(3, link.server().read(got));
        assertEquals(2, link.unreadBy(Side.SERVER));
        assertEquals(2, link.server().read(ByteBuffer.allocate(10)));
        assertEquals(0, link.server().read(ByteBuffer.allocate(10)));
        assertEquals(List.of(3L, 1L, 0L, 0L), java.util.Arrays.stream(link.calls(Side.SERVER)).boxed().toList());
        assertFalse(link.server().readable());
    }

    @Test
    void theLogParsesRecordsAndTheHandshakeMessagesThatBeginInThem() {
        Link link = Link.withIoLog();
        // A handshake record with two messages (types 2 and 11), written in two calls that split its header.
        byte[] rec = record(22, new byte[] {2, 0, 0, 1, 9, 11, 0, 0, 0});
        link.server().write(ByteBuffer.wrap(rec, 0, 3));
        link.server().write(ByteBuffer.wrap(rec, 3, rec.length - 3));
        link.server().write(ByteBuffer.wrap(record(20, new byte[] {1})));
        List<IoLog.Event> events = link.log().take();
        long[] totals = IoLog.totals(events, Side.SERVER);
        assertEquals(3, totals[2], "write calls");
        assertEquals(2, totals[3], "records");
        assertEquals(rec.length + 6, totals[4], "bytes");
        assertEquals(List.of(2, 11), events.get(0).records.get(0).messages);
        assertTrue(events.get(1).records.isEmpty(), "the header began in the first write");
    }

    @Test
    void theHelloIsReadFromTheServersPlaintextMessages() {
        Link link = new Link();
        // ServerHello (TLS 1.3): version, random, empty session id, suite, compression, then
        // extensions: key_share (x25519) and pre_shared_key.
        ByteBuffer sh = ByteBuffer.allocate(200);
        sh.putShort((short) 0x0303).put(new byte[32]).put((byte) 0).putShort((short) 0x1301).put((byte) 0);
        sh.putShort((short) 14).putShort((short) 51).putShort((short) 4).putShort((short) 0x001d).putShort((short) 0)
                .putShort((short) 41).putShort((short) 2).putShort((short) 0);
        byte[] body = java.util.Arrays.copyOf(sh.array(), sh.position());
        ByteBuffer msg = ByteBuffer.allocate(4 + body.length).put((byte) 2).put((byte) 0).putShort((short) body.length)
                .put(body);
        link.server().write(ByteBuffer.wrap(record(22, msg.array())));
        link.server().write(ByteBuffer.wrap(record(23, new byte[20])));
        Hello hello = link.hello();
        assertTrue(hello.serverHelloSeen);
        assertEquals(Scenario.Group.X25519, hello.group());
        assertTrue(hello.pskSelected);
        link.clear();
        assertFalse(link.hello().serverHelloSeen);
    }
}
