package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.ClientAuth;
import dev.tlsbench.runner.Scenario.Group;
import dev.tlsbench.runner.Scenario.KeyType;
import dev.tlsbench.runner.Scenario.Kind;
import dev.tlsbench.runner.Scenario.Measure;
import dev.tlsbench.runner.Scenario.Named;
import dev.tlsbench.runner.Scenario.Suite;
import dev.tlsbench.runner.Scenario.Version;
import java.util.ArrayList;
import java.util.List;

/**
 * What a stack declares it supports, in the serde form of harness::Capabilities (stack.rs), and the
 * same checks: exclusions first, then each parameter, then EMS.
 */
public final class Capabilities {
    public record Exclusion(String pattern, String reason) {
        boolean matches(Scenario scenario) {
            return wildcard(pattern, scenario.name());
        }
    }

    public record MeasureLimit(Measure measure, String reason) {
    }

    public List<Kind> kinds = new ArrayList<>(List.of(Kind.values()));
    public List<Version> versions = new ArrayList<>(List.of(Version.values()));
    public List<Group> groups = new ArrayList<>(List.of(Group.values()));
    public List<KeyType> keys = new ArrayList<>(List.of(KeyType.values()));
    public List<Suite> suites = new ArrayList<>(List.of(Suite.values()));
    public List<ClientAuth> clientAuth = new ArrayList<>(List.of(ClientAuth.values()));
    public boolean emsOff = true;
    public List<Exclusion> exclusions = new ArrayList<>();
    public List<MeasureLimit> measureLimits = new ArrayList<>();
    /** The least warm-up a time sample needs (a JIT's); the orchestrator warms up at least this long. */
    public long minWarmupMs;

    /** Unsupported with the reason when this stack cannot be measured by {@code measure}. */
    public void checkMeasure(Measure measure) {
        for (MeasureLimit limit : measureLimits) {
            if (limit.measure == measure) {
                throw new Unsupported(limit.reason);
            }
        }
    }

    /** Unsupported with the first exclusion the scenario matches, else the first parameter this stack lacks. */
    public void check(String stack, Scenario scenario) {
        for (Exclusion exclusion : exclusions) {
            if (exclusion.matches(scenario)) {
                throw new Unsupported(exclusion.reason);
            }
        }
        lacks(kinds, scenario.kind, stack, "scenario kind");
        lacks(versions, scenario.version, stack, "TLS");
        if (scenario.group != null) {
            lacks(groups, scenario.group, stack, "group");
        }
        lacks(keys, scenario.key, stack, "key type");
        if (scenario.suite != null) {
            lacks(suites, scenario.suite, stack, "cipher suite");
        }
        lacks(clientAuth, scenario.clientAuth, stack, "client auth");
        if (!scenario.ems && !emsOff) {
            throw new Unsupported(stack + ": extended master secret cannot be switched off");
        }
    }

    private static <T extends Named> void lacks(List<T> have, T want, String stack, String what) {
        if (!have.contains(want)) {
            throw new Unsupported(stack + ": " + what + " " + want.text() + " not supported");
        }
    }

    /** Whether {@code text} matches {@code pattern}, in which {@code *} stands for any text (also none). */
    static boolean wildcard(String pattern, String text) {
        int star = pattern.indexOf('*');
        if (star < 0) {
            return pattern.equals(text);
        }
        String head = pattern.substring(0, star);
        String rest = pattern.substring(star + 1);
        if (!text.startsWith(head)) {
            return false;
        }
        String tail = text.substring(head.length());
        for (int i = 0; i <= tail.length(); i++) {
            if (wildcard(rest, tail.substring(i))) {
                return true;
            }
        }
        return false;
    }

    public Json toJson() {
        Json json = Json.object()
                .put("kinds", kinds.stream().map(Kind::text).toList())
                .put("versions", versions.stream().map(Version::text).toList())
                .put("groups", groups.stream().map(Group::text).toList())
                .put("keys", keys.stream().map(KeyType::text).toList())
                .put("suites", suites.stream().map(Suite::text).toList())
                .put("client_auth", clientAuth.stream().map(ClientAuth::text).toList())
                .put("ems_off", emsOff)
                .put("exclusions", exclusions.stream()
                        .map(e -> Json.object().put("pattern", e.pattern).put("reason", e.reason)).toList())
                .put("peer_limits", List.of());
        if (!measureLimits.isEmpty()) {
            json.put("measure_limits", measureLimits.stream()
                    .map(l -> Json.object().put("measure", l.measure.text()).put("reason", l.reason)).toList());
        }
        if (minWarmupMs > 0) {
            json.put("min_warmup_ms", minWarmupMs);
        }
        return json;
    }
}
