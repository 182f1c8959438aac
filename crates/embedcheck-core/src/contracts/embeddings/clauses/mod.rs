//! The embeddings contract's clause families, one module each.

use crate::clauses::Check;
use crate::http::Reply;
use crate::verdict::Verdict;

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

/// The float vectors of a 200 answer, or the verdict to return when there are none:
/// skip when the server did not answer 200 (another clause judges that), fail when
/// a 200 carries no usable vectors.
pub(super) fn vectors_or_verdict(reply: &Reply, expected: usize) -> Result<Vec<Vec<f64>>, Verdict> {
    if !reply.is_success() {
        return Err(Verdict::skip(format!(
            "the probe was answered {}, not 200; nothing to judge",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    let vectors = reply.float_vectors().map_err(|why| {
        Verdict::fail(format!("200 without usable vectors: {why}")).with(&reply.exchange)
    })?;
    if vectors.len() != expected {
        return Err(Verdict::fail(format!(
            "200 with {} items for {expected} inputs",
            vectors.len()
        ))
        .with(&reply.exchange));
    }
    Ok(vectors)
}
