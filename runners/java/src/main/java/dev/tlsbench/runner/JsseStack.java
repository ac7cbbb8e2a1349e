package dev.tlsbench.runner;

import dev.tlsbench.runner.Capabilities.Exclusion;
import dev.tlsbench.runner.Scenario.ClientAuth;
import dev.tlsbench.runner.Scenario.Group;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.TrustManager;

/**
 * The JDK's own TLS (SunJSSE) as JDK 17 ships it. Versions, suites and client auth are pinned per engine
 * through SSLParameters; groups, EMS and tickets only JVM-wide ({@link JvmPins}).
 */
public final class JsseStack implements Stack {
    /**
     * JSSE issues no TLS 1.3 ticket when the server's session timeout is above this
     * (NewSessionTicket.MAX_TICKET_LIFETIME).
     */
    static final int NO_TICKETS_TIMEOUT_S = 604_800 + 1;

    @Override
    public String id() {
        return "jsse";
    }

    @Override
    public String library() {
        try {
            var provider = SSLContext.getInstance("TLS").getProvider();
            String runtime = System.getProperty("java.runtime.name", "Java").replace(" Runtime Environment", "");
            return "JSSE (" + provider.getName() + " " + provider.getVersionStr() + ", " + runtime + " "
                    + System.getProperty("java.runtime.version") + ")";
        } catch (Exception e) {
            throw new IllegalStateException("no TLS SSLContext: " + e, e);
        }
    }

    /**
     * JSSE's crypto is the JCA providers that the JDK's provider order picks for the algorithms its
     * handshakes and records use: asked the way JSSE asks (getInstance without naming a provider).
     */
    @Override
    public Backend backend() {
        String[][] uses = {
            {"Cipher", "AES/GCM/NoPadding", "AES-GCM"}, {"Cipher", "ChaCha20-Poly1305", "ChaCha20-Poly1305"},
            {"KeyAgreement", "ECDH", "ECDH"}, {"KeyAgreement", "XDH", "XDH"}, {"Signature", "SHA256withECDSA", "ECDSA"},
            {"Signature", "RSASSA-PSS", "RSA-PSS"}, {"Mac", "HmacSHA256", "HMAC"},
            {"MessageDigest", "SHA-256", "SHA-2"},
        };
        java.util.Map<String, List<String>> byProvider = new java.util.LinkedHashMap<>();
        for (String[] use : uses) {
            String provider;
            try {
                provider = providerOf(use[0], use[1]);
            } catch (Exception e) {
                provider = "none";
            }
            byProvider.computeIfAbsent(provider, p -> new java.util.ArrayList<>()).add(use[2]);
        }
        StringBuilder detail = new StringBuilder();
        byProvider.forEach((provider, algorithms) ->
                detail.append(detail.length() == 0 ? "" : ", ").append(provider).append(": ")
                        .append(String.join(" ", algorithms)));
        return new Backend("JDK providers", System.getProperty("java.runtime.version"), detail.toString());
    }

    /** The provider (name and version) that getInstance gives for the algorithm. */
    private static String providerOf(String service, String algorithm) throws Exception {
        java.security.Provider provider = switch (service) {
            case "Cipher" -> javax.crypto.Cipher.getInstance(algorithm).getProvider();
            case "KeyAgreement" -> javax.crypto.KeyAgreement.getInstance(algorithm).getProvider();
            case "Signature" -> java.security.Signature.getInstance(algorithm).getProvider();
            case "Mac" -> javax.crypto.Mac.getInstance(algorithm).getProvider();
            case "MessageDigest" -> java.security.MessageDigest.getInstance(algorithm).getProvider();
            default -> throw new IllegalArgumentException(service);
        };
        return provider.getName() + " " + provider.getVersionStr();
    }

    @Override
    public Capabilities capabilities() {
        Capabilities caps = Common.capabilities();
        caps.groups.remove(Group.X25519MLKEM768);
        // Neither 17's nor 25's SunJSSE offers the hybrid group (25's named groups checked here).
        caps.exclusions.add(new Exclusion("*_x25519mlkem768_*", "jsse: JDK " + Runtime.version().feature()
                + "'s SunJSSE has no ML-KEM key exchange (X25519MLKEM768)"));
        return caps;
    }

    @Override
    public Config clientConfig(Scenario scenario, Pki pki) throws Exception {
        KeyManager[] keys = scenario.clientAuth == ClientAuth.REQUIRED ? keyManagers(pki.clientKey, pki.clientChain)
                : new KeyManager[0];
        SSLContext context = SSLContext.getInstance("TLS", "SunJSSE");
        // The system's store as JSSE's users load it: the default factory (SystemTrust).
        TrustManager[] trust = pki.systemTrust ? SystemTrust.managers() : pki.trust().getTrustManagers();
        context.init(keys, trust, null);
        boolean resumes = scenario.kind.isResumption();
        if (!resumes && scenario.isPinned()) {
            // JSSE's client cache cannot be switched off (0 means no limit): keep it to one session, which
            // is never offered since these engines have no peer host and port to look it up by.
            context.getClientSessionContext().setSessionCacheSize(1);
        }
        SSLParameters parameters = parameters(scenario, context);
        // Verify the server's name for real: the trust manager checks it against the SNI name.
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        parameters.setServerNames(List.of(new SNIHostName(Pki.SERVER_NAME)));
        int roots = pki.systemTrust ? SystemTrust.roots(trust) : -1;
        return new Config() {
            @Override
            public SSLEngine newEngine() {
                // A client engine made with the peer's host and port looks up and keeps sessions for it; that is
                // how JSSE resumes, and only the resumption kinds do it.
                SSLEngine engine = resumes ? context.createSSLEngine(Pki.SERVER_NAME, Pki.SERVER_PORT)
                        : context.createSSLEngine();
                engine.setUseClientMode(true);
                engine.setSSLParameters(parameters);
                return engine;
            }

            @Override
            public int trustRoots() {
                return roots;
            }
        };
    }

    @Override
    public Config serverConfig(Scenario scenario, Pki pki) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS", "SunJSSE");
        boolean verifies = scenario.clientAuth != ClientAuth.NONE;
        context.init(keyManagers(pki.key, pki.chain), verifies ? pki.trust().getTrustManagers() : null, null);
        if (scenario.isPinned() && !scenario.kind.isResumption()) {
            // No resumption: JSSE's server cache cannot be switched off (a size of 0 means no limit), so it
            // keeps one session; a timeout beyond a ticket's 7-day lifetime makes it issue no TLS 1.3 tickets
            // (NewSessionTicket.T13NewSessionTicketProducer), and the ticket properties are off (JvmPins).
            SSLSessionContext sessions = context.getServerSessionContext();
            sessions.setSessionCacheSize(1);
            sessions.setSessionTimeout(NO_TICKETS_TIMEOUT_S);
        }
        SSLParameters parameters = parameters(scenario, context);
        switch (scenario.clientAuth) {
            case REQUIRED -> parameters.setNeedClientAuth(true);
            case REQUESTED -> parameters.setWantClientAuth(true);
            default -> { }
        }
        return () -> {
            SSLEngine engine = context.createSSLEngine();
            engine.setUseClientMode(false);
            engine.setSSLParameters(parameters);
            return engine;
        };
    }

    /** The scenario's version, and its suite when pinned; the rest is the context's default. */
    private static SSLParameters parameters(Scenario scenario, SSLContext context) {
        SSLParameters parameters = context.getDefaultSSLParameters();
        parameters.setProtocols(new String[] {scenario.version.jdkName});
        if (scenario.isPinned()) {
            parameters.setCipherSuites(new String[] {scenario.suite.jdkName(scenario.version, scenario.key)});
        }
        return parameters;
    }

    /** The JDK's default key manager (SunX509) over an in-memory store holding the chain and its key. */
    static KeyManager[] keyManagers(PrivateKey key, X509Certificate[] chain) throws Exception {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        char[] password = "tlsbench".toCharArray();
        store.setKeyEntry("key", key, password, chain);
        KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        factory.init(store, password);
        return factory.getKeyManagers();
    }
}
