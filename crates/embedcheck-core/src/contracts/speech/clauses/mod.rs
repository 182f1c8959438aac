//! The speech contract's clause families, one module each: `shape` (SPS-), `options`
//! (SPO-), `errors` (SPE-), `reference` (SPR-).

use crate::clauses::Check;

mod errors;
mod options;
mod reference;
mod shape;
pub(super) mod verdicts;

/// The speech contract's checks, family by family.
pub(crate) fn checks() -> Vec<Check> {
    [
        shape::checks(),
        options::checks(),
        errors::checks(),
        reference::checks(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
