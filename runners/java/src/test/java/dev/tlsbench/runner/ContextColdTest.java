package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The context scenarios and the cold command, each in a JVM of its own (a store loads, and a JVM starts, once per
 * process): the replies' structure, the trust store's gate and the errors. No timing is asserted, only that what was
 * timed is there and above zero.
 */
class ContextColdTest {
    /** Debian's bundle, which the orchestrator's system-bundle.pem starts with. */
    private static final Path SYSTEM_BUNDLE = Path.of("/etc/ssl/certs/ca-certificates.crt");

    /** The runner's main in a fresh JVM with SSL_CERT_FILE set to {@code certFile} (unset if null). */
    static Map<String, Object> run(Path certFile, String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                "dev.tlsbench.runner.Main"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().remove("SSL_CERT_FILE");
        if (certFile != null) {
            builder.environment().put("SSL_CERT_FILE", certFile.toString());
        }
        Process process = builder.start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        process.getInputStream().transferTo(out);
        assertEquals(0, process.waitFor(), "exit status");
        return ProtocolVectorsTest.object(ProtocolVectorsTest.JsonReader.parse(out.toString(StandardCharsets.UTF_8)));
    }

    static Map<String, Object> sample(Path certFile, String stack, String scenario) throws Exception {
        return run(certFile, "sample", "--client", stack, "--server", stack, "--scenario", scenario,
                "--min-time-ms", "20", "--warmup-ms", "0", "--data-dir", TestPki.dataDir().toString());
    }

    /** Each value as side/metric. */
    static Map<String, Double> values(Map<String, Object> reply) {
        Map<String, Double> values = new java.util.TreeMap<>();
        for (Object v : (List<?>) reply.get("values")) {
            Map<String, Object> value = ProtocolVectorsTest.object(v);
            values.put(value.get("side") + "/" + value.get("metric"), ((Number) value.get("value")).doubleValue());
        }
        return values;
    }

    /** A bundle of the system's roots (or none) and the test CA (or not). */
    static Path bundle(boolean system, boolean testCa) throws Exception {
        StringBuilder pem = new StringBuilder();
        if (system) {
            pem.append(Files.readString(SYSTEM_BUNDLE));
        }
        if (testCa) {
            pem.append(Files.readString(TestPki.dataDir().resolve("pki-v2/ecdsa-p256/ca.pem")));
        }
        Path file = Files.createTempFile("bundle", ".pem");
        file.toFile().deleteOnExit();
        Files.writeString(file, pem);
        return file;
    }

    @Test
    void aContextScenarioMeasuresItsSideAloneAndVerifiesAHandshake() throws Exception {
        for (String stack : List.of("jsse", "netty-tcnative")) {
            for (String scenario : List.of("context-server_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls",
                    "context-client_1.2_x25519_ecdsa-p256_aes-128-gcm")) {
                Map<String, Object> reply = sample(null, stack, scenario);
                assertEquals("ok", reply.get("status"), stack + " " + scenario + ": " + reply);
                String side = scenario.startsWith("context-server") ? "server" : "client";
                assertEquals(Set.of(side + "/contexts_per_s", side + "/cpu_contexts_per_s", side + "/gc_percent"),
                        values(reply).keySet(), reply.toString());
                assertTrue(values(reply).get(side + "/contexts_per_s") > 0, reply.toString());
                // The gate's handshake, as handshake-full of the same parts negotiates it.
                assertEquals(2, ((List<?>) reply.get("negotiated")).size(), reply.toString());
                assertTrue(reply.get("negotiated").toString().contains(scenario.contains("_1.3_") ? "1.3" : "1.2"));
            }
        }
        // Under rss: the contexts held, and what the process's resident size grew by for each.
        Map<String, Object> rss = run(null, "sample", "--client", "jsse", "--server", "jsse", "--measure", "rss",
                "--scenario", "context-server_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir",
                TestPki.dataDir().toString());
        assertEquals("ok", rss.get("status"), rss.toString());
        assertEquals(Set.of("server/rss_context_bytes"), values(rss).keySet(), rss.toString());
        assertTrue(values(rss).get("server/rss_context_bytes") > 0, rss.toString());
        assertEquals(Contexts.RSS_CONTEXTS, ((Number) rss.get("iterations")).intValue(), rss.toString());
        Map<String, Object> side = run(null, "side", "--role", "client", "--stack", "jsse", "--peer-stack", "openssl",
                "--peer-fd", "0", "--scenario", "context-client_1.3_x25519_ecdsa-p256_aes-128-gcm");
        assertEquals("unsupported", side.get("status"), side.toString());
    }

    /** The gate: the system's store must verify the test CA's chain and hold a system's roots; JSSE counts them. */
    @Test
    void theSystemTrustStoreIsGated() throws Exception {
        assumeTrue(Files.isRegularFile(SYSTEM_BUNDLE), "needs the system's CA bundle " + SYSTEM_BUNDLE);
        String scenario = "context-client-system_1.3_x25519_ecdsa-p256_aes-128-gcm";
        Path full = bundle(true, true);
        int roots = java.security.cert.CertificateFactory.getInstance("X.509")
                .generateCertificates(Files.newInputStream(full)).size();
        Map<String, Object> jsse = sample(full, "jsse", scenario);
        assertEquals("ok", jsse.get("status"), jsse.toString());
        assertEquals((double) roots, values(jsse).get("client/trust_roots"), jsse.toString());
        // Netty's default factory is the same store; Netty does not tell how many roots it holds.
        Map<String, Object> netty = sample(full, "netty-tcnative", scenario);
        assertEquals("ok", netty.get("status"), netty.toString());
        assertEquals(Set.of("client/contexts_per_s", "client/cpu_contexts_per_s", "client/gc_percent"),
                values(netty).keySet(), netty.toString());
        for (String stack : List.of("jsse", "netty-tcnative")) {
            Map<String, Object> without = sample(bundle(true, false), stack, scenario);
            assertEquals("failed", without.get("status"));
            assertTrue(without.get("reason").toString().startsWith("gate failed: the handshake "
                    + "(handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm) from the last context built did not "
                    + "complete: client handshake failed: "), without.toString());
        }
        Map<String, Object> few = sample(bundle(false, true), "jsse", scenario);
        assertEquals("gate failed: the system's trust store held 1 roots (fewer than 100): is SSL_CERT_FILE read?",
                few.get("reason"), few.toString());
        Map<String, Object> none = sample(null, "jsse", scenario);
        assertTrue(none.get("reason").toString().startsWith("context-client-system needs SSL_CERT_FILE: "),
                none.toString());
    }

    @Test
    void coldReportsEachSidesContextAndHandshakesFromAFreshJvm() throws Exception {
        String dir = TestPki.dataDir().toString();
        for (String[] c : new String[][] {
                {"jsse", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "second_ns"},
                {"jsse", "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm", "resume"},
                {"netty-tcnative", "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", "resume"},
                {"netty-tcnative", "handshake-resume-id_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls", "resume"}}) {
            long spawned = System.nanoTime();
            Map<String, Object> reply = run(null, "cold", "--client", c[0], "--server", c[0], "--scenario", c[1],
                    "--data-dir", dir, "--spawned-at-ns", Long.toString(spawned));
            assertEquals("ok", reply.get("status"), reply.toString());
            Map<String, Object> cold = ProtocolVectorsTest.object(reply.get("cold"));
            assertTrue(((Number) cold.get("process_start_ns")).longValue() > 0, reply.toString());
            Set<String> fields = c[2].equals("resume")
                    ? Set.of("context_ns", "first_ns", "first_resume_ns", "second_resume_ns")
                    : Set.of("context_ns", "first_ns", "second_ns");
            for (String side : List.of("client", "server")) {
                Map<String, Object> figures = ProtocolVectorsTest.object(cold.get(side));
                assertEquals(fields, new TreeSet<>(figures.keySet()), side + ": " + reply);
                for (Object ns : figures.values()) {
                    assertTrue(((Number) ns).longValue() > 0, side + ": " + reply);
                }
            }
        }
    }

    @Test
    void coldRefusesWhatItCannotTime() throws Exception {
        String full = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
        Json transfer = Main.reply(new String[] {"cold", "--client", "jsse", "--server", "jsse", "--scenario",
            "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm"}, null, false);
        assertEquals("{\"status\":\"unsupported\",\"reason\":\"cold takes a handshake scenario (handshake-full, "
                + "handshake-resume-id, handshake-resume-ticket; the Java runner also context-client-system), not "
                + "transfer\"}", transfer.toString());
        Json counted = Main.reply(new String[] {"cold", "--client", "jsse", "--server", "jsse", "--scenario", full,
            "--count-side", "client"}, null, false);
        assertTrue(counted.toString().startsWith("{\"status\":\"unsupported\",\"reason\":\"the Java runner cannot be "
                + "counted by callgrind"), counted.toString());
        Json future = Main.reply(new String[] {"cold", "--client", "jsse", "--server", "jsse", "--scenario", full,
            "--spawned-at-ns", Long.toString(Long.MAX_VALUE)}, null, false);
        assertTrue(future.toString().contains("is not a CLOCK_MONOTONIC reading before this process began"),
                future.toString());
        Json other = Main.reply(new String[] {"cold", "--client", "openssl", "--server", "jsse", "--scenario", full},
                null, false);
        assertTrue(other.toString().contains("stack `openssl` is not in this runner"), other.toString());
    }
}
