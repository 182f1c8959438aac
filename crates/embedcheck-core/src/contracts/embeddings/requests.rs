//! The canonical requests and input texts: one source for every clause and the
//! migration audit.
//!
//! Sending the same probe from several places costs one request: the session caches
//! answers by request. Keeping the texts here also keeps evidence comparable across
//! clauses (the batch in RESP-002 is the batch in CONS-002) and lets the migration's
//! consumer contract replay exactly what the clauses sent.

use crate::contracts::contract::Presence;
use crate::contracts::embeddings;
use crate::http::excerpt::{self, array_len};
use crate::http::route::estimate;
use crate::http::{Anchor, Body, Probe, Reply, Route, Work};
use crate::session::{ProbeError, Session};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// `POST {base}/embeddings`. Its usage counts are charged where USE-005 found them to
/// count tokens, and a vendor's field names (`--vendor`) apply to its bodies.
pub const ROUTE: Route = Route {
    contract: crate::contracts::embeddings::ID,
    path: "embeddings",
    anchor: Anchor::Base,
    work,
    charges_usage: true,
    vendor_fields: true,
};

/// An embeddings request's work: one input a string or token-id list of `input`, and
/// about four characters a token (one a token id).
fn work(body: &Value) -> Work {
    let inputs = match body.get("input") {
        Some(Value::Array(items)) if items.iter().all(Value::is_number) => 1,
        Some(Value::Array(items)) => items.len() as u64,
        Some(_) => 1,
        None => 0,
    };
    let tokens = estimate(body.get("input").unwrap_or(&Value::Null));
    Work { inputs, tokens }
}

/// The smallest embeddings request, which the session sends after requests timed out
/// until the server answers one: one word, the least work an embeddings server can be
/// sent.
pub(crate) fn small(s: &Session) -> Probe {
    probe(json!({"model": s.model(), "input": "hello"}))
}

/// A valid `POST /embeddings` with a JSON body.
pub(crate) fn probe(body: Value) -> Probe {
    Probe::post(ROUTE, body)
}

/// A `POST /embeddings` the contract does not allow, with why.
pub(crate) fn invalid(body: Body, why: impl Into<String>) -> Probe {
    Probe::invalid(ROUTE, body, why)
}

/// A `POST /embeddings` a server may refuse or embed, with why.
pub(crate) fn either(body: Value, why: impl Into<String>) -> Probe {
    Probe::either(ROUTE, body, why)
}

/// A plain English sentence: the single-string probe.
pub(crate) const SENTENCE: &str = "The quick brown fox jumps over the lazy dog.";

/// Four distinct documents: the batch probe. Distinct so that order can be checked.
pub(crate) const BATCH: [&str; 4] = [
    "Embeddings map text to vectors.",
    "Retrieval ranks documents by cosine similarity.",
    "서울은 대한민국의 수도입니다.",
    "A migration should not change the answers.",
];

/// IN-003's token-id inputs: one `[int]` and one `[[int]]`, with how many inputs and
/// ids each holds. The ids are small (below 1000) so they exist in every real
/// vocabulary.
pub(crate) fn token_id_forms() -> [TokenIds; 2] {
    [
        TokenIds {
            input: json!([101, 102, 103, 104]),
            inputs: 1,
            ids: 4,
        },
        TokenIds {
            input: json!([[101, 102], [201, 202, 203]]),
            inputs: 2,
            ids: 5,
        },
    ]
}

/// A token-id input and its size.
pub(crate) struct TokenIds {
    pub input: Value,
    pub inputs: usize,
    pub ids: u64,
}

/// A request body for the session's model with the given input and extra fields.
pub(crate) fn body(s: &Session, input: Value, extra: &[(&str, Value)]) -> Value {
    let mut body = json!({"model": s.model(), "input": input});
    for (key, value) in extra {
        body[*key] = value.clone();
    }
    body
}

/// A body without `input` (ERR-002's request, replayed by the migration audit).
pub(crate) fn missing_input(s: &Session) -> Probe {
    invalid(Body::Json(json!({"model": s.model()})), "input is missing")
}

/// The single string with `dimensions: d`, as the migration audit sends it to both
/// servers (the old client's `dimensions` request).
pub(crate) fn sentence_with_dimensions(s: &Session, d: usize) -> Probe {
    probe(body(s, json!(SENTENCE), &[("dimensions", json!(d))]))
}

/// The vendor field by which a client asks for a query's vector, `input_type:
/// "query"` (Cohere's, Voyage's and NVIDIA's), beside `input`.
pub(crate) fn as_query() -> (&'static str, Value) {
    ("input_type", json!("query"))
}

/// The query with a vendor field outside the OpenAI schema (UNK-003's requests, and
/// the migration audit's with [`as_query`]).
pub(crate) fn instruction_probe(s: &Session, field: &str, value: Value) -> Probe {
    invalid(
        Body::Json(body(s, json!(QUERY), &[(field, value)])),
        format!("vendor field {field} outside the OpenAI schema"),
    )
}

/// The single-string probe without credentials (AUTH-001's request).
pub(crate) fn single_without_credentials(s: &Session) -> Probe {
    either(
        body(s, json!(SENTENCE), &[]),
        "no credentials: refused where the endpoint needs a key, embedded where it does not",
    )
    .unauthenticated()
}

/// The single-string probe with an obviously wrong key in place of the run's: how
/// the server answers a key it rejects.
pub(crate) fn single_with_wrong_credentials(s: &Session) -> Probe {
    either(
        body(s, json!(SENTENCE), &[]),
        "an obviously wrong key: refused where the endpoint checks keys",
    )
    .with_wrong_credentials()
}

/// The single-string probe.
pub(crate) async fn single(s: &Session) -> Result<Arc<Reply>, ProbeError> {
    s.send(small_probe(s)).await
}

/// The plain request's probe: the smallest request that shows the server answers
/// embeddings requests.
pub(crate) fn small_probe(s: &Session) -> Probe {
    probe(body(s, json!(SENTENCE), &[]))
}

/// `input` embedded as a document: bare, or with the field and value that ask for a
/// document where UNK-003 found the server embeds bare input as a query (so known
/// answers, which are documents' vectors, are compared with documents' vectors).
pub(crate) fn document_probe(s: &Session, input: Value) -> Probe {
    match embeddings::learned(s).document_field() {
        Some((field, value)) => invalid(
            crate::http::Body::Json(body(s, input, &[(field, json!(value))])),
            format!("vendor field {field} outside the OpenAI schema"),
        ),
        None => probe(body(s, input, &[])),
    }
}

/// How [`document_probe`] sends documents to this server, for reasons: empty when bare.
pub(crate) fn documents_sent_as(s: &Session) -> String {
    embeddings::learned(s)
        .document_field()
        .map_or(String::new(), |(field, value)| {
            format!(" (sent with {field} {value:?}: this server embeds bare input as a query)")
        })
}

/// The inputs of a large batch: short, distinct and alike, so that every item costs
/// the same and any position can be compared with its text alone.
pub(crate) fn numbered_documents(size: usize) -> Vec<String> {
    (0..size).map(|i| format!("document number {i}")).collect()
}

/// A large batch of `size` [`numbered_documents`] (one request, so the cache answers
/// every clause that looks at it).
pub(crate) async fn large_batch(s: &Session, size: usize) -> Result<Arc<Reply>, ProbeError> {
    s.send(probe(body(s, json!(numbered_documents(size)), &[])))
        .await
}

/// The batch probe.
pub(crate) async fn batch(s: &Session) -> Result<Arc<Reply>, ProbeError> {
    s.send(probe(body(s, json!(BATCH), &[]))).await
}

/// Each batch document embedded alone, in batch order.
pub(crate) async fn batch_items_alone(s: &Session) -> Result<Vec<Arc<Reply>>, ProbeError> {
    let mut replies = Vec::with_capacity(BATCH.len());
    for text in BATCH {
        replies.push(s.send(probe(body(s, json!(text), &[]))).await?);
    }
    Ok(replies)
}

/// `input` as the OpenAI SDKs send it by default: `encoding_format: "base64"`, which
/// ENC-003 probes and the client profiles replay (one request, so the cache answers
/// the profiles).
pub(crate) fn base64(s: &Session, input: Value) -> Probe {
    probe(body(s, input, &[("encoding_format", json!("base64"))]))
}

/// A `POST /embeddings` with a raw body and content type, invalid for `why`.
pub(crate) fn raw(bytes: &[u8], content_type: &'static str, why: &str) -> Probe {
    invalid(
        Body::Raw {
            bytes: bytes.to_vec(),
            content_type,
        },
        why,
    )
}

/// Two inputs every working tokenizer keeps apart, cased or uncased, folding accents or
/// not, which a broken one reads as the same tokens; and, where a vocabulary may
/// rightly lack the script, two inputs of it it must keep apart if it reads the script
/// at all.
pub(crate) struct LookAlike {
    /// What the inputs are, as a reason names them.
    pub what: &'static str,
    pub pair: [&'static str; 2],
    /// Two inputs a server that reads this kind of text at all gives two vectors; a
    /// server that gives one vector to these too reads it as unknown, rightly or not,
    /// and the pair says nothing. `None`: every tokenizer reads the pair.
    pub control: Option<[&'static str; 2]>,
    /// The real server seen merging the pair.
    pub seen: &'static str,
}

/// RESP-007's look-alike inputs, sent as one request.
pub(crate) const LOOK_ALIKES: [LookAlike; 3] = [
    LookAlike {
        what: "two all-caps phrases",
        pair: ["REPLACE THE SUMP PUMP", "CREATE A SPREADSHEET"],
        control: None,
        seen: "Ollama 0.13 read every upper-case word as one token (ollama/ollama#13942)",
    },
    LookAlike {
        what: "two accented words",
        pair: ["ostéoporose", "sarcoïdose"],
        control: Some(["osteoporose", "sarcoidose"]),
        seen: "Ollama's BERT conversion dropped strip_accents, so accented words became [UNK] (ollama/ollama#15609)",
    },
    LookAlike {
        what: "two Hangul words with the same leading consonants",
        pair: ["가구", "고기"],
        control: Some(["가구", "서울"]),
        seen: "llama.cpp's WordPiece keeps only each Hangul syllable's leading consonant",
    },
];

/// The look-alike inputs in one request, pairs then controls, each text once.
pub(crate) fn look_alike_inputs() -> Vec<&'static str> {
    let mut inputs: Vec<&'static str> = Vec::new();
    let texts = LOOK_ALIKES
        .iter()
        .flat_map(|l| l.pair.iter().chain(l.control.iter().flatten()));
    for text in texts {
        if !inputs.contains(text) {
            inputs.push(text);
        }
    }
    inputs
}

/// The look-alike request.
pub(crate) async fn look_alikes(s: &Session) -> Result<Arc<Reply>, ProbeError> {
    s.send(probe(body(s, json!(look_alike_inputs()), &[])))
        .await
}

/// A query, for the instruction fields and the migration's instruction probes: the kind
/// of text query instructions are meant for.
pub(crate) const QUERY: &str = "What is the capital of South Korea?";

/// The word stream inputs are cut from: short, common, one token each.
pub(crate) const WORDS: [&str; 16] = [
    "the", "cat", "sat", "on", "a", "mat", "and", "then", "it", "ran", "to", "see", "my", "dog",
    "run", "far",
];

/// Words that never occur in the stream: the end of the "still longer" input, so a
/// server that keeps the end of an input gives it another vector.
pub(crate) const TAIL: [&str; 8] = [
    "zeta", "quay", "oryx", "lynx", "kiwi", "yurt", "jinx", "wasp",
];

/// Common words, one token each in WordPiece, BPE and SentencePiece vocabularies alike,
/// none of them in [`WORDS`]: an ending that changes an input without lengthening it in
/// tokens (LEN-006's inputs must stay under the limit).
pub(crate) const OTHER_COMMON: [&str; 12] = [
    "day", "man", "way", "car", "sun", "red", "big", "old", "new", "top", "low", "hot",
];

/// The first `n` words of the stream.
pub(crate) fn words(n: usize) -> String {
    WORDS
        .iter()
        .cycle()
        .take(n)
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A short description of an embeddings request for the migration audit's side-by-side
/// view: its input (`8 strings`), then every field but the run's model.
pub(crate) fn describe(fields: &Map<String, Value>, model: &str) -> String {
    let mut parts = vec![match fields.get("input") {
        Some(input) => describe_input(input),
        None => "no input".to_owned(),
    }];
    match fields.get("model") {
        Some(Value::String(m)) if m == model => {}
        Some(other) => parts.push(format!("model: {}", excerpt::cut(&other.to_string(), 40))),
        None => parts.push("no model".to_owned()),
    }
    for (name, value) in fields {
        if name != "input" && name != "model" {
            parts.push(format!("{name}: {}", excerpt::cut(&value.to_string(), 40)));
        }
    }
    parts.join(", ")
}

/// `"The quick brown fox…"`, `8 strings`, `4 token ids`, `2 token-id lists`.
fn describe_input(input: &Value) -> String {
    match input {
        Value::String(text) => format!("\"{}\"", excerpt::cut(text, 32)),
        Value::Array(items) => {
            let count = array_len(items);
            match items.first() {
                Some(Value::String(text)) if count == 1 => {
                    format!("[\"{}\"]", excerpt::cut(text, 32))
                }
                Some(Value::String(_)) => format!("{count} strings"),
                Some(Value::Number(_)) => format!("{count} token ids"),
                Some(Value::Array(_)) => format!("{count} token-id lists"),
                _ => excerpt::cut(&input.to_string(), 40),
            }
        }
        other => format!("input: {}", excerpt::cut(&other.to_string(), 40)),
    }
}

/// Whether the server offers embeddings, from the pattern of its answers, in no
/// language: the plain request answered (any status but a refusal) is an embeddings
/// endpoint. A refusal is not yet "not offered": the route is absent (404, 405, 501),
/// or it refuses the batch request alike (whatever it carries: TEI serving a
/// cross-encoder answers 424 "Model is not an embedding model"), which the registry
/// weighs against the other ways to read the server.
pub(crate) async fn presence(s: &Session) -> Presence {
    let Ok(plain) = single(s).await else {
        // A budget, a stall or Ctrl-C: the clause run says so clause by clause.
        return Presence::Answered {
            served_the_model: None,
        };
    };
    let why = || {
        format!(
            "embeddings is not offered: the plain request to {} was answered {}",
            s.transport().target().url(&ROUTE).path(),
            plain.summary()
        )
    };
    if plain.is_absent() {
        return Presence::Absent(why());
    }
    if refused_whatever_it_carries(s, &plain).await {
        return Presence::RefusesAll(why());
    }
    let embeds = plain.is_success() && plain.float_vectors().is_ok();
    Presence::Answered {
        served_the_model: embeds.then_some("the model the embeddings route embeds with"),
    }
}

/// Whether the plain request's refusal is the batch request's too: the endpoint
/// refuses what it is sent whatever that is.
async fn refused_whatever_it_carries(s: &Session, plain: &Reply) -> bool {
    if !plain.is_refusal() {
        return false;
    }
    match batch(s).await {
        Ok(batch) => plain.refused_alike(&batch),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_batches_are_counted_whole() {
        let input = excerpt::of_json(&json!({"input": vec!["x"; 2048]}));
        let value: Value = serde_json::from_str(&input).unwrap();
        assert_eq!(describe_input(&value["input"]), "2048 strings");
    }

    #[test]
    fn shorter_inputs_are_prefixes_of_longer_ones() {
        assert!(words(700).starts_with(&words(513)));
        assert!(TAIL.iter().all(|t| !WORDS.contains(t)));
        assert!(OTHER_COMMON.iter().all(|t| !WORDS.contains(t)));
    }

    #[test]
    fn token_estimate_counts_text_and_ids() {
        let probe = probe(json!({"input": ["abcdefgh", [1, 2, 3]]}));
        assert_eq!(probe.estimated_tokens(), 5);
    }

    /// Four ASCII characters a token, one token a character outside ASCII.
    #[test]
    fn token_estimate_counts_each_character_outside_ascii() {
        let korean = probe(json!({"input": "서울은 대한민국의 수도입니다."}));
        assert_eq!(korean.estimated_tokens(), 13 + 1);
        assert_eq!(korean.script(), crate::http::probe::Script::OutsideAscii);
        let english = probe(json!({"input": "Seoul is the capital."}));
        assert_eq!(english.script(), crate::http::probe::Script::Ascii);
    }
}
