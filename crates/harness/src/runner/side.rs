//! `side`: one side of a split-process pair, the other side in the peer runner.

use std::os::unix::net::UnixStream;

use crate::driver::SampleSpec;
use crate::protocol::Reply;
use crate::{Error, Measure, Pki, Scenario, Side, Stack};

use super::args::SideArgs;
use super::family::{listed_ids, Family, StackVisitor};
use super::peer::peer_of;
use super::reply;

pub(super) fn side<F: Family>(args: &SideArgs) -> Reply {
    let peer = match peer_of(args) {
        Ok(peer) => peer,
        Err(reason) => return Reply::failed(reason),
    };
    let (pki, spec) = match args.settings.load(Some(args.role)) {
        Ok(loaded) => loaded,
        Err(reply) => return reply,
    };
    let measure = MeasureSide {
        side: args.role,
        peer_stack: &args.peer_stack,
        measure: args.settings.measure,
        scenario: &args.settings.scenario,
        pki: &pki,
        spec,
        peer,
    };
    match F::with_stack(&args.stack, measure) {
        Some(outcome) => reply(outcome),
        None => Reply::failed(format!("stack `{}` is not in this runner (it has: {})", args.stack, listed_ids::<F>())),
    }
}

struct MeasureSide<'a> {
    side: Side,
    peer_stack: &'a str,
    measure: Measure,
    scenario: &'a Scenario,
    pki: &'a Pki,
    spec: SampleSpec,
    peer: UnixStream,
}

impl StackVisitor for MeasureSide<'_> {
    type Output = Result<crate::protocol::SampleReport, Error>;
    fn visit<T: Stack>(self, stack: &T) -> Self::Output {
        // As `check_pair` does for its half: the stack's own capabilities first, then its limits
        // on its peers. The peer's runner checks the peer's.
        let capabilities = stack.capabilities();
        capabilities.check(stack.id(), self.scenario)?;
        capabilities.check_peer(self.side, self.peer_stack)?;
        if self.scenario.kind.context_side().is_some() {
            return Err(Error::Unsupported("context scenarios are measured in one process".into()));
        }
        match self.measure {
            Measure::Time | Measure::Instructions | Measure::Sync => {
                crate::split::sample_side(stack, self.side, self.scenario, self.pki, &self.spec, self.peer)
            }
            Measure::Rss => crate::split::memory_side(stack, self.side, self.scenario, self.pki, self.peer),
            other => Err(Error::Unsupported(format!("measure {other} is taken in one process, not split-process"))),
        }
    }
}
