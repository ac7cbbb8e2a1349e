package dev.tlsbench.runner;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.zip.Deflater;
import org.HdrHistogram.Histogram;

/**
 * Latencies in an HdrHistogram (harness net/latency.rs): nanoseconds, 1 µs to an hour, three significant
 * digits. In JSON, HdrHistogram's compressed encoding (V2 with deflate, cookie 0x1c849314) in base64, which
 * the Rust hdrhistogram crate's Deserializer reads.
 */
final class Latency {
    static final long LOWEST_NS = 1_000;
    static final long HIGHEST_NS = 3_600_000_000_000L;

    final Histogram histogram = new Histogram(LOWEST_NS, HIGHEST_NS, 3);

    void record(long ns) {
        histogram.recordValue(Math.max(LOWEST_NS, Math.min(HIGHEST_NS, ns)));
    }

    void add(Latency other) {
        histogram.add(other.histogram);
    }

    long count() {
        return histogram.getTotalCount();
    }

    String encode() {
        ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
        int n = histogram.encodeIntoCompressedByteBuffer(buffer, Deflater.DEFAULT_COMPRESSION);
        byte[] bytes = new byte[n];
        buffer.flip();
        buffer.get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    static Histogram decode(String base64) throws java.util.zip.DataFormatException {
        return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
    }
}
