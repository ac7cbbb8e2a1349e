package dev.tlsbench.runner;

import dev.tlsbench.runner.Capabilities.Exclusion;
import dev.tlsbench.runner.Scenario.ClientAuth;
import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.KeyType;
import dev.tlsbench.runner.Scenario.Side;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OpenSslContextOption;
import io.netty.handler.ssl.OpenSslSessionContext;
import io.netty.handler.ssl.ReferenceCountedOpenSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.ReferenceCountedOpenSslEngine;
import io.netty.internal.tcnative.Buffer;
import io.netty.internal.tcnative.SSL;
import io.netty.internal.tcnative.SSLContext;
import java.nio.ByteBuffer;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.Version;
import java.io.InputStream;
import java.util.List;
import java.util.Properties;
import javax.net.ssl.SSLEngine;

/**
 * Netty's OpenSSL SSLEngine (SslProvider.OPENSSL, a ReferenceCountedOpenSslEngine) on
 * netty-tcnative-boringssl-static: BoringSSL, linked statically into tcnative's JNI library.
 *
 * <p>BoringSSL takes no TLS 1.3 cipher suite list (Netty says so and keeps its fixed order) and always
 * uses the extended master secret; those cells are unsupported with that reason.
 */
public final class NettyTcnativeStack implements Stack {
    private static final String ARTIFACT = "netty-tcnative-boringssl-static";

    @Override
    public String id() {
        return "netty-tcnative";
    }

    /** Whether tcnative's native library loaded, with the cause if not. */
    static Throwable unavailability() {
        return OpenSsl.isAvailable() ? null : OpenSsl.unavailabilityCause();
    }

    @Override
    public String library() {
        return ARTIFACT + " " + tcnativeVersion() + " (" + OpenSsl.versionString() + ", netty " + nettyVersion() + ")";
    }

    @Override
    public String tlsLibrary() {
        return "netty " + nettyVersion() + " OpenSslEngine";
    }

    /** BoringSSL, static in tcnative's JNI library: it has no release versions, the artifact pins it. */
    @Override
    public Backend backend() {
        return new Backend(OpenSsl.versionString(), ARTIFACT + " " + tcnativeVersion(), "static in its JNI library");
    }

    /** The tcnative artifact whose native library was loaded, from its Maven properties. */
    private static String tcnativeVersion() {
        String tcnative = "unknown";
        try (InputStream in = OpenSsl.class.getClassLoader()
                .getResourceAsStream("META-INF/maven/io.netty/" + ARTIFACT + "/pom.properties")) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                tcnative = properties.getProperty("version", tcnative);
            }
        } catch (Exception e) {
            // Reported as unknown.
        }
        return tcnative;
    }

    private static String nettyVersion() {
        Version netty = Version.identify().get("netty-handler");
        return netty == null ? "unknown" : netty.artifactVersion();
    }

    @Override
    public Capabilities capabilities() {
        Capabilities caps = Common.capabilities();
        caps.emsOff = false;
        String tls13 = "netty-tcnative: BoringSSL takes no TLS 1.3 cipher suite list (Netty logs that it keeps the "
                + "default), and with itself negotiates AES-128-GCM on AES hardware";
        caps.exclusions.add(new Exclusion("*_1.3_*_aes-256-gcm*", tls13));
        caps.exclusions.add(new Exclusion("*_1.3_*_chacha20-poly1305*", tls13));
        caps.keys.remove(KeyType.ED25519);
        caps.exclusions.add(new Exclusion("*_ed25519_*", "netty-tcnative: Netty's OpenSSL key manager finds no key "
                + "material for an Ed25519 key (it maps RSA and EC keys only), and BoringSSL's default verification "
                + "algorithms, which tcnative cannot set, leave Ed25519 out"));
        return caps;
    }

    @Override
    public Config clientConfig(Scenario scenario, Pki pki) throws Exception {
        SslContextBuilder builder = pinned(SslContextBuilder.forClient(), scenario, Side.CLIENT)
                .endpointIdentificationAlgorithm("HTTPS");
        if (!pki.systemTrust) {
            builder.trustManager(pki.ca);
        }
        // Else no trust manager, as Netty's users build a client: Netty then initialises the JDK's default
        // TrustManagerFactory (SystemTrust), and BoringSSL calls that Java trust manager to verify.
        if (scenario.clientAuth == ClientAuth.REQUIRED) {
            builder.keyManager(pki.clientKey, pki.clientChain);
        }
        SslContext context = builder.build();
        // Netty's client cache keeps sessions by host and port; only the resumption kinds keep any.
        ((OpenSslSessionContext) context.sessionContext()).setSessionCacheEnabled(scenario.kind.isResumption());
        return new Config(context, true);
    }

    // sslCtxPointer() is deprecated, and Netty 4.1 has no other way to reach the SSL_CTX for its ticket count.
    @SuppressWarnings("deprecation")
    @Override
    public Config serverConfig(Scenario scenario, Pki pki) throws Exception {
        SslContextBuilder builder = pinned(SslContextBuilder.forServer(pki.key, pki.chain), scenario, Side.SERVER);
        switch (scenario.clientAuth) {
            case REQUIRED -> builder.clientAuth(io.netty.handler.ssl.ClientAuth.REQUIRE).trustManager(pki.ca);
            case REQUESTED -> builder.clientAuth(io.netty.handler.ssl.ClientAuth.OPTIONAL).trustManager(pki.ca);
            default -> { }
        }
        SslContext context = builder.build();
        if (scenario.isPinned()) {
            // Session IDs need the server's cache, on by default in Netty; tickets are on only for the ticket
            // kind (JvmPins), so every other kind resumes nothing.
            ((OpenSslSessionContext) context.sessionContext())
                    .setSessionCacheEnabled(scenario.kind == Kind.HANDSHAKE_RESUME_ID);
            if (scenario.kind == Kind.HANDSHAKE_RESUME_TICKET) {
                // Tickets, with keys BoringSSL makes and rotates: SslProvider.OPENSSL's server context does not
                // enable them from jdk.tls.server.enableSessionTicketExtension (only the REFCNT one does).
                ((OpenSslSessionContext) context.sessionContext()).setTicketKeys();
                // One TLS 1.3 ticket per handshake (BoringSSL sends two by default), as each resumption uses one.
                SSLContext.setNumTickets(((ReferenceCountedOpenSslContext) context).sslCtxPointer(), 1);
            }
        }
        return new Config(context, false);
    }

    /** The builder with the OpenSSL provider, the scenario's version and, when pinned, its suite and groups. */
    private static SslContextBuilder pinned(SslContextBuilder builder, Scenario scenario, Side side) {
        builder.sslProvider(SslProvider.OPENSSL).protocols(scenario.version.jdkName);
        if (scenario.isPinned()) {
            builder.ciphers(List.of(scenario.suite.jdkName(scenario.version, scenario.key)));
            builder.option(OpenSslContextOption.GROUPS, scenario.groups(side).stream().map(g -> g.jdkName)
                    .toArray(String[]::new));
        }
        return builder;
    }

    /** Engines of one SslContext, released (their SSL freed) when their connection is dropped. */
    private record Config(SslContext context, boolean client) implements Stack.Config {
        private static final ByteBuffer ZERO = ByteBuffer.allocateDirect(1);

        @Override
        public SSLEngine newEngine() {
            return client
                    ? context.newEngine(ByteBufAllocator.DEFAULT, Pki.SERVER_NAME, Pki.SERVER_PORT)
                    : context.newEngine(ByteBufAllocator.DEFAULT);
        }

        @Override
        public boolean directBuffers() {
            return true;
        }

        /**
         * BoringSSL's server queues its TLS 1.3 tickets at the end of the handshake and sends them with its first
         * write ("consumers which don't write data to the client will need to do a zero-byte write if they wish to
         * flush the tickets", tls13_server.cc); Netty's wrap of nothing writes nothing, so the zero-byte SSL_write
         * is made here (again after each wrap that took a piece of them), as the Rust BoringSSL adapter makes it.
         */
        @Override
        public void handshakeDone(SSLEngine engine) {
            if (!client) {
                ReferenceCountedOpenSslEngine openssl = (ReferenceCountedOpenSslEngine) engine;
                synchronized (openssl) {
                    SSL.writeToSSL(openssl.sslPointer(), Buffer.address(ZERO), 0);
                }
            }
        }

        @Override
        public void free(SSLEngine engine) {
            ReferenceCountUtil.release(engine);
        }

        /** Frees the SSL_CTX now rather than when the collector finalises the context. */
        @Override
        public void close() {
            ReferenceCountUtil.release(context);
        }
    }
}
