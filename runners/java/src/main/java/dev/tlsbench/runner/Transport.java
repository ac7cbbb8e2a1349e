package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.nio.ByteBuffer;

/**
 * What a connection's bytes go over: the in-memory link ({@link Link.Endpoint}) or a TCP socket
 * ({@link NetSocket}). {@link EngineConnection} reads and writes only through this, so both count the
 * same calls.
 */
public interface Transport {
    Side side();

    /** Whether the peer's bytes wait to be read: what a selector reports as readable; not a call. */
    boolean readable();

    /** One read call into {@code dst}: the bytes read, 0 when none waited, -1 at the end of the stream. */
    int read(ByteBuffer dst);

    /** Writes everything {@code src} holds before it returns. */
    void write(ByteBuffer src);

    /** What the plaintext hellos this transport carried tell about the connection. */
    Hello hello();
}
