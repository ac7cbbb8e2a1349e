//! `serve` and `load`: the network mode's two ends, over TCP, of a TLS stack or plain TCP.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::net::plain::{PlainTcp, PLAIN_STACKS};
use crate::net::{LoadSettings, NetReply, NetReport, ServeSettings, Serving, TlsPeer, TlsServer};
use crate::{Error, Pki, Scenario, Side, Stack};

use super::args::{LoadArgs, NetArgs, ServeArgs};
use super::family::{listed_ids, Family, StackVisitor};

/// Set by SIGINT or SIGTERM: the server stops accepting and finishes what is in flight.
static STOP_SERVING: AtomicBool = AtomicBool::new(false);

extern "C" fn stop_serving(_: libc::c_int) {
    STOP_SERVING.store(true, Ordering::SeqCst);
}

/// What one end of the network mode runs: a plain TCP baseline, or a TLS stack of this runner
/// with its scenario and certificates.
enum NetTarget {
    Plain(PlainTcp),
    Tls(Scenario, Pki),
}

/// The network mode's target, checked.
fn net_setup(args: &NetArgs) -> Result<NetTarget, NetReply> {
    match (PlainTcp::from_id(&args.stack), &args.scenario) {
        (Some(_), Some(scenario)) => Err(NetReply::Unsupported {
            reason: format!("{} is plain TCP: it has no TLS handshake, so no scenario ({scenario})", args.stack),
        }),
        (Some(plain), None) => Ok(NetTarget::Plain(plain)),
        (None, None) => Err(NetReply::Failed {
            reason: format!("{} is a TLS stack: name its handshake with --scenario", args.stack),
        }),
        (None, Some(scenario)) => {
            crate::net::check_kind(scenario).map_err(|e| NetReply::Unsupported { reason: e.to_string() })?;
            let data_dir = args.data_dir.clone().unwrap_or_else(crate::pki::default_data_dir);
            let pki =
                Pki::load_or_generate(&data_dir, &[scenario.key]).map_err(|reason| NetReply::Failed { reason })?;
            Ok(NetTarget::Tls(*scenario, pki))
        }
    }
}

/// Runs `visitor` with the TLS stack called `id`.
fn with_net_stack<F: Family, V: StackVisitor<Output = Result<NetReport, NetReply>>>(
    id: &str,
    visitor: V,
) -> Result<NetReport, NetReply> {
    F::with_stack(id, visitor).unwrap_or_else(|| {
        Err(NetReply::Failed {
            reason: format!(
                "stack `{id}` is not in this runner (it has: {}, {})",
                listed_ids::<F>(),
                PLAIN_STACKS.join(", ")
            ),
        })
    })
}

/// The reply for what one end measured, named by its scenario.
fn net_reply(outcome: Result<NetReport, NetReply>, scenario: Option<Scenario>) -> NetReply {
    match outcome {
        Ok(mut report) => {
            report.scenario = scenario.map(|s| s.name());
            report.build = Some(crate::build::this().name);
            NetReply::Ok(report)
        }
        Err(reply) => reply,
    }
}

pub(super) fn serve<F: Family>(args: &ServeArgs, replies: &mut File) -> NetReply {
    let target = match net_setup(&args.net) {
        Ok(setup) => setup,
        Err(reply) => return reply,
    };
    let listener = match std::net::TcpListener::bind(args.listen) {
        Ok(listener) => listener,
        Err(e) => return NetReply::Failed { reason: format!("listening on {}: {e}", args.listen) },
    };
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(signal, stop_serving as extern "C" fn(libc::c_int) as libc::sighandler_t) };
    }
    let settings = ServeSettings {
        workers: args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32)),
        page: args.response,
        io_timeout: Duration::from_millis(args.net.io_timeout_ms),
    };
    let listening = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let announce = |replies: &mut File, stack: String, library: String| -> Result<(), NetReply> {
        let serving = Serving { listening: listening.clone(), stack, library, workers: settings.workers };
        let line = serde_json::to_string(&serving).expect("serializable");
        writeln!(replies, "{line}")
            .and_then(|()| replies.flush())
            .map_err(|e| NetReply::Failed { reason: format!("writing the reply: {e}") })
    };
    match target {
        NetTarget::Plain(plain) => {
            let outcome = announce(replies, plain.id().into(), plain.library());
            net_reply(outcome.map(|()| crate::net::serve(|| plain, listener, &settings, &STOP_SERVING)), None)
        }
        NetTarget::Tls(scenario, pki) => {
            let announce = &mut |stack, library| announce(replies, stack, library);
            let visitor = ServeStack { scenario: &scenario, pki: &pki, listener, settings: &settings, announce };
            net_reply(with_net_stack::<F, _>(&args.net.stack, visitor), Some(scenario))
        }
    }
}

struct ServeStack<'a> {
    scenario: &'a Scenario,
    pki: &'a Pki,
    listener: std::net::TcpListener,
    settings: &'a ServeSettings,
    announce: &'a mut dyn FnMut(String, String) -> Result<(), NetReply>,
}

impl StackVisitor for ServeStack<'_> {
    type Output = Result<NetReport, NetReply>;
    fn visit<T: Stack>(self, stack: &T) -> Self::Output {
        let unsupported = |e: Error| NetReply::Unsupported { reason: e.to_string() };
        stack.capabilities().check(stack.id(), self.scenario).map_err(unsupported)?;
        let config = stack
            .server_config(self.scenario, self.pki)
            .map_err(|e| NetReply::Failed { reason: format!("server config: {e}") })?;
        (self.announce)(stack.id().to_string(), stack.library())?;
        let make_peer = || TlsServer(TlsPeer::new(stack, &config, Side::Server, self.scenario));
        Ok(crate::net::serve(make_peer, self.listener, self.settings, &STOP_SERVING))
    }
}

pub(super) fn load<F: Family>(args: &LoadArgs) -> NetReply {
    let target = match net_setup(&args.net) {
        Ok(setup) => setup,
        Err(reply) => return reply,
    };
    let settings = LoadSettings {
        connect: args.connect,
        connections: args.connections,
        duration: args.duration.map(Duration::from_secs_f64),
        concurrency: args.concurrency,
        page: args.response,
        io_timeout: Duration::from_millis(args.net.io_timeout_ms),
    };
    match target {
        NetTarget::Plain(plain) => net_reply(Ok(crate::net::load(&plain, &settings)), None),
        NetTarget::Tls(scenario, pki) => {
            let visitor = LoadStack { scenario: &scenario, pki: &pki, settings: &settings };
            net_reply(with_net_stack::<F, _>(&args.net.stack, visitor), Some(scenario))
        }
    }
}

struct LoadStack<'a> {
    scenario: &'a Scenario,
    pki: &'a Pki,
    settings: &'a LoadSettings,
}

impl StackVisitor for LoadStack<'_> {
    type Output = Result<NetReport, NetReply>;
    fn visit<T: Stack>(self, stack: &T) -> Self::Output {
        let unsupported = |e: Error| NetReply::Unsupported { reason: e.to_string() };
        stack.capabilities().check(stack.id(), self.scenario).map_err(unsupported)?;
        // One session to resume for each connection in flight.
        let in_flight = self.settings.concurrency.max(1) as usize;
        let config = stack
            .client_config_for(self.scenario, self.pki, in_flight)
            .map_err(|e| NetReply::Failed { reason: format!("client config: {e}") })?;
        Ok(crate::net::load(&TlsPeer::new(stack, &config, Side::Client, self.scenario), self.settings))
    }
}
