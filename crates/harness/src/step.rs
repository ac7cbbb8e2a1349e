//! How the two sides of a connection take turns: the one handshake loop that every driver
//! uses, in one process or split across two, for one connection or N in lockstep.
//!
//! A side is given a turn only when it has something to do: the client's first turn (it
//! speaks first), or bytes from its peer waiting to be read. That is what an application on a
//! non-blocking socket does, calling into its library when the socket is readable. So every
//! read a library makes is one it would make on a socket: a read that finds nothing is the
//! library asking again after it consumed what was there, never the harness waking a side that
//! has nothing to read.

use crate::error::failed;
use crate::{heap, Connection, Error, Link, Side};

/// A handshake that needs more turns per side than this is stuck, not slow.
pub(crate) const MAX_HANDSHAKE_STEPS: usize = 64;

/// Whatever is taken around each call into a side's library: its clock, its heap tag, or
/// nothing.
pub trait Meter {
    fn call<T>(&mut self, side: Side, call: impl FnOnce() -> T) -> T;
}

/// No clock, no tag.
pub struct Unmetered;

impl Meter for Unmetered {
    #[inline(always)]
    fn call<T>(&mut self, _side: Side, call: impl FnOnce() -> T) -> T {
        call()
    }
}

/// Each side's allocations charged to it (the heap measure).
pub struct HeapTags;

impl Meter for HeapTags {
    #[inline(always)]
    fn call<T>(&mut self, side: Side, call: impl FnOnce() -> T) -> T {
        heap::tagged(side, call)
    }
}

/// The two sides of one or more connections as the handshake loop sees them.
pub trait Turns {
    /// Gives `side` its turn: steps each of its connections that has something to do. Returns
    /// whether every connection of `side` has completed its handshake.
    fn turn(&mut self, side: Side) -> Result<bool, Error>;

    /// Bytes written by either side and not yet read, over all connections.
    fn unread(&self) -> usize;
}

/// Turns the client, then the server, round after round, until both have completed every
/// handshake and read everything the other sent (session tickets arrive after the handshake).
pub fn complete_handshakes(turns: &mut impl Turns) -> Result<(), Error> {
    let mut rounds_since_done = 0;
    for _ in 0..MAX_HANDSHAKE_STEPS {
        let client_done = turns.turn(Side::Client)?;
        let server_done = turns.turn(Side::Server)?;
        if client_done && server_done {
            match turns.unread() {
                0 => return Ok(()),
                // Bytes nobody reads would be work left out of the measurement (e.g. session
                // tickets a stack sends although resumption is off).
                n if rounds_since_done == 2 => {
                    return Err(Error::Gate(format!("both sides completed the handshake, and {n} bytes stay unread")));
                }
                _ => rounds_since_done += 1,
            }
        }
    }
    Err(Error::Other(format!(
        "the handshake did not complete in {MAX_HANDSHAKE_STEPS} turns per side ({} bytes unread)",
        turns.unread()
    )))
}

/// Where one connection pair stands.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    client_started: bool,
    client_done: bool,
    server_done: bool,
}

/// One side's connection: given its turn when it has something to do; remembers whether it
/// has completed.
#[inline(always)]
pub(crate) fn turn_one<M: Meter>(
    conn: &mut impl Connection,
    side: Side,
    link: &Link,
    progress: &mut Progress,
    meter: &mut M,
) -> Result<bool, Error> {
    let (started, done) = match side {
        Side::Client => (std::mem::replace(&mut progress.client_started, true), &mut progress.client_done),
        // The server's first turn comes with the client's hello.
        Side::Server => (true, &mut progress.server_done),
    };
    if !started || link.unread_by(side) > 0 {
        *done = meter.call(side, || conn.handshake()).map_err(failed(side, "handshake"))?;
    }
    Ok(*done)
}

/// Client and server connections in one process, pair `i` on `links[i]`.
pub struct InProcess<'a, A, B, M> {
    pub clients: &'a mut [A],
    pub servers: &'a mut [B],
    pub links: &'a [Link],
    /// One per pair, all default at the start.
    pub progress: &'a mut [Progress],
    pub meter: &'a mut M,
}

impl<A: Connection, B: Connection, M: Meter> Turns for InProcess<'_, A, B, M> {
    fn turn(&mut self, side: Side) -> Result<bool, Error> {
        let mut all_done = true;
        for (i, (link, progress)) in self.links.iter().zip(self.progress.iter_mut()).enumerate() {
            all_done &= match side {
                Side::Client => turn_one(&mut self.clients[i], side, link, progress, self.meter)?,
                Side::Server => turn_one(&mut self.servers[i], side, link, progress, self.meter)?,
            };
        }
        Ok(all_done)
    }

    fn unread(&self) -> usize {
        self.links.iter().map(Link::in_flight).sum()
    }
}

/// One client and one server on `link`, through their handshakes.
pub fn handshake_pair<M: Meter>(
    client: &mut impl Connection,
    server: &mut impl Connection,
    link: &Link,
    meter: &mut M,
) -> Result<(), Error> {
    let mut turns = InProcess {
        clients: std::slice::from_mut(client),
        servers: std::slice::from_mut(server),
        links: std::slice::from_ref(link),
        progress: &mut [Progress::default()],
        meter,
    };
    complete_handshakes(&mut turns)
}
