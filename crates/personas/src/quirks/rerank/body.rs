//! What the rerank quirks and the dialects read and write alike: a rerank request's
//! fields, the engine's refusal as over the model's limit, an error answer, and Hugging
//! Face's longest-first cut of a pair.

use crate::wire::{Answer, Incoming};
use serde_json::{Map, Value};

/// Whether the answer refuses an input as over the model's limit, in the engine's words
/// or TEI's ("`inputs` must have less than 512 tokens").
pub(super) fn refused_as_too_long(answer: &Answer) -> bool {
    answer.json().is_some_and(|body| {
        let said = body.to_string();
        said.contains("maximum context length") || said.contains("must have less than")
    })
}

/// Whether the request is a `POST` to a rerank route.
pub(in crate::quirks) fn is_rerank(request: &Incoming) -> bool {
    request.method == "POST" && request.path.ends_with("/rerank")
}

/// The JSON object of a rerank request, as the client sent it.
pub(super) fn fields(request: &Incoming) -> Option<Map<String, Value>> {
    match request.json()? {
        Value::Object(fields) if is_rerank(request) => Some(fields),
        _ => None,
    }
}

/// An OpenAI-shaped error answer.
pub(super) fn error(status: u16, message: &str) -> Answer {
    Answer::openai_error(status, message)
}

/// A query's and a document's ids cut to `limit` together, a token at a time from the
/// longer (the document on a tie), as Hugging Face's `longest_first` truncation cuts a pair.
pub(super) fn longest_first(
    mut query: Vec<u32>,
    mut document: Vec<u32>,
    limit: usize,
) -> (Vec<u32>, Vec<u32>) {
    while query.len() + document.len() > limit {
        if query.len() > document.len() {
            query.pop();
        } else {
            document.pop();
        }
    }
    (query, document)
}

/// Rewrites the fields of a rerank request (a body that is not a JSON object is left alone).
pub(super) fn edit(request: &mut Incoming, change: impl FnOnce(&mut Map<String, Value>)) {
    if let Some(mut f) = fields(request) {
        change(&mut f);
        request.body = Value::Object(f).to_string().into_bytes();
    }
}

#[cfg(test)]
mod tests {
    use super::longest_first;

    #[test]
    fn longest_first_cuts_the_longer_until_the_pair_fits() {
        let (query, document) = longest_first(vec![1; 10], vec![2; 4], 8);
        assert_eq!((query.len(), document.len()), (4, 4));
        let (query, document) = longest_first(vec![1; 3], vec![2; 20], 8);
        assert_eq!((query.len(), document.len()), (3, 5));
    }
}
