//! The baselines: plain TCP with no TLS, as a [`Connection`] so that the network driver runs it
//! like any stack. `tcp` passes each application write to the socket; `tcp-buffered` collects
//! them in a user-space buffer written when it fills and once per response (`flush`).

use std::io::{ErrorKind, Read, Write};

use crate::{Connection, Endpoint, LibError, Negotiated};

/// The user-space buffer of `tcp-buffered`, as large as a typical server's output buffer.
pub const PLAIN_BUFFER_SIZE: usize = 64 * 1024;

/// The ids of the baselines.
pub const PLAIN_STACKS: &[&str] = &["tcp", "tcp-buffered"];

/// Which baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlainTcp {
    pub buffered: bool,
}

impl PlainTcp {
    /// The baseline called `id`, if `id` names one.
    pub fn from_id(id: &str) -> Option<Self> {
        match id {
            "tcp" => Some(Self { buffered: false }),
            "tcp-buffered" => Some(Self { buffered: true }),
            _ => None,
        }
    }

    pub fn id(self) -> &'static str {
        match self.buffered {
            false => "tcp",
            true => "tcp-buffered",
        }
    }

    pub fn library(self) -> String {
        match self.buffered {
            false => "plain TCP (a write per application write)".into(),
            true => {
                format!("plain TCP (a {} KiB user-space buffer, written once per response)", PLAIN_BUFFER_SIZE / 1024)
            }
        }
    }

    pub fn connection(self, io: Endpoint) -> PlainConnection {
        PlainConnection {
            io,
            buffer: self.buffered.then(|| Vec::with_capacity(PLAIN_BUFFER_SIZE)),
            early: [0; 256],
            early_len: 0,
        }
    }
}

pub struct PlainConnection {
    io: Endpoint,
    buffer: Option<Vec<u8>>,
    /// Bytes that `peer_closed` read while looking for the end of the stream; `receive` returns
    /// them first.
    early: [u8; 256],
    early_len: usize,
}

impl Connection for PlainConnection {
    fn handshake(&mut self) -> Result<bool, LibError> {
        Ok(true)
    }

    fn send(&mut self, data: &[u8]) -> Result<(), LibError> {
        let Some(buffer) = &mut self.buffer else {
            return self.io.write_all(data).map_err(LibError::new);
        };
        if buffer.len() + data.len() > PLAIN_BUFFER_SIZE {
            self.flush()?;
        }
        match data.len() >= PLAIN_BUFFER_SIZE {
            true => self.io.write_all(data).map_err(LibError::new),
            false => {
                self.buffer.as_mut().expect("buffered").extend_from_slice(data);
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> Result<(), LibError> {
        match &mut self.buffer {
            Some(buffer) if !buffer.is_empty() => {
                let written = self.io.write_all(buffer).map_err(LibError::new);
                buffer.clear();
                written
            }
            _ => Ok(()),
        }
    }

    fn receive(&mut self, buf: &mut [u8]) -> Result<usize, LibError> {
        if self.early_len > 0 {
            let n = self.early_len.min(buf.len());
            buf[..n].copy_from_slice(&self.early[..n]);
            self.early.copy_within(n..self.early_len, 0);
            self.early_len -= n;
            return Ok(n);
        }
        match self.io.read(buf) {
            Ok(n) => Ok(n),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(LibError::new(e)),
        }
    }

    fn negotiated(&self) -> Result<Negotiated, LibError> {
        Err(LibError::new("plain TCP negotiates nothing"))
    }

    /// Writes what is buffered, then ends the byte stream.
    fn close(&mut self) -> Result<(), LibError> {
        self.flush()?;
        let socket = self.io.as_socket().ok_or_else(|| LibError::new("plain TCP runs on a socket only"))?;
        socket.shutdown_write().map_err(LibError::context("shutdown"))
    }

    /// True once the peer has ended its byte stream. Bytes that arrive first are kept for
    /// `receive`.
    fn peer_closed(&mut self) -> Result<bool, LibError> {
        if self.io.as_socket().is_some_and(|s| s.at_eof()) {
            return Ok(self.early_len == 0);
        }
        if self.early_len == self.early.len() {
            return Ok(false);
        }
        match self.io.read(&mut self.early[self.early_len..]) {
            Ok(0) => Ok(self.early_len == 0),
            Ok(n) => {
                self.early_len += n;
                Ok(false)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(LibError::new(e)),
        }
    }
}
