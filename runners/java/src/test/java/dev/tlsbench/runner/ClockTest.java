package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Side;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ClockTest {
    @Test
    void theClocksOwnCostIsTakenFromEachRegion() {
        assertEquals(3e-6, Clock.netCpuSeconds(5_000, 10, 200), 1e-15);
    }

    @Test
    void aClockThatCountedNoMoreThanItsOwnCostGivesNoCpuFigure() {
        // Once an infinite rate, which the reply wrote as null and tlsbench could not read (the cell failed).
        assertTrue(Double.isNaN(Clock.netCpuSeconds(2_000, 10, 200)));
        assertTrue(Double.isNaN(Clock.netCpuSeconds(1_000, 10, 200)));
        assertTrue(Double.isNaN(new Clock().cpuSeconds()), "no region timed: the CPU clock was off");
    }

    @Test
    void aSideWithoutACpuFigureReportsItsWallRateAlone() {
        Clock clock = new Clock();
        clock.elapsedNs = 20_000_000;
        Report report = new Report();
        report.rates(Side.CLIENT, Kind.HANDSHAKE_FULL, 40, clock);
        String json = report.toJson().toString();
        assertTrue(json.contains("\"metric\":\"handshakes_per_s\""), json);
        assertFalse(json.contains("cpu_handshakes_per_s"), json);
        assertFalse(json.contains("null"), json);
    }

    @Test
    void theClocksCostIsMeasuredOnCompiledReads() {
        // Interpreted, an empty region costs two to three times what it does compiled (1.1 to 1.3 µs against
        // 0.3 to 0.5 here): an estimate from the first batch is well above what the reads cost once compiled.
        long estimate = Clock.overhead();
        long[] medians = new long[41];
        for (int batch = 0; batch < medians.length; batch++) {
            medians[batch] = Clock.emptyRegionsMedian(new long[301]);
        }
        Arrays.sort(medians);
        long compiled = medians[medians.length / 2];
        assertTrue(estimate <= compiled * 5 / 4 + 50,
                "estimated " + estimate + " ns per region, compiled reads cost " + compiled + " ns");
    }
}
