package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tlsbench.runner.Main.Release;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A runner of a stack at another release (docs/versions.md): which stack it holds and the id it lists it under,
 * {@code jsse@N} (scripts/build-jsse.sh) or {@code netty-tcnative@LABEL} (scripts/build-netty.sh).
 */
class ReleaseTest {
    private static List<String> ids(Release release) {
        return Release.stacks(release).stream().map(stack -> Release.listedId(stack, release)).toList();
    }

    @Test
    void theDefaultRunnerHoldsBothStacksUnderTheirOwnIds() {
        Release release = Release.of(null, null, 17);
        assertNull(release);
        assertEquals(List.of("jsse", "netty-tcnative"), ids(release));
    }

    @Test
    void jsseAtAJdksReleaseIsListedWithItsFeatureVersionWhateverThePropertySays() {
        assertEquals(List.of("jsse@25"), ids(Release.of("", null, 25)));
        assertEquals(List.of("jsse@17"), ids(Release.of("true", null, 17)));
    }

    @Test
    void nettyTcnativeAtATcnativeReleaseIsListedWithItsLabelAlone() {
        Release release = Release.of(null, "2.0.84", 17);
        assertTrue(release.stack() instanceof NettyTcnativeStack, release.toString());
        assertEquals(List.of("netty-tcnative@2.0.84"), ids(release));
        assertEquals(List.of("netty-tcnative@2.0.84.Final"), ids(Release.of(null, "2.0.84.Final", 17)));
    }

    @Test
    void aLabelThatIsNoReleaseAndBothPropertiesAtOnceAreRefused() {
        for (String label : List.of("", "Final", "2.0.84 x", "2.0.84/..", "@2.0.84")) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> Release.of(null, label, 17));
            assertEquals("tlsbench.nettyRelease=" + label + " is not a release (a tcnative release such as 2.0.84)",
                    e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Release.of("", "2.0.84", 17));
        assertTrue(e.getMessage().startsWith("tlsbench.jsseRelease and tlsbench.nettyRelease are both set"),
                e.getMessage());
    }

    /** The runner's main in a fresh JVM with {@code -Dtlsbench.nettyRelease=LABEL}: its one-line reply. */
    private static String run(String label, String... args) throws Exception {
        return FreshJvm.run(List.of("-Dtlsbench.nettyRelease=" + label), args);
    }

    @Test
    void aRunnerAtATcnativeReleaseListsAndAnswersToThatIdOnlyWithTheLibraryItLoaded() throws Exception {
        String list = run("2.0.84", "list");
        String listed = "\"stacks\":[{\"id\":\"netty-tcnative@2.0.84\",\"library\":\"netty-tcnative-boringssl-static ";
        assertTrue(list.contains(listed), list);
        // The library is what loaded (here the test classpath's tcnative), not the label: tlsbench checks that
        // the two agree.
        assertTrue(list.contains("(BoringSSL, netty 4."), list);
        assertTrue(!list.contains("\"id\":\"jsse") && !list.contains("\"id\":\"netty-tcnative\""), list);
        String reply = run("2.0.84", "sample", "--client", "netty-tcnative", "--server", "netty-tcnative@2.0.84",
                "--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm");
        assertEquals("{\"status\":\"failed\",\"reason\":\"stack `netty-tcnative` is not in this runner "
                + "(it has: netty-tcnative@2.0.84)\"}", reply);
        reply = run("2.0.84", "sample", "--client", "netty-tcnative@2.0.84", "--server", "netty-tcnative@2.0.84",
                "--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--min-time-ms", "20",
                "--warmup-ms", "0", "--data-dir", TestPki.dataDir().toString());
        assertTrue(reply.startsWith("{\"status\":\"ok\""), reply);
    }
}
