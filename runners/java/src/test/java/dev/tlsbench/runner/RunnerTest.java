package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The runner as the orchestrator starts it for a one-shot command: one JVM, one JSON reply on stdout, exit status 0.
 */
class RunnerTest {
    /** Runs the runner's main in a fresh JVM; returns its stdout, which must be one line. */
    static String run(String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Djna.library.path="
                + System.getProperty("jna.library.path", ""), "-cp", System.getProperty("java.class.path"),
                "dev.tlsbench.runner.Main"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        process.getInputStream().transferTo(out);
        assertEquals(0, process.waitFor(), "exit status");
        String reply = out.toString(StandardCharsets.UTF_8);
        assertTrue(reply.endsWith("\n") && reply.indexOf('\n') == reply.length() - 1, "one line: " + reply);
        return reply.trim();
    }

    static String sample(String client, String server, String scenario, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("sample", "--client", client, "--server", server,
                "--scenario", scenario, "--min-time-ms", "20", "--warmup-ms", "0",
                "--data-dir", TestPki.dataDir().toString()));
        args.addAll(List.of(more));
        return run(args.toArray(new String[0]));
    }

    @Test
    void listNamesBothStacksWithTheirRuntimeLibraries() throws Exception {
        String list = run("list");
        assertTrue(list.startsWith("{\"protocol_version\":" + Main.PROTOCOL_VERSION
                + ",\"stacks\":[{\"id\":\"jsse\",\"library\":\"JSSE (SunJSSE "), list);
        assertTrue(list.contains("\"id\":\"netty-tcnative\",\"library\":\"netty-tcnative-boringssl-static 2.0."), list);
        assertTrue(list.contains("(BoringSSL, netty 4.1."), list);
        assertTrue(list.contains("\"min_warmup_ms\":" + Common.MIN_WARMUP_MS + "}"), list);
        // Each with its backend: the JCA providers JSSE's algorithms come from, and tcnative's BoringSSL.
        assertTrue(list.contains("\"backend\":{\"name\":\"JDK providers\",\"version\":\""
                + System.getProperty("java.runtime.version") + "\""), list);
        java.security.Provider aesGcm = javax.crypto.Cipher.getInstance("AES/GCM/NoPadding").getProvider();
        assertTrue(list.contains(aesGcm.getName() + " " + aesGcm.getVersionStr() + ": AES-GCM"), list);
        assertTrue(list.contains("\"tls_library\":\"netty 4.1."), list);
        assertTrue(list.contains("\"backend\":{\"name\":\"BoringSSL\","
                + "\"version\":\"netty-tcnative-boringssl-static 2.0."), list);
    }

    @Test
    void everyPairOfTheTwoStacksHandshakesAndPassesItsGates() throws Exception {
        for (String[] pair : new String[][] {{"jsse", "netty-tcnative"}, {"netty-tcnative", "jsse"}}) {
            String reply = sample(pair[0], pair[1], "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
            assertTrue(reply.startsWith("{\"status\":\"ok\""), reply);
            assertTrue(reply.contains("{\"side\":\"server\",\"metric\":\"cpu_handshakes_per_s\""), reply);
            assertTrue(reply.contains("{\"side\":\"client\",\"negotiated\":\"1.3 aes-128-gcm x25519\"}"), reply);
        }
        String mtls = sample("netty-tcnative", "netty-tcnative",
                "handshake-full_1.2_secp256r1_rsa-2048_aes-256-gcm_mtls");
        assertTrue(mtls.contains("\"negotiated\":\"1.2 aes-256-gcm secp256r1\"}"), mtls);
        String resumed = sample("jsse", "jsse", "handshake-resume-id_1.2_x25519_ecdsa-p256_chacha20-poly1305_no-ems");
        assertTrue(resumed.contains("\"negotiated\":\"1.2 chacha20-poly1305 group not reported, resumed, no EMS\"}"),
                resumed);
    }

    @Test
    void theIoMeasureCountsOneConnection() throws Exception {
        String reply = sample("netty-tcnative", "jsse", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm",
                "--measure", "io");
        assertTrue(reply.contains("\"iterations\":1,"), reply);
        // The adapter reads only when its socket is readable: no read comes back empty.
        assertTrue(reply.contains(
                "{\"side\":\"client\",\"metric\":\"empty_read_calls\",\"value\":0.0,\"seconds\":0.0}"), reply);
        assertTrue(reply.contains("\"metric\":\"records_written\""), reply);
    }

    @Test
    void whatIsNotSupportedSaysWhy() throws Exception {
        assertTrue(sample("jsse", "jsse", "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm")
                .startsWith("{\"status\":\"unsupported\",\"reason\":\"jsse: JDK 17's SunJSSE has no ML-KEM"));
        assertTrue(sample("jsse", "jsse", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--measure",
                "instructions").contains("callgrind"));
        assertEquals("{\"status\":\"failed\",\"reason\":\"stack `wolfssl` is not in this runner "
                + "(it has: jsse, netty-tcnative)\"}",
                sample("wolfssl", "jsse", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"));
    }

    @Test
    void certificatesAreVerifiedForReal() throws Exception {
        // Another root in ca.pem: the chain does not verify.
        Path mixed = Files.createTempDirectory("tlsbench-mixed");
        Path dir = Files.createDirectories(mixed.resolve("pki-v2/ecdsa-p256"));
        for (String file : List.of("chain.pem", "server.key", "client-chain.pem", "client.key")) {
            Files.copy(TestPki.dataDir().resolve("pki-v2/ecdsa-p256").resolve(file), dir.resolve(file));
        }
        Path otherName = TestPki.forName("other.tlsbench.test");
        Files.copy(otherName.resolve("pki-v2/ecdsa-p256/ca.pem"), dir.resolve("ca.pem"));
        // A server certificate for another name (otherName): the chain verifies, the name does not.
        for (String client : List.of("jsse", "netty-tcnative")) {
            for (Path data : List.of(mixed, otherName)) {
                String reply = run("sample", "--client", client, "--server", "jsse", "--scenario",
                        "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", data.toString());
                assertTrue(reply.startsWith("{\"status\":\"failed\",\"reason\":\"client handshake failed: "), reply);
            }
        }
    }

    @Test
    void aMissingCertificateFileIsNamed() throws Exception {
        Path empty = Files.createTempDirectory("tlsbench-empty");
        String reply = run("sample", "--client", "jsse", "--server", "jsse", "--scenario",
                "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", empty.toString());
        assertTrue(reply.contains("pki-v2/ecdsa-p256/ca.pem"), reply);
    }
}
