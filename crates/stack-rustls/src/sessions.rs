//! A client session store with room for a TLS 1.3 ticket per connection in flight, for a client
//! config that many connections use at once (`Stack::client_config_for`). rustls's own in-memory
//! store keeps at most 8 tickets per server and uses each once, and the servers here send one per
//! handshake: above 8 threads sharing a config, a thread at times found none and did a full
//! handshake (12 threads did, 8 did not). This store keeps kx hints and TLS 1.2 sessions in
//! rustls's own store and the tickets itself, as many as the connections in flight, newest first,
//! each used once, as rustls's does.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use rustls::client::{ClientSessionMemoryCache, ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::NamedGroup;
use rustls_pki_types::ServerName;

#[derive(Debug)]
pub(crate) struct TicketPerConnection {
    /// Kx hints and TLS 1.2 sessions.
    others: ClientSessionMemoryCache,
    /// The TLS 1.3 tickets of one server, oldest first: the benchmark's clients connect to one.
    /// A ticket from another server replaces them.
    tickets: Mutex<Option<(ServerName<'static>, VecDeque<Tls13ClientSessionValue>)>>,
    /// How many tickets it keeps.
    room: usize,
}

impl TicketPerConnection {
    pub(crate) fn new(sessions: usize, in_flight: usize) -> Self {
        TicketPerConnection {
            others: ClientSessionMemoryCache::new(sessions),
            tickets: Mutex::new(None),
            room: in_flight,
        }
    }
}

impl ClientSessionStore for TicketPerConnection {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.others.set_kx_hint(server_name, group)
    }

    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.others.kx_hint(server_name)
    }

    fn set_tls12_session(&self, server_name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.others.set_tls12_session(server_name, value)
    }

    fn tls12_session(&self, server_name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.others.tls12_session(server_name)
    }

    fn remove_tls12_session(&self, server_name: &ServerName<'static>) {
        self.others.remove_tls12_session(server_name)
    }

    fn insert_tls13_ticket(&self, server_name: ServerName<'static>, value: Tls13ClientSessionValue) {
        let mut tickets = self.tickets.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut *tickets {
            Some((name, kept)) if *name == server_name => {
                if kept.len() == self.room {
                    kept.pop_front();
                }
                kept.push_back(value);
            }
            _ => {
                let mut kept = VecDeque::with_capacity(self.room);
                kept.push_back(value);
                *tickets = Some((server_name, kept));
            }
        }
    }

    fn take_tls13_ticket(&self, server_name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        match &mut *self.tickets.lock().unwrap_or_else(PoisonError::into_inner) {
            Some((name, kept)) if name == server_name => kept.pop_back(),
            _ => None,
        }
    }
}
