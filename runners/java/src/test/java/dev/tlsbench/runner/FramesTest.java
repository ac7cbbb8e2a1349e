package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class FramesTest {
    /** Frames that write down what they hear, e.g. "begins 22", "frame 22 3", "body [1, 2]". */
    private static final class Heard extends Frames {
        final List<String> heard = new ArrayList<>();

        Heard(int headerSize, int lengthBytes) {
            super(headerSize, lengthBytes);
        }

        void feed(int... bytes) {
            byte[] b = new byte[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                b[i] = (byte) bytes[i];
            }
            feed(b, 0, b.length);
        }

        @Override
        void headerBegins(int type) {
            heard.add("begins " + type);
        }

        @Override
        void frame(int type, int length) {
            heard.add("frame " + type + " " + length);
        }

        @Override
        void body(byte[] bytes, int offset, int length) {
            heard.add("body " + Arrays.toString(Arrays.copyOfRange(bytes, offset, offset + length)));
        }
    }

    @Test
    void aRecordHeaderSplitAcrossTwoFeeds() {
        Heard records = new Heard(5, 2);
        records.feed(22, 3, 3);
        assertEquals(List.of("begins 22"), records.heard);
        assertTrue(records.inFrame());
        // The header's last two bytes (length 3), two body bytes; then the last body byte and an empty record.
        records.feed(0, 3, 1, 2);
        records.feed(3, 21, 3, 3, 0, 0);
        assertEquals(List.of("begins 22", "frame 22 3", "body [1, 2]", "body [3]", "begins 21", "frame 21 0"),
                records.heard);
        assertFalse(records.inFrame());
    }

    @Test
    void aMessageHeaderSplitAcrossTwoFeeds() {
        Heard messages = new Heard(4, 3);
        // A 1-byte message of type 2, then a message of type 11 (length 0x000102) whose header is split.
        messages.feed(2, 0, 0, 1, 9, 11, 0);
        assertTrue(messages.inFrame());
        messages.feed(1, 2, 7);
        assertEquals(List.of("begins 2", "frame 2 1", "body [9]", "begins 11", "frame 11 258", "body [7]"),
                messages.heard);
        assertTrue(messages.inFrame(), "257 bytes of the body are still to come");
        messages.restart();
        assertFalse(messages.inFrame());
        messages.feed(20);
        assertEquals("begins 20", messages.heard.get(messages.heard.size() - 1));
    }

    @Test
    void nothingIsParsedOnceStopped() {
        List<Integer> types = new ArrayList<>();
        Frames stopsAtTheFirstFrame = new Frames(5, 2) {
            @Override
            void frame(int type, int length) {
                types.add(type);
            }

            @Override
            boolean stopped() {
                return !types.isEmpty();
            }
        };
        byte[] twoRecords = {20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 0};
        stopsAtTheFirstFrame.feed(twoRecords, 0, twoRecords.length);
        assertEquals(List.of(20), types);
    }
}
