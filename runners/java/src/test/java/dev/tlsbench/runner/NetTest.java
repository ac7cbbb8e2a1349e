package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** The network mode (serve and load) of both stacks over loopback, in TLS 1.3 full handshakes. */
class NetTest {
    private static final Scenario FULL = Scenario.parse("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
    private static final Stack JSSE = new JsseStack();
    private static final Stack NETTY = new NettyTcnativeStack();

    @Test
    void pagesParseFromSizesAndWriteCounts() {
        assertEquals(Page.EMPTY, Page.parse("0"));
        assertEquals(new Page(1, 1024), Page.parse("1KiB"));
        assertEquals(new Page(1, 10240), Page.parse("10KiB"));
        assertEquals(new Page(32, Page.WRITE_SIZE), Page.parse("512KiB"));
        assertEquals(100L << 20, Page.parse("100MiB").bytes());
        assertEquals(new Page(1000, 64), Page.parse("1000x64"));
        for (String text : List.of("0", "1KiB", "10KiB", "512KiB", "10MiB", "1000x64")) {
            assertEquals(text, Page.parse(text).toString(), "prints as parsed");
        }
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Page.parse("ten")).getMessage()
                .contains("COUNTxBYTES"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Page.parse("20KiB")).getMessage()
                .contains("multiple of 16 KiB"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Page.parse("5x0")).getMessage()
                .contains("1 byte to 1 MiB"));
        byte[] chunk = Page.parse("1KiB").chunk();
        assertEquals(0, chunk[251]);
        assertEquals((byte) 250, chunk[250]);
    }

    @Test
    void everyPairOfTheTwoStacksServesAndLoadsWithItsResponseChecked() throws Exception {
        Page page = Page.parse("10KiB");
        for (Stack client : List.of(JSSE, NETTY)) {
            for (Stack server : List.of(JSSE, NETTY)) {
                NetPair pair = NetPair.run(client, server, FULL, page, page, 12, 2);
                String what = client.id() + " -> " + server.id() + ": " + pair.client.failures.toJson()
                        + pair.server.failures.toJson();
                assertEquals(0, pair.client.failures.total() + pair.server.failures.total(), what);
                assertEquals(12, pair.client.connections, what);
                assertEquals(14, pair.server.connections, what + " (and the client's two warm-up connections)");
                assertEquals("1.3 aes-128-gcm x25519", pair.client.negotiated, what);
                assertEquals("1.3 aes-128-gcm x25519", pair.server.negotiated, what);
                NetSocket.Counts c = pair.client.sockets;
                NetSocket.Counts s = pair.server.sockets;
                // The page, its records' overhead and the server's handshake flight (a few hundred bytes).
                assertTrue(c.bytesRead > 12 * 10240 && c.bytesRead < 12 * (10240 + 2000), what + ": " + c.bytesRead);
                assertEquals(0, c.emptyReads + s.emptyReads, what
                        + ": the adapter reads only what the Selector said was there");
                // The client writes its hello, its Finished, the request and close_notify; the server its flight, the
                // page and close_notify.
                assertEquals(4 * 12, c.writes, what);
                assertEquals(3 * 14, s.writes, what);
                assertEquals(12 * NetSocket.CLIENT_OTHER_CALLS, c.other, what);
                assertTrue(c.recordsWritten >= 4 * 12 && s.recordsWritten >= 3 * 14, what);
                assertEquals(12, pair.client.handshakeLatency.count(), what);
                assertEquals(12, pair.client.firstByteLatency.count(), what);
                assertEquals(14, pair.server.handshakeLatency.count(), what);
                assertTrue(pair.client.cpuUserSeconds >= 0 && pair.server.rssPeakBytes > 0 && pair.server.maxOpen >= 1,
                        what);
            }
        }
    }

    @Test
    void aWrongOrShortResponseFailsEachConnectionWithItsReason() throws Exception {
        // 10,240 bytes where 64,000 were expected.
        NetPair shorter = NetPair.run(NETTY, JSSE, FULL, Page.parse("10KiB"), Page.parse("1000x64"), 3, 1);
        assertEquals(0, shorter.client.connections);
        assertEquals(List.of("the response: gate failed: sent 64000 bytes, received 10240"),
                shorter.client.failures.reasons);
        assertEquals(3 + 1, shorter.client.failures.total(), "the warm-up connection too");
        // As many bytes, not the same: two writes of 5,120 where one of 10,240 was expected.
        NetPair other = NetPair.run(JSSE, NETTY, FULL, Page.parse("2x5KiB"), Page.parse("10KiB"), 2, 1);
        assertEquals(List.of("the response: gate failed: received 10240 bytes that differ from the page's"),
                other.client.failures.reasons);
        // Without --response the client counts the bytes and checks nothing.
        NetPair unchecked = NetPair.run(JSSE, JSSE, FULL, Page.parse("2x5KiB"), null, 2, 1);
        assertEquals(2, unchecked.client.connections);
        assertNull(unchecked.client.page);
    }

    @Test
    void theReportIsTheHarnessesNetReplyWithItsHistogramsInHdrHistogramsEncoding() throws Exception {
        NetPair pair = NetPair.run(JSSE, NETTY, FULL, Page.EMPTY, Page.EMPTY, 5, 1);
        String json = pair.client.toJson().toString();
        assertTrue(json.startsWith("{\"status\":\"ok\",\"side\":\"client\",\"stack\":\"jsse\",\"library\":\"JSSE "),
                json);
        for (String field : List.of("\"scenario\":\"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm\"",
                "\"page\":{\"writes\":0,\"size\":0}", "\"concurrency\":1,", "\"connections\":5,", "\"resumed\":0,",
                "\"failed\":0,\"failures\":[]", "\"sockets\":{\"reads\":", "\"write_waits\":0,", "\"polls\":",
                "\"rss_start_bytes\":null,\"rss_peak_bytes\":null,\"max_open\":1}")) {
            assertTrue(json.contains(field), field + " in " + json);
        }
        assertTrue(!json.contains("without_request"), "left out when zero, as serde skips it");
        Matcher latency = Pattern.compile("\"handshake_latency\":\"([^\"]+)\"").matcher(json);
        assertTrue(latency.find(), json);
        byte[] encoded = java.util.Base64.getDecoder().decode(latency.group(1));
        assertEquals(0x1c849314, java.nio.ByteBuffer.wrap(encoded).getInt(),
                "V2 compressed, as the Rust crate's V2_COMPRESSED_COOKIE");
        Histogram back = Latency.decode(latency.group(1));
        assertEquals(5, back.getTotalCount());
        assertEquals(Latency.LOWEST_NS, back.getLowestDiscernibleValue());
        assertEquals(3, back.getNumberOfSignificantValueDigits());
        assertEquals(pair.client.handshakeLatency.histogram.getMaxValue(), back.getMaxValue());
        String server = pair.server.toJson().toString();
        assertTrue(server.contains("\"side\":\"server\"") && server.contains("\"concurrency\":1,")
                && server.contains("\"connections\":6,"), server);
    }

    @Test
    void failuresAreCountedByReasonAndBounded() {
        NetReport.Failures failures = new NetReport.Failures();
        for (int i = 0; i < 40; i++) {
            failures.add("reason " + (i % 20));
        }
        assertEquals(NetReport.Failures.MAX_REASONS, failures.reasons.size());
        assertEquals(40, failures.total(), "every failure is counted");
        assertEquals(2L, failures.counts.get(0));
    }

    @Test
    void serveRepliesWhereItListensThenItsReportAfterSigterm() throws Exception {
        Path data = TestPki.dataDir();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                "dev.tlsbench.runner.Main", "serve",
                "--stack", "netty-tcnative", "--scenario", FULL.name(), "--workers", "2", "--response", "1KiB",
                "--warmup-ms", "200", "--data-dir", data.toString()));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        BufferedReader replies = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String serving = replies.readLine();
        Matcher listening = Pattern.compile("^\\{\"listening\":\"127\\.0\\.0\\.1:(\\d+)\",\"stack\":\"netty-tcnative\","
                + "\"library\":\"netty-tcnative-boringssl-static [^\"]+\",\"workers\":2\\}$").matcher(serving);
        assertTrue(listening.find(), serving);
        Pki pki = NetPair.prepare(FULL);
        java.net.InetSocketAddress address = new java.net.InetSocketAddress("127.0.0.1",
                Integer.parseInt(listening.group(1)));
        NetReport client = NetLoad.load(JSSE, Pair.config(JSSE, Scenario.Side.CLIENT, FULL, pki), FULL,
                new NetLoad.Settings(address, 4L, null, 1, Page.parse("1KiB"), 5_000_000_000L));
        assertEquals(4, client.connections, client.failures.toJson().toString());
        process.toHandle().destroy(); // SIGTERM (Process.destroy would close the pipes too)
        String report = replies.readLine();
        assertEquals(0, process.waitFor(), "exit status");
        assertTrue(report.startsWith("{\"status\":\"ok\",\"side\":\"server\",\"stack\":\"netty-tcnative\""), report);
        assertTrue(report.contains("\"page\":{\"writes\":1,\"size\":1024},\"concurrency\":2,"
                + "\"negotiated\":\"1.3 aes-128-gcm x25519\",\"connections\":5,"), report);
        assertNull(replies.readLine(), "two replies, no more");
    }

    @Test
    void whatTheNetworkModeDoesNotRunSaysWhy() throws Exception {
        String data = TestPki.dataDir().toString();
        assertTrue(RunnerTest.run("serve", "--stack", "jsse",
                        "--scenario", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", data)
                .startsWith("{\"status\":\"unsupported\",\"reason\":\"the network mode runs handshake scenarios"));
        assertEquals("{\"status\":\"failed\",\"reason\":\"jsse is a TLS stack: name its handshake with --scenario\"}",
                RunnerTest.run("load", "--stack", "jsse", "--connect", "127.0.0.1:9"));
        assertTrue(RunnerTest.run("serve", "--stack", "tcp")
                .startsWith("{\"status\":\"unsupported\",\"reason\":\"tcp is plain TCP, which the Rust runners"));
        assertTrue(RunnerTest.run("load", "--stack", "jsse", "--scenario",
                        "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm", "--connect", "127.0.0.1:9",
                        "--data-dir", data)
                .startsWith("{\"status\":\"unsupported\",\"reason\":\"jsse: JDK 17's SunJSSE has no ML-KEM"));
        // Nothing listens on port 9 (discard): every connection fails with the kernel's reason, and the reply says so.
        String refused = RunnerTest.run("load", "--stack", "jsse", "--scenario", FULL.name(),
                "--connect", "127.0.0.1:9", "--connections", "2", "--warmup-ms", "0", "--data-dir", data);
        assertTrue(refused.contains("\"connections\":0,") && refused.contains("\"failed\":3,")
                && refused.contains("{\"reason\":\"connecting to 127.0.0.1:9: Connection refused\",\"count\":3}"),
                refused);
    }
}
