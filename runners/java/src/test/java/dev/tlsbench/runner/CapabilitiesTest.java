package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CapabilitiesTest {
    private static String reason(Stack stack, String scenario) {
        return assertThrows(Unsupported.class, () -> stack.capabilities().check(stack.id(), Scenario.parse(scenario)))
                .getMessage();
    }

    @Test
    void eachStackNamesWhyItCannotDoAScenario() {
        Stack jsse = new JsseStack();
        Stack netty = new NettyTcnativeStack();
        assertTrue(reason(jsse, "handshake-full_1.3_x25519mlkem768_ecdsa-p256_aes-128-gcm").contains("no ML-KEM"));
        assertDoesNotThrow(() -> jsse.capabilities()
                .check("jsse", Scenario.parse("memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm")));
        assertTrue(reason(netty, "handshake-full_1.3_x25519_ecdsa-p256_aes-256-gcm")
                .contains("no TLS 1.3 cipher suite list"));
        assertTrue(reason(netty, "handshake-full_1.2_x25519_ed25519_aes-128-gcm").contains("Ed25519"));
        assertEquals("netty-tcnative: extended master secret cannot be switched off",
                reason(netty, "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm_no-ems"));
        assertDoesNotThrow(() -> netty.capabilities()
                .check("netty-tcnative", Scenario.parse("handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm")));
        assertDoesNotThrow(() -> jsse.capabilities()
                .check("jsse", Scenario.parse("transfer_1.2_x25519_rsa-2048_chacha20-poly1305")));
        Capabilities caps = jsse.capabilities();
        assertTrue(assertThrows(Unsupported.class, () -> caps.checkMeasure(Scenario.Measure.INSTRUCTIONS))
                .getMessage().contains("callgrind"));
        assertTrue(assertThrows(Unsupported.class, () -> caps.checkMeasure(Scenario.Measure.SYNC))
                .getMessage().contains("the JVM's locks"));
        assertDoesNotThrow(() -> caps.checkMeasure(Scenario.Measure.RSS));
    }

    @Test
    void wildcardsMatchAsTheRustHarnessDoes() {
        assertTrue(Capabilities.wildcard("*_1.3_*_aes-256-gcm*",
                "handshake-full_1.3_x25519_rsa-2048_aes-256-gcm_mtls"));
        assertTrue(Capabilities.wildcard("memory-*", "memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm"));
        assertTrue(!Capabilities.wildcard("*_1.3_*", "handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm"));
    }

    @Test
    void capabilitiesUseTheSerdeSpellings() {
        String json = new JsseStack().capabilities().toJson().toString();
        assertTrue(json.contains("\"client_auth\":[\"none\",\"mtls\",\"cert-requested\"]"), json);
        assertTrue(json.contains("\"ems_off\":true"), json);
        assertTrue(json.contains("\"measure_limits\":[{\"measure\":\"instructions\""), json);
    }
}
