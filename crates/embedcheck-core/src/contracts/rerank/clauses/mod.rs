//! The rerank contract's clause families, one module each: `shape` (RRS-), `scores`
//! (RRQ-), `limits` (RRL-), `dialects` (RRD-).

use crate::clauses::Check;
use crate::contracts::rerank::RerankDialect;
use crate::contracts::rerank::requests;
use crate::session::Session;
use crate::verdict::{Outcome, Verdict};

mod dialects;
mod limits;
mod scores;
pub(crate) mod shape;

/// The rerank contract's checks, family by family.
pub(crate) fn checks() -> Vec<Check> {
    [
        shape::checks(),
        scores::checks(),
        limits::checks(),
        dialects::checks(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A rerank clause's failure on a server of another dialect than Cohere's says so: the
/// server author reads which requests it was judged on.
pub(crate) fn in_the_servers_dialect(session: &Session, mut verdict: Verdict) -> Verdict {
    let dialect = requests::dialect(session);
    if verdict.outcome == Outcome::Fail
        && dialect != RerankDialect::Cohere
        && !verdict.names_its_dialect
    {
        verdict.reason = format!(
            "{} (judged in {} rerank dialect, {})",
            verdict.reason,
            dialect.described(),
            dialect.request()
        );
    }
    verdict
}
