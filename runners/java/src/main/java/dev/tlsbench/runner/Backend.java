package dev.tlsbench.runner;

/**
 * The crypto library under a stack's TLS code (crates/harness/src/stack.rs, Backend): its name, which
 * stacks on the same library share, its version as the running code reports it, and what else sets it
 * apart (how the stack reaches it), or null.
 */
public record Backend(String name, String version, String detail) {
    Json toJson() {
        Json json = Json.object().put("name", name).put("version", version);
        return detail == null ? json : json.put("detail", detail);
    }
}
