//! `sample`: one sample of a pair in this process, on the main thread or as pairs on threads.

use crate::driver::{self, SampleSpec};
use crate::protocol::Reply;
use crate::{Contexts, Error, Measure, Pki, Scenario, Stack};

use super::args::SampleArgs;
use super::family::{with_pair, Family, PairVisitor};
use super::{check_pair, reply};

pub(super) fn sample<F: Family>(args: &SampleArgs) -> Reply {
    let (pki, spec) = match args.settings.load(None) {
        Ok(loaded) => loaded,
        Err(reply) => return reply,
    };
    let measure = MeasurePair {
        measure: args.settings.measure,
        scenario: &args.settings.scenario,
        pki: &pki,
        spec,
        threads: args.threads.map(|n| n as usize),
        contexts: args.contexts,
        cpus: args.cpus.clone().map(|list| list.0).unwrap_or_default(),
        data_dir: args.settings.data_dir.clone().unwrap_or_else(crate::pki::default_data_dir),
    };
    match with_pair::<F, _>(&args.client, &args.server, measure) {
        Ok(outcome) => reply(outcome),
        Err(reason) => Reply::failed(reason),
    }
}

struct MeasurePair<'a> {
    measure: Measure,
    scenario: &'a Scenario,
    pki: &'a Pki,
    spec: SampleSpec,
    threads: Option<usize>,
    contexts: Contexts,
    cpus: Vec<u32>,
    data_dir: std::path::PathBuf,
}

impl PairVisitor for MeasurePair<'_> {
    type Output = Result<crate::protocol::SampleReport, Error>;
    fn visit<C: Stack, S: Stack>(self, client: &C, server: &S) -> Self::Output {
        check_pair(client, server, self.scenario)?;
        driver::check_threads(self.measure, self.threads.unwrap_or(1))?;
        if self.scenario.kind.context_side().is_some() {
            return crate::context::sample(client, server, self.scenario, &self.data_dir, &self.spec, self.measure);
        }
        match (self.measure, self.threads) {
            // On threads of their own, one too: glibc's malloc gives the main thread's heap back
            // to the system (and not the heaps of other threads), which a library that allocates
            // over 128 KiB per connection pays for at every handshake (wolfSSL): one thread and N
            // are measured alike.
            (Measure::Time, Some(threads)) => driver::sample_threads(
                client,
                server,
                self.scenario,
                self.pki,
                &self.spec,
                threads,
                self.contexts,
                &self.cpus,
            ),
            (Measure::Time | Measure::Instructions | Measure::Sync, _) => {
                driver::sample(client, server, self.scenario, self.pki, &self.spec)
            }
            (Measure::Io, _) => crate::io::sample(client, server, self.scenario, self.pki),
            (Measure::Heap, _) => crate::memory::sample(client, server, self.scenario, self.pki),
            (Measure::Rss, _) => {
                Err(Error::Unsupported("measure rss of memory-N is taken one process per side (split-process)".into()))
            }
            (Measure::Net, _) => {
                Err(Error::Unsupported("measure net is taken over TCP, by the commands serve and load".into()))
            }
        }
    }
}
