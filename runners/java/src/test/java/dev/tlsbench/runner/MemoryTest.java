package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tlsbench.runner.Scenario.Side;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** memory-N on a JVM: the live heap after a full collection (heap), and the resident size (rss). */
class MemoryTest {
    private static final String SCENARIO = "_1.3_x25519_ecdsa-p256_aes-128-gcm";

    /** A side's value of a metric in a reply. */
    static double value(String reply, String side, String metric) {
        Matcher m = Pattern.compile("\"side\":\"" + side + "\",\"metric\":\"" + metric + "\",\"value\":([-0-9.eE]+)")
                .matcher(reply);
        assertTrue(m.find(), "no " + side + " " + metric + " in " + reply);
        return Double.parseDouble(m.group(1));
    }

    static String heap(Stack client, Stack server, String kind) throws Exception {
        Scenario scenario = Scenario.parse(kind + SCENARIO);
        // One JVM for every test of the class: the pins of JSSE on both sides whichever the stacks.
        JvmPins.apply(scenario, EnumSet.allOf(Side.class));
        return Memory.sample(client, server, scenario, Pki.load(TestPki.dataDir(), scenario.key)).toJson().toString();
    }

    @Test
    void theLiveHeapCountsWhatIsReachableAndNotGarbage() {
        // 20 MiB held: the JVM's own live heap moves by some 100 KiB between readings (caches it
        // keeps or drops), which must stay a small part of each array's share.
        int n = 20_000;
        long base = Memory.liveHeap();
        byte[][] kept = new byte[n][];
        for (int i = 0; i < n; i++) {
            kept[i] = new byte[1024];
            byte[] garbage = new byte[1024];
            garbage[0] = 1;
        }
        long held = Memory.liveHeap();
        double perObject = (held - base) / (double) n;
        // 1 KiB and an array header, and a slot of the outer array (within the JVM's own movement).
        assertTrue(perObject >= 1024 - 32 && perObject < 1024 + 256,
                "live heap grew " + perObject + " per 1 KiB array");
        assertEquals(1024, kept[n - 1].length);
    }

    /**
     * Both stacks hold a plausible share of the Java heap per connection (JSSE's whole state, netty-tcnative's Java
     * objects only); JSSE's total grows with N.
     */
    @Test
    void eachSideHoldsAShareOfTheLiveHeapPerConnection() throws Exception {
        String jsse = heap(new JsseStack(), new JsseStack(), "memory-100");
        assertTrue(jsse.contains("\"iterations\":100"), jsse);
        assertTrue(jsse.contains("\"negotiated\":\"1.3 aes-128-gcm x25519\""), jsse);
        String netty = heap(new NettyTcnativeStack(), new NettyTcnativeStack(), "memory-100");
        String more = heap(new JsseStack(), new JsseStack(), "memory-1000");
        for (String side : new String[] {"client", "server"}) {
            double small = value(jsse, side, "gc_live_heap_per_connection_bytes");
            double large = value(more, side, "gc_live_heap_per_connection_bytes");
            // The JVM's own live heap moves by about 100 KiB between readings: 1 KiB a connection
            // at 100, a tenth of that at 1000, where the figure is held to a range.
            assertTrue(small > 0 && large > 1000 && large < 1e6, "jsse " + side + ": " + small + ", " + large);
            assertTrue(large * 1000 >= small * 100,
                    "jsse " + side + ": " + small + " per connection at 100, " + large + " at 1000");
            double native_ = value(netty, side, "gc_live_heap_per_connection_bytes");
            assertTrue(Math.abs(native_) < 1e5, "netty-tcnative " + side + ": " + native_);
        }
    }

    /** The rss side: a netty-tcnative client and a JSSE server, joined by pipes, hold 100 connections each. */
    @Test
    void splitSidesReportTheResidentSize() throws Exception {
        Scenario scenario = Scenario.parse("memory-100" + SCENARIO);
        JvmPins.apply(scenario, EnumSet.allOf(Side.class));
        Pki pki = Pki.load(TestPki.dataDir(), scenario.key);
        PipedOutputStream toServer = new PipedOutputStream();
        PipedOutputStream toClient = new PipedOutputStream();
        PipedInputStream serverIn = new PipedInputStream(toServer, 1 << 20);
        PipedInputStream clientIn = new PipedInputStream(toClient, 1 << 20);
        CompletableFuture<String> server = CompletableFuture.supplyAsync(() -> Memory.side(new JsseStack(),
                Side.SERVER, scenario, pki, serverIn, toClient).toJson().toString());
        String client = Memory.side(new NettyTcnativeStack(), Side.CLIENT, scenario, pki, clientIn, toServer)
                .toJson().toString();
        String[] replies = {client, server.get()};
        String[] sides = {"client", "server"};
        for (int i = 0; i < 2; i++) {
            assertTrue(replies[i].contains("\"iterations\":100"), replies[i]);
            assertTrue(value(replies[i], sides[i], "rss_peak_bytes") > 1 << 20, replies[i]);
            value(replies[i], sides[i], "rss_per_connection_bytes");
        }
    }
}
