//! The one parser of rerank answers: the Cohere and Jina shape the contract asks for,
//! and the shapes real servers answer instead, recognised as what they are.
//!
//! | shape | who answers it | what it holds |
//! |---|---|---|
//! | `{"results": [{index, relevance_score, document?}]}` | Cohere, Jina, vLLM, Infinity, llama.cpp, LiteLLM | the contract's |
//! | `[{index, score, text?}]` | TEI, SGLang, Dynamo's SGLang worker | a bare array |
//! | `{"data": [{index, relevance_score, document?}]}` | Voyage | `data` for `results` |
//! | `{"rankings": [{index, logit}]}` | NVIDIA NIM | raw logits |
//!
//! Clauses of the shape read [`RerankAnswer::shape`] and each item as it came; clauses
//! of the scores read [`RerankAnswer::scores`], which works for every recognised shape,
//! so a server answering TEI's shape is still judged on what its scores do.

use crate::http::Reply;
use serde::Serialize;
use serde_json::Value;

/// Which shape a rerank answer has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RerankShape {
    /// `{"results": [...]}`: Cohere's and Jina's, the contract's.
    Results,
    /// A bare JSON array: TEI's and SGLang's.
    BareArray,
    /// `{"data": [...]}`: Voyage's.
    Data,
    /// `{"rankings": [...]}` with `logit`: NVIDIA NIM's.
    Rankings,
}

impl RerankShape {
    /// What the shape is, for reasons: `a bare array of {index, score} (TEI's and SGLang's shape)`.
    pub(crate) fn described(self) -> &'static str {
        match self {
            RerankShape::Results => {
                "results[] of {index, relevance_score} (Cohere's and Jina's shape)"
            }
            RerankShape::BareArray => "a bare array of {index, score} (TEI's and SGLang's shape)",
            RerankShape::Data => "data[] of {index, relevance_score} (Voyage's shape)",
            RerankShape::Rankings => "rankings[] of {index, logit} (NVIDIA NIM's shape)",
        }
    }
}

/// The request language a server's rerank route speaks, found from its answers (the
/// route search sends both), never from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RerankDialect {
    /// `{model, query, documents, top_n, return_documents}`: Cohere's, Jina's, vLLM's,
    /// Infinity's, llama.cpp's, LiteLLM's; the contract's.
    Cohere,
    /// `{query, texts, return_text, raw_scores, truncate, truncation_direction}`:
    /// Hugging Face TEI's (`router/src/http/types.rs` `RerankRequest`): no model, no
    /// top_n.
    Tei,
    /// `{model, query: {text}, passages: [{text}], truncate}` at `/v1/ranking`,
    /// answered `{rankings: [{index, logit}]}` (raw logits): NVIDIA NIM's text
    /// reranking; no top_n, no documents echoed.
    Nim,
    /// `{model, query, documents, top_k, return_documents, truncation}` answered
    /// `{data: [{index, relevance_score, document?}]}`, the document a plain string:
    /// Voyage's (its SDK's `RerankRequest`, generated from its API definition).
    Voyage,
}

impl RerankDialect {
    /// The dialect, for reasons: `TEI's`.
    pub fn described(self) -> &'static str {
        match self {
            RerankDialect::Cohere => "Cohere's",
            RerankDialect::Tei => "TEI's",
            RerankDialect::Nim => "NVIDIA NIM's",
            RerankDialect::Voyage => "Voyage's",
        }
    }

    /// The request it reads, for reasons: `{query, texts}`.
    pub(crate) fn request(self) -> &'static str {
        match self {
            RerankDialect::Cohere => "{query, documents}",
            RerankDialect::Tei => "{query, texts}",
            RerankDialect::Nim => "{query: {text}, passages: [{text}]}",
            RerankDialect::Voyage => "{query, documents, top_k}",
        }
    }

    /// The field that asks for raw logits where the default is a probability, where the
    /// dialect documents one: TEI's `raw_scores` ("raw_scores: false" by default, the
    /// sigmoid applied unless it is true, `core/src/infer.rs`). NIM always answers
    /// logits; Cohere's and Voyage's document no such switch.
    pub(crate) fn raw_scores_switch(self) -> Option<&'static str> {
        (self == RerankDialect::Tei).then_some("raw_scores")
    }

    /// The dialect's documented switch between cutting a pair over the model's limit
    /// and refusing it: TEI's `truncate` (`RerankRequest`, `null` = the server's
    /// `--auto-truncate`), NIM's `truncate: "END" | "NONE"` (NeMo Retriever's reranking
    /// API), Voyage's `truncation` (default true; false: "An error is raised"). Cohere's
    /// has none: it cuts documents at `max_tokens_per_doc`.
    pub(crate) fn truncation_switch(self) -> Option<TruncationSwitch> {
        use serde_json::json;
        let (field, cut, refuse) = match self {
            RerankDialect::Cohere => return None,
            RerankDialect::Tei => ("truncate", json!(true), json!(false)),
            RerankDialect::Nim => ("truncate", json!("END"), json!("NONE")),
            RerankDialect::Voyage => ("truncation", json!(true), json!(false)),
        };
        Some(TruncationSwitch { field, cut, refuse })
    }

    /// The error body the dialect's clients read, where it has one of its own: TEI's
    /// `ErrorResponse {error, error_type}` (`router/src/lib.rs`, every error of its
    /// OpenAPI document's rerank route), Voyage's `{detail}` (the voyageai client's
    /// `handle_error_response`).
    pub(crate) fn error_body(self) -> Option<ErrorBody> {
        match self {
            RerankDialect::Tei => Some(ErrorBody {
                fields: &["error", "error_type"],
                read_by: "huggingface_hub raises its ValidationError from error_type, Haystack's TEI ranker its RuntimeError from error",
            }),
            RerankDialect::Voyage => Some(ErrorBody {
                fields: &["detail"],
                read_by: "the voyageai client raises its InvalidRequestError with detail, and without it an APIError \"Invalid response object from API\"",
            }),
            RerankDialect::Cohere | RerankDialect::Nim => None,
        }
    }

    /// `body`, a request in Cohere's dialect, said in this one; why it has no meaning
    /// here where a field has no counterpart (TEI names no model and has no top_n).
    /// `model` is the run's: dropped where the dialect names none; another model name
    /// has no meaning there. A request already in the dialect, or not a JSON object
    /// (a client mistake), is sent as it is.
    pub(crate) fn translate(self, body: &Value, model: &str) -> Result<Value, String> {
        let Value::Object(fields) = body else {
            return Ok(body.clone());
        };
        let written_in_cohere = fields.contains_key("documents");
        if self == RerankDialect::Cohere || (self != RerankDialect::Voyage && !written_in_cohere) {
            return Ok(body.clone());
        }
        let mut said = serde_json::Map::new();
        for (name, value) in fields {
            match self.field(name, value, model) {
                Said::Kept => {
                    said.insert(name.clone(), value.clone());
                }
                Said::As(new_name, new_value) => {
                    said.insert(new_name.to_owned(), new_value);
                }
                Said::Dropped => {}
                Said::NoMeaning(why) => {
                    return Err(format!(
                        "no meaning in {} rerank dialect, which {why}",
                        self.described()
                    ));
                }
            }
        }
        Ok(Value::Object(said))
    }

    /// How one field of a Cohere request is said in this dialect.
    fn field(self, name: &str, value: &Value, model: &str) -> Said {
        use RerankDialect::{Nim, Tei, Voyage};
        let objects = value
            .as_array()
            .is_some_and(|d| d.iter().any(Value::is_object));
        match (self, name) {
            (Tei, "documents") if objects => {
                Said::NoMeaning("takes texts as strings, not {text} objects")
            }
            (Tei, "documents") => Said::As("texts", value.clone()),
            (Tei, "model") if value.as_str() == Some(model) => Said::Dropped,
            (Tei, "model") => Said::NoMeaning("names no model"),
            (Tei, "top_n") => Said::NoMeaning("has no top_n: it answers every text"),
            (Tei, "return_documents") if value.is_null() => {
                Said::NoMeaning("reads return_text as a boolean, never null")
            }
            (Tei, "return_documents") => Said::As("return_text", value.clone()),
            // NIM: the query and each document as {text}; objects and a client's
            // mistakes as they are; the model kept.
            (Nim, "query") => Said::As("query", as_text(value)),
            (Nim, "documents") if objects => {
                Said::NoMeaning("takes every passage as {text}: that is its plain request")
            }
            (Nim, "documents") => Said::As(
                "passages",
                match value {
                    Value::Array(documents) => {
                        Value::Array(documents.iter().map(as_text).collect())
                    }
                    other => other.clone(),
                },
            ),
            (Nim, "top_n") => Said::NoMeaning("has no top_n: it ranks every passage"),
            (Nim, "return_documents") => {
                Said::NoMeaning("answers indices and logits, never the passages")
            }
            (Voyage, "documents") if objects => {
                Said::NoMeaning("takes documents as strings, not {text} objects")
            }
            (Voyage, "top_n") => Said::As("top_k", value.clone()),
            (Tei | Nim, "max_tokens_per_doc") => {
                Said::NoMeaning("has no max_tokens_per_doc (it truncates with truncate)")
            }
            (Voyage, "max_tokens_per_doc") => {
                Said::NoMeaning("has no max_tokens_per_doc (it truncates with truncation)")
            }
            _ => Said::Kept,
        }
    }
}

/// A dialect's own error body: its fields, each a string, and the clients that read it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ErrorBody {
    pub(crate) fields: &'static [&'static str],
    pub(crate) read_by: &'static str,
}

/// A dialect's switch between cutting an over-length pair and refusing it: the field
/// and its two values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TruncationSwitch {
    pub(crate) field: &'static str,
    pub(crate) cut: Value,
    pub(crate) refuse: Value,
}

impl TruncationSwitch {
    /// `truncate: true`, for reasons.
    pub(crate) fn cutting(&self) -> String {
        format!("{}: {}", self.field, self.cut)
    }

    /// `truncate: false`, for reasons.
    pub(crate) fn refusing(&self) -> String {
        format!("{}: {}", self.field, self.refuse)
    }
}

/// How a field of a Cohere request is said in another dialect.
enum Said {
    Kept,
    As(&'static str, Value),
    Dropped,
    /// The field has no counterpart there: why.
    NoMeaning(&'static str),
}

/// A string as NIM's `{text}`; anything else as it is.
fn as_text(value: &Value) -> Value {
    match value {
        Value::String(_) => serde_json::json!({ "text": value }),
        other => other.clone(),
    }
}

/// The documents a rerank request sent, in whichever dialect it was said: Cohere's
/// `documents`, TEI's `texts` or NIM's `passages`.
pub(crate) fn sent_documents(request: &Value) -> Option<&Vec<Value>> {
    request
        .get("documents")
        .or_else(|| request.get("texts"))
        .or_else(|| request.get("passages"))?
        .as_array()
}

/// What a result says of its document.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Echo {
    Absent,
    /// `{"text": …}`.
    Text(String),
    Null,
    /// A bare string (Infinity with `return_documents`).
    String(String),
    /// Anything else, as JSON.
    Other(String),
}

/// One result as it came.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RerankItem {
    /// The `index` value as sent.
    pub index: Value,
    /// The score value as sent (`relevance_score`, `score` or `logit` by shape).
    pub score: Value,
    pub document: Echo,
}

impl RerankItem {
    /// The index, if it is a non-negative integer.
    pub(crate) fn position(&self) -> Option<usize> {
        self.index.as_u64().and_then(|i| usize::try_from(i).ok())
    }

    /// The score, if it is a JSON number.
    pub(crate) fn number(&self) -> Option<f64> {
        self.score.as_f64()
    }
}

/// A rerank answer in a recognised shape.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RerankAnswer {
    pub shape: RerankShape,
    pub items: Vec<RerankItem>,
}

impl RerankAnswer {
    /// Each document's score by index, for `n` documents (`None` where no result names
    /// it), or why the scores cannot be read: an index out of range or repeated, a score
    /// that is not a finite number.
    pub(crate) fn scores(&self, n: usize) -> Result<Vec<Option<f64>>, String> {
        let mut scores = vec![None; n];
        for (i, item) in self.items.iter().enumerate() {
            let index = item
                .position()
                .filter(|&p| p < n)
                .ok_or_else(|| format!("result {i} has index {}, not one of 0..{n}", item.index))?;
            let score = item.number().filter(|s| s.is_finite()).ok_or_else(|| {
                format!("result {i} has score {}, not a finite number", item.score)
            })?;
            if scores[index].replace(score).is_some() {
                return Err(format!("index {index} appears twice"));
            }
        }
        Ok(scores)
    }

    /// Every document's score, for `n` documents sent with all of them asked for.
    pub(crate) fn all_scores(&self, n: usize) -> Result<Vec<f64>, String> {
        let scores = self.scores(n)?;
        let missing = scores.iter().filter(|s| s.is_none()).count();
        if missing > 0 {
            return Err(format!("{} results for {n} documents", n - missing));
        }
        Ok(scores.into_iter().flatten().collect())
    }

    /// The indices in the order the answer lists them.
    pub(crate) fn order(&self) -> Vec<Option<usize>> {
        self.items.iter().map(RerankItem::position).collect()
    }
}

impl Reply {
    /// The rerank answer of a 200, in whichever recognised shape, or why it is none.
    pub(crate) fn rerank(&self) -> Result<RerankAnswer, String> {
        let json = self
            .json
            .as_ref()
            .ok_or_else(|| "the body is not JSON".to_owned())?;
        let (shape, items, score_key) = match json {
            Value::Array(items) => (RerankShape::BareArray, items, "score"),
            Value::Object(map) => {
                match (map.get("results"), map.get("data"), map.get("rankings")) {
                    (Some(Value::Array(items)), _, _) => {
                        (RerankShape::Results, items, "relevance_score")
                    }
                    (_, Some(Value::Array(items)), _) => {
                        (RerankShape::Data, items, "relevance_score")
                    }
                    (_, _, Some(Value::Array(items))) => (RerankShape::Rankings, items, "logit"),
                    _ => return Err("the body has no results array".to_owned()),
                }
            }
            _ => return Err("the body is neither an object nor an array".to_owned()),
        };
        let items = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item_of(item, score_key).ok_or_else(|| format!("result {i} is not an object"))
            })
            .collect::<Result<_, _>>()?;
        Ok(RerankAnswer { shape, items })
    }
}

fn item_of(item: &Value, score_key: &str) -> Option<RerankItem> {
    let map = item.as_object()?;
    let score = map
        .get(score_key)
        .or_else(|| map.get("relevance_score"))
        .or_else(|| map.get("score"))
        .cloned()
        .unwrap_or(Value::Null);
    let document = match map.get("document").or_else(|| map.get("text")) {
        None => Echo::Absent,
        Some(Value::Null) => Echo::Null,
        Some(Value::String(text)) => Echo::String(text.clone()),
        Some(Value::Object(doc)) => match doc.get("text") {
            Some(Value::String(text)) => Echo::Text(text.clone()),
            _ => Echo::Other(Value::Object(doc.clone()).to_string()),
        },
        Some(other) => Echo::Other(other.to_string()),
    };
    Some(RerankItem {
        index: map.get("index").cloned().unwrap_or(Value::Null),
        score,
        document,
    })
}

/// Whether a body is a ranking in one of the dialects: a `results` array, or a bare
/// array whose items carry an `index`.
pub(crate) fn is_ranking(json: &Value) -> bool {
    let bare_results = json
        .as_array()
        .and_then(|items| items.first())
        .is_some_and(|item| item.get("index").is_some());
    json.get("results").is_some_and(Value::is_array) || bare_results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cohere_request_is_said_in_teis_dialect_or_named_as_meaningless_there() {
        let tei = RerankDialect::Tei;
        let body = serde_json::json!({"model": "m", "query": "q", "documents": ["a", "b"],
            "return_documents": true, "top_k": 2});
        assert_eq!(
            tei.translate(&body, "m").unwrap(),
            serde_json::json!({"query": "q", "texts": ["a", "b"], "return_text": true, "top_k": 2})
        );
        let with = |field: &str, value: Value| {
            let mut b = body.clone();
            b[field] = value;
            tei.translate(&b, "m").unwrap_err()
        };
        assert!(with("top_n", serde_json::json!(2)).contains("has no top_n"));
        assert!(with("model", serde_json::json!("other")).contains("names no model"));
        assert!(with("documents", serde_json::json!([{"text": "a"}])).contains("{text} objects"));
        // A client mistake is kept as it is: documents that are not an array.
        let mistake = serde_json::json!({"query": "q", "documents": "Paris"});
        assert_eq!(tei.translate(&mistake, "m").unwrap()["texts"], "Paris");
        let already = serde_json::json!({"query": "q", "texts": ["a"]});
        assert_eq!(tei.translate(&already, "m").unwrap(), already);
        assert_eq!(RerankDialect::Cohere.translate(&body, "m").unwrap(), body);
    }
    use serde_json::json;

    fn reply(body: Value) -> Reply {
        Reply::json_for_test(200, body)
    }

    #[test]
    fn every_known_shape_is_recognised_and_its_scores_read() {
        let cohere = json!({"results": [{"index": 1, "relevance_score": 0.9, "document": {"text": "b"}}, {"index": 0, "relevance_score": 0.1}]});
        let answer = reply(cohere).rerank().unwrap();
        assert_eq!(answer.shape, RerankShape::Results);
        assert_eq!(answer.all_scores(2).unwrap(), [0.1, 0.9]);
        assert_eq!(answer.items[0].document, Echo::Text("b".into()));
        let tei = reply(json!([{"index": 0, "score": 0.7}])).rerank().unwrap();
        assert_eq!(
            (tei.shape, tei.all_scores(1).unwrap()),
            (RerankShape::BareArray, vec![0.7])
        );
        let nim = reply(json!({"rankings": [{"index": 0, "logit": -3.5}]}))
            .rerank()
            .unwrap();
        assert_eq!(
            (nim.shape, nim.all_scores(1).unwrap()),
            (RerankShape::Rankings, vec![-3.5])
        );
        let voyage =
            reply(json!({"data": [{"index": 0, "relevance_score": 0.5, "document": "a"}]}));
        let voyage = voyage.rerank().unwrap();
        assert_eq!(voyage.items[0].document, Echo::String("a".into()));
    }

    #[test]
    fn bad_indices_and_scores_are_named() {
        let answer = |body| reply(body).rerank().unwrap().all_scores(2).unwrap_err();
        assert_eq!(
            answer(json!({"results": [{"index": 2, "relevance_score": 0.5}]})),
            "result 0 has index 2, not one of 0..2"
        );
        assert_eq!(
            answer(json!({"results": [{"index": 0, "relevance_score": null}]})),
            "result 0 has score null, not a finite number"
        );
        assert_eq!(
            answer(
                json!({"results": [{"index": 0, "relevance_score": 1}, {"index": 0, "relevance_score": 1}]})
            ),
            "index 0 appears twice"
        );
        assert_eq!(
            answer(json!({"results": [{"index": 0, "relevance_score": 1}]})),
            "1 results for 2 documents"
        );
        assert!(reply(json!({"ok": true})).rerank().is_err());
    }
}
