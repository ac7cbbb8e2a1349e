package dev.tlsbench.runner;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Certificates for the tests, made with the JDK's keytool in the layout the orchestrator writes
 * (DIR/pki-v2/KEY/{ca.pem, chain.pem, server.key, client-chain.pem, client.key}): a root, an
 * intermediate, a server leaf for server.tlsbench.test (or another name) and a client leaf.
 */
final class TestPki {
    private static final String PASS = "tlsbench";
    /** Kept across test JVMs and builds (mvn clean removes it): keytool takes a few seconds per set. */
    private static final Path ROOT = Path.of("target", "test-pki");

    private TestPki() {
    }

    /** ecdsa-p256 and rsa-2048 certificates. */
    static Path dataDir() throws Exception {
        Path dir = ROOT.resolve("main").toAbsolutePath();
        made(dir, "ecdsa-p256", "server.tlsbench.test");
        made(dir, "rsa-2048", "server.tlsbench.test");
        return dir;
    }

    /** ecdsa-p256 certificates whose server leaf names {@code serverName}. */
    static Path forName(String serverName) throws Exception {
        Path dir = ROOT.resolve(serverName).toAbsolutePath();
        made(dir, "ecdsa-p256", serverName);
        return dir;
    }

    private static synchronized void made(Path dataDir, String keyType, String serverName) throws Exception {
        Path complete = dataDir.resolve("pki-v2").resolve(keyType).resolve("complete");
        if (!Files.exists(complete)) {
            make(dataDir, keyType, serverName);
            Files.writeString(complete, "");
        }
    }

    /** One key type's set under {@code dataDir}, the server leaf for {@code serverName}. */
    static void make(Path dataDir, String keyType, String serverName) throws Exception {
        Path dir = Files.createDirectories(dataDir.resolve("pki-v2").resolve(keyType));
        Path work = Files.createTempDirectory("keytool");
        List<String> alg = keyType.startsWith("rsa") ? List.of("-keyalg", "RSA", "-keysize", "2048")
                : List.of("-keyalg", "EC", "-groupname", "secp256r1");
        String ca = work.resolve("ca.p12").toString();
        String inter = work.resolve("int.p12").toString();
        keytool(null, concat(List.of("-genkeypair", "-alias", "ca", "-dname", "CN=tlsbench test root", "-ext", "bc:c",
                "-validity", "3650", "-keystore", ca), alg));
        String caPem = keytool(null, List.of("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca));
        keytool(null, concat(List.of("-genkeypair", "-alias", "int", "-dname", "CN=tlsbench test intermediate",
                "-validity", "3650", "-keystore", inter), alg));
        String intPem = keytool(keytool(null, List.of("-certreq", "-alias", "int", "-keystore", inter)),
                List.of("-gencert", "-rfc", "-alias", "ca", "-keystore", ca, "-validity", "3650",
                        "-ext", "bc:c=ca:true,pathlen:0", "-ext", "ku:c=keyCertSign,cRLSign"));
        Files.writeString(dir.resolve("ca.pem"), caPem);
        leaf(work, dir, alg, inter, intPem, "server", serverName, "serverAuth", "chain.pem", "server.key");
        leaf(work, dir, alg, inter, intPem, "client", "client.tlsbench.test", "clientAuth", "client-chain.pem",
                "client.key");
    }

    private static void leaf(Path work, Path dir, List<String> alg, String inter, String intPem, String name,
                             String dns, String eku, String chainFile, String keyFile) throws Exception {
        String store = work.resolve(name + ".p12").toString();
        keytool(null, concat(List.of("-genkeypair", "-alias", name, "-dname", "CN=" + dns, "-validity", "3650",
                "-keystore", store), alg));
        String pem = keytool(keytool(null, List.of("-certreq", "-alias", name, "-keystore", store)),
                List.of("-gencert", "-rfc", "-alias", "int", "-keystore", inter, "-validity", "3650",
                        "-ext", "san=dns:" + dns, "-ext", "eku=" + eku,
                        "-ext", "ku:c=digitalSignature,keyEncipherment"));
        Files.writeString(dir.resolve(chainFile), pem + intPem);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(Path.of(store))) {
            ks.load(in, PASS.toCharArray());
        }
        Key key = ks.getKey(name, PASS.toCharArray());
        String b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(key.getEncoded());
        Files.writeString(dir.resolve(keyFile),
                "-----BEGIN PRIVATE KEY-----\n" + b64 + "\n-----END PRIVATE KEY-----\n");
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** Runs keytool with {@code input} on its stdin; returns its stdout. */
    private static String keytool(String input, List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
        command.addAll(args);
        command.addAll(List.of("-storepass", PASS, "-keypass", PASS, "-storetype", "PKCS12", "-noprompt"));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        if (input != null) {
            process.getOutputStream().write(input.getBytes(StandardCharsets.US_ASCII));
        }
        process.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        process.getInputStream().transferTo(out);
        if (process.waitFor() != 0) {
            throw new IOException("keytool " + args + " failed");
        }
        return out.toString(StandardCharsets.US_ASCII);
    }
}
