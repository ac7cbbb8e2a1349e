//! The `heap` measure, with both sides in one process: what each side's library allocates and
//! holds, from [`crate::heap`]'s accounting, which tags every allocation with the side whose
//! call made it. Connections are stepped as in the time driver, but no clock runs.

use crate::driver::{check_sample, receive_all};
use crate::error::failed;
use crate::gate::Gates;
use crate::heap::{self, Usage};
use crate::protocol::{Metric, MetricValue, SampleReport};
use crate::step::{complete_handshakes, HeapTags, InProcess, Progress, MAX_HANDSHAKE_STEPS};
use crate::{Connection, Error, Link, Measure, Pki, Scenario, Side, Stack};

/// The plaintext each side sends and receives in the after-transfer stage.
const TRANSFER_BYTES: usize = 16 * 1024;

/// One sample of the heap measure: the stages of one connection for handshake scenarios, or N
/// connections held open for memory-N.
pub fn sample<C: Stack, S: Stack>(
    client: &C,
    server: &S,
    scenario: &Scenario,
    pki: &Pki,
) -> Result<SampleReport, Error> {
    check_sample(client, server, scenario, Measure::Heap, 1)?;
    // One connection before the accounting starts: what a library allocates once per process
    // (its global state, lazily) is then charged to neither side.
    let warmup = Pair {
        client,
        server,
        client_config: client.client_config(scenario, pki).map_err(failed(Side::Client, "config"))?,
        server_config: server.server_config(scenario, pki).map_err(failed(Side::Server, "config"))?,
        scenario,
        gates: Gates::default(),
    };
    let (warm_client, warm_server, _link) = warmup.connect(false)?;
    warmup.close(warm_client, warm_server);
    drop(warmup);
    heap::enable().map_err(Error::Other)?;
    let client_config =
        heap::tagged(Side::Client, || client.client_config(scenario, pki)).map_err(failed(Side::Client, "config"))?;
    let server_config =
        heap::tagged(Side::Server, || server.server_config(scenario, pki)).map_err(failed(Side::Server, "config"))?;
    let pair = Pair { client, server, client_config, server_config, scenario, gates: Gates::default() };
    let (iterations, values) = match scenario.kind.connections() {
        Some(n) => (n as u64, pair.many(n)?),
        None => (1, pair.stages()?),
    };
    if heap::lost() > 0 {
        return Err(Error::Other(format!("the heap table overflowed: {} blocks were not counted", heap::lost())));
    }
    let negotiated = pair.gates.negotiated();
    Ok(SampleReport {
        client_library: client.library(),
        server_library: server.library(),
        iterations,
        values,
        negotiated,
        allocator: None,
        threads: Vec::new(),
        build: None,
        cpu_speed: None,
    })
}

struct Pair<'a, C: Stack, S: Stack> {
    client: &'a C,
    server: &'a S,
    client_config: C::ClientConfig,
    server_config: S::ServerConfig,
    scenario: &'a Scenario,
    gates: Gates,
}

/// Both sides' usage at one moment.
#[derive(Clone, Copy)]
struct Both {
    client: Usage,
    server: Usage,
}

impl Both {
    fn now() -> Both {
        Both { client: heap::usage(Side::Client), server: heap::usage(Side::Server) }
    }

    fn side(&self, side: Side) -> Usage {
        match side {
            Side::Client => self.client,
            Side::Server => self.server,
        }
    }

    fn reset_peaks() {
        heap::reset_peak(Side::Client);
        heap::reset_peak(Side::Server);
    }
}

/// Bytes now above then; negative when the side released more than it took.
fn grew(now: u64, then: u64) -> f64 {
    now as f64 - then as f64
}

impl<C: Stack, S: Stack> Pair<'_, C, S> {
    /// One connection pair through its stages: created and handshaken (peak, allocations,
    /// frees), idle (retained), after 16 KiB each way (after transfer). Two unmeasured
    /// connections first: the seed leaves the session a resumption needs, the second does every
    /// lazy initialisation, so that what is measured is the steady state.
    fn stages(&self) -> Result<Vec<MetricValue>, Error> {
        let resumed = self.scenario.kind.is_resumption();
        for resume in [false, resumed] {
            let (client, server, _link) = self.connect(resume)?;
            self.close(client, server);
        }
        let base = Both::now();
        Both::reset_peaks();
        let (mut client, mut server, link) = self.connect(resumed)?;
        let handshaken = Both::now();
        transfer(&mut server, &mut client, &link, Side::Server)?;
        transfer(&mut client, &mut server, &link, Side::Client)?;
        let transferred = Both::now();
        self.close(client, server);

        let mut values = Vec::new();
        for side in [Side::Client, Side::Server] {
            let (base, handshaken, transferred) = (base.side(side), handshaken.side(side), transferred.side(side));
            let value = |metric, value| MetricValue { side, metric, value, seconds: 0.0 };
            values.extend([
                value(Metric::HeapConfigBytes, base.held as f64),
                value(Metric::HeapPeakBytes, grew(handshaken.peak, base.held)),
                value(Metric::HeapRetainedBytes, grew(handshaken.held, base.held)),
                value(Metric::HeapAfterTransferBytes, grew(transferred.held, base.held)),
                value(Metric::AllocationsPerHandshake, (handshaken.allocations - base.allocations) as f64),
                value(Metric::FreesPerHandshake, (handshaken.frees - base.frees) as f64),
            ]);
        }
        Ok(values)
    }

    /// N connection pairs created, stepped through their handshakes in lockstep and held open;
    /// what each side holds per connection, at the end and at its peak.
    fn many(&self, n: usize) -> Result<Vec<MetricValue>, Error> {
        let (client, server, _link) = self.connect(false)?;
        self.close(client, server);

        // The harness's own vectors and links, made before the accounting starts to count.
        let links: Vec<Link> = (0..n).map(|_| Link::new()).collect();
        let mut progress = vec![Progress::default(); n];
        let mut clients = Vec::with_capacity(n);
        let mut servers = Vec::with_capacity(n);
        let base = Both::now();
        Both::reset_peaks();
        for link in &links {
            let c = heap::tagged(Side::Client, || self.client.new_client(&self.client_config, link.client()));
            clients.push(c.map_err(failed(Side::Client, "setup"))?);
            let s = heap::tagged(Side::Server, || self.server.new_server(&self.server_config, link.server()));
            servers.push(s.map_err(failed(Side::Server, "setup"))?);
        }
        lockstep(&mut clients, &mut servers, &links, &mut progress)?;
        let held = Both::now();
        for (client, server) in clients.iter().zip(&servers) {
            self.check(client, server, false)?;
        }
        let mut values = Vec::new();
        for side in [Side::Client, Side::Server] {
            let (base, held) = (base.side(side), held.side(side));
            let per_connection = |bytes: f64| bytes / n as f64;
            let value = |metric, value| MetricValue { side, metric, value, seconds: 0.0 };
            values.extend([
                value(Metric::HeapPerConnectionBytes, per_connection(grew(held.held, base.held))),
                value(Metric::HeapPeakPerConnectionBytes, per_connection(grew(held.peak, base.held))),
                value(Metric::AllocationsPerHandshake, per_connection((held.allocations - base.allocations) as f64)),
            ]);
        }
        for (client, server) in clients.into_iter().zip(servers) {
            self.close(client, server);
        }
        Ok(values)
    }

    /// A connection pair on a link of its own, through the handshake, its gates passed.
    fn connect(&self, resumed: bool) -> Result<(C::Client, S::Server, Link), Error> {
        let link = Link::new();
        let client = heap::tagged(Side::Client, || self.client.new_client(&self.client_config, link.client()));
        let server = heap::tagged(Side::Server, || self.server.new_server(&self.server_config, link.server()));
        let (mut clients, mut servers) =
            ([client.map_err(failed(Side::Client, "setup"))?], [server.map_err(failed(Side::Server, "setup"))?]);
        lockstep(&mut clients, &mut servers, std::slice::from_ref(&link), &mut [Progress::default()])?;
        let [client] = clients;
        let [server] = servers;
        self.check(&client, &server, resumed)?;
        Ok((client, server, link))
    }

    fn check(&self, client: &C::Client, server: &S::Server, resumed: bool) -> Result<(), Error> {
        let negotiated = client.negotiated().map_err(failed(Side::Client, "negotiated parameters"))?;
        self.gates.check(Side::Client, self.scenario, &negotiated, resumed)?;
        let negotiated = server.negotiated().map_err(failed(Side::Server, "negotiated parameters"))?;
        self.gates.check(Side::Server, self.scenario, &negotiated, resumed)
    }

    /// Each side frees its own connection.
    fn close(&self, client: C::Client, server: S::Server) {
        heap::tagged(Side::Client, || drop(client));
        heap::tagged(Side::Server, || drop(server));
    }
}

/// Turns every client, then every server, round after round, until all have completed and
/// every byte has been read (post-handshake messages such as tickets included).
fn lockstep<A: Connection, B: Connection>(
    clients: &mut [A],
    servers: &mut [B],
    links: &[Link],
    progress: &mut [Progress],
) -> Result<(), Error> {
    complete_handshakes(&mut InProcess { clients, servers, links, progress, meter: &mut HeapTags })
}

/// `from` sends 16 KiB, and `to` receives it whole and unchanged.
fn transfer(from: &mut impl Connection, to: &mut impl Connection, link: &Link, sender: Side) -> Result<(), Error> {
    let receiver = match sender {
        Side::Client => Side::Server,
        Side::Server => Side::Client,
    };
    let data: Vec<u8> = (0..TRANSFER_BYTES).map(|i| (i * 31 % 251) as u8).collect();
    let mut inbox = vec![0u8; TRANSFER_BYTES];
    heap::tagged(sender, || from.send(&data)).map_err(failed(sender, "write"))?;
    let mut filled = 0;
    for _ in 0..MAX_HANDSHAKE_STEPS {
        filled += heap::tagged(receiver, || receive_all(to, &mut inbox[filled..])).map_err(failed(receiver, "read"))?;
        if filled == TRANSFER_BYTES || link.unread_by(receiver) == 0 {
            break;
        }
    }
    if inbox[..filled] != data[..] {
        return Err(Error::Gate(format!(
            "{receiver} received {filled} bytes that differ from the {TRANSFER_BYTES} sent"
        )));
    }
    Ok(())
}
