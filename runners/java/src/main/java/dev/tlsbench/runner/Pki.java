package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.KeyType;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import javax.net.ssl.TrustManagerFactory;

/**
 * One key type's certificates, read (never generated: the orchestrator makes them) from
 * {@code DIR/pki-v2/KEY/}: ca.pem, chain.pem (leaf then intermediate), server.key (PKCS#8 PEM),
 * client-chain.pem, client.key.
 */
public final class Pki {
    public static final String SERVER_NAME = "server.tlsbench.test";
    /** Any port: a client session cache keys sessions by host and port, and every connection uses this one. */
    public static final int SERVER_PORT = 443;

    public final X509Certificate ca;
    public final X509Certificate[] chain;
    public final PrivateKey key;
    public final X509Certificate[] clientChain;
    public final PrivateKey clientKey;
    /** The client trusts the system's store ({@link SystemTrust}), not {@link #ca} (then null). */
    public final boolean systemTrust;

    private Pki(X509Certificate ca, X509Certificate[] chain, PrivateKey key, X509Certificate[] clientChain,
            PrivateKey clientKey, boolean systemTrust) {
        this.ca = ca;
        this.chain = chain;
        this.key = key;
        this.clientChain = clientChain;
        this.clientKey = clientKey;
        this.systemTrust = systemTrust;
    }

    /** The data directory: --data-dir, else $TLSBENCH_DATA_DIR, $XDG_DATA_HOME/tlsbench, ~/.local/share/tlsbench. */
    public static Path dataDir(String flag) {
        if (flag != null) {
            return Path.of(flag);
        }
        String dir = System.getenv("TLSBENCH_DATA_DIR");
        if (dir != null && !dir.isEmpty()) {
            return Path.of(dir);
        }
        String xdg = System.getenv("XDG_DATA_HOME");
        if (xdg != null && !xdg.isEmpty()) {
            return Path.of(xdg, "tlsbench");
        }
        String home = System.getenv("HOME");
        if (home != null && !home.isEmpty()) {
            return Path.of(home, ".local/share/tlsbench");
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "tlsbench");
    }

    /** Loads one key type's files; a missing or unreadable file fails naming its path. */
    public static Pki load(Path dataDir, KeyType keyType) {
        Path dir = dataDir.resolve("pki-v2").resolve(keyType.text());
        X509Certificate[] ca = certificates(dir.resolve("ca.pem"));
        return new Pki(ca[0], certificates(dir.resolve("chain.pem")), privateKey(dir.resolve("server.key"), keyType),
                certificates(dir.resolve("client-chain.pem")), privateKey(dir.resolve("client.key"), keyType), false);
    }

    /**
     * What one side's config reads, read and parsed now (a context scenario does it per context): the server's
     * chain and key, and the root when it verifies client certificates; the client's root (none with the
     * system's store) and, under mTLS, its chain and key. What the side does not read is null.
     */
    public static Pki loadSide(Path dataDir, Scenario scenario, Scenario.Side side, boolean systemTrust) {
        Path dir = dataDir.resolve("pki-v2").resolve(scenario.key.text());
        boolean client = side == Scenario.Side.CLIENT;
        boolean verifies = client ? !systemTrust : scenario.clientAuth != Scenario.ClientAuth.NONE;
        boolean hasCert = !client || scenario.clientAuth == Scenario.ClientAuth.REQUIRED;
        String chain = client ? "client-chain.pem" : "chain.pem";
        String key = client ? "client.key" : "server.key";
        return new Pki(verifies ? certificates(dir.resolve("ca.pem"))[0] : null,
                hasCert && !client ? certificates(dir.resolve(chain)) : null,
                hasCert && !client ? privateKey(dir.resolve(key), scenario.key) : null,
                hasCert && client ? certificates(dir.resolve(chain)) : null,
                hasCert && client ? privateKey(dir.resolve(key), scenario.key) : null, client && systemTrust);
    }

    /** A PKIX trust manager factory whose only anchor is the scenario's root (not the JDK's cacerts). */
    public TrustManagerFactory trust() throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        store.setCertificateEntry("ca", ca);
        TrustManagerFactory factory = TrustManagerFactory.getInstance("PKIX");
        factory.init(store);
        return factory;
    }

    private static String read(Path path) {
        try {
            return Files.readString(path, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw Failure.other("reading " + path + ": " + e.getMessage());
        }
    }

    static X509Certificate[] certificates(Path path) {
        String pem = read(path);
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            X509Certificate[] certs = factory.generateCertificates(
                    new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))
                    .toArray(new X509Certificate[0]);
            if (certs.length == 0) {
                throw Failure.other(path + " holds no certificate");
            }
            return certs;
        } catch (Failure e) {
            throw e;
        } catch (Exception e) {
            throw Failure.other("parsing " + path + ": " + e.getMessage());
        }
    }

    static PrivateKey privateKey(Path path, KeyType keyType) {
        String pem = read(path);
        try {
            String begin = "-----BEGIN PRIVATE KEY-----";
            int start = pem.indexOf(begin);
            int end = pem.indexOf("-----END PRIVATE KEY-----");
            if (start < 0 || end < 0) {
                throw Failure.other(path + " holds no PKCS#8 private key (BEGIN PRIVATE KEY)");
            }
            byte[] der = Base64.getMimeDecoder().decode(pem.substring(start + begin.length(), end));
            return KeyFactory.getInstance(keyType.keyAlgorithm()).generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (Failure e) {
            throw e;
        } catch (Exception e) {
            throw Failure.other("parsing the private key " + path + ": " + e.getMessage());
        }
    }
}
