package dev.tlsbench.runner;

/**
 * A stream of frames parsed across feeds, where a frame is a fixed-size header that begins with the
 * frame's type and ends with its body's length (big-endian), then that body: TLS records (5-byte
 * header, 2-byte length) and handshake messages (4-byte header, 3-byte length). Headers and bodies
 * may be split anywhere between feeds. A subclass hears of each header as it begins and once it is
 * complete, and of each piece of a body as it is fed.
 */
abstract class Frames {
    /** A direct buffer's bytes pass through this array: headers, and bodies only where {@link #readsBodies()}. */
    private static final int SCRATCH = 4096;

    private final byte[] header;
    private byte[] scratch;
    private final int lengthBytes;
    private int headerLength;
    private int bodyLeft;

    Frames(int headerSize, int lengthBytes) {
        this.header = new byte[headerSize];
        this.lengthBytes = lengthBytes;
    }

    /** The stream's next bytes; once {@link #stopped()}, the rest of them are ignored. */
    final void feed(byte[] bytes, int offset, int count) {
        int end = offset + count;
        while (offset < end && !stopped()) {
            if (bodyLeft > 0) {
                int n = Math.min(bodyLeft, end - offset);
                body(bytes, offset, n);
                bodyLeft -= n;
                offset += n;
                continue;
            }
            if (headerLength == 0) {
                headerBegins(bytes[offset] & 0xff);
            }
            int n = Math.min(header.length - headerLength, end - offset);
            System.arraycopy(bytes, offset, header, headerLength, n);
            headerLength += n;
            offset += n;
            if (headerLength == header.length) {
                headerLength = 0;
                int length = 0;
                for (int i = header.length - lengthBytes; i < header.length; i++) {
                    length = (length << 8) | (header[i] & 0xff);
                }
                bodyLeft = length;
                frame(header[0] & 0xff, length);
            }
        }
    }

    /**
     * The bytes of {@code buffer} from index {@code from} to {@code to}; its position does not move. A direct
     * buffer (no array to parse in place) is copied in small pieces, and of its bodies only what a subclass
     * reads: counting records copies just their headers.
     */
    final void feed(java.nio.ByteBuffer buffer, int from, int to) {
        if (buffer.hasArray()) {
            feed(buffer.array(), buffer.arrayOffset() + from, to - from);
            return;
        }
        if (scratch == null) {
            scratch = new byte[SCRATCH];
        }
        int at = from;
        while (at < to && !stopped()) {
            int n;
            if (bodyLeft > 0 && !readsBodies()) {
                n = Math.min(bodyLeft, to - at);
                bodyLeft -= n;
            } else {
                n = Math.min(to - at, bodyLeft > 0 ? SCRATCH : header.length - headerLength);
                buffer.get(at, scratch, 0, n);
                feed(scratch, 0, n);
            }
            at += n;
        }
    }

    /** Whether a subclass reads the bodies ({@link #body}); if not, a direct buffer's bodies are skipped uncopied. */
    boolean readsBodies() {
        return true;
    }

    /** Whether a frame's header or body is partly fed, so that the next bytes continue it. */
    final boolean inFrame() {
        return headerLength > 0 || bodyLeft > 0;
    }

    /** Drops a partly fed frame: the next bytes begin a header. */
    final void restart() {
        headerLength = 0;
        bodyLeft = 0;
    }

    /** A header begins with this byte, its frame's type. */
    void headerBegins(int type) {
    }

    /** A header is complete; its body's bytes follow. */
    void frame(int type, int length) {
    }

    /** The next {@code length} bytes of the current frame's body. */
    void body(byte[] bytes, int offset, int length) {
    }

    /** Whether to parse no further. */
    boolean stopped() {
        return false;
    }
}
