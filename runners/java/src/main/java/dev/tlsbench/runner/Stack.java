package dev.tlsbench.runner;

import javax.net.ssl.SSLEngine;

/**
 * One TLS implementation behind SSLEngine. A stack only builds configs (an SSLContext or a Netty
 * SslContext, pinned to the scenario) and makes engines from them; everything else, the IO and what
 * was negotiated, is the one adapter's ({@link EngineConnection}) for every stack.
 */
public interface Stack {
    String id();

    /** The library name and version as the running code reports them. */
    String library();

    /** The TLS library without its backend; the library string where that names no backend. */
    default String tlsLibrary() {
        return library();
    }

    /** The crypto library the stack runs on, as the running code reports it. */
    Backend backend();

    Capabilities capabilities();

    /**
     * A client config: exactly the scenario's version, suite and groups where pinned; verifies the server for real,
     * against the scenario's root, or with {@link Pki#systemTrust} the system's store as the stack's users load it.
     */
    Config clientConfig(Scenario scenario, Pki pki) throws Exception;

    /** A server config: the scenario's key, version, suite and groups; client certificates as the scenario says. */
    Config serverConfig(Scenario scenario, Pki pki) throws Exception;

    /** A built config: makes one engine per connection. */
    interface Config {
        SSLEngine newEngine() throws Exception;

        /**
         * Whether the application's packet buffers should be direct, as Netty's SslHandler chooses per engine
         * type: BoringSSL reads and writes native memory, JSSE works on heap arrays.
         */
        default boolean directBuffers() {
            return false;
        }

        /**
         * Called when the engine's handshake has completed, before each of the wraps that collect what the
         * engine still holds: for what the library's documentation asks of an application at that point.
         */
        default void handshakeDone(SSLEngine engine) {
        }

        /** Frees what the engine holds outside the Java heap, when its connection is dropped. */
        default void free(SSLEngine engine) {
        }

        /** Drops the config: frees what it holds outside the Java heap (a context scenario drops each it builds). */
        default void close() {
        }

        /** The roots its client trust store holds, where the stack tells (the system's store); -1 where not. */
        default int trustRoots() {
            return -1;
        }
    }
}
