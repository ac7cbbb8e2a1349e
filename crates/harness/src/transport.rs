//! In-memory transport: one byte pipe per direction. Each side's [`Endpoint`] reads from one
//! and writes to the other, and reading an empty pipe says `WouldBlock`, so every library runs
//! in its non-blocking mode and the driver decides who goes next. No syscalls, no scheduler.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::rc::Rc;

/// Bytes in flight in one direction. The buffer's capacity is kept between handshakes, so a
/// warmed-up pipe allocates nothing.
#[derive(Default)]
struct Pipe {
    bytes: Vec<u8>,
    start: usize,
    /// Every byte ever written into this pipe.
    written: u64,
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

/// The two pipes between a client and a server.
#[derive(Default)]
pub struct Link {
    to_server: Rc<RefCell<Pipe>>,
    to_client: Rc<RefCell<Pipe>>,
}

impl Link {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn client(&self) -> Endpoint {
        Endpoint { rx: self.to_client.clone(), tx: self.to_server.clone() }
    }

    pub fn server(&self) -> Endpoint {
        Endpoint { rx: self.to_server.clone(), tx: self.to_client.clone() }
    }

    /// Bytes written and not yet read, in both directions.
    pub fn in_flight(&self) -> usize {
        self.to_server.borrow().pending().len() + self.to_client.borrow().pending().len()
    }

    /// Bytes written so far by the client and by the server.
    pub fn written(&self) -> (u64, u64) {
        (self.to_server.borrow().written, self.to_client.borrow().written)
    }

    /// Takes what `side` has written and nobody has read yet (to relay it to another process).
    pub fn take_written_by(&self, side: crate::Side) -> Vec<u8> {
        let mut pipe = self.pipe_from(side).borrow_mut();
        let taken = pipe.pending().to_vec();
        let n = taken.len();
        pipe.consume(n);
        taken
    }

    /// Hands `bytes` to `side` as if its peer had written them (relayed from another process).
    /// They count as written by the peer.
    pub fn deliver_to(&self, side: crate::Side, bytes: &[u8]) {
        let peer = match side {
            crate::Side::Client => crate::Side::Server,
            crate::Side::Server => crate::Side::Client,
        };
        let mut pipe = self.pipe_from(peer).borrow_mut();
        pipe.bytes.extend_from_slice(bytes);
        pipe.written += bytes.len() as u64;
    }

    /// Bytes waiting for `side` to read.
    pub fn unread_by(&self, side: crate::Side) -> usize {
        match side {
            crate::Side::Client => self.to_client.borrow().pending().len(),
            crate::Side::Server => self.to_server.borrow().pending().len(),
        }
    }

    fn pipe_from(&self, side: crate::Side) -> &Rc<RefCell<Pipe>> {
        match side {
            crate::Side::Client => &self.to_server,
            crate::Side::Server => &self.to_client,
        }
    }

    /// Drops whatever is in flight (between two independent connections).
    pub fn clear(&self) {
        for pipe in [&self.to_server, &self.to_client] {
            let mut pipe = pipe.borrow_mut();
            let len = pipe.bytes.len();
            pipe.start = len;
            pipe.consume(0);
        }
    }
}

/// One side's view of the link, handed to the library as its transport.
pub struct Endpoint {
    rx: Rc<RefCell<Pipe>>,
    tx: Rc<RefCell<Pipe>>,
}

impl Read for Endpoint {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut rx = self.rx.borrow_mut();
        let pending = rx.pending();
        if pending.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = pending.len().min(buf.len());
        buf[..n].copy_from_slice(&pending[..n]);
        rx.consume(n);
        Ok(n)
    }
}

impl Write for Endpoint {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut tx = self.tx.borrow_mut();
        // The pipe's growth is the harness's memory, not the writing library's.
        crate::heap::untagged(|| tx.bytes.extend_from_slice(buf));
        tx.written += buf.len() as u64;
        Ok(buf.len())
    }

    // One call carries all buffers, as writev does: the default would split it into one call each.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let mut tx = self.tx.borrow_mut();
        let mut n = 0;
        for buf in bufs {
            crate::heap::untagged(|| tx.bytes.extend_from_slice(buf));
            n += buf.len();
        }
        tx.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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
        server.write_vectored(&[io::IoSlice::new(b"ab"), io::IoSlice::new(b"cde")]).unwrap();
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
}
