package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The runner as a session: one JVM answering request after request on stdin, one reply line each. */
class SessionTest {
    private static final String TLS12 = "1.2_x25519_ecdsa-p256_aes-128-gcm";
    private static final String FULL13 = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";

    /** A runner started with {@code session}: requests go to its stdin, replies come from its stdout. */
    private static final class Session implements AutoCloseable {
        final Process process;
        final OutputStream requests;
        final BufferedReader replies;

        Session() throws Exception {
            List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", System.getProperty("java.class.path"), "dev.tlsbench.runner.Main", "session");
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            requests = process.getOutputStream();
            replies = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        }

        /** Sends a request: the words, tab-separated, on one line. */
        void send(String... words) throws Exception {
            requests.write((String.join("\t", words) + "\n").getBytes(StandardCharsets.UTF_8));
            requests.flush();
        }

        String reply() throws Exception {
            String reply = replies.readLine();
            assertNotNull(reply, "the session ended without a reply");
            return reply;
        }

        String ask(String... words) throws Exception {
            send(words);
            return reply();
        }

        /** Ends the session as the orchestrator does, by closing its stdin: no more output, exit status 0. */
        @Override
        public void close() throws IOException {
            requests.close();
            assertNull(replies.readLine(), "nothing after the last reply");
            try {
                assertEquals(0, process.waitFor(), "exit status");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for the session to exit", e);
            }
        }
    }

    private static String[] sample(String client, String server, String scenario, String... more) throws Exception {
        List<String> words = new ArrayList<>(List.of("sample", "--client", client, "--server", server,
                "--scenario", scenario, "--min-time-ms", "20", "--warmup-ms", "10",
                "--data-dir", TestPki.dataDir().toString()));
        words.addAll(List.of(more));
        return words.toArray(new String[0]);
    }

    private static String[] side(String role, String stack, String peerStack, Path socket) throws Exception {
        return side(role, stack, peerStack, socket, FULL13);
    }

    private static String[] side(String role, String stack, String peerStack, Path socket, String scenario)
            throws Exception {
        return new String[] {"side", "--role", role, "--stack", stack, "--peer-stack", peerStack,
            "--scenario", scenario,
            "--min-time-ms", "20", "--warmup-ms", "10", "--peer-socket", socket.toString(),
            "--data-dir", TestPki.dataDir().toString()};
    }

    private static long iterations(String reply) {
        return Long.parseLong(reply.replaceAll(".*\"iterations\":(\\d+),.*", "$1"));
    }

    private static void assertOk(String reply) {
        assertTrue(reply.startsWith("{\"status\":\"ok\""), reply);
    }

    @Test
    void aSessionAnswersSampleAfterSample() throws Exception {
        try (Session session = new Session()) {
            // Each sample builds its own contexts: a resuming scenario's sessions stay in its own sample, and the
            // full handshakes after it (whose gates refuse a resumption) resume nothing.
            String resumed = session.ask(sample("jsse", "jsse", "handshake-resume-id_" + TLS12));
            assertOk(resumed);
            assertTrue(iterations(resumed) > 0, resumed);
            assertTrue(resumed.contains("{\"side\":\"client\","
                    + "\"negotiated\":\"1.2 aes-128-gcm group not reported, resumed, no ticket\"}"), resumed);
            assertTrue(resumed.contains("{\"side\":\"server\",\"metric\":\"handshakes_per_s\""), resumed);
            String full = session.ask(sample("jsse", "netty-tcnative", "handshake-full_" + TLS12));
            assertOk(full);
            assertTrue(iterations(full) > 0, full);
            assertTrue(full.contains("\"server_library\":\"netty-tcnative-boringssl-static"), full);
            assertTrue(full.contains("{\"side\":\"client\",\"negotiated\":\"1.2 aes-128-gcm x25519, no ticket\"}"),
                    full);
            String io = session.ask(sample("netty-tcnative", "jsse", "io-profile_" + TLS12, "--measure", "io"));
            assertOk(io);
            assertEquals(1, iterations(io), io);
            assertTrue(io.contains(
                    "{\"side\":\"client\",\"metric\":\"empty_read_calls\",\"value\":0.0,\"seconds\":0.0}"), io);
        }
    }

    @Test
    void aRequestOfAnotherCommandFailsAndTheSessionGoesOn() throws Exception {
        try (Session session = new Session()) {
            for (String word : List.of("list", "", "serve", "session", "bogus")) {
                assertEquals("{\"status\":\"failed\",\"reason\":\"a session takes sample and side requests (got `"
                        + word + "`)\"}", session.ask(word, "--stack", "jsse"));
            }
            assertEquals("{\"status\":\"failed\",\"reason\":\"a session takes sample and side requests (got ``)\"}",
                    session.ask(""));
            // stdin carries the requests: a side meets its peer at a socket path.
            String[] side = {"side", "--role", "client", "--stack", "jsse", "--peer-stack", "jsse",
                "--scenario", FULL13};
            String[] sideOnFd = ProtocolVectorsTest.concat(side, new String[] {"--peer-fd", "0"});
            assertEquals("{\"status\":\"failed\",\"reason\":\"in a session the peer is reached with "
                    + "--peer-socket PATH, not --peer-fd\"}", session.ask(sideOnFd));
            assertEquals("{\"status\":\"failed\",\"reason\":\"side: give exactly one of --peer-fd and --peer-socket\"}",
                    session.ask(side));
            assertEquals("{\"status\":\"failed\",\"reason\":\"a value is required for '--cpu-clock'\"}",
                    session.ask(sample("jsse", "jsse", FULL13, "--cpu-clock")));
            // Refused by its capabilities, it fixes no pins: the next scenario sets its own.
            assertTrue(session.ask(sample("jsse", "jsse", "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm"))
                    .startsWith("{\"status\":\"unsupported\",\"reason\":\"jsse: JDK 17's SunJSSE has no ML-KEM"));
            String ok = session.ask(sample("jsse", "jsse", FULL13));
            assertOk(ok);
            assertTrue(ok.contains("{\"side\":\"server\",\"negotiated\":\"1.3 aes-128-gcm x25519\"}"), ok);
        }
    }

    @Test
    void aScenarioThatNeedsOtherPinsIsRefusedForANewProcess() throws Exception {
        String tail = "; a scenario that needs other JVM-wide settings needs a process of its own\"}";
        try (Session session = new Session()) {
            assertOk(session.ask(sample("jsse", "jsse", FULL13)));
            assertEquals("{\"status\":\"needs_new_process\",\"reason\":\"this JVM is pinned by its first scenario "
                    + "(jdk.tls.namedGroups=x25519 where this scenario needs secp256r1)" + tail,
                    session.ask(sample("jsse", "jsse", "handshake-full_1.3_secp256r1_ecdsa-p256_aes-128-gcm")));
            // Unpinned, it would run with the first one's groups and without tickets.
            assertEquals("{\"status\":\"needs_new_process\",\"reason\":\"this JVM is pinned by its first scenario ("
                    + "jdk.tls.client.enableSessionTicketExtension=false where this scenario needs it unset, "
                    + "jdk.tls.namedGroups=x25519 where this scenario needs it unset, "
                    + "jdk.tls.server.enableSessionTicketExtension=false where this scenario needs it unset)" + tail,
                    session.ask(sample("jsse", "jsse", "handshake-full_1.3_default_ecdsa-p256_default")));
            assertEquals("{\"status\":\"needs_new_process\",\"reason\":\"this JVM is pinned by its first scenario ("
                    + "jdk.tls.client.enableSessionTicketExtension=false where this scenario needs true, "
                    + "jdk.tls.server.enableSessionTicketExtension=false where this scenario needs true)" + tail,
                    session.ask(sample("jsse", "jsse", "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm")));
            // The same pins, with one JSSE side: the same properties.
            assertOk(session.ask(sample("netty-tcnative", "jsse", FULL13)));
        }
    }

    @Test
    void aSplitPairMeetsAtAPeerSocketTwiceInARow() throws Exception {
        Path dir = Files.createTempDirectory("tlsbench-peer");
        try (Session jsse = new Session(); Session netty = new Session()) {
            for (int round = 0; round < 2; round++) {
                Path socket = dir.resolve("pair-" + round + ".sock");
                // The roles swap: a session's side can face a different peer, in another role, each sample.
                boolean jsseClient = round == 0;
                Session client = jsseClient ? jsse : netty;
                Session server = jsseClient ? netty : jsse;
                // The client asks first and retries until the server listens.
                String clientStack = jsseClient ? "jsse" : "netty-tcnative";
                String serverStack = jsseClient ? "netty-tcnative" : "jsse";
                client.send(side("client", clientStack, serverStack, socket));
                Thread.sleep(200);
                server.send(side("server", serverStack, clientStack, socket));
                String clientReply = client.reply();
                String serverReply = server.reply();
                assertOk(clientReply);
                assertOk(serverReply);
                assertTrue(clientReply.contains("\"server_library\":\"\""), clientReply);
                assertTrue(clientReply.contains("{\"side\":\"client\",\"negotiated\":\"1.3 aes-128-gcm x25519\"}"),
                        clientReply);
                assertTrue(serverReply.contains("{\"side\":\"server\",\"metric\":\"handshakes_per_s\""), serverReply);
                assertTrue(iterations(clientReply) > 0, clientReply);
                assertEquals(iterations(clientReply), iterations(serverReply));
                // The server removed its socket once the client connected.
                assertFalse(Files.exists(socket), socket.toString());
            }
            // A side that cannot measure the scenario still meets its peer, to tell it why. (The client: a server
            // that stops may be gone before the client's first message, which then finds a broken pipe.)
            Path socket = dir.resolve("unsupported.sock");
            String mlkem = "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm";
            jsse.send(side("client", "jsse", "netty-tcnative", socket, mlkem));
            netty.send(side("server", "netty-tcnative", "jsse", socket, mlkem));
            String reason = "jsse: JDK 17's SunJSSE has no ML-KEM key exchange (X25519MLKEM768)";
            assertEquals("{\"status\":\"unsupported\",\"reason\":\"" + reason + "\"}", jsse.reply());
            // The server's failure only echoes the client's, and says so.
            assertEquals("{\"status\":\"failed\",\"reason\":\"the peer stopped: " + reason + "\",\"cause\":\"peer\"}",
                    netty.reply());
        }
    }

    private static String sideFailure(String... flags) {
        List<String> args = new ArrayList<>(
                List.of("side", "--stack", "netty-tcnative", "--peer-stack", "jsse", "--scenario", FULL13));
        args.addAll(List.of(flags));
        return assertThrows(Failure.class, () -> Main.run(args.toArray(new String[0]))).getMessage();
    }

    @Test
    void aSideNamesItsMissingPeer() throws Exception {
        Path dir = Files.createTempDirectory("tlsbench-peer");
        assertEquals("side: give exactly one of --peer-fd and --peer-socket", sideFailure("--role", "client"));
        assertEquals("side: give exactly one of --peer-fd and --peer-socket",
                sideFailure("--role", "client", "--peer-fd", "0", "--peer-socket", dir.resolve("x.sock").toString()));
        long wait = PeerSocket.waitMs;
        PeerSocket.waitMs = 200;
        try {
            Path none = dir.resolve("none.sock");
            assertEquals("cannot connect to the peer at " + none + ": No such file or directory",
                    sideFailure("--role", "client", "--peer-socket", none.toString()));
            // A stale socket file: nothing listens there.
            Path stale = dir.resolve("stale.sock");
            ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(stale)).close();
            assertTrue(Files.exists(stale));
            assertEquals("cannot connect to the peer at " + stale + ": Connection refused",
                    sideFailure("--role", "client", "--peer-socket", stale.toString()));
            // The server replaces the stale file, waits, and removes its own.
            long started = System.nanoTime();
            assertEquals("no peer connected to " + stale + " within 0.2 s",
                    sideFailure("--role", "server", "--peer-socket", stale.toString()));
            assertTrue(System.nanoTime() - started >= 200_000_000L);
            assertFalse(Files.exists(stale));
        } finally {
            PeerSocket.waitMs = wait;
        }
        assertEquals("within 30 s", "within " + PeerSocket.seconds(PeerSocket.waitMs) + " s");
    }
}
