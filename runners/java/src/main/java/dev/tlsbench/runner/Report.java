package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Side;
import java.util.ArrayList;
import java.util.List;

/** A sample's reply (protocol.rs, SampleReport): each side's values and what it negotiated. */
public final class Report {
    /** Application data moves in writes of this much plaintext (the TLS maximum record). */
    static final int TRANSFER_WRITE_SIZE = 16 * 1024;
    /** A timed transfer moves at least this much (64 MiB). */
    static final long TRANSFER_MIN_WRITES = (64L << 20) / TRANSFER_WRITE_SIZE;

    String clientLibrary = "";
    String serverLibrary = "";
    long iterations;
    final List<Json> values = new ArrayList<>();
    List<Json> negotiated = new ArrayList<>();
    /** The time measure only: what the collectors did while the sample measured. */
    GcWindow gc;
    /** A sample judged at full speed ({@code --full-speed}): what the judge did. */
    FullSpeed.CpuSpeed cpuSpeed;

    /** The report of one side's process (a split pair's), which names only that side's library. */
    static Report ofSide(Side side, Stack stack) {
        Report report = new Report();
        if (side == Side.CLIENT) {
            report.clientLibrary = stack.library();
        } else {
            report.serverLibrary = stack.library();
        }
        return report;
    }

    void value(Side side, String metric, double value, double seconds) {
        values.add(Json.object().put("side", side.text()).put("metric", metric).put("value", value)
                .put("seconds", seconds));
    }

    /** One side's rates from its clock: wall time, and CPU time over the same calls when the CPU clock ran. */
    void rates(Side side, Kind kind, long iterations, Clock clock) {
        boolean transfer = kind == Kind.TRANSFER;
        double work = transfer ? iterations * (double) TRANSFER_WRITE_SIZE / 1e6 : iterations;
        String unit = transfer ? "mb_per_s" : kind.isContext() ? "contexts_per_s" : "handshakes_per_s";
        double wall = clock.seconds();
        value(side, unit, work / wall, wall);
        double cpu = clock.cpuSeconds();
        if (!Double.isNaN(cpu)) {
            value(side, "cpu_" + unit, work / cpu, cpu);
        }
    }

    Json toJson() {
        Json json = Json.object().put("status", "ok").put("client_library", clientLibrary)
                .put("server_library", serverLibrary)
                .put("iterations", iterations).put("values", values);
        if (!negotiated.isEmpty()) {
            json.put("negotiated", negotiated);
        }
        // How long this JVM's JIT has compiled so far: tlsbench warms a process up until its
        // compiler has gone quiet (docs/sampling.md).
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        if (jit != null && jit.isCompilationTimeMonitoringSupported()) {
            json.put("jit_compile_ms", jit.getTotalCompilationTime());
        }
        if (cpuSpeed != null) {
            json.put("cpu_speed", cpuSpeed.toJson());
        }
        if (gc != null) {
            json.put("gc_collections", gc.collections).put("gc_ms", gc.gcMs).put("measured_ms", gc.measuredMs);
        }
        return json;
    }

    static Json unsupported(String reason) {
        return Json.object().put("status", "unsupported").put("reason", reason);
    }

    static Json failed(String reason) {
        return Json.object().put("status", "failed").put("reason", reason);
    }

    /**
     * The reply for a failure: failed (with {@code "cause": "peer"} when it echoes the peer's), or needs_new_process.
     */
    static Json of(Failure failure) {
        if (failure.needsNewProcess) {
            return needsNewProcess(failure.getMessage());
        }
        Json json = failed(failure.getMessage());
        return failure.peer ? json.put("cause", "peer") : json;
    }

    /** A session's refusal of a request that a new process can take (docs/runner-protocol.md, "Sessions"). */
    static Json needsNewProcess(String reason) {
        return Json.object().put("status", "needs_new_process").put("reason", reason);
    }
}
