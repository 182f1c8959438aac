//! The rerank contract's clause families, one module each: `shape` (RRS-), `scores`
//! (RRQ-), `limits` (RRL-), `dialects` (RRD-).

use crate::clauses::Check;

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
