package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Group;
import dev.tlsbench.runner.Scenario.Suite;
import dev.tlsbench.runner.Scenario.Version;

/**
 * The parameters a completed handshake settled on, as one side sees them (stack.rs, Negotiated).
 *
 * @param group null where not known (a resumed TLS 1.2 handshake has no key exchange)
 * @param ems TLS 1.2 only; null in TLS 1.3
 * @param clientCertVerified server side only; null on the client
 * @param ticketReceived client side, TLS 1.2 only (a TLS 1.3 ticket is encrypted); null otherwise
 */
public record Negotiated(Version version, Suite suite, Group group, boolean resumed, Boolean ems,
                         Boolean clientCertVerified, Boolean ticketReceived) {

    /** As Rust's {@code impl Display for Negotiated}, e.g. "1.2 aes-256-gcm x25519, resumed". */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder(version.text()).append(' ').append(suite.text());
        text.append(group != null ? " " + group.text() : " group not reported");
        if (resumed) {
            text.append(", resumed");
        }
        if (Boolean.FALSE.equals(ems)) {
            text.append(", no EMS");
        }
        if (ticketReceived != null) {
            text.append(ticketReceived ? ", ticket received" : ", no ticket");
        }
        return text.toString();
    }
}
