package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The runner's one-shot commands in a JVM of their own, for what only a fresh JVM shows. */
final class FreshJvm {
    private FreshJvm() {
    }

    /** One command (`list`, `sample ...`) with these JVM options; its reply, which must exit 0. */
    static String run(List<String> options, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(options);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), "dev.tlsbench.runner.Main"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        process.getInputStream().transferTo(out);
        assertEquals(0, process.waitFor(), "exit status");
        return out.toString(StandardCharsets.UTF_8).trim();
    }
}
