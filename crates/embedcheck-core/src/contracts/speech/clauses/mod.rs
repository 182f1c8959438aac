//! The speech contract's clause families, one module each: `shape` (SPS-), `errors`
//! (SPE-).

use crate::clauses::Check;

mod errors;
mod shape;

/// The speech contract's checks, family by family.
pub(crate) fn checks() -> Vec<Check> {
    [shape::checks(), errors::checks()]
        .into_iter()
        .flatten()
        .collect()
}
