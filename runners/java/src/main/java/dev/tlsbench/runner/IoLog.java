package dev.tlsbench.runner;

import dev.tlsbench.runner.Scenario.Side;
import java.util.ArrayList;
import java.util.List;

/**
 * Every call of both sides in order, with the TLS records each side writes (transport.rs, IoLog and
 * RecordStream): the {@code io} measure's counts and the {@code trace} reply's events.
 *
 * <p>A flight is what one side writes before its peer writes: it begins with a side's first write
 * after the peer's (or after a phase mark). Flights are numbered from 1 per connection.
 */
public final class IoLog {
    /** A TLS record, from its header; for a plaintext handshake record, the messages that begin in it. */
    public static final class Record {
        final int contentType;
        final int length;
        /** Null for records other than plaintext handshake records. */
        final List<Integer> messages;
        boolean continued;

        Record(int contentType, int length, List<Integer> messages) {
            this.contentType = contentType;
            this.length = length;
            this.messages = messages;
        }

        Json toJson() {
            return Json.object().put("content_type", contentType).put("length", length)
                    .put("messages", messages).put("continued", continued);
        }
    }

    /** A read, a write, or a phase mark. */
    public static final class Event {
        final String event;
        final Side side;
        final int want;
        final Integer got;
        final int len;
        final int flight;
        final List<Record> records;
        final String name;

        private Event(String event, Side side, int want, Integer got, int len, int flight, List<Record> records,
                String name) {
            this.event = event;
            this.side = side;
            this.want = want;
            this.got = got;
            this.len = len;
            this.flight = flight;
            this.records = records;
            this.name = name;
        }

        Json toJson() {
            return switch (event) {
                case "read" -> Json.object().put("event", "read").put("side", side.text()).put("want", want)
                        .put("got", got);
                case "write" -> Json.object().put("event", "write").put("side", side.text()).put("len", len)
                        .put("flight", flight).put("records", records.stream().map(Record::toJson).toList());
                default -> Json.object().put("event", "phase").put("name", name);
            };
        }
    }

    final List<Event> events = new ArrayList<>();
    private int flight;
    private Side lastWriter;
    private boolean newFlight;
    private RecordStream client = new RecordStream();
    private RecordStream server = new RecordStream();

    void read(Side side, int want, Integer got) {
        events.add(new Event("read", side, want, got, 0, 0, null, null));
    }

    void write(Side side, byte[] bytes, int offset, int length) {
        if (newFlight || lastWriter != side) {
            flight++;
            newFlight = false;
            lastWriter = side;
        }
        Event write = new Event("write", side, 0, null, length, flight, new ArrayList<>(), null);
        events.add(write);
        (side == Side.CLIENT ? client : server).parse(bytes, offset, length, write);
    }

    void phase(String name) {
        events.add(new Event("phase", null, 0, null, 0, 0, null, name));
        newFlight = true;
    }

    void restartStreams() {
        client = new RecordStream();
        server = new RecordStream();
        newFlight = true;
    }

    /** What was recorded since the log began or was last taken; flights count from 1 again. */
    public List<Event> take() {
        List<Event> taken = new ArrayList<>(events);
        events.clear();
        flight = 0;
        lastWriter = null;
        newFlight = false;
        client = new RecordStream();
        server = new RecordStream();
        return taken;
    }

    /** One side's totals: read calls, empty reads, write calls, records written, bytes written. */
    static long[] totals(List<Event> events, Side side) {
        long[] t = new long[5];
        for (Event e : events) {
            if (e.side != side) {
                continue;
            }
            if (e.event.equals("read")) {
                t[0]++;
                if (e.got == null) {
                    t[1]++;
                }
            } else if (e.event.equals("write")) {
                t[2]++;
                t[4] += e.len;
                t[3] += e.records.size();
            }
        }
        return t;
    }

    /**
     * One side's written bytes parsed as TLS records across write calls: each record is filed under the
     * write its header began in; plaintext handshake records also get the handshake messages that begin
     * in them (message headers are a stream of their own, across records).
     */
    private static final class RecordStream extends Frames {
        /** The write being parsed, and the one the last record header began in. */
        private Event write;
        private Event headerEvent;
        /** The plaintext handshake record whose body is being parsed, else null. */
        private Record current;
        private boolean encrypted;
        private final MessageStream messages = new MessageStream();

        RecordStream() {
            super(5, 2);
        }

        void parse(byte[] bytes, int offset, int length, Event event) {
            write = event;
            feed(bytes, offset, length);
        }

        @Override
        void headerBegins(int contentType) {
            headerEvent = write;
        }

        @Override
        void frame(int contentType, int length) {
            boolean plaintextHandshake = contentType == 22 && !encrypted;
            if (contentType == 20 || contentType == 23) {
                encrypted = true;
            }
            Record record = new Record(contentType, length, plaintextHandshake ? new ArrayList<>() : null);
            headerEvent.records.add(record);
            current = plaintextHandshake ? record : null;
        }

        @Override
        void body(byte[] bytes, int offset, int length) {
            if (current != null) {
                messages.parse(bytes, offset, length, current);
            }
        }
    }

    /** The handshake messages in plaintext handshake records: each is filed under the record its header began in. */
    private static final class MessageStream extends Frames {
        private Record record;

        MessageStream() {
            super(4, 3);
        }

        /** The next piece of {@code record}'s body; it is continued if its first bytes continue a message. */
        void parse(byte[] bytes, int offset, int length, Record record) {
            boolean firstBytes = record.messages.isEmpty() && !record.continued;
            if (firstBytes && inFrame()) {
                record.continued = true;
            }
            this.record = record;
            feed(bytes, offset, length);
        }

        @Override
        void headerBegins(int type) {
            record.messages.add(type);
        }
    }
}
