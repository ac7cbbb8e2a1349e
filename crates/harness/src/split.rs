//! Split-process pairs: each side in its own runner process, with its own in-memory transport.
//! Between steps the bytes each side wrote are relayed to the other over a socket, outside both
//! clocks. The client side decides when to go on and when to stop, so both processes always do
//! the same iterations; each reports only its own side's numbers.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use aws_lc_rs::digest::{Context as Sha256, SHA256};

use crate::driver::{
    receive_all, side_values, transfer_payload, Clock, SampleSpec, TRANSFER_MIN_WRITES, TRANSFER_WRITE_SIZE,
};
use crate::error::failed;
use crate::gate::{self, Gates, Tally};
use crate::protocol::SampleReport;
use crate::step::{complete_handshakes, turn_one, Meter, Progress, Turns, Unmetered};
use crate::{Connection, Error, Kind, LibError, Link, Measure, Pki, Scenario, Side, Stack};

/// Measures this process's side of one sample; the peer process runs the other side.
pub fn sample_side<T: Stack>(
    stack: &T,
    side: Side,
    scenario: &Scenario,
    pki: &Pki,
    spec: &SampleSpec,
    peer: UnixStream,
) -> Result<SampleReport, Error> {
    crate::driver::check_measure(spec.measure(), scenario)?;
    stack.capabilities().check(stack.id(), scenario)?;
    let mut relay = Relay { peer, side };
    let (link, gates) = (Link::new(), Gates::default());
    let outcome = match side {
        Side::Client => {
            let config = stack.client_config(scenario, pki).map_err(failed(side, "config"))?;
            let mut local =
                Local { relay: &mut relay, link, scenario, gates: &gates, open: |io| stack.new_client(&config, io) };
            local.run(spec)
        }
        Side::Server => {
            let config = stack.server_config(scenario, pki).map_err(failed(side, "config"))?;
            let mut local =
                Local { relay: &mut relay, link, scenario, gates: &gates, open: |io| stack.new_server(&config, io) };
            local.run(spec)
        }
    };
    // Tell the peer why we stop, so that it reports the cause rather than a broken socket.
    let (iterations, clock) = outcome.inspect_err(|e| {
        let _ = relay.send(&Message::Abort(e.to_string()));
    })?;
    let values = side_values(spec, side, scenario.kind, iterations, &clock);
    let (client_library, server_library) = match side {
        Side::Client => (stack.library(), String::new()),
        Side::Server => (String::new(), stack.library()),
    };
    Ok(SampleReport {
        client_library,
        server_library,
        iterations,
        values,
        negotiated: gates.negotiated(),
        allocator: None,
        threads: Vec::new(),
        build: None,
        cpu_speed: None,
    })
}

/// The `rss` measure of memory-N, one side per process: the process's peak resident memory,
/// and its growth per connection while N connections do their handshakes in lockstep with the
/// peer process's N and stay open. One process per side, since a process has one peak.
pub fn memory_side<T: Stack>(
    stack: &T,
    side: Side,
    scenario: &Scenario,
    pki: &Pki,
    peer: UnixStream,
) -> Result<SampleReport, Error> {
    crate::driver::check_measure(Measure::Rss, scenario)?;
    stack.capabilities().check(stack.id(), scenario)?;
    let n = scenario.kind.connections().expect("rss applies to memory-N kinds only");
    let (mut relay, gates) = (Relay { peer, side }, Gates::default());
    let outcome = match side {
        Side::Client => {
            let config = stack.client_config(scenario, pki).map_err(failed(side, "config"))?;
            held_open(&mut relay, scenario, &gates, n, |io| stack.new_client(&config, io))
        }
        Side::Server => {
            let config = stack.server_config(scenario, pki).map_err(failed(side, "config"))?;
            held_open(&mut relay, scenario, &gates, n, |io| stack.new_server(&config, io))
        }
    };
    let values = outcome.inspect_err(|e| {
        let _ = relay.send(&Message::Abort(e.to_string()));
    })?;
    let (client_library, server_library) = match side {
        Side::Client => (stack.library(), String::new()),
        Side::Server => (String::new(), stack.library()),
    };
    Ok(SampleReport {
        client_library,
        server_library,
        iterations: n as u64,
        values,
        negotiated: gates.negotiated(),
        allocator: None,
        threads: Vec::new(),
        build: None,
        cpu_speed: None,
    })
}

/// One connection first (lazy initialisation), then the peak is reset and N are opened.
fn held_open<C: Connection>(
    relay: &mut Relay,
    scenario: &Scenario,
    gates: &Gates,
    n: usize,
    mut open: impl FnMut(crate::Endpoint) -> Result<C, LibError>,
) -> Result<Vec<crate::protocol::MetricValue>, Error> {
    use crate::protocol::{Metric, MetricValue};
    let side = relay.side;
    lockstep_with_peer(relay, scenario, gates, 1, &mut open)?;
    let before = crate::rss::reset_peak().map_err(Error::Other)?;
    let connections = lockstep_with_peer(relay, scenario, gates, n, &mut open)?;
    let peak = crate::rss::peak().map_err(Error::Other)?;
    drop(connections);
    let value = |metric, value| MetricValue { side, metric, value, seconds: 0.0 };
    Ok(vec![
        value(Metric::RssPeakBytes, peak as f64),
        value(Metric::RssPerConnectionBytes, (peak as f64 - before as f64) / n as f64),
    ])
}

/// N connections of this side, through their handshakes in lockstep with the peer's N
/// (see [`Split`]), their gates passed.
fn lockstep_with_peer<C: Connection>(
    relay: &mut Relay,
    scenario: &Scenario,
    gates: &Gates,
    n: usize,
    open: &mut impl FnMut(crate::Endpoint) -> Result<C, LibError>,
) -> Result<Vec<(C, Link)>, Error> {
    let side = relay.side;
    let links: Vec<Link> = (0..n).map(|_| Link::new()).collect();
    let mut connections = Vec::with_capacity(n);
    for link in &links {
        let end = match side {
            Side::Client => link.client(),
            Side::Server => link.server(),
        };
        connections.push(open(end).map_err(failed(side, "setup"))?);
    }
    let mut progress = vec![Progress::default(); n];
    complete_handshakes(&mut Split::new(relay, &mut connections, &links, &mut progress, &mut Unmetered))?;
    for conn in &connections {
        let negotiated = conn.negotiated().map_err(failed(side, "negotiated parameters"))?;
        gates.check(side, scenario, &negotiated, false)?;
    }
    Ok(connections.into_iter().zip(links).collect())
}

/// This process's side of N connection pairs, the other side being the peer process's. A turn
/// of this side steps its connections and sends the peer one flight per connection (with
/// whether all have completed and how many received bytes they left unread); the peer's turn
/// is its answer in kind, delivered to the same connections. Both processes see the same
/// messages, so both take the same decisions.
struct Split<'a, C, M> {
    relay: &'a mut Relay,
    connections: &'a mut [C],
    links: &'a [Link],
    progress: &'a mut [Progress],
    meter: &'a mut M,
    /// Bytes this side sent in its last turn, which the peer has not read yet.
    sent: usize,
    /// The bytes the peer left unread after its last turn.
    peer_unread: usize,
}

impl<'a, C: Connection, M: Meter> Split<'a, C, M> {
    fn new(
        relay: &'a mut Relay,
        connections: &'a mut [C],
        links: &'a [Link],
        progress: &'a mut [Progress],
        meter: &'a mut M,
    ) -> Self {
        Self { relay, connections, links, progress, meter, sent: 0, peer_unread: 0 }
    }
}

impl<C: Connection, M: Meter> Turns for Split<'_, C, M> {
    fn turn(&mut self, side: Side) -> Result<bool, Error> {
        if side == self.relay.side {
            let (mut flights, mut done) = (Vec::with_capacity(self.links.len()), true);
            for ((conn, link), progress) in self.connections.iter_mut().zip(self.links).zip(self.progress.iter_mut()) {
                done &= turn_one(conn, side, link, progress, self.meter)?;
                flights.push(link.take_written_by(side));
            }
            self.sent = flights.iter().map(Vec::len).sum();
            let unread = self.links.iter().map(|link| link.unread_by(side)).sum::<usize>() as u32;
            self.relay.send(&Message::Flights { flights, done, unread })?;
            return Ok(done);
        }
        match self.relay.recv()? {
            Message::Flights { flights, done, unread } if flights.len() == self.links.len() => {
                for (link, flight) in self.links.iter().zip(&flights) {
                    link.deliver_to(self.relay.side, flight);
                }
                (self.sent, self.peer_unread) = (0, unread as usize);
                Ok(done)
            }
            _ => Err(unexpected("one flight per connection")),
        }
    }

    fn unread(&self) -> usize {
        let mine: usize = self.links.iter().map(|link| link.unread_by(self.relay.side)).sum();
        mine + self.sent + self.peer_unread
    }
}

/// What the client tells the server to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Seed,
    Warmup,
    Measure,
    Stop,
}

/// One side's connection factory, its transport, and its relay to the peer.
struct Local<'a, F> {
    relay: &'a mut Relay,
    link: Link,
    scenario: &'a Scenario,
    gates: &'a Gates,
    open: F,
}

impl<C: Connection, F: FnMut(crate::Endpoint) -> Result<C, LibError>> Local<'_, F> {
    /// Returns the measured iterations and this side's clock.
    fn run(&mut self, spec: &SampleSpec) -> Result<(u64, Clock), Error> {
        match self.scenario.kind {
            Kind::Transfer => self.transfer(spec),
            _ => self.handshakes(spec),
        }
    }

    /// A seed handshake (full, unmeasured), warmup for as long as the client says, then
    /// measured handshakes until both sides' clocks have done their part.
    fn handshakes(&mut self, spec: &SampleSpec) -> Result<(u64, Clock), Error> {
        let side = self.relay.side;
        let (started, mut warmed) = (Instant::now(), 0);
        let (mut clock, mut iterations) = (spec.clock(side), 0);
        let mut proposed = Next::Seed;
        loop {
            let next = self.follow(proposed)?;
            if next == Next::Stop {
                return Ok((iterations, clock));
            }
            let mut scratch = Clock::default();
            let timed = if next == Next::Measure { &mut clock } else { &mut scratch };
            let conn = self.handshake(timed)?;
            let negotiated = conn.negotiated().map_err(failed(side, "negotiated parameters"))?;
            let resumed = self.scenario.kind.is_resumption() && next != Next::Seed;
            self.gates.check(side, self.scenario, &negotiated, resumed)?;
            timed.time(|| drop(conn));
            if next == Next::Warmup {
                warmed += 1;
            }
            // Only the client's proposal counts; the server follows what it is told.
            proposed = match next {
                Next::Measure => {
                    iterations += 1;
                    let both_reached = self.both_reached(spec.reached(&clock))?;
                    match spec.done(iterations, 0, both_reached) {
                        true => Next::Stop,
                        false => Next::Measure,
                    }
                }
                _ if spec.warming(started, warmed) => Next::Warmup,
                _ => Next::Measure,
            };
        }
    }

    /// After an unmeasured handshake, the server writes 16 KiB records and the client reads
    /// each, until at least 64 MiB moved and both clocks reached the minimum; the client checks
    /// length and digest against the server's tally.
    fn transfer(&mut self, spec: &SampleSpec) -> Result<(u64, Clock), Error> {
        let side = self.relay.side;
        let mut conn = self.handshake(&mut Clock::default())?;
        let negotiated = conn.negotiated().map_err(failed(side, "negotiated parameters"))?;
        self.gates.check(side, self.scenario, &negotiated, false)?;

        let payload = transfer_payload();
        let (mut offset, mut inbox) = (0, vec![0u8; TRANSFER_WRITE_SIZE]);
        let (mut tally, mut digest) = (0u64, Sha256::new(&SHA256));
        let (mut clock, mut writes) = (spec.clock(side), 0u64);
        let (started, mut warmed) = (Instant::now(), 0);
        let mut peer_reached = false;
        loop {
            let next = self.follow(match () {
                _ if spec.warming(started, warmed) => Next::Warmup,
                _ if spec.done(writes, TRANSFER_MIN_WRITES, spec.reached(&clock) && peer_reached) => Next::Stop,
                _ => Next::Measure,
            })?;
            if next == Next::Stop {
                break;
            }
            let mut scratch = Clock::default();
            let c = if next == Next::Measure { &mut clock } else { &mut scratch };
            match side {
                Side::Server => {
                    let data = &payload[offset..offset + TRANSFER_WRITE_SIZE];
                    offset = (offset + TRANSFER_WRITE_SIZE) % payload.len();
                    digest.update(data);
                    tally += data.len() as u64;
                    c.time(|| conn.send(data)).map_err(failed(side, "write"))?;
                    let reached = spec.reached(&clock);
                    let bytes = self.link.take_written_by(side);
                    self.relay.send(&Message::Flight { bytes, done: reached, unread: 0 })?;
                }
                Side::Client => {
                    let Message::Flight { bytes, done, .. } = self.relay.recv()? else {
                        return Err(unexpected("a flight of records"));
                    };
                    peer_reached = done;
                    self.link.deliver_to(side, &bytes);
                    let n = c.time(|| receive_all(&mut conn, &mut inbox)).map_err(failed(side, "read"))?;
                    digest.update(&inbox[..n]);
                    tally += n as u64;
                }
            }
            match next {
                Next::Measure => writes += 1,
                _ => warmed += 1,
            }
        }
        match side {
            Side::Server => {
                self.relay.send(&Message::Tally(Tally { bytes: tally, digest: sha256(digest) }))?;
                Ok((writes, clock))
            }
            Side::Client => {
                // Whatever the library still holds comes out now, outside the clock.
                loop {
                    let n = receive_all(&mut conn, &mut inbox).map_err(failed(side, "read"))?;
                    if n == 0 {
                        break;
                    }
                    digest.update(&inbox[..n]);
                    tally += n as u64;
                }
                let Message::Tally(sent) = self.relay.recv()? else { return Err(unexpected("the sender's tally")) };
                gate::check_transfer(sent, Tally { bytes: tally, digest: sha256(digest) })?;
                Ok((writes, clock))
            }
        }
    }

    /// One connection on an empty link, through its handshake in turns with the peer's.
    fn handshake(&mut self, clock: &mut Clock) -> Result<C, Error> {
        let side = self.relay.side;
        self.link.clear();
        let link_end = match side {
            Side::Client => self.link.client(),
            Side::Server => self.link.server(),
        };
        let mut conn = clock.time(|| (self.open)(link_end)).map_err(failed(side, "setup"))?;
        let links = std::slice::from_ref(&self.link);
        complete_handshakes(&mut Split::new(
            self.relay,
            std::slice::from_mut(&mut conn),
            links,
            &mut [Progress::default()],
            clock,
        ))?;
        Ok(conn)
    }

    /// The client's proposal becomes what both do next: the client sends it, the server
    /// receives it (its own proposal is ignored).
    fn follow(&mut self, proposed: Next) -> Result<Next, Error> {
        match self.relay.side {
            Side::Client => {
                self.relay.send(&Message::Next(proposed))?;
                Ok(proposed)
            }
            Side::Server => match self.relay.recv()? {
                Message::Next(next) => Ok(next),
                _ => Err(unexpected("what to do next")),
            },
        }
    }

    /// After a measured handshake: whether both clocks have reached the minimum. The server
    /// tells its own; only the client, which decides, learns both.
    fn both_reached(&mut self, mine: bool) -> Result<bool, Error> {
        match self.relay.side {
            Side::Server => {
                self.relay.send(&Message::Reached(mine))?;
                Ok(false)
            }
            Side::Client => match self.relay.recv()? {
                Message::Reached(theirs) => Ok(mine && theirs),
                _ => Err(unexpected("the server's clock")),
            },
        }
    }
}

/// The SHA-256 of what went through `digest`.
fn sha256(digest: Sha256) -> [u8; 32] {
    digest.finish().as_ref().try_into().expect("SHA-256 is 32 bytes")
}

fn unexpected(what: &str) -> Error {
    Error::Other(format!("the peer runner sent something else than {what}"))
}

/// The largest message between the two runners: memory-10000's flights of all its connections
/// in one message, with room to spare. A larger length is garbage, not a message.
const MAX_FRAME: u64 = 256 << 20;

/// The socket to the peer process, and which side this process is.
struct Relay {
    peer: UnixStream,
    side: Side,
}

/// What the two processes say to each other (docs/runner-protocol.md, "Framing"); public for
/// the protocol's test vectors (protocol/frames.json).
#[derive(Debug, PartialEq)]
pub enum Message {
    /// The bytes a side wrote in a step, whether it has completed its handshake (or, in a
    /// transfer, reached its minimum time), and how many received bytes it has not read.
    Flight {
        bytes: Vec<u8>,
        done: bool,
        unread: u32,
    },
    Next(Next),
    Reached(bool),
    /// The sender's count and SHA-256 of the plaintext of a transfer.
    Tally(Tally<[u8; 32]>),
    /// The peer stopped with this error.
    Abort(String),
    /// Memory-N: one flight per connection, whether all of the side's handshakes have
    /// completed, and how many received bytes it has not read, over all connections.
    Flights {
        flights: Vec<Vec<u8>>,
        done: bool,
        unread: u32,
    },
}

impl Relay {
    fn send(&mut self, message: &Message) -> Result<(), Error> {
        write_message(&mut self.peer, message)
    }

    fn recv(&mut self) -> Result<Message, Error> {
        read_message(&mut self.peer)
    }
}

/// Writes one message as a frame: its length (u32 LE), then the tag and the body.
pub fn write_message(peer: &mut impl Write, message: &Message) -> Result<(), Error> {
    let mut frame = Vec::new();
    match message {
        Message::Flight { bytes, done, unread } => {
            frame.push(0);
            frame.push(*done as u8);
            frame.extend_from_slice(&unread.to_le_bytes());
            frame.extend_from_slice(bytes);
        }
        Message::Next(next) => frame.extend_from_slice(&[1, *next as u8]),
        Message::Reached(reached) => frame.extend_from_slice(&[2, *reached as u8]),
        Message::Tally(tally) => {
            frame.push(3);
            frame.extend_from_slice(&tally.bytes.to_le_bytes());
            frame.extend_from_slice(&tally.digest);
        }
        Message::Abort(reason) => {
            frame.push(4);
            frame.extend_from_slice(reason.as_bytes());
        }
        Message::Flights { flights, done, unread } => {
            frame.push(5);
            frame.push(*done as u8);
            frame.extend_from_slice(&unread.to_le_bytes());
            for flight in flights {
                frame.extend_from_slice(&(flight.len() as u32).to_le_bytes());
                frame.extend_from_slice(flight);
            }
        }
    }
    let peer_gone = |e: io::Error| Error::Peer(format!("the peer runner went away: {e}"));
    peer.write_all(&(frame.len() as u32).to_le_bytes()).map_err(peer_gone)?;
    peer.write_all(&frame).map_err(peer_gone)
}

/// Reads the next frame and decodes it; an `Abort` is the error `the peer stopped: TEXT`, which,
/// like a peer gone, is [`Error::Peer`].
pub fn read_message(peer: &mut impl Read) -> Result<Message, Error> {
    let peer_gone = |e: io::Error| Error::Peer(format!("the peer runner went away: {e}"));
    let mut len = [0u8; 4];
    peer.read_exact(&mut len).map_err(peer_gone)?;
    let len = u32::from_le_bytes(len) as u64;
    if len > MAX_FRAME {
        return Err(Error::Other(format!(
            "the peer runner announced a message of {len} bytes, more than the {MAX_FRAME} any message can be"
        )));
    }
    // Read what arrives rather than allocate what was announced: a peer that dies midway
    // leaves a short frame, not a large buffer.
    let mut frame = Vec::new();
    peer.take(len).read_to_end(&mut frame).map_err(peer_gone)?;
    if frame.len() as u64 != len {
        return Err(Error::Peer(format!(
            "the peer runner went away in the middle of a message ({} of {len} bytes)",
            frame.len()
        )));
    }
    let garbled = || {
        let tag = frame.first().map_or("none".to_string(), |t| t.to_string());
        Error::Other(format!("the peer runner sent a garbled message (tag {tag}, {len} bytes)"))
    };
    let (&tag, rest) = frame.split_first().ok_or_else(garbled)?;
    let next = |b: u8| [Next::Seed, Next::Warmup, Next::Measure, Next::Stop].get(b as usize).copied();
    match (tag, rest) {
        (0, [done, u0, u1, u2, u3, bytes @ ..]) => Ok(Message::Flight {
            bytes: bytes.to_vec(),
            done: *done != 0,
            unread: u32::from_le_bytes([*u0, *u1, *u2, *u3]),
        }),
        (1, [n]) => Ok(Message::Next(next(*n).ok_or_else(garbled)?)),
        (2, [reached]) => Ok(Message::Reached(*reached != 0)),
        (3, rest) if rest.len() == 40 => Ok(Message::Tally(Tally {
            bytes: u64::from_le_bytes(rest[..8].try_into().expect("8 bytes")),
            digest: rest[8..].try_into().expect("32 bytes"),
        })),
        (4, reason) => Err(Error::Peer(format!("the peer stopped: {}", String::from_utf8_lossy(reason)))),
        (5, [done, u0, u1, u2, u3, body @ ..]) => {
            let (mut flights, mut rest) = (Vec::new(), body);
            while let [l0, l1, l2, l3, tail @ ..] = rest {
                let len = u32::from_le_bytes([*l0, *l1, *l2, *l3]) as usize;
                let flight = tail.get(..len).ok_or_else(garbled)?;
                flights.push(flight.to_vec());
                rest = &tail[len..];
            }
            if !rest.is_empty() {
                return Err(garbled());
            }
            Ok(Message::Flights { flights, done: *done != 0, unread: u32::from_le_bytes([*u0, *u1, *u2, *u3]) })
        }
        _ => Err(garbled()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_cross_the_socket_intact() {
        let (a, b) = UnixStream::pair().unwrap();
        let mut near = Relay { peer: a, side: Side::Client };
        let mut far = Relay { peer: b, side: Side::Server };
        let messages = [
            Message::Flight { bytes: b"\x16\x03\x01 hello".to_vec(), done: true, unread: 7 },
            Message::Flight { bytes: Vec::new(), done: false, unread: 0 },
            Message::Next(Next::Measure),
            Message::Reached(true),
            Message::Tally(Tally { bytes: 1 << 40, digest: [0xa5; 32] }),
            Message::Flights {
                flights: vec![b"\x16\x03\x01".to_vec(), Vec::new(), b"abc".to_vec()],
                done: true,
                unread: 3,
            },
            Message::Flights { flights: Vec::new(), done: false, unread: 0 },
        ];
        for message in &messages {
            near.send(message).unwrap();
            assert_eq!(&far.recv().unwrap(), message);
        }
        near.send(&Message::Abort("gate failed: x".into())).unwrap();
        assert_eq!(far.recv().unwrap_err().to_string(), "the peer stopped: gate failed: x");
        drop(near);
        assert!(far.recv().unwrap_err().to_string().starts_with("the peer runner went away"));
    }

    #[test]
    fn a_garbled_truncated_or_oversized_message_is_an_error_naming_what_was_wrong() {
        let receive = |raw: &[u8]| {
            let (mut a, b) = UnixStream::pair().unwrap();
            a.write_all(raw).unwrap();
            drop(a);
            Relay { peer: b, side: Side::Server }.recv().unwrap_err().to_string()
        };
        // Text where a length should be ("HTTP" is 1.4 GB): refused before reading on.
        assert_eq!(
            receive(b"HTTP/1.1 200 OK"),
            "the peer runner announced a message of 1347703880 bytes, more than the 268435456 any message can be"
        );
        let mut short = 100u32.to_le_bytes().to_vec();
        short.extend_from_slice(&[1, 2, 3]);
        assert_eq!(receive(&short), "the peer runner went away in the middle of a message (3 of 100 bytes)");
        let mut unknown = 2u32.to_le_bytes().to_vec();
        unknown.extend_from_slice(&[9, 0]);
        assert_eq!(receive(&unknown), "the peer runner sent a garbled message (tag 9, 2 bytes)");
        assert_eq!(receive(&0u32.to_le_bytes()), "the peer runner sent a garbled message (tag none, 0 bytes)");
    }
}
