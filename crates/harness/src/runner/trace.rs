//! `trace`: every transport call of both sides in one connection.

use crate::io::{IoTrace, TraceReply};
use crate::{Error, Pki, Scenario, Stack};

use super::args::TraceArgs;
use super::check_pair;
use super::family::{with_pair, Family, PairVisitor};

pub(super) fn trace<F: Family>(args: &TraceArgs) -> TraceReply {
    let data_dir = args.data_dir.clone().unwrap_or_else(crate::pki::default_data_dir);
    let pki = match Pki::load_or_generate(&data_dir, &[args.scenario.key]) {
        Ok(pki) => pki,
        Err(reason) => return TraceReply::Failed { reason },
    };
    match with_pair::<F, _>(&args.client, &args.server, TracePair { scenario: &args.scenario, pki: &pki }) {
        Ok(Ok(trace)) => TraceReply::Ok(IoTrace { build: Some(crate::build::this().name), ..trace }),
        Ok(Err(Error::Unsupported(reason))) => TraceReply::Unsupported { reason },
        Ok(Err(error)) => TraceReply::Failed { reason: error.to_string() },
        Err(reason) => TraceReply::Failed { reason },
    }
}

struct TracePair<'a> {
    scenario: &'a Scenario,
    pki: &'a Pki,
}

impl PairVisitor for TracePair<'_> {
    type Output = Result<IoTrace, Error>;
    fn visit<C: Stack, S: Stack>(self, client: &C, server: &S) -> Self::Output {
        check_pair(client, server, self.scenario)?;
        crate::io::trace(client, server, self.scenario, self.pki)
    }
}
