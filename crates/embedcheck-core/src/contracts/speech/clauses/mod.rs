//! The speech contract's clause families, one module each: `shape` (SPS-), `errors`
//! (SPE-), `reference` (SPR-).

use crate::clauses::Check;

mod errors;
mod reference;
mod shape;

/// The speech contract's checks, family by family.
pub(crate) fn checks() -> Vec<Check> {
    [shape::checks(), errors::checks(), reference::checks()]
        .into_iter()
        .flatten()
        .collect()
}
