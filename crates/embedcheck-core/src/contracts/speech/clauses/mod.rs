//! The speech contract's clause families, one module each: `shape` (SPS-).

use crate::clauses::Check;

mod shape;

/// The speech contract's checks, family by family.
pub(crate) fn checks() -> Vec<Check> {
    shape::checks()
}
