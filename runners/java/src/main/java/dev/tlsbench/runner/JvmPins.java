package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Group;
import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Side;
import dev.tlsbench.runner.Scenario.Version;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What JDK 17 lets a program pin only JVM-wide, through system properties read once when the JSSE
 * classes (and Netty's, which read the same ticket properties) initialise: so they are set here, before
 * any TLS class loads.
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
 *
 * <h2>One set of pins per JVM</h2>
 * A one-shot command runs one scenario per JVM; a session runs many, and setting the properties again
 * would change nothing once the classes have read them. So the first scenario that applies its pins
 * (a request past its stacks' capability checks, which read no TLS class) fixes them for the JVM, even if
 * its sample then fails, and a later one whose properties differ in any way is refused. That includes an
 * unpinned scenario, which sets none: after a pinned one it would run with its groups and tickets, and
 * before one it leaves the
 * classes on the JDK's defaults, which a pinned scenario's properties can no longer replace. The
 * refusal asks for a new process (a session's {@code needs_new_process} reply): the orchestrator shares a
 * process among the scenarios whose pins agree and starts another for one that was refused.
 */
public final class JvmPins {
    /** The properties the first scenario set (empty when it set none); null until one applied its pins. */
    private static Map<String, String> fixed;

    private JvmPins() {
    }

    /**
     * Sets the properties for a scenario whose JSSE sides are {@code jsseSides} (possibly none), or, once a
     * scenario set them in this JVM, checks that this one needs the same.
     */
    public static synchronized void apply(Scenario scenario, Set<Side> jsseSides) {
        Map<String, String> wanted = properties(scenario, jsseSides);
        if (fixed == null) {
            fixed = wanted;
            wanted.forEach(System::setProperty);
            return;
        }
        String conflict = conflict(fixed, wanted);
        if (conflict != null) {
            throw Failure.needsNewProcess(conflict);
        }
    }

    /** The properties a scenario whose JSSE sides are {@code jsseSides} sets, in the order they are set. */
    static Map<String, String> properties(Scenario scenario, Set<Side> jsseSides) {
        Map<String, String> properties = new LinkedHashMap<>();
        if (!scenario.isPinned()) {
            return properties;
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
            properties.put("jdk.tls.namedGroups", groups.stream().map(g -> g.jdkName).collect(Collectors.joining(",")));
        }
        if (!scenario.ems) {
            properties.put("jdk.tls.useExtendedMasterSecret", "false");
        }
        String tickets = String.valueOf(scenario.kind == Kind.HANDSHAKE_RESUME_TICKET);
        properties.put("jdk.tls.server.enableSessionTicketExtension", tickets);
        properties.put("jdk.tls.client.enableSessionTicketExtension", tickets);
        return properties;
    }

    /** Why a scenario that needs {@code wanted} cannot run in a JVM pinned to {@code fixed}; null if it can. */
    static String conflict(Map<String, String> fixed, Map<String, String> wanted) {
        if (fixed.equals(wanted)) {
            return null;
        }
        Set<String> names = new TreeSet<>(fixed.keySet());
        names.addAll(wanted.keySet());
        List<String> differences = new ArrayList<>();
        for (String name : names) {
            String was = fixed.get(name);
            String needs = wanted.get(name);
            if (was == null ? needs != null : !was.equals(needs)) {
                differences.add((was == null ? name + " unset" : name + "=" + was)
                        + " where this scenario needs " + (needs == null ? "it unset" : needs));
            }
        }
        return "this JVM is pinned by its first scenario (" + String.join(", ", differences)
                + "); a scenario that needs other JVM-wide settings needs a process of its own";
    }
}
