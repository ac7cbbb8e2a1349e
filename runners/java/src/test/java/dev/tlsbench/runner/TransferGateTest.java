package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The in-process transfer's gate: length and CRC-32C of the plaintext in order. */
class TransferGateTest {
    private static CRC32C tally(List<String> records) {
        CRC32C crc = new CRC32C();
        for (String record : records) {
            byte[] bytes = record.getBytes(StandardCharsets.US_ASCII);
            crc.update(bytes, 0, bytes.length);
        }
        return crc;
    }

    private static void check(List<String> sent, List<String> received) {
        long sentBytes = sent.stream().mapToLong(String::length).sum();
        long receivedBytes = received.stream().mapToLong(String::length).sum();
        Gates.checkTransfer(sentBytes, Driver.crc(tally(sent)), receivedBytes, Driver.crc(tally(received)));
    }

    private static String failure(List<String> sent, List<String> received) {
        return assertThrows(Failure.class, () -> check(sent, received)).getMessage();
    }

    @Test
    void aChangedMissingOrReorderedRecordFailsTheGateAndTheSameRecordsPass() {
        List<String> sent = List.of("first record", "other record");
        assertDoesNotThrow(() -> check(sent, List.of("first record", "other record")));
        String changed = failure(sent, List.of("first record", "other recorD"));
        assertTrue(changed.contains("digest differs"), changed);
        String swapped = failure(sent, List.of("other record", "first record"));
        assertTrue(swapped.contains("digest differs"), swapped);
        String missing = failure(sent, List.of("first record"));
        assertTrue(missing.contains("sent 24 bytes, received 12"), missing);
    }
}
