package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.util.ArrayList;
import java.util.List;

/**
 * What one side of the network mode measured over its connections: the reply of {@code load}, and the last
 * reply of {@code serve} (harness net/mod.rs, NetReport, with NetReply's {@code "status": "ok"}).
 */
final class NetReport {
    Side side;
    String stack;
    String library;
    String scenario;
    /** The response asked for (server) or expected (client; null: not checked). */
    Page page;
    /** Client: connections in flight at once. Server: worker threads. */
    long concurrency;
    String negotiated;
    /** Connections completed and checked in the measured part. */
    long connections;
    long resumed;
    /** Server: of those, how many the client closed after the handshake without a request. */
    long withoutRequest;
    final Failures failures = new Failures();
    double startedUnix;
    double endedUnix;
    /** The process's CPU time over the measured part, the JIT compiler threads' left out (see {@link Net.Cpu}). */
    double cpuUserSeconds;
    double cpuSystemSeconds;
    final NetSocket.Counts sockets = new NetSocket.Counts();
    /** Selector calls of the event loops (and, on the server, accepts that found no connection). */
    long polls;
    final Latency handshakeLatency = new Latency();
    final Latency firstByteLatency = new Latency();
    Long rssStartBytes;
    Long rssPeakBytes;
    long maxOpen;
    /** The JIT compiler threads' CPU time over the measured part: not in the reply, told on stderr. */
    double jitCpuSeconds;

    /** Says on stderr what the JIT compiler used, which the reply leaves out. */
    void tellJit() {
        System.err.printf("tlsbench-runner-java %s: the JIT compiler threads used %.2f s of CPU in the measured part, "
                + "left out of cpu_user_seconds (%.2f) and cpu_system_seconds (%.2f)%n",
                side == Side.SERVER ? "serve" : "load", jitCpuSeconds, cpuUserSeconds, cpuSystemSeconds);
    }

    Json toJson() {
        Json json = Json.object().put("status", "ok")
                .put("side", side.text()).put("stack", stack).put("library", library).put("scenario", scenario)
                .put("page", page == null ? null : page.toJson())
                .put("concurrency", concurrency).put("negotiated", negotiated)
                .put("connections", connections).put("resumed", resumed);
        if (withoutRequest > 0) {
            json.put("without_request", withoutRequest);
        }
        return json.put("failed", failures.total()).put("failures", failures.toJson())
                .put("started_unix", startedUnix).put("ended_unix", endedUnix)
                .put("cpu_user_seconds", cpuUserSeconds).put("cpu_system_seconds", cpuSystemSeconds)
                .put("sockets", sockets.toJson()).put("polls", polls)
                .put("handshake_latency", handshakeLatency.encode())
                .put("first_byte_latency", firstByteLatency.encode())
                .put("rss_start_bytes", rssStartBytes).put("rss_peak_bytes", rssPeakBytes).put("max_open", maxOpen);
    }

    /** Failed connections by reason: at most 16 reasons, further ones counted under the last. */
    static final class Failures {
        static final int MAX_REASONS = 16;
        final List<String> reasons = new ArrayList<>();
        final List<Long> counts = new ArrayList<>();

        void add(String reason) {
            add(reason, 1);
        }

        void add(String reason, long count) {
            int i = reasons.indexOf(reason);
            if (i >= 0) {
                counts.set(i, counts.get(i) + count);
            } else if (reasons.size() < MAX_REASONS) {
                reasons.add(reason);
                counts.add(count);
            } else {
                counts.set(MAX_REASONS - 1, counts.get(MAX_REASONS - 1) + count);
            }
        }

        void addAll(Failures other) {
            for (int i = 0; i < other.reasons.size(); i++) {
                add(other.reasons.get(i), other.counts.get(i));
            }
        }

        long total() {
            return counts.stream().mapToLong(Long::longValue).sum();
        }

        List<Json> toJson() {
            List<Json> list = new ArrayList<>();
            for (int i = 0; i < reasons.size(); i++) {
                list.add(Json.object().put("reason", reasons.get(i)).put("count", counts.get(i)));
            }
            return list;
        }
    }
}
