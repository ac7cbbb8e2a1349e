package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tlsbench.runner.Scenario.Side;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The JVM-wide pins a scenario needs, and which scenarios can share a JVM. Pins this test class's JVM. */
class JvmPinsTest {
    private static final Set<Side> BOTH = EnumSet.allOf(Side.class);
    private static final Set<Side> NONE = EnumSet.noneOf(Side.class);

    private static Map<String, String> properties(String scenario, Set<Side> jsse) {
        return JvmPins.properties(Scenario.parse(scenario), jsse);
    }

    @Test
    void aScenarioNeedsTheSamePropertiesWhicheverSideIsJsse() {
        // TLS 1.2 with an ECDSA key: the client lists the key's curve, a JSSE server lists it too.
        Map<String, String> both = properties("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", BOTH);
        assertEquals(Map.of("jdk.tls.namedGroups", "x25519,secp256r1",
                "jdk.tls.server.enableSessionTicketExtension", "false",
                "jdk.tls.client.enableSessionTicketExtension", "false"), both);
        assertEquals(both, properties("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", EnumSet.of(Side.CLIENT)));
        assertEquals(both, properties("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", EnumSet.of(Side.SERVER)));
        // Without a JSSE side only the ticket properties, which Netty reads too.
        assertEquals(Map.of("jdk.tls.server.enableSessionTicketExtension", "true",
                        "jdk.tls.client.enableSessionTicketExtension", "true"),
                properties("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", NONE));
        assertEquals("false", properties("handshake-resume-id_1.2_x25519_rsa-2048_aes-128-gcm_no-ems", BOTH)
                .get("jdk.tls.useExtendedMasterSecret"));
        // An unpinned scenario keeps the libraries' defaults: it sets nothing.
        assertEquals(Map.of(), properties("handshake-full_1.3_default_ecdsa-p256_default", BOTH));
    }

    @Test
    void anUnpinnedScenarioAndAPinnedOneCannotShareAJvm() {
        Map<String, String> pinned = properties("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", BOTH);
        Map<String, String> serverOnly = properties("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
                EnumSet.of(Side.SERVER));
        assertNull(JvmPins.conflict(pinned, serverOnly));
        assertNull(JvmPins.conflict(Map.of(), Map.of()));
        String tail = "; a scenario that needs other JVM-wide settings needs a process of its own";
        // The first one set nothing, so the TLS classes took the JDK's defaults: later properties would be ignored.
        assertEquals("this JVM is pinned by its first scenario "
                + "(jdk.tls.client.enableSessionTicketExtension unset where this "
                + "scenario needs false, jdk.tls.namedGroups unset where this scenario needs x25519, "
                + "jdk.tls.server.enableSessionTicketExtension unset where this scenario needs false)" + tail,
                JvmPins.conflict(Map.of(), pinned));
        assertEquals("this JVM is pinned by its first scenario (jdk.tls.useExtendedMasterSecret=false where this "
                + "scenario needs it unset)" + tail,
                JvmPins.conflict(properties("handshake-full_1.2_x25519_rsa-2048_aes-128-gcm_no-ems", BOTH),
                        properties("handshake-full_1.2_x25519_rsa-2048_aes-128-gcm", BOTH)));
    }

    @Test
    void theFirstScenarioFixesThePinsOfItsJvm() {
        Scenario first = Scenario.parse("handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm");
        JvmPins.apply(first, EnumSet.of(Side.CLIENT));
        assertEquals("x25519", System.getProperty("jdk.tls.namedGroups"));
        assertEquals("true", System.getProperty("jdk.tls.client.enableSessionTicketExtension"));
        // The same properties: on.
        JvmPins.apply(first, BOTH);
        Scenario secp384r1 = Scenario.parse("handshake-resume-ticket_1.3_secp384r1_ecdsa-p256_aes-128-gcm");
        Failure other = assertThrows(Failure.class, () -> JvmPins.apply(secp384r1, BOTH));
        assertEquals("this JVM is pinned by its first scenario (jdk.tls.namedGroups=x25519 where this scenario "
                + "needs secp384r1); a scenario that needs other JVM-wide settings needs a process of its own",
                other.getMessage());
        assertTrue(other.needsNewProcess, "a new process can take it");
        assertThrows(Failure.class,
                () -> JvmPins.apply(Scenario.parse("handshake-full_1.3_default_ecdsa-p256_default"), NONE));
        // A refused scenario changes nothing.
        assertEquals("x25519", System.getProperty("jdk.tls.namedGroups"));
    }
}
