package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Group;
import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Side;
import dev.tlsbench.runner.Scenario.Version;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What JDK 17 lets a program pin only JVM-wide, through system properties read once when the JSSE
 * classes (and Netty's, which read the same ticket properties) initialise: so they are set here, before
 * any TLS class loads. One JVM runs one sample of one scenario, so JVM-wide is per sample.
 *
 * <ul>
 * <li>{@code jdk.tls.namedGroups}: the key-exchange groups JSSE offers and accepts; SSLParameters has
 *     no groups in JDK 17. When a JSSE client and a JSSE server share the JVM, the client's list (which
 *     holds the server's: {@link Scenario#groups}); a JSSE server in TLS 1.2 also lists its ECDSA key's curve.</li>
 * <li>{@code jdk.tls.useExtendedMasterSecret=false} for {@code _no-ems}.</li>
 * <li>{@code jdk.tls.server.enableSessionTicketExtension} and {@code jdk.tls.client.enableSessionTicketExtension}:
 *     true only for handshake-resume-ticket, false in every other pinned scenario (TLS 1.2 then resumes by
 *     session ID, and neither JSSE nor netty-tcnative issues tickets). With the libraries' defaults, unset.</li>
 * </ul>
 */
public final class JvmPins {
    private JvmPins() {
    }

    /** Sets the properties for a scenario whose JSSE sides are {@code jsseSides} (possibly none). */
    public static void apply(Scenario scenario, Set<Side> jsseSides) {
        if (!scenario.isPinned()) {
            return;
        }
        Set<Group> groups = new LinkedHashSet<>();
        for (Side side : new Side[] {Side.CLIENT, Side.SERVER}) {
            if (jsseSides.contains(side)) {
                groups.addAll(scenario.groups(side));
            }
        }
        // A JSSE server takes an ECDSA certificate in TLS 1.2 only on a curve of its own list
        // (X509Authentication checks SupportedGroups.isSupported), so the key's curve is listed after the
        // scenario's group; the server picks the client's first group it supports, the scenario's (gated).
        Group curve = scenario.key.ecdsaCurve();
        if (jsseSides.contains(Side.SERVER) && scenario.version == Version.TLS12 && curve != null) {
            groups.add(curve);
        }
        if (!groups.isEmpty()) {
            System.setProperty("jdk.tls.namedGroups", groups.stream().map(g -> g.jdkName).collect(Collectors.joining(",")));
        }
        if (!scenario.ems) {
            System.setProperty("jdk.tls.useExtendedMasterSecret", "false");
        }
        String tickets = String.valueOf(scenario.kind == Kind.HANDSHAKE_RESUME_TICKET);
        System.setProperty("jdk.tls.server.enableSessionTicketExtension", tickets);
        System.setProperty("jdk.tls.client.enableSessionTicketExtension", tickets);
    }
}
