package dev.tlsbench.runner;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A scenario and its canonical name ({@code handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm}),
 * parsed and validated exactly as crates/harness/src/scenario.rs does, with the same messages.
 */
public final class Scenario {

    /** A parameter whose values each have one canonical name. */
    interface Named {
        String text();
    }

    static <T extends Enum<T> & Named> T parse(Class<T> type, String what, String text) {
        for (T value : type.getEnumConstants()) {
            if (value.text().equals(text)) {
                return value;
            }
        }
        String valid = Arrays.stream(type.getEnumConstants()).map(Named::text).collect(Collectors.joining(", "));
        throw new IllegalArgumentException("unknown " + what + " `" + text + "` (valid: " + valid + ")");
    }

    public enum Kind implements Named {
        HANDSHAKE_FULL("handshake-full"),
        HANDSHAKE_RESUME_ID("handshake-resume-id"),
        HANDSHAKE_RESUME_TICKET("handshake-resume-ticket"),
        TRANSFER("transfer"),
        IO_PROFILE("io-profile"),
        MEMORY_100("memory-100"),
        MEMORY_1000("memory-1000"),
        MEMORY_10000("memory-10000"),
        CONTEXT_SERVER("context-server"),
        CONTEXT_CLIENT("context-client"),
        CONTEXT_CLIENT_SYSTEM("context-client-system");

        static final List<Kind> CONTEXTS = List.of(CONTEXT_SERVER, CONTEXT_CLIENT, CONTEXT_CLIENT_SYSTEM);

        private final String text;

        Kind(String text) {
            this.text = text;
        }

        @Override
        public String text() {
            return text;
        }

        public boolean isResumption() {
            return this == HANDSHAKE_RESUME_ID || this == HANDSHAKE_RESUME_TICKET;
        }

        public boolean isHandshake() {
            return this == HANDSHAKE_FULL || isResumption();
        }

        /** One operation builds one side's context and drops it ({@link Contexts}). */
        public boolean isContext() {
            return CONTEXTS.contains(this);
        }

        /** The side a context kind builds and measures. */
        public Side contextSide() {
            return this == CONTEXT_SERVER ? Side.SERVER : Side.CLIENT;
        }
    }

    public enum Measure implements Named {
        TIME("time"), INSTRUCTIONS("instructions"), SYNC("sync"), IO("io"), HEAP("heap"), RSS("rss"), NET("net");

        private final String text;

        Measure(String text) {
            this.text = text;
        }

        @Override
        public String text() {
            return text;
        }

        /** The kinds this measure applies to (scenario.rs, Measure::kinds). */
        public List<Kind> kinds() {
            List<Kind> handshakes = List.of(Kind.HANDSHAKE_FULL, Kind.HANDSHAKE_RESUME_ID,
                    Kind.HANDSHAKE_RESUME_TICKET);
            List<Kind> kinds = new ArrayList<>();
            switch (this) {
                case TIME, INSTRUCTIONS -> {
                    kinds.addAll(handshakes);
                    kinds.add(Kind.TRANSFER);
                    kinds.addAll(Kind.CONTEXTS);
                }
                case SYNC -> {
                    kinds.addAll(handshakes);
                    kinds.add(Kind.TRANSFER);
                }
                case IO -> {
                    kinds.addAll(handshakes);
                    kinds.add(Kind.IO_PROFILE);
                }
                case HEAP -> {
                    kinds.addAll(handshakes);
                    kinds.addAll(List.of(Kind.MEMORY_100, Kind.MEMORY_1000, Kind.MEMORY_10000));
                    kinds.addAll(Kind.CONTEXTS);
                }
                case RSS -> {
                    kinds.addAll(List.of(Kind.MEMORY_100, Kind.MEMORY_1000, Kind.MEMORY_10000));
                    kinds.addAll(Kind.CONTEXTS);
                }
                case NET -> kinds.addAll(handshakes);
            }
            return kinds;
        }

        /** Unsupported unless this measure applies to the scenario's kind (driver.rs, check_measure). */
        public void check(Scenario scenario) {
            if (!kinds().contains(scenario.kind)) {
                String valid = kinds().stream().map(Kind::text).collect(Collectors.joining(", "));
                throw new Unsupported("measure " + text + " does not apply to " + scenario.kind.text
                        + " scenarios (it applies to: " + valid + ")");
            }
        }
    }

    public enum Version implements Named {
        TLS12("1.2", "TLSv1.2"), TLS13("1.3", "TLSv1.3");

        private final String text;
        /** The JDK's protocol name, which Netty's engines take and report too. */
        public final String jdkName;

        Version(String text, String jdkName) {
            this.text = text;
            this.jdkName = jdkName;
        }

        @Override
        public String text() {
            return text;
        }
    }

    public enum Group implements Named {
        X25519("x25519", "x25519", 0x001d),
        SECP256R1("secp256r1", "secp256r1", 0x0017),
        SECP384R1("secp384r1", "secp384r1", 0x0018),
        X25519MLKEM768("x25519mlkem768", "X25519MLKEM768", 0x11ec);

        private final String text;
        /** The name in jdk.tls.namedGroups, which Netty's GroupsConverter also takes. */
        public final String jdkName;
        /** The IANA NamedGroup code point, as key_share and ServerKeyExchange carry it. */
        public final int codePoint;

        Group(String text, String jdkName, int codePoint) {
            this.text = text;
            this.jdkName = jdkName;
            this.codePoint = codePoint;
        }

        @Override
        public String text() {
            return text;
        }

        static Group byCodePoint(int codePoint) {
            for (Group group : values()) {
                if (group.codePoint == codePoint) {
                    return group;
                }
            }
            return null;
        }
    }

    public enum KeyType implements Named {
        RSA_2048("rsa-2048"), RSA_3072("rsa-3072"), RSA_4096("rsa-4096"),
        ECDSA_P256("ecdsa-p256"), ECDSA_P384("ecdsa-p384"), ED25519("ed25519");

        private final String text;

        KeyType(String text) {
            this.text = text;
        }

        @Override
        public String text() {
            return text;
        }

        public boolean isRsa() {
            return this == RSA_2048 || this == RSA_3072 || this == RSA_4096;
        }

        /** The curve of an ECDSA key, as a group; null for other keys. */
        public Group ecdsaCurve() {
            return switch (this) {
                case ECDSA_P256 -> Group.SECP256R1;
                case ECDSA_P384 -> Group.SECP384R1;
                default -> null;
            };
        }

        /** The java.security KeyFactory algorithm of the key's PKCS#8 encoding. */
        public String keyAlgorithm() {
            return switch (this) {
                case RSA_2048, RSA_3072, RSA_4096 -> "RSA";
                case ECDSA_P256, ECDSA_P384 -> "EC";
                case ED25519 -> "Ed25519";
            };
        }
    }

    public enum Suite implements Named {
        AES_128_GCM("aes-128-gcm", "AES_128_GCM_SHA256"),
        AES_256_GCM("aes-256-gcm", "AES_256_GCM_SHA384"),
        CHACHA20_POLY1305("chacha20-poly1305", "CHACHA20_POLY1305_SHA256");

        private final String text;
        private final String jdkCipher;

        Suite(String text, String jdkCipher) {
            this.text = text;
            this.jdkCipher = jdkCipher;
        }

        @Override
        public String text() {
            return text;
        }

        /**
         * The standard (JDK) name of the suite: RFC 8446's in TLS 1.3; in TLS 1.2, ECDHE with the key's
         * signature algorithm (RSA, or ECDSA for ECDSA and Ed25519 keys).
         */
        public String jdkName(Version version, KeyType key) {
            if (version == Version.TLS13) {
                return "TLS_" + jdkCipher;
            }
            return "TLS_ECDHE_" + (key.isRsa() ? "RSA" : "ECDSA") + "_WITH_" + jdkCipher;
        }

        /** The suite whose standard name (of any key type) is {@code name}, in {@code version}. */
        static Suite negotiated(String name, Version version) {
            for (Suite suite : values()) {
                for (KeyType key : KeyType.values()) {
                    if (suite.jdkName(version, key).equals(name)) {
                        return suite;
                    }
                }
            }
            throw new IllegalStateException("negotiated an unexpected cipher suite: \"" + name + "\"");
        }
    }

    public enum ClientAuth implements Named {
        NONE("none"), REQUIRED("mtls"), REQUESTED("cert-requested");

        private final String text;

        ClientAuth(String text) {
            this.text = text;
        }

        @Override
        public String text() {
            return text;
        }
    }

    public enum Side {
        CLIENT, SERVER;

        public String text() {
            return name().toLowerCase();
        }

        public Side peer() {
            return this == CLIENT ? SERVER : CLIENT;
        }

        static Side parse(String text) {
            return switch (text) {
                case "client" -> CLIENT;
                case "server" -> SERVER;
                default -> throw new IllegalArgumentException("unknown side `" + text + "` (valid: client, server)");
            };
        }
    }

    /** How a scenario's name says "each library's own defaults", in place of group and suite. */
    public static final String DEFAULT = "default";

    public final Kind kind;
    public final Version version;
    /** Null with the libraries' defaults, as is {@link #suite}. */
    public final Group group;
    public final KeyType key;
    public final Suite suite;
    public final ClientAuth clientAuth;
    /** TLS 1.2 extended master secret; always on in TLS 1.3, where it is built in. */
    public final boolean ems;

    Scenario(Kind kind, Version version, Group group, KeyType key, Suite suite, ClientAuth clientAuth, boolean ems) {
        this.kind = kind;
        this.version = version;
        this.group = group;
        this.key = key;
        this.suite = suite;
        this.clientAuth = clientAuth;
        this.ems = ems;
    }

    public boolean isPinned() {
        return group != null;
    }

    /** The same scenario with another kind. */
    public Scenario withKind(Kind other) {
        return new Scenario(other, version, group, key, suite, clientAuth, ems);
    }

    public static Scenario parse(String name) {
        String[] parts = name.split("_", -1);
        if (parts.length < 5) {
            throw new IllegalArgumentException("scenario `" + name + "` is not of the form kind_version_group_key_suite"
                    + "[_mtls|_cert-requested][_no-ems] (e.g. handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm, "
                    + "or with `" + DEFAULT + "` as both group and suite for each library's own defaults)");
        }
        Group group = null;
        Suite suite = null;
        boolean groupDefault = parts[2].equals(DEFAULT);
        boolean suiteDefault = parts[4].equals(DEFAULT);
        if (groupDefault != suiteDefault) {
            throw new IllegalArgumentException("scenario `" + name + "`: group and suite are either both `" + DEFAULT
                    + "` (each library's own defaults) or both named");
        }
        if (!groupDefault) {
            group = parse(Group.class, "key-exchange group", parts[2]);
            suite = parse(Suite.class, "cipher suite", parts[4]);
        }
        Kind kind = parse(Kind.class, "scenario kind", parts[0]);
        Version version = parse(Version.class, "protocol version", parts[1]);
        KeyType key = parse(KeyType.class, "key type", parts[3]);
        ClientAuth clientAuth = ClientAuth.NONE;
        boolean ems = true;
        for (int i = 5; i < parts.length; i++) {
            String suffix = parts[i];
            boolean last = i + 1 == parts.length;
            if (suffix.equals("no-ems") && last) {
                ems = false;
            } else if (i == 5 && (suffix.equals("mtls") || suffix.equals("cert-requested"))) {
                clientAuth = parse(ClientAuth.class, "client auth", suffix);
            } else {
                throw new IllegalArgumentException("scenario `" + name + "`: unknown suffix `" + suffix
                        + "` (valid: mtls, cert-requested, no-ems)");
            }
        }
        return new Scenario(kind, version, group, key, suite, clientAuth, ems).validated();
    }

    private Scenario validated() {
        String name = name();
        if (kind == Kind.HANDSHAKE_RESUME_ID && version == Version.TLS13) {
            throw new IllegalArgumentException(name + ": session-ID resumption exists in TLS 1.2 only");
        }
        if (group == Group.X25519MLKEM768 && version == Version.TLS12) {
            throw new IllegalArgumentException(name + ": x25519mlkem768 exists in TLS 1.3 only");
        }
        if (!ems && version == Version.TLS13) {
            throw new IllegalArgumentException(name + ": EMS is TLS 1.2 only");
        }
        if (!isPinned() && !ems) {
            throw new IllegalArgumentException(name
                    + ": no-ems switches EMS off, which no library does by default; it is pinned only");
        }
        if (!isPinned() && kind.isResumption()) {
            throw new IllegalArgumentException(name
                    + ": resumption is measured pinned only (whether and how a client keeps and "
                    + "offers sessions is the application's choice, not a library default)");
        }
        return this;
    }

    public String name() {
        StringBuilder name = new StringBuilder();
        name.append(kind.text).append('_').append(version.text).append('_');
        name.append(isPinned() ? group.text : DEFAULT).append('_').append(key.text).append('_');
        name.append(isPinned() ? suite.text : DEFAULT);
        if (clientAuth != ClientAuth.NONE) {
            name.append('_').append(clientAuth.text);
        }
        if (!ems) {
            name.append("_no-ems");
        }
        return name.toString();
    }

    @Override
    public String toString() {
        return name();
    }

    /**
     * The groups a side lists, the scenario's first (scenario.rs, Scenario::groups). In TLS 1.2 the
     * groups a peer lists also bound the curve of the other side's ECDSA certificate (RFC 8422), so with
     * an ECDSA key on another curve the client lists that curve too, and so does the server when it
     * verifies a client certificate. Empty with the libraries' defaults.
     */
    public List<Group> groups(Side side) {
        List<Group> groups = new ArrayList<>();
        if (!isPinned()) {
            return groups;
        }
        groups.add(group);
        boolean peerHasCert = side == Side.CLIENT || clientAuth == ClientAuth.REQUIRED;
        Group curve = key.ecdsaCurve();
        if (version == Version.TLS12 && curve != null && peerHasCert && curve != group) {
            groups.add(curve);
        }
        return groups;
    }

    /** How many connections a memory-N scenario holds open; 0 for other kinds. */
    public int connections() {
        return switch (kind) {
            case MEMORY_100 -> 100;
            case MEMORY_1000 -> 1000;
            case MEMORY_10000 -> 10000;
            default -> 0;
        };
    }
}
