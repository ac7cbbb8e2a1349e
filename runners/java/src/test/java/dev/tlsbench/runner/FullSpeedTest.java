package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.tlsbench.runner.Scenario.Side;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The measured loop judged at full speed ({@link FullSpeed}: the harness's judge in libtlsbench_speed.so, which
 * cargo builds into target/release/; pom.xml points jna.library.path there). Against a reference every probe
 * passes, and against one that none reaches.
 */
class FullSpeedTest {
    private static final String FULL = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
    private static final String TRANSFER = "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm";
    private static final long MIN_TIME_NS = 10_000_000;

    @BeforeAll
    static void library() {
        assumeTrue(FullSpeed.unavailability() == null, () -> "skipped: " + FullSpeed.unavailability()
                + " (cargo build --release builds it into target/release/)");
    }

    private static Report sample(String name, double reference) throws Exception {
        Scenario scenario = Scenario.parse(name);
        JvmPins.apply(scenario, EnumSet.allOf(Side.class));
        Pki pki = Pki.load(TestPki.dataDir(), scenario.key);
        Pair pair = new Pair(new JsseStack(), new NettyTcnativeStack(), scenario, pki, new Link());
        return Driver.sample(pair, new Driver.Spec(0, MIN_TIME_NS, reference));
    }

    /** Each side's clock in seconds, as the reply gives it with its wall-time rate. */
    private static double seconds(Report report, Side side, String metric) {
        String reply = report.toJson().toString();
        String value = "{\"side\":\"" + side.text() + "\",\"metric\":\"" + metric + "\",";
        int at = reply.indexOf(value);
        assertTrue(at >= 0, reply);
        String rest = reply.substring(reply.indexOf("\"seconds\":", at) + "\"seconds\":".length());
        return Double.parseDouble(rest.substring(0, rest.indexOf('}')));
    }

    @Test
    void aReferenceEveryProbePassesCountsEveryStretchOfAHandshakeLoop() throws Exception {
        Report report = sample(FULL, 1e-9);
        FullSpeed.CpuSpeed judged = report.cpuSpeed;
        assertNotNull(judged, "a judged sample says what its judge did");
        assertTrue(judged.gated(), "its figures are of the stretches at full speed");
        assertEquals(1.0, judged.fullSpeedShare(), "every stretch was at full speed");
        assertTrue(judged.speed() > 1.0, "far above such a reference: " + judged.speed());
        assertTrue(report.iterations > 0);
        String reply = report.toJson().toString();
        assertTrue(reply.contains("\"cpu_speed\":{\"gated\":true,"), reply);
        assertTrue(reply.contains("{\"side\":\"client\",\"negotiated\":\"1.3 aes-128-gcm x25519\"}"), reply);
        assertTrue(seconds(report, Side.CLIENT, "handshakes_per_s") >= MIN_TIME_NS / 1e9);
    }

    @Test
    void aReferenceNoProbeReachesMeasuresEveryStretchUntilTheBoundAndSaysSo() throws Exception {
        String before = cpusAllowed();
        Report report = sample(FULL, 1e9);
        FullSpeed.CpuSpeed judged = report.cpuSpeed;
        assertFalse(judged.gated(), "no stretch was at full speed");
        assertEquals(0.0, judged.fullSpeedShare());
        for (Side side : Side.values()) {
            double seconds = seconds(report, side, "handshakes_per_s");
            assertTrue(seconds >= FullSpeed.BOUND * MIN_TIME_NS / 1e9, side + ": " + seconds + " s");
        }
        // Every probe found the CPU slowed, so the judge moved the thread among its CPUs; it has them all back.
        assertEquals(before, cpusAllowed());
    }

    @Test
    void aJudgedTransferPassesItsGatesAndCountsItsWrites() throws Exception {
        Report report = sample(TRANSFER, 1e-9);
        assertTrue(report.cpuSpeed.gated());
        assertTrue(report.iterations >= Report.TRANSFER_MIN_WRITES, "writes: " + report.iterations);
        assertTrue(report.toJson().toString().contains("\"metric\":\"mb_per_s\""));
    }

    @Test
    void aSampleWithoutAReferenceIsNotJudged() throws Exception {
        Report report = sample(FULL, 0);
        assertEquals(null, report.cpuSpeed);
        assertFalse(report.toJson().toString().contains("cpu_speed"));
    }

    @Test
    void theListSaysFullSpeedAndTheFlagIsTakenAsASample() throws Exception {
        String list = RunnerTest.run("list");
        assertTrue(list.endsWith(",\"full_speed\":true}"), list);
        String reply = RunnerTest.sample("jsse", "jsse", FULL, "--full-speed", "0.000001");
        assertTrue(reply.startsWith("{\"status\":\"ok\"") && reply.contains(",\"cpu_speed\":{\"gated\":true,"), reply);
        String refused = assertThrows(Failure.class, () -> Main.fullSpeed(Map.of("full-speed", "-3"))).getMessage();
        assertEquals("invalid value '-3' for '--full-speed': a speed above 0 (rounds per µs)", refused);
    }

    /** The CPUs this thread may run on, as the kernel says (Java cannot ask itself). */
    private static String cpusAllowed() throws Exception {
        return Files.readAllLines(Path.of("/proc/thread-self/status")).stream()
                .filter(line -> line.startsWith("Cpus_allowed_list:")).findFirst().orElseThrow();
    }
}
