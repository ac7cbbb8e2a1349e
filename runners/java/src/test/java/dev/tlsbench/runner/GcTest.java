package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every time sample says what the collectors did while it measured: {@code gc_collections}, {@code gc_ms},
 * {@code measured_ms}, and {@code gc_percent} for each side the process measured. One scenario's JSSE pins in this
 * JVM: full TLS 1.3 handshakes and a transfer share them.
 */
class GcTest {
    private static final String FULL13 = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    private static final String TRANSFER13 = "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm";

    private static Map<String, Object> parse(String reply) {
        return ProtocolVectorsTest.object(ProtocolVectorsTest.JsonReader.parse(reply));
    }

    private static double number(Map<String, Object> reply, String field) {
        Object value = reply.get(field);
        assertTrue(value instanceof Number, field + " in " + reply);
        return ((Number) value).doubleValue();
    }

    /**
     * The three fields agree with each other and with gc_percent, which exactly {@code sides} carry; returns the
     * collections.
     */
    private static long checkGc(String reply, double minMs, String... sides) {
        Map<String, Object> json = parse(reply);
        assertEquals("ok", json.get("status"), reply);
        assertTrue(json.get("gc_collections") instanceof Long, reply);
        long collections = (Long) json.get("gc_collections");
        double gcMs = number(json, "gc_ms");
        double measuredMs = number(json, "measured_ms");
        assertTrue(collections >= 0 && gcMs >= 0 && gcMs <= measuredMs && measuredMs >= minMs, reply);
        assertTrue(collections > 0 || gcMs == 0, reply);
        Set<String> seen = new HashSet<>();
        for (Object item : (List<?>) json.get("values")) {
            Map<String, Object> value = ProtocolVectorsTest.object(item);
            if (!"gc_percent".equals(value.get("metric"))) {
                continue;
            }
            assertTrue(seen.add((String) value.get("side")), reply);
            assertEquals(100 * gcMs / measuredMs, number(value, "value"), 1e-9, reply);
            assertEquals(measuredMs / 1000, number(value, "seconds"), 1e-12, reply);
        }
        assertEquals(Set.of(sides), seen, reply);
        return collections;
    }

    private static String[] sample(String client, String server, String scenario, String minTimeMs) throws Exception {
        return new String[] {"sample", "--client", client, "--server", server, "--scenario", scenario,
            "--min-time-ms", minTimeMs, "--warmup-ms", "1", "--data-dir", TestPki.dataDir().toString()};
    }

    @Test
    void aTimeSampleInOneProcessReportsTheCollectorsForBothSides() throws Exception {
        for (String scenario : List.of(FULL13, TRANSFER13)) {
            String reply = Main.reply(sample("jsse", "netty-tcnative", scenario, "10"), null, false).toString();
            checkGc(reply, 10, "client", "server");
        }
        // Not the other measures.
        String io = Main.reply(new String[] {"sample", "--measure", "io", "--client", "jsse", "--server", "jsse",
            "--scenario", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", TestPki.dataDir().toString()},
            null, false).toString();
        Map<String, Object> json = parse(io);
        assertEquals("ok", json.get("status"), io);
        assertNull(json.get("gc_collections"), io);
        assertNull(json.get("gc_ms"), io);
        assertNull(json.get("measured_ms"), io);
        assertFalse(io.contains("gc_percent"), io);
    }

    @Test
    void aSplitSideReportsItsOwnProcesssCollectorsUnderItsOwnSide() throws Exception {
        String[] replies = SplitTest.pair(new NettyTcnativeStack(), new JsseStack(), FULL13);
        checkGc(replies[0], 20, "client");
        checkGc(replies[1], 20, "server");
    }

    @Test
    void collectionsInTheMeasuredPartAreCounted() throws Exception {
        // A fresh JVM whose young generation is 1 MiB: JSSE's handshakes fill it many times over in 50 ms.
        for (String collector : List.of("-XX:+UseSerialGC", "-XX:+UseG1GC")) {
            String reply = FreshJvm.run(List.of(collector, "-Xmx64m", "-Xmn1m"), sample("jsse", "jsse", FULL13, "50"));
            long collections = checkGc(reply, 50, "client", "server");
            assertTrue(collections >= 1, collector + ": " + reply);
        }
    }

    @Test
    void onlyTheBeansOfStopTheWorldCollectionsCount() {
        for (String name : List.of("G1 Young Generation", "G1 Old Generation", "Copy", "MarkSweepCompact",
                "PS Scavenge", "PS MarkSweep", "ZGC Pauses", "Shenandoah Pauses")) {
            assertTrue(GcWindow.counts(name), name);
        }
        for (String name : List.of("G1 Concurrent GC", "ZGC Cycles", "ZGC Major Cycles", "Shenandoah Cycles")) {
            assertFalse(GcWindow.counts(name), name);
        }
        assertFalse(GcWindow.counted().isEmpty());
    }
}
