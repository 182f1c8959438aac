//! `POST /v1/rerank` (also `/rerank` and `/v2/rerank`): the portable Cohere v1 / Jina rerank
//! shape, answered strictly and deterministically by the same engine as embeddings (same
//! key, model, body-size, media-type and over-length rules, same error bodies).
//!
//! ```text
//! → {"query": "capital of France", "documents": ["Bananas are yellow",
//!    {"text": "Paris is the capital of France"}], "top_n": 1, "return_documents": true}
//! ← {"id": "rerank-9420cf3697a34f6c", "object": "rerank", "model": "embedcheck-reference",
//!    "results": [{"index": 1, "relevance_score": 0.9820186730852684,
//!                 "document": {"text": "Paris is the capital of France"}}],
//!    "usage": {"prompt_tokens": 24, "total_tokens": 24}}
//! ```
//!
//! Where real servers disagree, the reference takes the side that breaks no client: `null`
//! means absent for every optional field (Dify and the Cohere SDK send nulls); `top_n: 0` is
//! refused instead of meaning "all" or "none"; results are sorted by score with ties in input
//! order; `document` is `{"text": …}` with the text as sent, present only when asked for and
//! never `null`; an unknown field (`top_k`, `rank_fields`, TEI's `texts`) is refused, so a
//! client learns it is not honoured instead of getting a silently different answer.
//!
//! # Scores
//!
//! A score is a pure function of the (query, document) pair, never of the other documents,
//! their order or their number, so permutation, batch and duplicate invariance hold by
//! construction. With the tokens of [`tokenize`]:
//!
//! ```text
//! overlap         = |distinct query tokens in the document| / |distinct query tokens|
//!                   (0 for a query without tokens, such as one of whitespace only)
//! tiebreak        = FNV-1a 64 of the document's token ids (u32, little-endian), in [0, 0.001)
//! logit           = 8 · overlap − 4 + tiebreak
//! relevance_score = 1 / (1 + e^−logit), within (0.017, 0.983)
//! ```
//!
//! One more shared query token adds 8 / |distinct query tokens| to the logit, more than the
//! tie-breaker's whole width for any query under 8,000 distinct tokens, so a document sharing
//! more of the query always scores higher and an obviously relevant one ranks first. The
//! tie-breaker only keeps distinct documents with the same overlap from tying; identical
//! documents (and texts differing only in case) tie exactly.
//!
//! # Length
//!
//! A pair is the query's tokens followed by the document's, counted against
//! `Config::max_input_tokens` and treated by `Config::overlength` as embeddings treat an
//! input: `Reject` refuses the request naming the document, `Truncate` keeps the document's
//! first tokens that fit beside the whole query, `Aggregate` scores the whole pair. The query
//! is never cut, so a query alone over the limit is refused unless the policy is
//! `Aggregate`, which has no limit to enforce. `usage` counts the tokens scored.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::{Map, Value};

use super::fields::{
    check_batch_size, check_model, expect_string, invalid_type, json_integer, json_object,
    reject_unknown_fields, required,
};
use super::{ApiError, Engine, HttpRequest, HttpResponse, Usage, require_json};
use crate::config::{Config, OverlengthPolicy};
use crate::tokenizer::{fnv1a64, tokenize};

/// The top-level fields of a rerank request: the part of Cohere v1's and Jina's requests
/// every Cohere/Jina-style server reads alike.
pub const RERANK_FIELDS: [&str; 5] = ["model", "query", "documents", "top_n", "return_documents"];

/// Optional fields of Cohere's v1 and v2 rerank requests the reference does not
/// implement: read as absent when `null`.
const COHERE_OPTIONAL: [&str; 4] = [
    "max_tokens_per_doc",
    "max_chunks_per_doc",
    "rank_fields",
    "priority",
];

const DOCUMENT_EXPECTED: &str = "a string or an object with a string 'text'";
const DOCUMENTS_EXPECTED: &str = "an array of strings or of objects with a string 'text'";

/// Slope of the logit in the overlap: full overlap is 4, none is −4, the sigmoid's range
/// where scores are well apart yet far from 0 and 1.
const OVERLAP_WEIGHT: f64 = 8.0;
const OVERLAP_BIAS: f64 = -4.0;
/// Width of the tie-breaker, below the logit step of one shared token (8 / 8,000).
const TIEBREAK_WIDTH: f64 = 1e-3;

/// The reference's `relevance_score` for `document` against `query` under `config`: the
/// sigmoid of [`rerank_logit`], in (0, 1).
///
/// Under `OverlengthPolicy::Truncate` the document is cut as the server cuts it; under
/// `Reject` an over-length pair gets the score of the whole pair, which the server refuses
/// to answer.
///
/// ```
/// use reference_server::{Config, rerank_score};
/// let config = Config::default();
/// let relevant = rerank_score("capital of France", "Paris is the capital of France", &config);
/// let unrelated = rerank_score("capital of France", "Bananas are yellow", &config);
/// assert!(relevant > 0.98 && unrelated < 0.02);
/// ```
pub fn rerank_score(query: &str, document: &str, config: &Config) -> f64 {
    sigmoid(rerank_logit(query, document, config))
}

/// The logit behind [`rerank_score`], `8 · overlap − 4 + tiebreak`, for known-answer files
/// that record raw scores beside sigmoid ones.
pub fn rerank_logit(query: &str, document: &str, config: &Config) -> f64 {
    let query_ids = tokenize(query, config.vocab_size);
    let document_ids = fit_beside_query(
        query_ids.len(),
        tokenize(document, config.vocab_size),
        config,
    );
    pair_logit(&query_ids, &document_ids)
}

/// The logit of a query and a document already tokenized and cut as the caller chose,
/// for personas that truncate otherwise than the reference (longest first, say).
pub fn pair_logit(query_ids: &[u32], document_ids: &[u32]) -> f64 {
    QueryTerms::of(query_ids).logit(document_ids)
}

impl Engine {
    /// Answers a rerank request whose route, method, key and body size are already checked.
    pub(super) fn rerank(&self, request: &HttpRequest<'_>) -> Result<HttpResponse, ApiError> {
        require_json(request.content_type)?;
        let parsed = RerankRequest::from_json(request.body, &self.config)?;
        let scored = self.score_documents(&parsed.query, &parsed.documents)?;
        let prompt_tokens = scored.iter().map(|pair| pair.tokens).sum();
        let results = ranked(scored, parsed.top_n)
            .into_iter()
            .map(|pair| RerankResult {
                index: pair.index,
                relevance_score: pair.score,
                document: parsed.return_documents.then(|| DocumentText {
                    text: &parsed.documents[pair.index],
                }),
            })
            .collect();
        let response = RerankResponse {
            // Derived from the body, so identical requests get identical bytes.
            id: format!("rerank-{:016x}", fnv1a64(request.body)),
            object: "rerank",
            model: &self.config.model_id,
            results,
            usage: Usage {
                prompt_tokens,
                total_tokens: prompt_tokens,
            },
        };
        Ok(HttpResponse::json(200, &response))
    }

    /// Every document's score and tokens, in request order; the first pair that breaks
    /// the length rules fails the whole request.
    fn score_documents(&self, query: &str, documents: &[String]) -> Result<Vec<Scored>, ApiError> {
        let query_ids = self.query_tokens(query)?;
        let terms = QueryTerms::of(&query_ids);
        let score = |(index, document): (usize, &String)| {
            let ids = self.document_tokens(index, query_ids.len(), document)?;
            Ok(Scored {
                index,
                tokens: query_ids.len() + ids.len(),
                score: sigmoid(terms.logit(&ids)),
            })
        };
        documents.iter().enumerate().map(score).collect()
    }

    /// The query's ids; it is never cut, so over the limit it is refused (except under
    /// `Aggregate`, which scores whole pairs).
    fn query_tokens(&self, query: &str) -> Result<Vec<u32>, ApiError> {
        let ids = tokenize(query, self.config.vocab_size);
        let max = self.config.max_input_tokens;
        if ids.len() > max && self.config.overlength != OverlengthPolicy::Aggregate {
            return Err(ApiError::ContextLengthExceeded {
                param: "query",
                location: "the query".to_owned(),
                tokens: ids.len(),
                max,
            });
        }
        Ok(ids)
    }

    /// The ids scored for document `index` beside a query of `query_len` tokens.
    fn document_tokens(
        &self,
        index: usize,
        query_len: usize,
        document: &str,
    ) -> Result<Vec<u32>, ApiError> {
        let ids = tokenize(document, self.config.vocab_size);
        let tokens = query_len + ids.len();
        let max = self.config.max_input_tokens;
        if tokens > max && self.config.overlength == OverlengthPolicy::Reject {
            return Err(ApiError::ContextLengthExceeded {
                param: "documents",
                location: format!("the query with documents[{index}]"),
                tokens,
                max,
            });
        }
        Ok(fit_beside_query(query_len, ids, &self.config))
    }
}

/// Under `Truncate`, the document's first tokens that fit beside the whole query; under the
/// other policies the whole document (`Reject` has refused an over-length pair already).
fn fit_beside_query(query_len: usize, mut ids: Vec<u32>, config: &Config) -> Vec<u32> {
    if config.overlength == OverlengthPolicy::Truncate {
        ids.truncate(config.max_input_tokens.saturating_sub(query_len));
    }
    ids
}

/// The distinct tokens of a query, which every document is scored against.
struct QueryTerms(HashSet<u32>);

impl QueryTerms {
    fn of(query_ids: &[u32]) -> Self {
        Self(query_ids.iter().copied().collect())
    }

    /// The share of distinct query tokens found in the document.
    fn overlap(&self, document_ids: &[u32]) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        let found: HashSet<u32> = document_ids
            .iter()
            .copied()
            .filter(|id| self.0.contains(id))
            .collect();
        found.len() as f64 / self.0.len() as f64
    }

    fn logit(&self, document_ids: &[u32]) -> f64 {
        OVERLAP_WEIGHT * self.overlap(document_ids) + OVERLAP_BIAS + tiebreak(document_ids)
    }
}

/// A value in `[0, TIEBREAK_WIDTH)` from the document's own tokens.
fn tiebreak(document_ids: &[u32]) -> f64 {
    let bytes: Vec<u8> = document_ids
        .iter()
        .flat_map(|id| id.to_le_bytes())
        .collect();
    // The top 53 bits convert to f64 exactly, so the fraction is below 1.
    let fraction = (fnv1a64(&bytes) >> 11) as f64 / (1u64 << 53) as f64;
    fraction * TIEBREAK_WIDTH
}

fn sigmoid(logit: f64) -> f64 {
    1.0 / (1.0 + (-logit).exp())
}

/// One document's outcome before ranking.
struct Scored {
    index: usize,
    /// Query plus document tokens, as scored.
    tokens: usize,
    score: f64,
}

/// Highest score first, ties in input order, at most `top_n` of them.
fn ranked(mut scored: Vec<Scored>, top_n: Option<usize>) -> Vec<Scored> {
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
    scored.truncate(top_n.unwrap_or(usize::MAX));
    scored
}

/// A validated rerank request.
#[derive(Debug, PartialEq)]
struct RerankRequest {
    query: String,
    /// The document texts in request order, exactly as sent (an object's `text`).
    documents: Vec<String>,
    /// How many results to return; `None` returns all.
    top_n: Option<usize>,
    return_documents: bool,
}

impl RerankRequest {
    /// Parses `body`, validating every field in the order a reader of the request meets them.
    fn from_json(body: &[u8], config: &Config) -> Result<Self, ApiError> {
        let mut fields = json_object(body)?;
        // Cohere's own optional fields, sent as `null` by clients that leave them unset
        // (LangChain's `CohereRerank` sends `max_tokens_per_doc: null` on every call):
        // absent, as RRS-007 asks. With a value they are refused like any other field.
        fields.retain(|name, value| !(value.is_null() && COHERE_OPTIONAL.contains(&name.as_str())));
        reject_unknown_fields(&fields, &RERANK_FIELDS)?;
        if let Some(model) = optional(&mut fields, "model") {
            check_model(model, &config.model_id)?;
        }
        let query = parse_query(required(&mut fields, "query")?)?;
        let documents = parse_documents(
            required(&mut fields, "documents")?,
            config.max_rerank_documents,
        )?;
        let top_n = optional(&mut fields, "top_n")
            .map(parse_top_n)
            .transpose()?;
        let return_documents = optional(&mut fields, "return_documents")
            .map(parse_return_documents)
            .transpose()?
            .unwrap_or(false);
        Ok(Self {
            query,
            documents,
            top_n,
            return_documents,
        })
    }
}

/// An optional field's value, with `null` taken as absent.
fn optional(fields: &mut Map<String, Value>, name: &str) -> Option<Value> {
    fields.remove(name).filter(|value| !value.is_null())
}

fn parse_query(value: Value) -> Result<String, ApiError> {
    non_empty(expect_string(value, "query")?, "query", "query".to_owned())
}

fn parse_documents(value: Value, max: usize) -> Result<Vec<String>, ApiError> {
    let Value::Array(items) = value else {
        return Err(invalid_type(
            "documents",
            "documents".to_owned(),
            DOCUMENTS_EXPECTED,
            &value,
        ));
    };
    if items.is_empty() {
        return Err(ApiError::EmptyArray("documents"));
    }
    check_batch_size("documents", items.len(), max)?;
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| parse_document(index, item))
        .collect()
}

/// A document's text: a string, or the `text` of an object that has nothing else.
fn parse_document(index: usize, item: Value) -> Result<String, ApiError> {
    let location = format!("documents[{index}]");
    let mut fields = match item {
        Value::String(text) => return non_empty(text, "documents", location),
        Value::Object(fields) => fields,
        other => {
            return Err(invalid_type(
                "documents",
                location,
                DOCUMENT_EXPECTED,
                &other,
            ));
        }
    };
    if let Some(field) = fields.keys().find(|name| *name != "text") {
        return Err(ApiError::UnknownDocumentField {
            index,
            field: field.clone(),
        });
    }
    match fields.remove("text") {
        Some(Value::String(text)) => non_empty(text, "documents", format!("{location}.text")),
        Some(other) => Err(invalid_type(
            "documents",
            format!("{location}.text"),
            "a string",
            &other,
        )),
        None => Err(ApiError::InvalidType {
            param: "documents",
            location,
            expected: DOCUMENT_EXPECTED,
            actual: "an object without 'text'",
        }),
    }
}

fn non_empty(text: String, param: &'static str, location: String) -> Result<String, ApiError> {
    if text.is_empty() {
        Err(ApiError::EmptyInput { param, location })
    } else {
        Ok(text)
    }
}

/// An integer of at least 1 (`2.0` counts, as for `dimensions`); one too large to store
/// means "all", like any `top_n` above the number of documents.
fn parse_top_n(value: Value) -> Result<usize, ApiError> {
    let requested = match &value {
        Value::Number(number) => json_integer(number).map(|n| (n, number.to_string())),
        _ => None,
    };
    let Some((top_n, shown)) = requested else {
        return Err(invalid_type(
            "top_n",
            "top_n".to_owned(),
            "an integer",
            &value,
        ));
    };
    if top_n < 1 {
        return Err(ApiError::NotPositive {
            param: "top_n",
            value: shown,
        });
    }
    Ok(usize::try_from(top_n).unwrap_or(usize::MAX))
}

fn parse_return_documents(value: Value) -> Result<bool, ApiError> {
    match value {
        Value::Bool(flag) => Ok(flag),
        other => Err(invalid_type(
            "return_documents",
            "return_documents".to_owned(),
            "a boolean",
            &other,
        )),
    }
}

/// The Cohere v1 / Jina rerank response, with Jina's `model` and OpenAI-style `usage`.
#[derive(Serialize)]
struct RerankResponse<'a> {
    id: String,
    object: &'static str,
    model: &'a str,
    results: Vec<RerankResult<'a>>,
    usage: Usage,
}

#[derive(Serialize)]
struct RerankResult<'a> {
    index: usize,
    relevance_score: f64,
    /// Only with `return_documents: true`; absent, never `null`, otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    document: Option<DocumentText<'a>>,
}

#[derive(Serialize)]
struct DocumentText<'a> {
    text: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MODEL: &str = "embedcheck-reference";
    const ROUTE: &str = "/v1/rerank";
    const QUERY: &str = "What is the capital of France?";
    /// Ranked by shared query tokens: 1 (7 of 9), 2 (5), 3 (2), 0 (none).
    const DOCUMENTS: [&str; 4] = [
        "Bananas are rich in potassium.",
        "Paris is the capital and largest city of France.",
        "The capital of Germany is Berlin.",
        "France borders Spain.",
    ];

    fn engine() -> Engine {
        Engine::new(Config::default())
    }

    fn engine_with(config: Config) -> Engine {
        Engine::new(config)
    }

    fn send(engine: &Engine, method: &str, path: &str, body: &[u8]) -> HttpResponse {
        engine.handle(&HttpRequest {
            method,
            path,
            authorization: None,
            content_type: Some("application/json"),
            body,
        })
    }

    fn body_of(response: &HttpResponse) -> Value {
        serde_json::from_slice(&response.body).expect("every response body is JSON")
    }

    /// POSTs `body` as JSON to `/v1/rerank`; returns the status and parsed body.
    fn post(engine: &Engine, body: Value) -> (u16, Value) {
        let response = send(engine, "POST", ROUTE, body.to_string().as_bytes());
        assert_eq!(response.content_type, "application/json");
        (response.status, body_of(&response))
    }

    fn request(extra: Value) -> Value {
        let mut body = json!({"model": MODEL, "query": QUERY, "documents": DOCUMENTS});
        if let (Value::Object(base), Value::Object(extra)) = (&mut body, extra) {
            base.extend(extra);
        }
        body
    }

    fn results(body: &Value) -> &[Value] {
        body["results"].as_array().expect("results is an array")
    }

    /// `(index, relevance_score)` of each result, in response order.
    fn ranking(body: &Value) -> Vec<(usize, f64)> {
        results(body)
            .iter()
            .map(|item| {
                let index = item["index"].as_u64().expect("integer index");
                let score = item["relevance_score"].as_f64().expect("numeric score");
                (usize::try_from(index).expect("small index"), score)
            })
            .collect()
    }

    /// Each document's score, keyed by its text, from a response to `documents`.
    fn scores_by_text(body: &Value, documents: &[&str]) -> Vec<(String, f64)> {
        let mut scores: Vec<(String, f64)> = ranking(body)
            .into_iter()
            .map(|(index, score)| (documents[index].to_owned(), score))
            .collect();
        scores.sort_by(|a, b| a.0.cmp(&b.0));
        scores
    }

    fn assert_error(status: u16, body: &Value, expected_status: u16, param: Option<&str>) {
        assert_eq!(status, expected_status, "{body}");
        let error = &body["error"];
        assert!(error["message"].is_string(), "{body}");
        assert_eq!(error["type"], "invalid_request_error", "{body}");
        assert_eq!(error["param"].as_str(), param, "{body}");
    }

    fn assert_rejected(extra: Value, param: &str) {
        let (status, body) = post(&engine(), request(extra));
        assert_error(status, &body, 400, Some(param));
    }

    /// An object's keys, sorted (serde_json's `Map` keeps them so).
    fn keys(object: &Value) -> Vec<&str> {
        let fields = object.as_object().expect("an object");
        fields.keys().map(String::as_str).collect()
    }

    fn message(body: &Value) -> &str {
        body["error"]["message"].as_str().unwrap_or_default()
    }

    // --- scores ---

    #[test]
    fn the_logit_is_eight_times_the_overlap_minus_four_plus_a_tiny_tiebreak() {
        let config = Config::default();
        let cases = [
            // Words of at most four letters are one token each.
            ("red blue", "red blue gold", 4.0),
            ("red blue", "blue jade", 0.0),
            ("red blue", "jade", -4.0),
            ("red red blue", "blue", 0.0), // two distinct query tokens
        ];
        for (query, document, base) in cases {
            let logit = rerank_logit(query, document, &config);
            let tiebreak = logit - base;
            assert!(
                (0.0..TIEBREAK_WIDTH).contains(&tiebreak),
                "{query} / {document}"
            );
            let expected = 1.0 / (1.0 + (-logit).exp());
            assert_eq!(rerank_score(query, document, &config), expected);
        }
    }

    #[test]
    fn scores_lie_strictly_between_zero_and_one() {
        let config = Config::default();
        for (query, document) in [("a", "a"), ("a", "b"), ("🙂", "🙂 🙂"), ("x y", "")] {
            let score = rerank_score(query, document, &config);
            assert!(score > 0.0 && score < 1.0, "{query} / {document}: {score}");
        }
    }

    #[test]
    fn sharing_more_of_the_query_always_scores_higher() {
        let config = Config::default();
        let query = "alpha beta gamma delta epsilon";
        let documents = [
            "zeta eta theta",
            "alpha zeta",
            "alpha beta zeta eta theta iota kappa lambda",
            "alpha beta gamma",
            "gamma delta beta alpha",
            "epsilon delta gamma beta alpha",
        ];
        let scores: Vec<f64> = documents
            .iter()
            .map(|document| rerank_score(query, document, &config))
            .collect();
        assert!(scores.windows(2).all(|w| w[0] < w[1]), "{scores:?}");
    }

    #[test]
    fn distinct_documents_with_the_same_overlap_rarely_tie() {
        let config = Config::default();
        let scores: HashSet<u64> = (0..200)
            .map(|n| rerank_score("capital", &format!("unrelated text {n}"), &config).to_bits())
            .collect();
        assert_eq!(scores.len(), 200);
    }

    #[test]
    fn identical_texts_and_texts_differing_in_case_score_equally() {
        let config = Config::default();
        let score = rerank_score(QUERY, DOCUMENTS[1], &config);
        assert_eq!(rerank_score(QUERY, DOCUMENTS[1], &config), score);
        assert_eq!(
            rerank_score(QUERY, &DOCUMENTS[1].to_uppercase(), &config),
            score
        );
    }

    #[test]
    fn a_query_without_tokens_scores_every_document_as_unrelated() {
        let config = Config::default();
        let logit = rerank_logit("   ", "anything at all", &config);
        assert!((-4.0..-4.0 + TIEBREAK_WIDTH).contains(&logit), "{logit}");
    }

    #[test]
    fn the_tiebreak_stays_within_its_width() {
        for ids in [&[][..], &[0], &[u32::MAX], &[1, 2, 3], &[49_999; 512]] {
            assert!((0.0..TIEBREAK_WIDTH).contains(&tiebreak(ids)), "{ids:?}");
        }
    }

    #[test]
    fn ranking_sorts_by_score_then_index_and_keeps_top_n() {
        let order = |top_n| -> Vec<usize> {
            let scored = [(0, 0.5), (1, 0.9), (2, 0.5), (3, 0.1)]
                .map(|(index, score)| Scored {
                    index,
                    tokens: 1,
                    score,
                })
                .into();
            ranked(scored, top_n).iter().map(|s| s.index).collect()
        };
        assert_eq!(order(None), [1, 0, 2, 3]);
        assert_eq!(order(Some(2)), [1, 0]);
        assert_eq!(order(Some(usize::MAX)), [1, 0, 2, 3]);
    }

    // --- success shape ---

    #[test]
    fn a_request_gets_every_document_ranked_in_the_cohere_jina_shape() {
        let (status, body) = post(&engine(), request(json!({})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(keys(&body), ["id", "model", "object", "results", "usage"]);
        assert!(
            body["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("rerank-")),
            "{body}"
        );
        assert_eq!(body["object"], "rerank");
        assert_eq!(body["model"], MODEL);
        let indices: Vec<usize> = ranking(&body).iter().map(|&(index, _)| index).collect();
        assert_eq!(indices, [1, 2, 3, 0]);
        for item in results(&body) {
            assert_eq!(keys(item), ["index", "relevance_score"], "{item}");
        }
    }

    #[test]
    fn the_id_comes_first_on_the_wire() {
        let body = request(json!({})).to_string();
        let response = send(&engine(), "POST", ROUTE, body.as_bytes());
        assert!(response.body.starts_with(br#"{"id":"rerank-"#));
    }

    #[test]
    fn each_score_is_the_reference_score_of_its_pair() {
        let config = Config::default();
        let (_, body) = post(&engine(), request(json!({})));
        for (index, score) in ranking(&body) {
            assert_eq!(
                score,
                rerank_score(QUERY, DOCUMENTS[index], &config),
                "{index}"
            );
        }
    }

    #[test]
    fn usage_counts_the_query_once_per_document() {
        let (_, body) = post(&engine(), request(json!({})));
        let query = tokenize(QUERY, 50_000).len();
        let tokens: usize = DOCUMENTS
            .iter()
            .map(|document| query + tokenize(document, 50_000).len())
            .sum();
        assert_eq!(
            body["usage"],
            json!({"prompt_tokens": tokens, "total_tokens": tokens})
        );
    }

    #[test]
    fn an_obviously_relevant_document_ranks_first_wherever_it_is() {
        let relevant = "The capital of France is Paris.";
        for at in [0, 2, 4] {
            let mut documents = DOCUMENTS.to_vec();
            documents.insert(at, relevant);
            let (_, body) = post(&engine(), request(json!({ "documents": documents })));
            assert_eq!(ranking(&body)[0].0, at, "{body}");
        }
    }

    #[test]
    fn results_are_sorted_by_score_descending() {
        let (_, body) = post(&engine(), request(json!({})));
        let scores: Vec<f64> = ranking(&body).iter().map(|&(_, score)| score).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    }

    #[test]
    fn identical_documents_score_equally_and_keep_input_order() {
        let documents = ["capital", "Berlin", "capital", "France", "capital"];
        let (status, body) = post(&engine(), request(json!({ "documents": documents })));
        assert_eq!(status, 200, "{body}");
        let copies: Vec<(usize, f64)> = ranking(&body)
            .into_iter()
            .filter(|&(index, _)| documents[index] == "capital")
            .collect();
        assert_eq!(copies.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 2, 4]);
        assert!(copies.iter().all(|c| c.1 == copies[0].1), "{copies:?}");
    }

    #[test]
    fn shuffling_the_documents_leaves_each_score_unchanged() {
        let (_, original) = post(&engine(), request(json!({})));
        let expected = scores_by_text(&original, &DOCUMENTS);
        let mut shuffled = DOCUMENTS;
        for rotation in 1..DOCUMENTS.len() {
            shuffled.rotate_left(1);
            let reversed: Vec<&str> = shuffled.iter().rev().copied().collect();
            for documents in [shuffled.to_vec(), reversed] {
                let (_, body) = post(&engine(), request(json!({ "documents": documents })));
                assert_eq!(scores_by_text(&body, &documents), expected, "{rotation}");
            }
        }
    }

    #[test]
    fn a_document_scores_the_same_alone_and_among_any_neighbours() {
        let (_, batch) = post(&engine(), request(json!({})));
        let batch = scores_by_text(&batch, &DOCUMENTS);
        let fillers: Vec<String> = (0..100).map(|n| format!("filler {n} of France")).collect();
        for document in DOCUMENTS {
            let (_, alone) = post(&engine(), request(json!({ "documents": [document] })));
            let mut crowd: Vec<&str> = fillers.iter().map(String::as_str).collect();
            crowd.insert(37, document);
            let (_, crowded) = post(&engine(), request(json!({ "documents": crowd })));
            let expected = batch.iter().find(|(text, _)| text == document).map(|s| s.1);
            assert_eq!(Some(ranking(&alone)[0].1), expected, "{document}");
            let among = ranking(&crowded)
                .into_iter()
                .find(|&(index, _)| index == 37);
            assert_eq!(among.map(|s| s.1), expected, "{document}");
        }
    }

    #[test]
    fn repeated_requests_get_identical_bytes() {
        let body = request(json!({"return_documents": true})).to_string();
        let first = send(&engine(), "POST", ROUTE, body.as_bytes());
        let second = send(&engine(), "POST", ROUTE, body.as_bytes());
        assert_eq!(first, second);
    }

    #[test]
    fn object_documents_score_like_the_same_strings() {
        let objects: Vec<Value> = DOCUMENTS
            .iter()
            .map(|text| json!({ "text": text }))
            .collect();
        let (_, strings) = post(&engine(), request(json!({})));
        let (status, body) = post(&engine(), request(json!({ "documents": objects })));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["results"], strings["results"]);
        assert_eq!(body["usage"], strings["usage"]);
    }

    #[test]
    fn strings_and_objects_mix_in_one_list() {
        let documents = json!(["France", {"text": "capital of France"}]);
        let (status, body) = post(&engine(), request(json!({ "documents": documents })));
        assert_eq!(status, 200, "{body}");
        assert_eq!(ranking(&body)[0].0, 1);
    }

    // --- routes ---

    #[test]
    fn every_rerank_path_gives_the_same_answer() {
        let body = request(json!({})).to_string();
        let answers: Vec<HttpResponse> = ["/v1/rerank", "/rerank", "/v2/rerank"]
            .iter()
            .map(|path| send(&engine(), "POST", path, body.as_bytes()))
            .collect();
        assert_eq!(answers[0].status, 200);
        assert!(answers.iter().all(|answer| *answer == answers[0]));
    }

    #[test]
    fn other_methods_on_rerank_are_405_with_allow_post() {
        for path in ["/v1/rerank", "/rerank", "/v2/rerank"] {
            for method in ["GET", "PUT", "DELETE", "post"] {
                let response = send(&engine(), method, path, b"");
                assert_error(response.status, &body_of(&response), 405, None);
                assert_eq!(response.headers, [("allow", "POST".to_owned())]);
            }
        }
    }

    #[test]
    fn nearby_paths_are_still_404() {
        for path in ["/v1/rerank/", "/v1/reranking", "/v3/rerank", "/v2/rerank/x"] {
            let response = send(&engine(), "POST", path, b"{}");
            assert_error(response.status, &body_of(&response), 404, None);
        }
    }

    // --- top_n ---

    #[test]
    fn top_n_keeps_the_best_results() {
        let (_, all) = post(&engine(), request(json!({})));
        for top_n in [1, 2, 3] {
            let (status, body) = post(&engine(), request(json!({ "top_n": top_n })));
            assert_eq!(status, 200, "{body}");
            assert_eq!(results(&body), &results(&all)[..top_n]);
            assert_eq!(body["usage"], all["usage"], "every document is scored");
        }
    }

    #[test]
    fn top_n_at_or_above_the_document_count_returns_all() {
        let (_, all) = post(&engine(), request(json!({})));
        for top_n in [json!(4), json!(9), json!(u64::MAX), json!(1e300)] {
            let (status, body) = post(&engine(), request(json!({ "top_n": top_n })));
            assert_eq!(status, 200, "{top_n}: {body}");
            assert_eq!(body["results"], all["results"], "{top_n}");
        }
    }

    #[test]
    fn an_integral_float_top_n_counts_as_an_integer() {
        let (status, body) = post(&engine(), request(json!({"top_n": 2.0})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(results(&body).len(), 2);
    }

    #[test]
    fn top_n_below_one_is_400_naming_it() {
        for (top_n, shown) in [
            (json!(0), "0"),
            (json!(-1), "-1"),
            (json!(-1e300), "-1e+300"),
        ] {
            let (status, body) = post(&engine(), request(json!({ "top_n": top_n })));
            assert_error(status, &body, 400, Some("top_n"));
            assert_eq!(
                message(&body),
                format!("'top_n' must be at least 1, but got {shown}")
            );
        }
    }

    #[test]
    fn a_non_integer_top_n_is_400_naming_it() {
        for top_n in [
            json!(1.5),
            json!("2"),
            json!(true),
            json!([2]),
            json!({"n": 2}),
        ] {
            assert_rejected(json!({ "top_n": top_n }), "top_n");
        }
    }

    // --- return_documents ---

    #[test]
    fn return_documents_echoes_each_text_exactly() {
        let documents = json!(["  Mixed CASE, spaces  ", {"text": "capital of 🙂 France\n"}]);
        let (status, body) = post(
            &engine(),
            request(json!({"documents": documents, "return_documents": true})),
        );
        assert_eq!(status, 200, "{body}");
        for (item, (index, _)) in results(&body).iter().zip(ranking(&body)) {
            let sent = &documents[index];
            let text = sent.get("text").unwrap_or(sent);
            assert_eq!(item["document"], json!({ "text": text }), "{item}");
        }
    }

    #[test]
    fn without_return_documents_no_document_key_appears() {
        for extra in [
            json!({}),
            json!({"return_documents": false}),
            json!({"return_documents": null}),
        ] {
            let (status, body) = post(&engine(), request(extra.clone()));
            assert_eq!(status, 200, "{extra}");
            assert!(
                results(&body)
                    .iter()
                    .all(|item| item.get("document").is_none()),
                "{body}"
            );
        }
    }

    #[test]
    fn a_non_boolean_return_documents_is_400_naming_it() {
        for flag in [json!("true"), json!(1), json!([]), json!({})] {
            assert_rejected(json!({ "return_documents": flag }), "return_documents");
        }
    }

    // --- null and absent ---

    #[test]
    fn null_optional_fields_are_taken_as_absent() {
        let (_, plain) = post(&engine(), json!({"query": QUERY, "documents": DOCUMENTS}));
        let (status, nulls) = post(
            &engine(),
            request(json!({"model": null, "top_n": null, "return_documents": null})),
        );
        assert_eq!(status, 200, "{nulls}");
        assert_eq!(nulls["results"], plain["results"]);
        assert_eq!(nulls["usage"], plain["usage"]);
        assert_eq!(nulls["model"], MODEL);
    }

    // --- fields ---

    #[test]
    fn unknown_fields_are_400_naming_them() {
        for field in [
            "top_k",
            "rank_fields",
            "texts",
            "max_chunks_per_doc",
            "raw_scores",
            "truncate",
            "input",
        ] {
            let (status, body) = post(&engine(), request(json!({ field: 2 })));
            assert_error(status, &body, 400, Some(field));
            assert_eq!(
                message(&body),
                format!("Unrecognized request argument supplied: {field}")
            );
        }
    }

    #[test]
    fn an_absent_model_means_the_served_one() {
        let (status, body) = post(&engine(), json!({"query": QUERY, "documents": DOCUMENTS}));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["model"], MODEL);
    }

    #[test]
    fn an_unknown_model_is_404_model_not_found() {
        let (status, body) = post(&engine(), request(json!({"model": "rerank-english-v3.0"})));
        assert_error(status, &body, 404, Some("model"));
        assert_eq!(body["error"]["code"], "model_not_found");
    }

    #[test]
    fn a_non_string_model_is_400() {
        for model in [json!(1), json!([MODEL]), json!(true)] {
            assert_rejected(json!({ "model": model }), "model");
        }
    }

    #[test]
    fn a_missing_query_is_400() {
        let (status, body) = post(&engine(), json!({"model": MODEL, "documents": DOCUMENTS}));
        assert_error(status, &body, 400, Some("query"));
    }

    #[test]
    fn an_empty_or_wrongly_typed_query_is_400() {
        for query in [
            json!(""),
            json!(1),
            json!(null),
            json!(["a"]),
            json!({"text": "a"}),
        ] {
            assert_rejected(json!({ "query": query }), "query");
        }
    }

    #[test]
    fn a_missing_documents_list_is_400() {
        let (status, body) = post(&engine(), json!({"model": MODEL, "query": QUERY}));
        assert_error(status, &body, 400, Some("documents"));
    }

    #[test]
    fn an_empty_documents_list_is_400() {
        let (status, body) = post(&engine(), request(json!({"documents": []})));
        assert_error(status, &body, 400, Some("documents"));
        assert_eq!(
            message(&body),
            "'$.documents' is invalid: it must contain at least one item"
        );
    }

    #[test]
    fn empty_documents_are_400_naming_the_document() {
        for (documents, location) in [
            (json!([""]), "documents[0]"),
            (json!(["a", ""]), "documents[1]"),
            (json!(["a", {"text": ""}]), "documents[1].text"),
        ] {
            let (status, body) = post(&engine(), request(json!({ "documents": documents })));
            assert_error(status, &body, 400, Some("documents"));
            assert!(message(&body).contains(&format!("'{location}'")), "{body}");
        }
    }

    #[test]
    fn wrongly_typed_documents_are_400() {
        for documents in [
            json!("a"),
            json!(1),
            json!(null),
            json!({"text": "a"}),
            json!([1]),
            json!([null]),
            json!(["a", ["b"]]),
            json!([{"text": 1}]),
            json!([{"text": null}]),
            json!([{}]),
            json!([{"content": "a"}]),
            json!([{"text": "a", "title": "b"}]),
        ] {
            assert_rejected(json!({ "documents": documents }), "documents");
        }
    }

    #[test]
    fn an_object_document_with_another_field_is_400_naming_it() {
        let documents = json!(["a", {"text": "b", "title": "c"}]);
        let (status, body) = post(&engine(), request(json!({ "documents": documents })));
        assert_error(status, &body, 400, Some("documents"));
        assert!(
            message(&body).contains("'documents[1]'") && message(&body).contains("'title'"),
            "{body}"
        );
    }

    #[test]
    fn the_document_limit_is_inclusive_and_named_when_exceeded() {
        let engine = engine_with(Config {
            max_rerank_documents: 3,
            ..Config::default()
        });
        let (status, body) = post(&engine, request(json!({"documents": ["a", "b", "c"]})));
        assert_eq!(status, 200, "{body}");
        let (status, body) = post(&engine, request(json!({"documents": ["a", "b", "c", "d"]})));
        assert_error(status, &body, 400, Some("documents"));
        assert_eq!(
            message(&body),
            "'$.documents' is invalid: array length must be 3 or less, but got 4"
        );
    }

    #[test]
    fn the_default_config_accepts_a_thousand_documents() {
        let documents: Vec<String> = (0..1000).map(|n| format!("document {n}")).collect();
        let (status, body) = post(&engine(), request(json!({ "documents": documents })));
        assert_eq!(status, 200);
        assert_eq!(results(&body).len(), 1000);
        let documents: Vec<&str> = vec!["d"; 1001];
        assert_rejected(json!({ "documents": documents }), "documents");
    }

    // --- length ---

    /// A limit of 12 tokens; the query "capital of France" has 5 (capi tal of fran ce).
    fn short_context(overlength: OverlengthPolicy) -> Engine {
        engine_with(Config {
            max_input_tokens: 12,
            overlength,
            ..Config::default()
        })
    }

    const SHORT_QUERY: &str = "capital of France";
    /// Seven one-token words, then the query's five tokens: 12 tokens, 17 with the query.
    const LONG_DOCUMENT: &str = "aaaa bbbb cccc dddd eeee ffff gggg capital of France";
    /// What truncation keeps of `LONG_DOCUMENT` beside `SHORT_QUERY`.
    const LONG_DOCUMENT_START: &str = "aaaa bbbb cccc dddd eeee ffff gggg";

    fn short_request(documents: &[&str], extra: Value) -> Value {
        let mut body = json!({"query": SHORT_QUERY, "documents": documents});
        if let (Value::Object(base), Value::Object(extra)) = (&mut body, extra) {
            base.extend(extra);
        }
        body
    }

    #[test]
    fn an_over_length_pair_is_400_naming_the_document_under_reject() {
        let engine = short_context(OverlengthPolicy::Reject);
        let body = short_request(&["France", LONG_DOCUMENT], json!({}));
        let (status, body) = post(&engine, body);
        assert_error(status, &body, 400, Some("documents"));
        assert_eq!(
            message(&body),
            "the query with documents[1] has 17 tokens; this model's maximum context length is 12 tokens"
        );
        assert_eq!(body["error"]["code"], "context_length_exceeded");
    }

    #[test]
    fn a_pair_at_the_limit_is_accepted_under_reject() {
        let engine = short_context(OverlengthPolicy::Reject);
        let (status, body) = post(&engine, short_request(&[LONG_DOCUMENT_START], json!({})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["usage"]["prompt_tokens"], 12);
    }

    #[test]
    fn an_over_length_document_is_scored_on_its_start_under_truncate() {
        let engine = short_context(OverlengthPolicy::Truncate);
        let (status, long) = post(
            &engine,
            short_request(&[LONG_DOCUMENT], json!({"return_documents": true})),
        );
        assert_eq!(status, 200, "{long}");
        assert_eq!(long["usage"]["prompt_tokens"], 12);
        assert_eq!(results(&long)[0]["document"]["text"], LONG_DOCUMENT);
        let (_, start) = post(&engine, short_request(&[LONG_DOCUMENT_START], json!({})));
        assert_eq!(ranking(&long)[0].1, ranking(&start)[0].1);
        let config = engine.config();
        assert_eq!(
            ranking(&long)[0].1,
            rerank_score(SHORT_QUERY, LONG_DOCUMENT, config)
        );
        assert!(
            ranking(&long)[0].1 < rerank_score(SHORT_QUERY, LONG_DOCUMENT, &Config::default()),
            "the cut lost the shared tokens"
        );
    }

    #[test]
    fn the_whole_pair_is_scored_under_aggregate() {
        let engine = short_context(OverlengthPolicy::Aggregate);
        let (status, body) = post(&engine, short_request(&[LONG_DOCUMENT], json!({})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["usage"]["prompt_tokens"], 17);
        assert_eq!(
            ranking(&body)[0].1,
            rerank_score(SHORT_QUERY, LONG_DOCUMENT, &Config::default())
        );
    }

    #[test]
    fn a_query_over_the_limit_is_400_whether_rejecting_or_truncating() {
        let query = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm";
        for overlength in [OverlengthPolicy::Reject, OverlengthPolicy::Truncate] {
            let body = json!({"query": query, "documents": ["a"]});
            let (status, body) = post(&short_context(overlength), body);
            assert_error(status, &body, 400, Some("query"));
            assert_eq!(
                message(&body),
                "the query has 13 tokens; this model's maximum context length is 12 tokens"
            );
        }
    }

    #[test]
    fn a_query_at_the_limit_leaves_no_room_and_still_scores_under_truncate() {
        let query = "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll";
        let body = json!({"query": query, "documents": ["aaaa"]});
        let (status, body) = post(&short_context(OverlengthPolicy::Truncate), body);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["usage"]["prompt_tokens"], 12);
    }

    // --- access and transport, shared with embeddings ---

    #[test]
    fn a_configured_key_is_required() {
        let engine = engine_with(Config {
            api_key: Some("sk-test-key".to_owned()),
            ..Config::default()
        });
        let body = request(json!({})).to_string();
        for (authorization, status) in [
            (None, 401),
            (Some("Bearer sk-wrong"), 401),
            (Some("Bearer sk-test-key"), 200),
        ] {
            let response = engine.handle(&HttpRequest {
                method: "POST",
                path: ROUTE,
                authorization,
                content_type: Some("application/json"),
                body: body.as_bytes(),
            });
            assert_eq!(response.status, status, "{authorization:?}");
        }
    }

    #[test]
    fn other_content_types_are_415() {
        let body = request(json!({})).to_string();
        let response = engine().handle(&HttpRequest {
            method: "POST",
            path: ROUTE,
            authorization: None,
            content_type: Some("text/plain"),
            body: body.as_bytes(),
        });
        assert_error(response.status, &body_of(&response), 415, None);
    }

    #[test]
    fn malformed_or_non_object_bodies_are_400() {
        for body in [&b"{"[..], b"", b"[1]", b"\"query\"", b"{\"query\": }"] {
            let response = send(&engine(), "POST", ROUTE, body);
            assert_error(response.status, &body_of(&response), 400, None);
        }
    }

    #[test]
    fn a_body_over_the_limit_is_413() {
        let engine = engine_with(Config {
            max_body_bytes: 64,
            ..Config::default()
        });
        let body = request(json!({})).to_string();
        let response = send(&engine, "POST", ROUTE, body.as_bytes());
        assert_error(response.status, &body_of(&response), 413, None);
    }

    #[test]
    fn hostile_bodies_never_get_a_server_error() {
        let bodies = [
            r#"{"query":"a","documents":["b"],"top_n":1e999}"#.to_owned(),
            r#"{"query":"\ud800","documents":["b"]}"#.to_owned(),
            r#"{"query":"a","query":"b","documents":["c"]}"#.to_owned(),
            format!(r#"{{"query":"a","documents":{}}}"#, "[".repeat(100_000)),
            json!({"query": "a", "documents": [{"text": {"text": "b"}}]}).to_string(),
        ];
        for body in bodies {
            let response = send(&engine(), "POST", ROUTE, body.as_bytes());
            assert!((200..500).contains(&response.status), "{}", response.status);
        }
    }

    #[test]
    fn parsing_keeps_document_texts_as_sent() {
        let body = json!({"query": "q", "documents": ["A b", {"text": " c "}], "top_n": 1});
        let parsed = RerankRequest::from_json(body.to_string().as_bytes(), &Config::default());
        assert_eq!(
            parsed,
            Ok(RerankRequest {
                query: "q".to_owned(),
                documents: vec!["A b".to_owned(), " c ".to_owned()],
                top_n: Some(1),
                return_documents: false,
            })
        );
    }

    #[test]
    fn cohere_optional_fields_sent_as_null_are_absent() {
        let engine = Engine::new(Config::default());
        let (status, _) = post(
            &engine,
            request(json!({"documents": ["a", "b"], "max_tokens_per_doc": null})),
        );
        assert_eq!(status, 200);
        let (status, body) = post(
            &engine,
            request(json!({"documents": ["a", "b"], "max_tokens_per_doc": 512})),
        );
        assert_eq!(status, 400, "{body}");
    }
}
