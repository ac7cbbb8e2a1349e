package dev.tlsbench.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tlsbench.runner.Scenario.Measure;
import dev.tlsbench.runner.Scenario.Named;
import dev.tlsbench.runner.Scenario.Side;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.zip.Inflater;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * The runner protocol as data (docs/runner-protocol.md, "The protocol as data"): the test vectors in protocol/,
 * generated from the Rust harness, and the JSON Schema of every reply. This runner must parse every scenario name
 * to the same fields, refuse every invalid one with the same words, frame relay messages byte for byte the same,
 * encode latency histograms the same, and reply only what the schema allows.
 */
class ProtocolVectorsTest {
    /** The repository's protocol/, from this module's directory (Maven runs the tests there). */
    static final Path PROTOCOL = Path.of("..", "..", "protocol");

    static Object read(String file) throws Exception {
        return JsonReader.parse(Files.readString(PROTOCOL.resolve(file), StandardCharsets.UTF_8));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object value) {
        return (List<Object>) value;
    }

    static String text(Named value) {
        return value == null ? null : value.text();
    }

    static List<Object> texts(List<? extends Named> values) {
        return new ArrayList<>(values.stream().map(Named::text).toList());
    }

    @Test
    void everyScenarioNameParsesToTheHarnessFields() throws Exception {
        Map<String, Object> table = object(read("scenarios.json"));
        assertEquals(List.of("name", "kind", "version", "group", "key", "suite", "client_auth", "ems", "client_groups",
                "server_groups"), table.get("columns"));
        List<Object> rows = list(table.get("scenarios"));
        assertTrue(rows.size() > 2000, rows.size() + " scenarios");
        for (Object row : rows) {
            List<Object> r = list(row);
            String name = (String) r.get(0);
            Scenario s = Scenario.parse(name);
            List<Object> parsed = Arrays.asList(s.name(), text(s.kind), text(s.version), text(s.group), text(s.key),
                    text(s.suite), text(s.clientAuth), s.ems, texts(s.groups(Side.CLIENT)),
                    texts(s.groups(Side.SERVER)));
            assertEquals(r, parsed, name);
        }
    }

    @Test
    void everyInvalidScenarioNameIsRefusedWithTheHarnessWords() throws Exception {
        for (Object vector : list(read("invalid-scenarios.json"))) {
            Map<String, Object> v = object(vector);
            String name = (String) v.get("name");
            assertEquals(v.get("error"), assertThrows(IllegalArgumentException.class, () -> Scenario.parse(name))
                    .getMessage(), name);
        }
    }

    @Test
    void eachMeasureAppliesToTheHarnessKinds() throws Exception {
        for (Object vector : list(read("measures.json"))) {
            Map<String, Object> v = object(vector);
            Measure measure = Scenario.parse(Measure.class, "measure", (String) v.get("measure"));
            Scenario scenario = Scenario.parse((String) v.get("scenario"));
            String unsupported = (String) v.get("unsupported");
            if (unsupported == null) {
                measure.check(scenario);
            } else {
                assertEquals(unsupported, assertThrows(Unsupported.class, () -> measure.check(scenario)).getMessage(),
                        v.toString());
            }
        }
    }

    @Test
    void relayFramesAreTheHarnessBytes() throws Exception {
        HexFormat hex = HexFormat.of();
        List<String> nexts = List.of("seed", "warm-up", "measure", "stop");
        for (Object vector : list(read("frames.json"))) {
            Map<String, Object> v = object(vector);
            byte[] frame = hex.parseHex((String) v.get("hex"));
            Map<String, Object> m = v.containsKey("message") ? object(v.get("message")) : null;
            if (m != null && !Boolean.TRUE.equals(v.get("decode_only"))) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                Split.Relay writer = new Split.Relay(new ByteArrayInputStream(new byte[0]), out);
                boolean done = Boolean.TRUE.equals(m.get("done"));
                switch ((String) m.get("type")) {
                    case "flight" -> writer.sendFlight(hex.parseHex((String) m.get("bytes")), done,
                            number(m, "unread").intValue());
                    case "next" -> writer.send(new byte[] {1, (byte) nexts.indexOf(m.get("next"))});
                    case "reached" -> writer.send(
                            new byte[] {2, (byte) (Boolean.TRUE.equals(m.get("reached")) ? 1 : 0)});
                    case "tally" -> writer.sendTally(number(m, "bytes").longValue(),
                            hex.parseHex((String) m.get("sha256")));
                    case "abort" -> writer.abort((String) m.get("reason"));
                    case "flights" -> writer.sendFlights(list(m.get("flights")).stream()
                            .map(f -> hex.parseHex((String) f)).toList(),
                            done, number(m, "unread").intValue());
                    default -> fail("a message of type " + m.get("type"));
                }
                assertEquals(v.get("hex"), hex.formatHex(out.toByteArray()), v.toString());
            }
            Split.Relay reader = new Split.Relay(new ByteArrayInputStream(frame), new ByteArrayOutputStream());
            if (v.containsKey("error")) {
                Failure refused = assertThrows(Failure.class, reader::recv);
                assertEquals(v.get("error"), refused.getMessage(), v.toString());
                // Whose failure it is, as the reply says it: "cause": "peer", or no cause (own).
                assertEquals(v.get("cause"), refused.peer ? "peer" : "own", v.toString());
                Object cause = object(JsonReader.parse(Report.of(refused).toString())).get("cause");
                assertEquals(refused.peer ? "peer" : null, cause, v.toString());
                continue;
            }
            Split.Message got = reader.recv();
            assertNotNull(m, v.toString());
            switch ((String) m.get("type")) {
                case "flight" -> {
                    assertEquals(0, got.tag);
                    assertEquals(m.get("bytes"), hex.formatHex(got.flights.get(0)));
                }
                case "next" -> assertEquals(m.get("next"), nexts.get(got.next));
                case "reached" -> assertEquals(m.get("reached"), got.done);
                case "tally" -> {
                    assertEquals(number(m, "bytes").longValue(), got.tallyBytes);
                    assertEquals(m.get("sha256"), hex.formatHex(got.digest));
                }
                case "flights" -> {
                    assertEquals(5, got.tag);
                    assertEquals(m.get("flights"), new ArrayList<>(got.flights.stream().map(hex::formatHex).toList()));
                }
                default -> fail("read " + v);
            }
            if (m.containsKey("done")) {
                assertEquals(m.get("done"), got.done, v.toString());
                assertEquals(number(m, "unread").longValue(), got.unread, v.toString());
            }
        }
    }

    static Number number(Map<String, Object> object, String key) {
        return (Number) object.get(key);
    }

    @Test
    void latencyHistogramsEncodeAsTheHarnessAndReadBack() throws Exception {
        HexFormat hex = HexFormat.of();
        for (Object vector : list(read("histograms.json"))) {
            Map<String, Object> v = object(vector);
            Latency latency = new Latency();
            for (Object ns : list(v.get("values_ns"))) {
                latency.record(((Number) ns).longValue());
            }
            // The V2 encoding under the deflate: byte for byte the harness's.
            byte[] compressed = Base64.getDecoder().decode(latency.encode());
            Inflater inflater = new Inflater();
            inflater.setInput(compressed, 8, compressed.length - 8);
            byte[] v2 = new byte[1 << 16];
            int n = inflater.inflate(v2);
            assertTrue(inflater.finished());
            assertEquals(v.get("v2_hex"), hex.formatHex(Arrays.copyOf(v2, n)), v.get("values_ns").toString());
            // The harness's blob reads back with its count and percentiles.
            Histogram back = Latency.decode((String) v.get("base64"));
            assertEquals(number(v, "count").longValue(), back.getTotalCount());
            for (String p : List.of("50", "90", "99")) {
                Number want = number(v, "p" + p + "_ns");
                if (want != null) {
                    assertEquals(want.longValue(), back.getValueAtPercentile(Double.parseDouble(p)),
                            "p" + p + " of " + v);
                }
            }
            if (v.get("max_ns") != null) {
                assertEquals(number(v, "max_ns").longValue(), back.getMaxValue());
            }
        }
    }

    static Map<String, Object> definition(String name) {
        return Map.of("$ref", "#/$defs/" + name);
    }

    @Test
    void theSchemaTellsTheHarnessRepliesFromBrokenOnes() throws Exception {
        Map<String, Object> root = object(read("replies.schema.json"));
        for (Object example : list(read("replies.json"))) {
            Map<String, Object> e = object(example);
            String error = Validator.check(root, definition((String) e.get("schema")), e.get("reply"), "/");
            if (Boolean.TRUE.equals(e.get("valid"))) {
                assertNull(error, e.toString());
            } else {
                assertNotNull(error, "passes with " + e.get("why") + ": " + e);
            }
        }
        assertTrue(Validator.check(root, Map.of("pattern", "^a"), "a", "/").contains("unsupported keyword"));
    }

    /** A side whose peer stopped replies as the harness does: failed, with the peer's reason, and "cause": "peer". */
    @Test
    void aFailureThatEchoesThePeerIsTheHarnesssReply() throws Exception {
        Map<String, Object> want = null;
        for (Object example : list(read("replies.json"))) {
            Map<String, Object> e = object(example);
            boolean valid = "sample_reply".equals(e.get("schema")) && Boolean.TRUE.equals(e.get("valid"));
            if (valid && e.get("reply") instanceof Map<?, ?> reply && "peer".equals(reply.get("cause"))) {
                want = object(reply);
            }
        }
        assertNotNull(want, "replies.json has no failed reply with the peer's cause");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String reason = ((String) want.get("reason")).replace("the peer stopped: ", "");
        new Split.Relay(new ByteArrayInputStream(new byte[0]), out).abort(reason);
        Split.Relay reader = new Split.Relay(new ByteArrayInputStream(out.toByteArray()), new ByteArrayOutputStream());
        Failure stopped = assertThrows(Failure.class, reader::recv);
        assertEquals(want, JsonReader.parse(Report.of(stopped).toString()));
    }

    /** This runner's own replies, from its commands, match the schema. */
    @Test
    void thisRunnersRepliesMatchTheSchema() throws Exception {
        Map<String, Object> root = object(read("replies.schema.json"));
        String dir = TestPki.dataDir().toString();
        String full = "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm";
        String tcnative = "netty-tcnative";
        Map<Json, String> replies = new LinkedHashMap<>();
        // First: the JSSE pins of a JVM are its first scenario's, and this pair sets them for both sides.
        NetPair net = NetPair.run(new NettyTcnativeStack(), new NettyTcnativeStack(), Scenario.parse(full),
                Page.EMPTY, Page.EMPTY, 2, 1);
        replies.put(net.client.toJson(), "net_reply");
        replies.put(net.server.toJson(), "net_reply");
        replies.put(Main.reply(new String[] {"list"}, null, false), "list_reply");
        String[] timed = {"--min-time-ms", "2", "--warmup-ms", "1", "--data-dir", dir};
        for (String scenario : List.of(full, "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm")) {
            String[] sample = {"sample", "--client", tcnative, "--server", tcnative, "--scenario", scenario};
            replies.put(Main.reply(concat(sample, timed), null, false), "sample_reply");
        }
        replies.put(Main.reply(new String[] {"sample", "--measure", "io", "--client", tcnative, "--server", tcnative,
            "--scenario", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir}, null, false),
            "sample_reply");
        replies.put(Main.reply(new String[] {"sample", "--client", "nope", "--server", tcnative, "--scenario", full},
            null, false), "sample_reply");
        replies.put(Main.reply(new String[] {"sample", "--measure", "rss", "--client", tcnative, "--server", tcnative,
            "--scenario", "memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir}, null, false),
            "sample_reply");
        replies.put(Report.needsNewProcess("this JVM pinned x25519"), "sample_reply");
        // JSSE on both sides, whose pins are the net pair's.
        replies.put(Main.reply(new String[] {"trace", "--client", "jsse", "--server", "jsse", "--scenario",
            "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir}, null, false), "trace_reply");
        replies.put(Main.reply(new String[] {"load", "--stack", tcnative,
            "--scenario", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm", "--connect", "127.0.0.1:1"}, null, false),
            "net_reply");
        // The context scenarios and cold, JSSE on both sides with the same pins.
        Json context = Main.reply(concat(new String[] {"sample", "--client", "jsse", "--server", "jsse",
            "--scenario", "context-server_1.3_x25519_ecdsa-p256_aes-128-gcm_mtls"}, timed), null, false);
        assertEquals("ok", object(JsonReader.parse(context.toString())).get("status"), context.toString());
        replies.put(context, "sample_reply");
        Json cold = Main.reply(new String[] {"cold", "--client", "jsse", "--server", "jsse", "--scenario", full,
            "--data-dir", dir, "--spawned-at-ns", "0"}, null, false);
        assertEquals("ok", object(JsonReader.parse(cold.toString())).get("status"), cold.toString());
        replies.put(cold, "cold_reply");
        replies.put(Main.reply(new String[] {"cold", "--client", tcnative, "--server", tcnative, "--scenario",
            "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm"}, null, false), "cold_reply");
        List<Object> statuses = new ArrayList<>();
        for (Map.Entry<Json, String> reply : replies.entrySet()) {
            String line = reply.getKey().toString();
            Object parsed = JsonReader.parse(line);
            assertNull(Validator.check(root, definition(reply.getValue()), parsed, "/"), line);
            statuses.add(object(parsed).get("status"));
        }
        assertTrue(statuses.containsAll(List.of("ok", "failed", "unsupported", "needs_new_process")),
                statuses.toString());
    }

    static String[] concat(String[] a, String[] b) {
        String[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void theReaderAndValidatorAreStrict() {
        assertEquals(List.of(1L, 1.5, "a\u00e9\n", true, Arrays.asList((Object) null)),
                JsonReader.parse("[1, 1.5, \"a\\u00e9\\n\", true, [null]]"));
        assertThrows(IllegalArgumentException.class, () -> JsonReader.parse("[1,]"));
        Map<String, Object> root = Map.of("$defs", Map.of("n", Map.of("type", "integer", "minimum", 1L)));
        assertNull(Validator.check(root, definition("n"), 1L, "/"));
        assertNotNull(Validator.check(root, definition("n"), 0L, "/"));
        assertNotNull(Validator.check(root, definition("n"), 1.5, "/"));
        Map<String, Object> numberOrInteger =
                Map.of("oneOf", List.of(Map.of("type", "number"), Map.of("type", "integer")));
        assertNotNull(Validator.check(root, numberOrInteger, 1L, "/"));
        assertFalse(Validator.check(root, Map.of("required", List.of("a")), Map.of(), "/") == null);
    }

    /**
     * The JSON the vectors are written in: objects keep their order, integers are Long (BigInteger past it), others
     * Double.
     */
    static final class JsonReader {
        private final String text;
        private int at;

        private JsonReader(String text) {
            this.text = text;
        }

        static Object parse(String text) {
            JsonReader reader = new JsonReader(text);
            Object value = reader.value();
            reader.space();
            if (reader.at != text.length()) {
                throw reader.error("text after the value");
            }
            return value;
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException(what + " at " + at);
        }

        private void space() {
            while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }

        private boolean take(char c) {
            space();
            if (at < text.length() && text.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!take(c)) {
                throw error("expected " + c);
            }
        }

        private Object value() {
            space();
            if (at >= text.length()) {
                throw error("no value");
            }
            char c = text.charAt(at);
            if (c == '{') {
                at++;
                Map<String, Object> object = new LinkedHashMap<>();
                if (!take('}')) {
                    do {
                        space();
                        String key = string();
                        expect(':');
                        object.put(key, value());
                    } while (take(','));
                    expect('}');
                }
                return object;
            }
            if (c == '[') {
                at++;
                List<Object> list = new ArrayList<>();
                if (!take(']')) {
                    do {
                        list.add(value());
                    } while (take(','));
                    expect(']');
                }
                return list;
            }
            if (c == '"') {
                return string();
            }
            for (String word : List.of("true", "false", "null")) {
                if (text.startsWith(word, at)) {
                    at += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            String number = text.substring(start, at);
            if (number.isEmpty()) {
                throw error("unexpected " + c);
            }
            if (number.matches("-?\\d+")) {
                BigInteger big = new BigInteger(number);
                return big.bitLength() < 64 ? (Object) big.longValue() : big;
            }
            return Double.parseDouble(number);
        }

        private String string() {
            if (at >= text.length() || text.charAt(at) != '"') {
                throw error("expected a string");
            }
            StringBuilder out = new StringBuilder();
            at++;
            while (true) {
                if (at >= text.length()) {
                    throw error("a string cut short");
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = text.charAt(at++);
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(e);
                }
            }
        }
    }

    /**
     * The keywords of JSON Schema that replies.schema.json uses, with their standard meaning; a keyword it does
     * not know is an error, never ignored. {@link #check} returns null when the value matches, else why not.
     */
    static final class Validator {
        static String check(Map<String, Object> root, Map<String, Object> schema, Object value, String at) {
            Map<String, Object> object = value instanceof Map<?, ?> ? object(value) : null;
            boolean isNumber = value instanceof Long || value instanceof Double || value instanceof BigInteger;
            double number = isNumber ? ((Number) value).doubleValue() : 0;
            for (Map.Entry<String, Object> entry : schema.entrySet()) {
                Object arg = entry.getValue();
                String problem = switch (entry.getKey()) {
                    case "$schema", "$id", "title", "description", "$comment", "$defs" -> null;
                    case "$ref" -> {
                        String name = ((String) arg).replaceFirst("^#/\\$defs/", "");
                        Object target = object(root.get("$defs")).get(name);
                        yield target == null ? "no $defs/" + name : check(root, object(target), value, at);
                    }
                    case "type" -> {
                        List<Object> types = arg instanceof List<?> ? list(arg) : List.of(arg);
                        boolean matched = types.stream().anyMatch(t -> switch ((String) t) {
                            case "object" -> object != null;
                            case "array" -> value instanceof List<?>;
                            case "string" -> value instanceof String;
                            case "boolean" -> value instanceof Boolean;
                            case "null" -> value == null;
                            case "number" -> isNumber;
                            case "integer" -> value instanceof Long || value instanceof BigInteger
                                    || value instanceof Double d && d == Math.rint(d) && !d.isInfinite();
                            default -> false;
                        });
                        yield matched ? null : value + " is not of type " + arg;
                    }
                    case "enum" -> list(arg).stream().anyMatch(v -> same(v, value)) ? null : value + " is not one of "
                            + arg;
                    case "const" -> same(arg, value) ? null : value + " is not " + arg;
                    case "minimum" -> isNumber && number < ((Number) arg).doubleValue() ? value + " is below " + arg
                            : null;
                    case "maximum" -> isNumber && number > ((Number) arg).doubleValue() ? value + " is above " + arg
                            : null;
                    case "required" -> {
                        String missing = null;
                        for (Object name : list(arg)) {
                            if (object != null && !object.containsKey((String) name)) {
                                missing = "no `" + name + "`";
                            }
                        }
                        yield missing;
                    }
                    case "properties" -> {
                        String found = null;
                        for (Map.Entry<String, Object> field : object == null ? Map.<String, Object>of().entrySet()
                                : object.entrySet()) {
                            Object property = object(arg).get(field.getKey());
                            if (property != null && found == null) {
                                found = check(root, object(property), field.getValue(), at + field.getKey() + "/");
                            }
                        }
                        yield found;
                    }
                    case "additionalProperties" -> {
                        Map<String, Object> known = schema.containsKey("properties") ? object(schema.get("properties"))
                                : Map.of();
                        String found = null;
                        for (Map.Entry<String, Object> field : object == null ? Map.<String, Object>of().entrySet()
                                : object.entrySet()) {
                            if (known.containsKey(field.getKey()) || found != null) {
                                continue;
                            }
                            if (Boolean.FALSE.equals(arg)) {
                                found = "unknown field `" + field.getKey() + "`";
                            } else if (arg instanceof Map<?, ?>) {
                                found = check(root, object(arg), field.getValue(), at + field.getKey() + "/");
                            }
                        }
                        yield found;
                    }
                    case "items" -> {
                        String found = null;
                        List<Object> items = value instanceof List<?> ? list(value) : List.of();
                        for (int i = 0; i < items.size() && found == null; i++) {
                            found = check(root, object(arg), items.get(i), at + i + "/");
                        }
                        yield found;
                    }
                    case "oneOf", "anyOf" -> {
                        List<String> errors = new ArrayList<>();
                        for (Object branch : list(arg)) {
                            String error = check(root, object(branch), value, at);
                            if (error != null) {
                                errors.add(error);
                            }
                        }
                        int passed = list(arg).size() - errors.size();
                        boolean ok = passed > 0 && (entry.getKey().equals("anyOf") || passed == 1);
                        yield ok ? null : passed + " of the " + entry.getKey() + " branches match ("
                                + String.join("; ", errors) + ")";
                    }
                    default -> "unsupported keyword `" + entry.getKey() + "`";
                };
                if (problem != null) {
                    return problem.startsWith("/") || problem.startsWith("unsupported") ? problem : at + ": " + problem;
                }
            }
            return null;
        }

        /** JSON equality: numbers by value, whatever their Java type. */
        static boolean same(Object a, Object b) {
            if (a instanceof Number x && b instanceof Number y) {
                return x.doubleValue() == y.doubleValue();
            }
            return Objects.equals(a, b);
        }
    }

    @Test
    void theReaderTakesWhatTheRunnerWrites() {
        Json json = Json.object().put("a", 1L).put("b", 2.5).put("c", List.of("x\ty")).put("d", null);
        Map<String, Object> back = object(JsonReader.parse(json.toString()));
        assertEquals(1L, back.get("a"));
        assertArrayEquals(new Object[] {"x\ty"}, list(back.get("c")).toArray());
        assertTrue(back.containsKey("d") && back.get("d") == null);
    }
}
