//! In-memory transport: one byte pipe per direction. Each side's [`Endpoint`] reads from one
//! and writes to the other, and reading an empty pipe says `WouldBlock`, so every library runs
//! in its non-blocking mode and the driver decides who goes next. No syscalls, no scheduler.
//!
//! Every call a library makes on its endpoint is counted per side ([`Link::calls`]). A link
//! made with [`Link::with_io_log`] also records each call in order, and parses the TLS record
//! headers in what each side writes ([`IoEvent`]): the `io` measure. Without the log, a call
//! costs two counter increments more than a bare copy, and allocates nothing.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::net::Socket;
use crate::{heap, Side};

/// Bytes in flight in one direction. The buffer's capacity is kept between handshakes, so a
/// warmed-up pipe allocates nothing.
#[derive(Default)]
struct Pipe {
    bytes: Vec<u8>,
    start: usize,
    /// Every byte ever written into this pipe.
    written: u64,
    /// Write calls into this pipe (by its writer) and read calls on it (by its reader),
    /// reads that would block included, and of those the reads that found nothing.
    write_calls: u64,
    read_calls: u64,
    empty_reads: u64,
}

impl Pipe {
    fn pending(&self) -> &[u8] {
        &self.bytes[self.start..]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.bytes.len() {
            self.bytes.clear();
            self.start = 0;
        }
    }
}

/// The transport calls one side has made so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// Read calls, those that found nothing (would block) included.
    pub reads: u64,
    /// Read calls that found nothing (on a socket: EAGAIN).
    pub empty_reads: u64,
    pub writes: u64,
    /// Bytes written, record headers included.
    pub bytes_written: u64,
}

/// The two pipes between a client and a server.
#[derive(Default)]
pub struct Link {
    to_server: Rc<RefCell<Pipe>>,
    to_client: Rc<RefCell<Pipe>>,
    log: Option<Rc<RefCell<IoLog>>>,
}

impl Link {
    pub fn new() -> Self {
        Self::default()
    }

    /// A link that records every call of both sides in order, and the records each writes.
    pub fn with_io_log() -> Self {
        Self { log: Some(Rc::default()), ..Self::default() }
    }

    pub fn client(&self) -> Endpoint {
        Endpoint(Io::Memory(MemoryEnd {
            rx: self.to_client.clone(),
            tx: self.to_server.clone(),
            side: Side::Client,
            log: self.log.clone(),
        }))
    }

    pub fn server(&self) -> Endpoint {
        Endpoint(Io::Memory(MemoryEnd {
            rx: self.to_server.clone(),
            tx: self.to_client.clone(),
            side: Side::Server,
            log: self.log.clone(),
        }))
    }

    /// Bytes written and not yet read, in both directions.
    pub fn in_flight(&self) -> usize {
        self.to_server.borrow().pending().len() + self.to_client.borrow().pending().len()
    }

    /// Bytes written so far by the client and by the server.
    pub fn written(&self) -> (u64, u64) {
        (self.to_server.borrow().written, self.to_client.borrow().written)
    }

    /// The calls `side` has made on its endpoints of this link so far.
    pub fn calls(&self, side: Side) -> Calls {
        let (tx, rx) = (self.pipe_from(side).borrow(), self.pipe_to(side).borrow());
        Calls { reads: rx.read_calls, empty_reads: rx.empty_reads, writes: tx.write_calls, bytes_written: tx.written }
    }

    /// Takes what `side` has written and nobody has read yet (to relay it to another process).
    pub fn take_written_by(&self, side: Side) -> Vec<u8> {
        let mut pipe = self.pipe_from(side).borrow_mut();
        let taken = pipe.pending().to_vec();
        let n = taken.len();
        pipe.consume(n);
        taken
    }

    /// Hands `bytes` to `side` as if its peer had written them (relayed from another process).
    /// They count as written by the peer, though not as a call.
    pub fn deliver_to(&self, side: Side, bytes: &[u8]) {
        let mut pipe = self.pipe_to(side).borrow_mut();
        pipe.bytes.extend_from_slice(bytes);
        pipe.written += bytes.len() as u64;
    }

    /// Bytes waiting for `side` to read.
    pub fn unread_by(&self, side: Side) -> usize {
        self.pipe_to(side).borrow().pending().len()
    }

    fn pipe_from(&self, side: Side) -> &Rc<RefCell<Pipe>> {
        match side {
            Side::Client => &self.to_server,
            Side::Server => &self.to_client,
        }
    }

    fn pipe_to(&self, side: Side) -> &Rc<RefCell<Pipe>> {
        match side {
            Side::Client => &self.to_client,
            Side::Server => &self.to_server,
        }
    }

    /// Drops whatever is in flight (between two independent connections). The record streams
    /// the IO log parses start again too; what it recorded stays until [`Link::take_io_log`].
    pub fn clear(&self) {
        for pipe in [&self.to_server, &self.to_client] {
            let mut pipe = pipe.borrow_mut();
            let len = pipe.bytes.len();
            pipe.start = len;
            pipe.consume(0);
        }
        if let Some(log) = &self.log {
            log.borrow_mut().restart_streams();
        }
    }

    /// Marks the start of a phase of the connection (e.g. "application data") in the IO log;
    /// the next write starts a new flight. Nothing without a log.
    pub fn phase(&self, name: &str) {
        if let Some(log) = &self.log {
            let mut log = log.borrow_mut();
            log.events.push(IoEvent::Phase { name: name.to_string() });
            log.new_flight = true;
        }
    }

    /// What the IO log recorded since it began or was last taken (empty without a log). The
    /// log goes on recording, with flights counted from 1 and the record streams started
    /// afresh: take it between connections.
    pub fn take_io_log(&self) -> Vec<IoEvent> {
        match &self.log {
            None => Vec::new(),
            Some(log) => {
                let mut log = log.borrow_mut();
                let events = std::mem::take(&mut log.events);
                *log = IoLog::default();
                events
            }
        }
    }
}

/// One side's transport, handed to the library: its end of an in-memory [`Link`], or a real
/// socket ([`crate::net`]). Either way reading nothing says `WouldBlock`, so every library runs
/// in its non-blocking mode.
pub struct Endpoint(Io);

enum Io {
    Memory(MemoryEnd),
    Socket(Rc<Socket>),
}

impl Endpoint {
    /// An endpoint on a connected non-blocking socket; the caller keeps `socket` to wait on it
    /// and to read its counts.
    pub fn socket(socket: Rc<Socket>) -> Self {
        Self(Io::Socket(socket))
    }

    /// The socket under this endpoint, if it has one.
    pub fn as_socket(&self) -> Option<&Socket> {
        match &self.0 {
            Io::Socket(socket) => Some(socket),
            Io::Memory(_) => None,
        }
    }
}

/// One side's view of the link.
struct MemoryEnd {
    rx: Rc<RefCell<Pipe>>,
    tx: Rc<RefCell<Pipe>>,
    side: Side,
    log: Option<Rc<RefCell<IoLog>>>,
}

impl MemoryEnd {
    /// Appends `bufs` to the peer's pipe as one write call. The pipe grows inside the
    /// library's call, but its memory is the harness's: charged to neither side.
    fn write_all_of<'b>(&mut self, bufs: impl Iterator<Item = &'b [u8]> + Clone) -> usize {
        heap::untagged(|| {
            let mut tx = self.tx.borrow_mut();
            let mut n = 0;
            for buf in bufs.clone() {
                tx.bytes.extend_from_slice(buf);
                n += buf.len();
            }
            tx.written += n as u64;
            tx.write_calls += 1;
            if let Some(log) = &self.log {
                log.borrow_mut().write(self.side, n, bufs);
            }
            n
        })
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut rx = self.rx.borrow_mut();
        rx.read_calls += 1;
        let pending = rx.pending();
        let got = match pending.is_empty() {
            true => {
                rx.empty_reads += 1;
                None
            }
            false => {
                let n = pending.len().min(buf.len());
                buf[..n].copy_from_slice(&pending[..n]);
                rx.consume(n);
                Some(n)
            }
        };
        if let Some(log) = &self.log {
            heap::untagged(|| log.borrow_mut().events.push(IoEvent::Read { side: self.side, want: buf.len(), got }));
        }
        got.ok_or_else(|| io::ErrorKind::WouldBlock.into())
    }
}

impl Read for Endpoint {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.0 {
            Io::Memory(end) => end.read(buf),
            Io::Socket(socket) => socket.read(buf),
        }
    }
}

impl Write for Endpoint {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.0 {
            Io::Memory(end) => Ok(end.write_all_of(std::iter::once(buf))),
            Io::Socket(socket) => socket.write_all_of(&[io::IoSlice::new(buf)]),
        }
    }

    // One call carries all buffers, as writev does: the default would split it into one call each.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match &mut self.0 {
            Io::Memory(end) => Ok(end.write_all_of(bufs.iter().map(|b| &**b))),
            Io::Socket(socket) => socket.write_all_of(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One transport call or mark in an IO log, in the order they happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum IoEvent {
    /// A read call: it asked for `want` bytes and got `got`, or None when nothing was there
    /// (would block).
    Read { side: Side, want: usize, got: Option<usize> },
    /// A write call (one `write` or one `write_vectored`) of `len` bytes, in flight `flight`,
    /// with the records whose header began in it.
    Write { side: Side, len: usize, flight: u32, records: Vec<Record> },
    /// The driver began a phase of the connection, e.g. "application data".
    Phase { name: String },
}

/// A TLS record, from its 5-byte header: content type, (legacy) version, length.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub content_type: u8,
    /// The length of its body (the header's length field); the record is 5 bytes more.
    pub length: u16,
    /// For a plaintext handshake record: the type of each handshake message that begins in it
    /// (handshake message headers are parsed as a stream across records). None for other
    /// records, encrypted ones included.
    pub messages: Option<Vec<u8>>,
    /// For a plaintext handshake record: it begins with the rest of a message begun in an
    /// earlier record.
    #[serde(default)]
    pub continued: bool,
}

impl Record {
    pub const CHANGE_CIPHER_SPEC: u8 = 20;
    pub const ALERT: u8 = 21;
    pub const HANDSHAKE: u8 = 22;
    pub const APPLICATION_DATA: u8 = 23;

    /// The record's size on the wire.
    pub fn wire_len(&self) -> usize {
        5 + usize::from(self.length)
    }

    /// How many handshake messages have bytes in this plaintext record (0 if none is visible).
    pub fn messages_touched(&self) -> usize {
        self.messages.as_ref().map_or(0, |m| m.len() + usize::from(self.continued))
    }

    pub fn content_type_name(&self) -> String {
        match self.content_type {
            Self::CHANGE_CIPHER_SPEC => "change_cipher_spec".into(),
            Self::ALERT => "alert".into(),
            Self::HANDSHAKE => "handshake".into(),
            Self::APPLICATION_DATA => "application_data".into(),
            other => format!("content_type_{other}"),
        }
    }
}

/// The name of a handshake message type (RFC 8446 and RFC 5246).
pub fn handshake_message_name(message: u8) -> String {
    match message {
        0 => "hello_request".into(),
        1 => "client_hello".into(),
        2 => "server_hello".into(),
        4 => "new_session_ticket".into(),
        5 => "end_of_early_data".into(),
        8 => "encrypted_extensions".into(),
        11 => "certificate".into(),
        12 => "server_key_exchange".into(),
        13 => "certificate_request".into(),
        14 => "server_hello_done".into(),
        15 => "certificate_verify".into(),
        16 => "client_key_exchange".into(),
        20 => "finished".into(),
        22 => "certificate_status".into(),
        24 => "key_update".into(),
        other => format!("handshake_type_{other}"),
    }
}

/// The calls of both sides in order, and each side's record stream.
///
/// A flight is what one side writes before its peer writes: it begins with a side's first
/// write after the peer's (or after a [`Link::phase`] mark), so a side's consecutive writes
/// are one flight however many calls they take. Flights are numbered from 1 per connection.
#[derive(Default)]
struct IoLog {
    events: Vec<IoEvent>,
    flight: u32,
    last_writer: Option<Side>,
    /// A phase began since the last write.
    new_flight: bool,
    client: RecordStream,
    server: RecordStream,
}

impl IoLog {
    fn write<'b>(&mut self, side: Side, len: usize, bufs: impl Iterator<Item = &'b [u8]>) {
        if self.new_flight || self.last_writer != Some(side) {
            self.flight += 1;
            self.new_flight = false;
            self.last_writer = Some(side);
        }
        let index = self.events.len();
        self.events.push(IoEvent::Write { side, len, flight: self.flight, records: Vec::new() });
        let stream = match side {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        };
        for buf in bufs {
            stream.parse(buf, index, &mut self.events);
        }
    }

    fn restart_streams(&mut self) {
        self.client = RecordStream::default();
        self.server = RecordStream::default();
        self.new_flight = true;
    }
}

/// Parses one side's written bytes as TLS records, across write calls: a header may straddle
/// two writes, and a record's body spans as many as it takes. Each record is filed under the
/// write its header began in; plaintext handshake records also get the handshake messages that
/// begin in them (message headers are a stream of their own, across records).
#[derive(Default)]
struct RecordStream {
    header: [u8; 5],
    header_len: usize,
    /// The write event the pending header began in.
    header_event: usize,
    /// Body bytes of the current record still to come.
    body_left: usize,
    /// The current record: (write event, index in its records), if its body is being parsed
    /// for handshake messages.
    current: Option<(usize, usize)>,
    /// This side has sent change_cipher_spec or application_data: its handshake records from
    /// then on are encrypted (TLS 1.2 Finished; everything after TLS 1.3's hellos).
    encrypted: bool,
    message_header: [u8; 4],
    message_header_len: usize,
    message_left: usize,
}

impl RecordStream {
    fn parse(&mut self, mut bytes: &[u8], event: usize, events: &mut [IoEvent]) {
        while !bytes.is_empty() {
            if self.body_left == 0 {
                if self.header_len == 0 {
                    self.header_event = event;
                }
                let n = (5 - self.header_len).min(bytes.len());
                self.header[self.header_len..self.header_len + n].copy_from_slice(&bytes[..n]);
                self.header_len += n;
                bytes = &bytes[n..];
                if self.header_len == 5 {
                    self.header_len = 0;
                    self.begin_record(events);
                }
            } else {
                let n = self.body_left.min(bytes.len());
                if let Some((event, index)) = self.current {
                    self.parse_messages(&bytes[..n], Self::record(events, event, index));
                }
                self.body_left -= n;
                bytes = &bytes[n..];
            }
        }
    }

    fn begin_record(&mut self, events: &mut [IoEvent]) {
        let [content_type, _, _, high, low] = self.header;
        let length = u16::from_be_bytes([high, low]);
        let plaintext_handshake = content_type == Record::HANDSHAKE && !self.encrypted;
        if matches!(content_type, Record::CHANGE_CIPHER_SPEC | Record::APPLICATION_DATA) {
            self.encrypted = true;
        }
        let record = Record { content_type, length, messages: plaintext_handshake.then(Vec::new), continued: false };
        let IoEvent::Write { records, .. } = &mut events[self.header_event] else {
            unreachable!("headers begin in writes")
        };
        records.push(record);
        self.current = plaintext_handshake.then_some((self.header_event, records.len() - 1));
        self.body_left = usize::from(length);
    }

    fn record(events: &mut [IoEvent], event: usize, index: usize) -> &mut Record {
        let IoEvent::Write { records, .. } = &mut events[event] else { unreachable!("records are filed under writes") };
        &mut records[index]
    }

    /// Handshake message headers (type, 24-bit length) in plaintext handshake record bodies.
    fn parse_messages(&mut self, mut body: &[u8], record: &mut Record) {
        let first_bytes = record.messages.as_ref().is_some_and(|m| m.is_empty()) && !record.continued;
        if first_bytes && (self.message_left > 0 || self.message_header_len > 0) {
            record.continued = true;
        }
        while !body.is_empty() {
            if self.message_left > 0 {
                let n = self.message_left.min(body.len());
                self.message_left -= n;
                body = &body[n..];
                continue;
            }
            if self.message_header_len == 0 {
                record.messages.get_or_insert_with(Vec::new).push(body[0]);
            }
            let n = (4 - self.message_header_len).min(body.len());
            self.message_header[self.message_header_len..self.message_header_len + n].copy_from_slice(&body[..n]);
            self.message_header_len += n;
            body = &body[n..];
            if self.message_header_len == 4 {
                self.message_header_len = 0;
                let [_, a, b, c] = self.message_header;
                self.message_left = u32::from_be_bytes([0, a, b, c]) as usize;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_cross_in_order_and_an_empty_pipe_would_block() {
        let link = Link::new();
        let (mut client, mut server) = (link.client(), link.server());
        client.write_all(b"hello ").unwrap();
        client.write_all(b"server").unwrap();
        assert_eq!(link.in_flight(), 12);
        assert_eq!(server.write_vectored(&[io::IoSlice::new(b"ab"), io::IoSlice::new(b"cde")]).unwrap(), 5);
        assert_eq!(link.written(), (12, 5));
        let mut greeting = [0u8; 5];
        client.read_exact(&mut greeting).unwrap();
        assert_eq!(&greeting, b"abcde");

        let mut buf = [0u8; 5];
        assert_eq!(server.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf, b"hello");
        let mut rest = [0u8; 64];
        assert_eq!(server.read(&mut rest).unwrap(), 7);
        assert_eq!(&rest[..7], b" server");
        assert_eq!(server.read(&mut rest).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        assert_eq!(client.read(&mut rest).unwrap_err().kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn relaying_takes_one_side_s_bytes_and_delivers_them_to_the_other() {
        let (near, far) = (Link::new(), Link::new());
        near.client().write_all(b"hello").unwrap();
        let flight = near.take_written_by(crate::Side::Client);
        assert_eq!((flight.as_slice(), near.in_flight()), (&b"hello"[..], 0));
        far.deliver_to(crate::Side::Server, &flight);
        assert_eq!(far.unread_by(crate::Side::Server), 5);
        let mut buf = [0u8; 8];
        assert_eq!(far.server().read(&mut buf).unwrap(), 5);
        assert_eq!((&buf[..5], far.unread_by(crate::Side::Server)), (&b"hello"[..], 0));
    }

    #[test]
    fn clear_drops_what_is_in_flight() {
        let link = Link::new();
        link.client().write_all(b"abc").unwrap();
        link.server().write_all(b"de").unwrap();
        link.clear();
        assert_eq!(link.in_flight(), 0);
        let mut buf = [0u8; 4];
        assert_eq!(link.server().read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
    }
    /// A record of `content_type` around `body`, as a TLS 1.2 record header frames it.
    fn record(content_type: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![content_type, 3, 3];
        bytes.extend_from_slice(&(body.len() as u16).to_be_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    /// A handshake message of `message_type` with a body of `len` zeros.
    fn message(message_type: u8, len: usize) -> Vec<u8> {
        let mut bytes = vec![message_type];
        bytes.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
        bytes.resize(4 + len, 0);
        bytes
    }

    fn writes(events: &[IoEvent]) -> Vec<(Side, usize, u32, Vec<Record>)> {
        events
            .iter()
            .filter_map(|e| match e {
                IoEvent::Write { side, len, flight, records } => Some((*side, *len, *flight, records.clone())),
                _ => None,
            })
            .collect()
    }

    fn opaque(content_type: u8, length: u16) -> Record {
        Record { content_type, length, messages: None, continued: false }
    }

    #[test]
    fn every_call_is_counted_without_a_log_and_a_read_of_an_empty_pipe_is_a_call() {
        let link = Link::new();
        let (mut client, mut server) = (link.client(), link.server());
        let mut buf = [0u8; 16];
        assert_eq!(server.read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        assert_eq!(client.write_vectored(&[io::IoSlice::new(b"ab"), io::IoSlice::new(b"cde")]).unwrap(), 5);
        client.write_all(b"f").unwrap();
        assert_eq!(server.read(&mut buf).unwrap(), 6);
        assert_eq!(link.calls(Side::Client), Calls { reads: 0, empty_reads: 0, writes: 2, bytes_written: 6 });
        assert_eq!(link.calls(Side::Server), Calls { reads: 2, empty_reads: 1, writes: 0, bytes_written: 0 });
        // Without a log, nothing is recorded.
        link.phase("application data");
        assert!(link.take_io_log().is_empty());
    }

    #[test]
    fn a_vectored_write_of_two_records_is_one_call_with_two_records() {
        let link = Link::with_io_log();
        let (hello, ccs) = (record(22, &message(2, 40)), record(20, &[1]));
        assert_eq!(link.server().write_vectored(&[io::IoSlice::new(&hello), io::IoSlice::new(&ccs)]).unwrap(), 55);
        assert_eq!(link.calls(Side::Server), Calls { reads: 0, empty_reads: 0, writes: 1, bytes_written: 55 });
        let events = link.take_io_log();
        let server_hello = Record { content_type: 22, length: 44, messages: Some(vec![2]), continued: false };
        assert_eq!(writes(&events), vec![(Side::Server, 55, 1, vec![server_hello, opaque(20, 1)])]);
    }

    #[test]
    fn a_record_header_split_across_two_writes_belongs_to_the_write_it_began_in() {
        let link = Link::with_io_log();
        let mut client = link.client();
        let data = record(23, &[7u8; 30]);
        client.write_all(&data[..3]).unwrap();
        client.write_all(&data[3..20]).unwrap();
        // The rest of the body, then a whole alert and the first byte of the next header.
        let mut tail = data[20..].to_vec();
        tail.extend(record(21, &[1, 0]));
        tail.push(23);
        client.write_all(&tail).unwrap();
        client.write_all(&[3, 3, 0, 1, 9]).unwrap();
        let written = writes(&link.take_io_log());
        let records: Vec<_> = written.iter().map(|w| (w.1, w.3.clone())).collect();
        assert_eq!(
            records,
            vec![(3, vec![opaque(23, 30)]), (17, vec![]), (23, vec![opaque(21, 2), opaque(23, 1)]), (5, vec![])]
        );
        assert!(written.iter().all(|w| w.2 == 1), "one side's consecutive writes are one flight");
    }

    #[test]
    fn reads_are_logged_with_what_they_asked_and_got() {
        let link = Link::with_io_log();
        let (mut client, mut server) = (link.client(), link.server());
        let mut buf = [0u8; 5];
        assert!(server.read(&mut buf).is_err());
        client.write_all(&record(23, &[0; 3])).unwrap();
        assert_eq!(server.read(&mut buf).unwrap(), 5);
        assert_eq!(server.read(&mut [0u8; 100]).unwrap(), 3);
        let reads: Vec<_> = link.take_io_log().into_iter().filter(|e| matches!(e, IoEvent::Read { .. })).collect();
        assert_eq!(
            reads,
            vec![
                IoEvent::Read { side: Side::Server, want: 5, got: None },
                IoEvent::Read { side: Side::Server, want: 5, got: Some(5) },
                IoEvent::Read { side: Side::Server, want: 100, got: Some(3) },
            ]
        );
    }

    #[test]
    fn handshake_messages_are_parsed_across_records_until_the_side_encrypts() {
        let link = Link::with_io_log();
        let mut server = link.server();
        // Server hello and certificate in one record; a certificate too long for one record
        // goes on in the next, which also holds server_hello_done (empty body).
        let mut first = message(2, 10);
        first.extend(message(11, 3000));
        let (head, rest) = first.split_at(1000);
        server.write_all(&record(22, head)).unwrap();
        let mut second = rest.to_vec();
        second.extend(message(14, 0));
        server.write_all(&record(22, &second)).unwrap();
        // After change_cipher_spec, handshake records are encrypted: no messages are read.
        server.write_all(&[record(20, &[1]), record(22, &[0xaa; 40])].concat()).unwrap();
        let written = writes(&link.take_io_log());
        let records: Vec<Record> = written.into_iter().flat_map(|w| w.3).collect();
        assert_eq!(
            records,
            vec![
                Record { content_type: 22, length: 1000, messages: Some(vec![2, 11]), continued: false },
                Record { content_type: 22, length: second.len() as u16, messages: Some(vec![14]), continued: true },
                opaque(20, 1),
                opaque(22, 40),
            ]
        );
        assert_eq!(records.iter().map(Record::messages_touched).collect::<Vec<_>>(), [2, 2, 0, 0]);
    }

    #[test]
    fn a_flight_is_what_one_side_writes_until_the_peer_writes_or_a_phase_begins() {
        let link = Link::with_io_log();
        let (mut client, mut server) = (link.client(), link.server());
        client.write_all(b"a").unwrap();
        client.write_all(b"b").unwrap();
        let _ = server.read(&mut [0u8; 8]);
        server.write_all(b"c").unwrap();
        client.write_all(b"d").unwrap();
        link.phase("application data");
        client.write_all(b"e").unwrap();
        let events = link.take_io_log();
        let flights: Vec<(Side, u32)> = writes(&events).iter().map(|w| (w.0, w.2)).collect();
        use Side::{Client, Server};
        assert_eq!(flights, [(Client, 1), (Client, 1), (Server, 2), (Client, 3), (Client, 4)]);
        assert!(events.contains(&IoEvent::Phase { name: "application data".into() }));
        // Taking the log starts the count again.
        client.write_all(b"f").unwrap();
        assert_eq!(writes(&link.take_io_log())[0].2, 1);
    }
}
