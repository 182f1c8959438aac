//! The embeddings contract's clause families, one module each.

use crate::clauses::Check;

mod auth;
pub(crate) mod consistency;
mod dimensions;
mod encoding;
mod errors;
mod input;
mod over_length;
pub(crate) mod reference;
mod response_shape;
mod unknown_fields;
pub(crate) mod usage;

pub(crate) use unknown_fields::TEMPLATE_COSINE;

/// The embeddings contract's checks, family by family.
pub(crate) fn checks() -> Vec<Check> {
    [
        response_shape::checks(),
        input::checks(),
        usage::checks(),
        consistency::checks(),
        dimensions::checks(),
        unknown_fields::checks(),
        over_length::checks(),
        encoding::checks(),
        errors::checks(),
        auth::checks(),
        reference::checks(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
