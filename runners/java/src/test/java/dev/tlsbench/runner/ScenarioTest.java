package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tlsbench.runner.Scenario.Group;
import dev.tlsbench.runner.Scenario.Side;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScenarioTest {
    @Test
    void namesRoundTripAndSayWhatIsValid() {
        for (String name : List.of("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm",
                "handshake-resume-id_1.2_secp384r1_ed25519_aes-256-gcm_cert-requested_no-ems",
                "handshake-resume-ticket_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm_mtls",
                "io-profile_1.3_default_ecdsa-p256_default_mtls", "transfer_1.2_x25519_rsa-2048_chacha20-poly1305")) {
            assertEquals(name, Scenario.parse(name).name());
        }
        assertEquals("unknown protocol version `1.4` (valid: 1.2, 1.3)",
                refusal("handshake-full_1.4_x25519_ecdsa-p256_aes-128-gcm"));
        assertEquals("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems: EMS is TLS 1.2 only",
                refusal("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_no-ems"));
        assertTrue(refusal("handshake-resume-id_1.3_x25519_ecdsa-p256_aes-128-gcm")
                .endsWith("session-ID resumption exists in TLS 1.2 only"));
        assertTrue(refusal("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm_psk")
                .contains("unknown suffix `psk` (valid: mtls, cert-requested, no-ems)"));
        assertTrue(refusal("handshake-full_1.3_default_ecdsa-p256_aes-128-gcm")
                .contains("group and suite are either both `default`"));
    }

    /** Why {@code name} is not a scenario. */
    private static String refusal(String name) {
        return assertThrows(IllegalArgumentException.class, () -> Scenario.parse(name)).getMessage();
    }

    @Test
    void groupsAddTheEcdsaCurveInTls12ForTheSideThatVerifiesACertificate() {
        Scenario p384 = Scenario.parse("handshake-full_1.2_x25519_ecdsa-p384_aes-128-gcm");
        assertEquals(List.of(Group.X25519, Group.SECP384R1), p384.groups(Side.CLIENT));
        assertEquals(List.of(Group.X25519), p384.groups(Side.SERVER));
        assertEquals(List.of(Group.X25519, Group.SECP256R1),
                Scenario.parse("handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls").groups(Side.SERVER));
        assertEquals(List.of(Group.X25519), Scenario.parse("handshake-full_1.3_x25519_ecdsa-p384_aes-128-gcm_mtls")
                .groups(Side.CLIENT));
    }

    @Test
    void suitesAreFoundBackFromTheirStandardNames() {
        assertEquals(Scenario.Suite.AES_256_GCM,
                Scenario.Suite.negotiated("TLS_AES_256_GCM_SHA384", Scenario.Version.TLS13));
        assertEquals(Scenario.Suite.CHACHA20_POLY1305,
                Scenario.Suite.negotiated("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", Scenario.Version.TLS12));
        assertThrows(IllegalStateException.class,
                () -> Scenario.Suite.negotiated("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", Scenario.Version.TLS13));
    }

    @Test
    void negotiatedReadsAsRustsDisplay() {
        Negotiated resumed = new Negotiated(Scenario.Version.TLS12, Scenario.Suite.AES_256_GCM, null, true, false,
                null, true);
        assertEquals("1.2 aes-256-gcm group not reported, resumed, no EMS, ticket received", resumed.toString());
        assertEquals("1.3 aes-128-gcm x25519",
                new Negotiated(Scenario.Version.TLS13, Scenario.Suite.AES_128_GCM, Group.X25519, false, null, false,
                        null).toString());
    }
}
