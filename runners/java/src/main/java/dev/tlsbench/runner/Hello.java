package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Group;

/**
 * What the plaintext handshake messages on a link tell about a connection, where SSLEngine's API does
 * not: the key-exchange group, whether the session was resumed, whether TLS 1.2 used the extended
 * master secret, and whether a TLS 1.2 ticket arrived. Read from the bytes the transport carried
 * ({@link Link.Observed}), never assumed. Both sides of a connection see the same bytes.
 */
public final class Hello {
    /** ServerHello.random of a HelloRetryRequest (RFC 8446, 4.1.3). */
    private static final byte[] HRR_RANDOM = hex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c");

    /** The key-exchange group, from TLS 1.3's key_share or TLS 1.2's ServerKeyExchange; null if none was seen. */
    final Integer groupCodePoint;
    /** TLS 1.3: the ServerHello selected a pre_shared_key. */
    final boolean pskSelected;
    /**
     * TLS 1.2: the server's plaintext flight went from ServerHello to change_cipher_spec without a Certificate or
     * ServerKeyExchange.
     */
    final boolean abbreviated;
    final boolean emsExtension;
    final boolean serverHelloSeen;
    /** TLS 1.2: a NewSessionTicket came in the server's plaintext flight. */
    final boolean ticketSeen;

    Hello(Link.Observed fromClient, Link.Observed fromServer) {
        // The client's hello is not needed for what is reported; the server's messages say it all.
        Integer group = null;
        boolean psk = false;
        boolean ems = false;
        boolean serverHello = false;
        boolean certificateOrKeyExchange = false;
        boolean ticket = false;
        byte[] m = fromServer.handshake;
        int end = fromServer.length;
        int at = 0;
        while (at + 4 <= end) {
            int type = m[at] & 0xff;
            int length = u24(m, at + 1);
            int body = at + 4;
            if (body + length > end) {
                break;
            }
            switch (type) {
                case 2 -> { // ServerHello (or HelloRetryRequest)
                    boolean retry = java.util.Arrays.equals(m, body + 2, body + 34, HRR_RANDOM, 0, 32);
                    if (!retry) {
                        serverHello = true;
                        int p = body + 34;
                        p += 1 + (m[p] & 0xff); // session id
                        p += 3; // cipher suite, compression method
                        if (p + 2 <= body + length) {
                            int extensionsEnd = p + 2 + u16(m, p);
                            p += 2;
                            while (p + 4 <= extensionsEnd) {
                                int extension = u16(m, p);
                                int extensionLength = u16(m, p + 2);
                                int data = p + 4;
                                switch (extension) {
                                    case 51 -> group = u16(m, data); // key_share: the server's share's group
                                    case 41 -> psk = true; // pre_shared_key
                                    case 23 -> ems = true; // extended_master_secret
                                    default -> { }
                                }
                                p = data + extensionLength;
                            }
                        }
                    }
                }
                case 11 -> certificateOrKeyExchange = true;
                case 12 -> {
                    certificateOrKeyExchange = true;
                    if (length >= 3 && (m[body] & 0xff) == 3) { // ECParameters: named_curve
                        group = u16(m, body + 1);
                    }
                }
                case 4 -> ticket = true;
                default -> { }
            }
            at = body + length;
        }
        this.groupCodePoint = group;
        this.pskSelected = psk;
        this.emsExtension = ems;
        this.serverHelloSeen = serverHello;
        this.abbreviated = serverHello && fromServer.done && !certificateOrKeyExchange;
        this.ticketSeen = ticket;
    }

    /** The group seen, in tlsbench's terms; an error names a code point tlsbench does not know. */
    Group group() {
        if (groupCodePoint == null) {
            return null;
        }
        Group group = Group.byCodePoint(groupCodePoint);
        if (group == null) {
            throw new IllegalStateException(String.format("negotiated an unexpected group (0x%04x)", groupCodePoint));
        }
        return group;
    }

    private static int u16(byte[] b, int at) {
        return ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
    }

    private static int u24(byte[] b, int at) {
        return ((b[at] & 0xff) << 16) | ((b[at + 1] & 0xff) << 8) | (b[at + 2] & 0xff);
    }

    private static byte[] hex(String text) {
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
