//! A library's transport on a real TCP socket: every call it makes is one syscall, counted.
//!
//! The socket is non-blocking. A read that finds nothing says `WouldBlock` (EAGAIN), as the
//! in-memory transport does, and the driver waits for the socket with `poll`. A write hands
//! every byte to the kernel before it returns: when the socket's send buffer is full, it waits
//! for room (poll for POLLOUT), bounded by a time limit. The adapters' `send` expects the
//! transport to take all it is given, as the in-memory one does.

use std::cell::Cell;
use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The syscalls made on one socket, and what went through it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketCounts {
    /// read(2) calls, those that found nothing (EAGAIN) and end of stream included.
    pub reads: u64,
    /// Reads that found nothing (EAGAIN); also in `reads`.
    pub empty_reads: u64,
    /// write(2) and writev(2) calls, partial and EAGAIN ones included.
    pub writes: u64,
    /// poll(2) calls made inside a write, waiting for room in the send buffer.
    pub write_waits: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// TLS records in what was written (from the record headers); 0 for plain TCP.
    pub records_written: u64,
    /// The other syscalls on this socket: socket, connect or accept4, setsockopt, getsockopt,
    /// shutdown, close.
    pub other: u64,
}

impl SocketCounts {
    pub fn add(&mut self, other: &SocketCounts) {
        self.reads += other.reads;
        self.empty_reads += other.empty_reads;
        self.writes += other.writes;
        self.write_waits += other.write_waits;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.records_written += other.records_written;
        self.other += other.other;
    }

    /// Every syscall counted here.
    pub fn syscalls(&self) -> u64 {
        self.reads + self.writes + self.write_waits + self.other
    }
}

/// A connected non-blocking TCP socket with its counts.
pub struct Socket {
    stream: TcpStream,
    counts: Cell<SocketCounts>,
    /// Counts TLS records in what is written; None for plain TCP.
    records: Option<Cell<RecordCounter>>,
    /// A read returned 0: the peer closed its side.
    eof: Cell<bool>,
    /// A read found the connection reset: the peer closed it at once (SO_LINGER 0).
    reset: Cell<bool>,
    /// A write waits at most this long for room in the send buffer.
    write_timeout: Duration,
}

impl Socket {
    /// `stream` must be non-blocking already (tlsbench makes its sockets so from the start).
    pub fn new(stream: TcpStream, tls: bool, write_timeout: Duration) -> Self {
        Self {
            stream,
            counts: Cell::default(),
            records: tls.then(|| Cell::new(RecordCounter::default())),
            eof: Cell::new(false),
            reset: Cell::new(false),
            write_timeout,
        }
    }

    pub fn counts(&self) -> SocketCounts {
        self.counts.get()
    }

    /// Whether a read has found the end of the stream.
    pub fn at_eof(&self) -> bool {
        self.eof.get()
    }

    /// Whether the peer has closed the connection: its end of stream, or a reset.
    pub fn peer_gone(&self) -> bool {
        self.eof.get() || self.reset.get()
    }

    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Counts `n` syscalls made on this socket outside its reads and writes (see
    /// [`SocketCounts::other`]).
    pub fn count_other(&self, n: u64) {
        self.update(|c| c.other += n);
    }

    /// Ends this side's byte stream (the peer reads end of stream): plain TCP's close_notify.
    pub fn shutdown_write(&self) -> io::Result<()> {
        self.count_other(1);
        self.stream.shutdown(std::net::Shutdown::Write)
    }

    fn update(&self, change: impl FnOnce(&mut SocketCounts)) {
        let mut counts = self.counts.get();
        change(&mut counts);
        self.counts.set(counts);
    }

    pub(crate) fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let result = (&self.stream).read(buf);
        self.update(|c| {
            c.reads += 1;
            match &result {
                Ok(n) => c.bytes_read += *n as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => c.empty_reads += 1,
                Err(_) => {}
            }
        });
        match &result {
            Ok(0) => self.eof.set(!buf.is_empty()),
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => self.reset.set(true),
            _ => {}
        }
        result
    }

    /// Writes all of `bufs`: one writev for the lot (a write for one buffer), and, only when
    /// the kernel takes part of it, one write per remaining piece, waiting for room in between.
    pub(crate) fn write_all_of(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let first = match bufs {
            [one] => self.write_call(|s| s.write(one)),
            _ => self.write_call(|s| s.write_vectored(bufs)),
        };
        let mut skip = match first {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(e) => return Err(e),
        };
        let mut left = skip;
        for buf in bufs {
            let n = left.min(buf.len());
            self.count_records(&buf[..n]);
            left -= n;
        }
        if skip == total {
            return Ok(total);
        }
        let deadline = Instant::now() + self.write_timeout;
        for buf in bufs {
            let skipped = skip.min(buf.len());
            skip -= skipped;
            let mut rest: &[u8] = &buf[skipped..];
            while !rest.is_empty() {
                match self.write_call(|s| s.write(rest)) {
                    Ok(n) => {
                        self.count_records(&rest[..n]);
                        rest = &rest[n..];
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_for_room(deadline)?,
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(total)
    }

    /// One write or writev syscall.
    fn write_call(&self, call: impl FnOnce(&mut &TcpStream) -> io::Result<usize>) -> io::Result<usize> {
        let result = call(&mut &self.stream);
        let written = *result.as_ref().unwrap_or(&0) as u64;
        self.update(|c| {
            c.writes += 1;
            c.bytes_written += written;
        });
        result
    }

    fn count_records(&self, written: &[u8]) {
        if let Some(records) = &self.records {
            let mut counter = records.get();
            counter.feed(written);
            records.set(counter);
            self.update(|c| c.records_written = counter.records);
        }
    }

    fn wait_for_room(&self, deadline: Instant) -> io::Result<()> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the peer read nothing for {} s while this side was writing", self.write_timeout.as_secs()),
            ));
        }
        self.update(|c| c.write_waits += 1);
        let mut fd = libc::pollfd { fd: self.stream.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        let ready = unsafe { libc::poll(&mut fd, 1, left.as_millis().clamp(1, i32::MAX as u128) as i32) };
        match ready {
            -1 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        }
    }
}

/// Counts TLS records in a stream of written bytes from their 5-byte headers, across writes.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordCounter {
    /// Header bytes seen of the next record (0 to 4).
    header_len: u8,
    /// The header's two length bytes as far as seen.
    length: [u8; 2],
    /// Body bytes of the current record still to come.
    body_left: usize,
    pub records: u64,
}

impl RecordCounter {
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.body_left > 0 {
                let n = self.body_left.min(bytes.len());
                self.body_left -= n;
                bytes = &bytes[n..];
                continue;
            }
            // Header bytes 3 and 4 are the body's length.
            if self.header_len >= 3 {
                self.length[usize::from(self.header_len) - 3] = bytes[0];
            }
            self.header_len += 1;
            bytes = &bytes[1..];
            if self.header_len == 5 {
                self.header_len = 0;
                self.body_left = usize::from(u16::from_be_bytes(self.length));
                self.records += 1;
            }
        }
    }
}

impl Read for &Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Socket::read(self, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_counted_across_writes_whatever_the_split() {
        // Three records: 5+3, 5+0, 5+300 bytes.
        let mut stream = vec![23, 3, 3, 0, 3, 1, 2, 3, 21, 3, 3, 0, 0, 23, 3, 3, 1, 44];
        stream.extend(std::iter::repeat_n(7u8, 300));
        for split in [1, 2, 4, 5, 7, 100, stream.len()] {
            let mut counter = RecordCounter::default();
            for piece in stream.chunks(split) {
                counter.feed(piece);
            }
            assert_eq!(counter.records, 3, "split every {split} bytes");
            assert_eq!((counter.header_len, counter.body_left), (0, 0), "ends on a record boundary");
        }
    }
}
