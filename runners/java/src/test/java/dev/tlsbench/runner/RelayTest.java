package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

class RelayTest {
    private static Split.Relay reader(byte[] raw) {
        return new Split.Relay(new ByteArrayInputStream(raw), new ByteArrayOutputStream());
    }

    @Test
    void messagesKeepTheFramingOfSplitRs() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Split.Relay writer = new Split.Relay(new ByteArrayInputStream(new byte[0]), out);
        writer.sendFlights(List.of(new byte[] {0x16, 3, 1}, new byte[0]), true, 7);
        writer.sendTally(1L << 40, new byte[32]);
        writer.sendFlight(new byte[] {1, 2}, false, 0);
        byte[] raw = out.toByteArray();
        // u32 LE length, tag 5, done, unread u32 LE, then each flight's u32 LE length and bytes.
        assertArrayEquals(new byte[] {17, 0, 0, 0, 5, 1, 7, 0, 0, 0, 3, 0, 0, 0, 0x16, 3, 1, 0, 0, 0, 0},
                java.util.Arrays.copyOfRange(raw, 0, 19 + 2));
        Split.Relay reader = reader(raw);
        Split.Message flights = reader.recv();
        assertEquals(5, flights.tag);
        assertEquals(2, flights.flights.size());
        assertEquals(7, flights.unread);
        Split.Message tally = reader.recv();
        assertEquals(1L << 40, tally.tallyBytes);
        Split.Message flight = reader.recv();
        assertArrayEquals(new byte[] {1, 2}, flight.flights.get(0));
        assertEquals("the peer runner went away: failed to fill whole buffer",
                assertThrows(Failure.class, reader::recv).getMessage());
    }

    @Test
    void aGarbledTruncatedOrOversizedMessageIsNamed() {
        assertEquals(
                "the peer runner announced a message of 1347703880 bytes, more than the 268435456 any message can be",
                assertThrows(Failure.class, () -> reader("HTTP/1.1 200 OK".getBytes()).recv()).getMessage());
        byte[] shortFrame = ByteBuffer.allocate(7).order(ByteOrder.LITTLE_ENDIAN).putInt(100)
                .put(new byte[] {1, 2, 3}).array();
        assertEquals("the peer runner went away in the middle of a message (3 of 100 bytes)",
                assertThrows(Failure.class, () -> reader(shortFrame).recv()).getMessage());
        assertEquals("the peer runner sent a garbled message (tag 9, 2 bytes)",
                assertThrows(Failure.class, () -> reader(new byte[] {2, 0, 0, 0, 9, 0}).recv()).getMessage());
        assertEquals("the peer stopped: gate failed: x",
                assertThrows(Failure.class, () -> reader(new byte[] {
                    15, 0, 0, 0, 4, 'g', 'a', 't', 'e', ' ', 'f', 'a', 'i', 'l', 'e', 'd', ':', ' ', 'x'}).recv())
                        .getMessage());
    }
}
