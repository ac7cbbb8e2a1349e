package dev.tlsbench.runner;

/**
 * A response of the network mode (harness net/mod.rs, Page): {@code writes} application writes of {@code size}
 * bytes each, every write the same pattern (byte i is i % 251).
 */
public record Page(long writes, int size) {
    public static final Page EMPTY = new Page(0, 0);
    /** The largest single write of a page given by its size alone. */
    public static final int WRITE_SIZE = 16 * 1024;

    public long bytes() {
        return writes * size;
    }

    /** The bytes of each write. */
    public byte[] chunk() {
        byte[] chunk = new byte[size];
        for (int i = 0; i < size; i++) {
            chunk[i] = (byte) (i % 251);
        }
        return chunk;
    }

    /**
     * {@code 0}, {@code 10KiB}, {@code 512KiB}, {@code 100MiB} (in 16 KiB writes), or {@code 1000x64} (1,000 writes of
     * 64 bytes).
     */
    public static Page parse(String text) {
        String invalid = "`" + text + "` is not a response size: "
                + "give bytes (0, 1KiB, 10KiB, 512KiB, 10MiB, 100MiB) or COUNTxBYTES (1000x64)";
        int x = text.indexOf('x');
        if (x >= 0) {
            long writes = number(text.substring(0, x), invalid);
            long size = bytes(text.substring(x + 1), invalid);
            if (size <= 0 || size > 1 << 20) {
                throw new IllegalArgumentException("`" + text + "`: each write must be 1 byte to 1 MiB");
            }
            return new Page(writes, (int) size);
        }
        long total = bytes(text, invalid);
        if (total == 0) {
            return EMPTY;
        }
        if (total < WRITE_SIZE) {
            return new Page(1, (int) total);
        }
        if (total % WRITE_SIZE != 0) {
            throw new IllegalArgumentException("`" + text
                    + "`: a response over 16 KiB must be a multiple of 16 KiB (or give COUNTxBYTES)");
        }
        return new Page(total / WRITE_SIZE, WRITE_SIZE);
    }

    /** A number with an optional unit: B, KiB (K, k), MiB (M), GiB (G). */
    private static long bytes(String text, String invalid) {
        int unitAt = 0;
        while (unitAt < text.length() && text.charAt(unitAt) >= '0' && text.charAt(unitAt) <= '9') {
            unitAt++;
        }
        long factor = switch (text.substring(unitAt)) {
            case "", "B" -> 1;
            case "KiB", "K", "k" -> 1L << 10;
            case "MiB", "M" -> 1L << 20;
            case "GiB", "G" -> 1L << 30;
            default -> throw new IllegalArgumentException(invalid);
        };
        try {
            return Math.multiplyExact(number(text.substring(0, unitAt), invalid), factor);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(invalid);
        }
    }

    private static long number(String digits, String invalid) {
        if (!digits.matches("[0-9]+")) {
            throw new IllegalArgumentException(invalid);
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(invalid);
        }
    }

    /** As it parses: {@code 0}, {@code 10KiB}, {@code 512KiB}, {@code 1000x64}. */
    @Override
    public String toString() {
        if (writes == 0) {
            return "0";
        }
        if (writes == 1) {
            return human(size);
        }
        if (size == WRITE_SIZE) {
            return human(writes * WRITE_SIZE);
        }
        return writes + "x" + size;
    }

    private static String human(long n) {
        if (n >= 1 << 20 && n % (1 << 20) == 0) {
            return (n >> 20) + "MiB";
        }
        if (n >= 1 << 10 && n % (1 << 10) == 0) {
            return (n >> 10) + "KiB";
        }
        return Long.toString(n);
    }

    Json toJson() {
        return Json.object().put("writes", writes).put("size", (long) size);
    }
}
