package dev.tlsbench.runner;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The little JSON the replies need, written by hand: objects keep their keys in insertion order, and
 * values are strings, numbers, booleans, null, lists, or nested objects.
 */
public final class Json {
    private final Map<String, Object> fields = new LinkedHashMap<>();

    public static Json object() {
        return new Json();
    }

    public Json put(String key, Object value) {
        fields.put(key, value);
        return this;
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        write(out, this);
        return out.toString();
    }

    static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Json json) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> field : json.fields.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(out, field.getKey());
                out.append(':');
                write(out, field.getValue());
            }
            out.append('}');
        } else if (value instanceof Collection<?> list) {
            out.append('[');
            boolean first = true;
            for (Object item : list) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(out, item);
            }
            out.append(']');
        } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long) {
            out.append(value);
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                out.append("null");
            } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
                out.append((long) d).append(".0");
            } else {
                out.append(d);
            }
        } else {
            string(out, value.toString());
        }
    }

    static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
