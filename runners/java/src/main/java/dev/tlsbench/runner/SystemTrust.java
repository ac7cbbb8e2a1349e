package dev.tlsbench.runner;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The system's trust store as a JVM's TLS users load it: {@code TrustManagerFactory.init((KeyStore) null)}, the
 * JDK's default store, which is the file {@code javax.net.ssl.trustStore} names, else the JDK's cacerts. A
 * JVM does not read {@code SSL_CERT_FILE}, so where the orchestrator points it at a bundle (the system's
 * roots and the test CA), {@link #useBundle} makes a PKCS12 store of that bundle once, outside every clock
 * (as a deployment keeps its store file), and names it in {@code javax.net.ssl.trustStore}; the JDK reads that
 * property whenever a default factory is initialised. Netty's client context without a trust manager
 * (SslContextBuilder.forClient() as its users build one) initialises the same default factory, and BoringSSL
 * then calls that Java trust manager to verify.
 */
final class SystemTrust {
    static final String PASSWORD = "changeit";
    /** The bundle the current store was made from, and its modification time; null before the first. */
    private static Path madeFrom;
    private static long madeAt;
    private static int bundleRoots;

    private SystemTrust() {
    }

    /**
     * Makes the store from $SSL_CERT_FILE's bundle (once per bundle) and names it in javax.net.ssl.trustStore;
     * without SSL_CERT_FILE the JDK's own cacerts stays. Returns the roots in the bundle, or -1 without one.
     */
    static synchronized int useBundle() {
        String file = System.getenv("SSL_CERT_FILE");
        if (file == null || file.isEmpty()) {
            return -1;
        }
        Path bundle = Path.of(file);
        try {
            long modified = Files.getLastModifiedTime(bundle).toMillis();
            if (bundle.equals(madeFrom) && modified == madeAt) {
                return bundleRoots;
            }
            Collection<? extends Certificate> roots = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(Files.readAllBytes(bundle)));
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            int i = 0;
            for (Certificate root : roots) {
                store.setCertificateEntry("root-" + i++, root);
            }
            Path made = Files.createTempFile("tlsbench-truststore", ".p12");
            made.toFile().deleteOnExit();
            try (OutputStream out = Files.newOutputStream(made)) {
                store.store(out, PASSWORD.toCharArray());
            }
            System.setProperty("javax.net.ssl.trustStore", made.toString());
            System.setProperty("javax.net.ssl.trustStoreType", "PKCS12");
            System.setProperty("javax.net.ssl.trustStorePassword", PASSWORD);
            madeFrom = bundle;
            madeAt = modified;
            bundleRoots = roots.size();
            return bundleRoots;
        } catch (IOException e) {
            throw Failure.other("reading the trust store bundle SSL_CERT_FILE=" + file + ": " + e.getMessage());
        } catch (Exception e) {
            throw Failure.other("making a PKCS12 trust store of SSL_CERT_FILE=" + file + ": " + Failure.describe(e));
        }
    }

    /** The default trust managers, as TrustManagerFactory.init((KeyStore) null) gives them to JSSE's users. */
    static TrustManager[] managers() throws Exception {
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init((KeyStore) null);
        return factory.getTrustManagers();
    }

    /** The roots the managers trust (X509TrustManager.getAcceptedIssuers). */
    static int roots(TrustManager[] managers) {
        int roots = 0;
        for (TrustManager manager : managers) {
            if (manager instanceof X509TrustManager x509) {
                X509Certificate[] issuers = x509.getAcceptedIssuers();
                roots += issuers.length;
            }
        }
        return roots;
    }

    /** What a failed handshake of the system's store adds to its reason: where the store came from. */
    static String hint() {
        String store = System.getProperty("javax.net.ssl.trustStore");
        return " (the client's default store must verify the test CA's chain; this runner makes a PKCS12 store of "
                + "SSL_CERT_FILE=" + System.getenv("SSL_CERT_FILE") + ": javax.net.ssl.trustStore="
                + (store == null ? "unset, the JDK's cacerts" : store) + ")";
    }
}
