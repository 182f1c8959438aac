//! The rerank dialects besides Cohere's, as their servers speak them: TEI's, NVIDIA
//! NIM's and Voyage's requests read into the reference engine's, its answers written
//! back in theirs, with each dialect's documented switches (TEI's `raw_scores` and
//! `truncate`, NIM's `truncate`, Voyage's `truncation`) and TEI's errors.

use super::body::{edit, error, fields, is_rerank, longest_first, refused_as_too_long};
use crate::wire::{Answer, Incoming};
use reference_server::{Config, OverlengthPolicy, pair_logit, tokenize};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// NIM's route and the only one: `/v1/ranking` read into the engine's rerank request
/// (422 without a `query.text` and `passages` of `{text}`), every rerank route of the
/// other dialects answered 404.
pub(super) fn nim_request(request: &mut Incoming) -> Option<Answer> {
    if is_rerank(request) {
        return Some(error(404, "Not Found"));
    }
    if request.method != "POST" || request.path != NIM_ROUTE {
        return None;
    }
    let Some(engine) = request.json().and_then(|body| nim_as_engine(&body)) else {
        return Some(Answer::json_body(
            422,
            &json!({"error": "query.text and passages[].text are required"}),
        ));
    };
    request.path = "/v1/rerank".to_owned();
    request.body = Value::Object(engine).to_string().into_bytes();
    None
}

/// A NIM request said as the engine's: `query.text` as `query`, each `passages[].text`
/// as a document, `truncate` left to [`nim_cut`], every other field kept (the engine
/// refuses unknown ones 400, as NIM's `/v1/ranking` refuses `top_k`, LiteLLM's
/// `nvidia_nim` rerank transformation notes); `None` without a query and passages.
fn nim_as_engine(body: &Value) -> Option<Map<String, Value>> {
    let query = body.pointer("/query/text")?.as_str()?;
    let passages: Vec<&str> = body
        .get("passages")?
        .as_array()?
        .iter()
        .filter_map(|d| d.get("text")?.as_str())
        .collect();
    let mut engine = body.as_object()?.clone();
    engine.remove("truncate");
    engine.remove("passages");
    engine.insert("query".to_owned(), json!(query));
    engine.insert("documents".to_owned(), json!(passages));
    Some(engine)
}

/// Voyage's request read into the engine's: `top_k` as `top_n`, `truncation` dropped
/// ([`voyage_answer`] applies it); Cohere's `top_n` refused as the unknown field it is
/// to Voyage.
pub(super) fn voyage_request(request: &mut Incoming) -> Option<Answer> {
    if fields(request).is_some_and(|f| f.contains_key("top_n")) {
        return Some(voyage_error(
            400,
            "Unrecognized request argument supplied: top_n",
        ));
    }
    edit(request, voyage_as_engine);
    None
}

fn voyage_as_engine(fields: &mut Map<String, Value>) {
    if let Some(top_k) = fields.remove("top_k") {
        fields.insert("top_n".to_owned(), top_k);
    }
    fields.remove("truncation");
}

/// Voyage's `truncation`, true unless sent false ("An error is raised" then, Voyage's
/// `RerankRequest`): a pair the engine refused as over its limit is cut and scored.
pub(super) fn voyage_cut(request: &Incoming, answer: &mut Answer, config: &Config) {
    let Some(mut sent) = fields(request) else {
        return;
    };
    let cuts = sent.get("truncation") != Some(&json!(false));
    if cuts && refused_as_too_long(answer) {
        voyage_as_engine(&mut sent);
        *answer = engine_answer(request, &sent, &cutting(config));
    }
}

/// The engine's rerank answer as Voyage writes it: `data[]`, each document a plain
/// string; a refusal as `{detail}`.
pub(super) fn voyage_answer(answer: &mut Answer) {
    if let Some(said) = answer.openai_error_object() {
        let message = said
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        *answer = voyage_error(answer.status, message);
        return;
    }
    let Some(mut body) = answer.json() else {
        return;
    };
    let Some(results) = body.get_mut("results").map(Value::take) else {
        return;
    };
    let data: Vec<Value> = results
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            let mut item = json!({"index": r["index"], "relevance_score": r["relevance_score"]});
            // The text as a plain string; a document that is not {text} (a null, as a
            // quirk before wrote it) as it is.
            if let Some(document) = r.get("document") {
                item["document"] = document.get("text").unwrap_or(document).clone();
            }
            item
        })
        .collect();
    let usage = body.get("usage").cloned().unwrap_or(Value::Null);
    answer
        .set_json(&json!({"object": "list", "data": data, "model": body["model"], "usage": usage}));
}

/// Voyage's error body, `{detail}`: what its client reads (`handle_error_response` in
/// the voyageai package's `api_requestor.py`).
fn voyage_error(status: u16, message: &str) -> Answer {
    Answer::json_body(status, &json!({ "detail": message }))
}

/// The path of NIM's text reranking.
const NIM_ROUTE: &str = "/v1/ranking";

/// NIM's `truncate: "END"`: a pair the engine refused as over its limit is cut at the
/// passage's end and scored; `"NONE"` (and no `truncate`) leaves the refusal.
///
/// The request is the client's body at the engine's route (see `Persona::answer`), so
/// NIM's request is known by its `passages`.
pub(super) fn nim_cut(request: &Incoming, answer: &mut Answer, config: &Config) {
    let sent = request.json().unwrap_or_default();
    let Some(engine) = nim_as_engine(&sent) else {
        return;
    };
    if sent.get("truncate") == Some(&json!("END")) && refused_as_too_long(answer) {
        *answer = engine_answer(request, &engine, &cutting(config));
    }
}

/// The engine's answer to a `/v1/ranking` request as NIM writes it: each result's
/// index with its raw logit, the engine's probability taken back through the sigmoid
/// (a score outside (0, 1) or not a number, as a quirk before wrote it, kept), in the
/// engine's order.
pub(super) fn nim_answer(request: &Incoming, answer: &mut Answer) {
    let sent = request.json().unwrap_or_default();
    if answer.status != 200 || sent.get("passages").is_none() {
        return;
    }
    let Some(body) = answer.json() else {
        return;
    };
    let rankings: Vec<Value> = body["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|r| {
            let logit = match r["relevance_score"].as_f64() {
                Some(p) if p > 0.0 && p < 1.0 => json!((p / (1.0 - p)).ln()),
                // Already a logit, or not a number (as a quirk before wrote it).
                _ => r["relevance_score"].clone(),
            };
            json!({"index": r["index"], "logit": logit})
        })
        .collect();
    answer.set_json(&json!({ "rankings": rankings }));
}

/// TEI's `RerankRequest` (`router/src/http/types.rs` in
/// huggingface/text-embeddings-inference): what serde reads, every other field ignored.
#[derive(Deserialize)]
struct TeiRequest {
    query: String,
    texts: Vec<String>,
    /// `null` is the server's `--auto-truncate`.
    truncate: Option<bool>,
    #[serde(default)]
    raw_scores: bool,
    #[serde(default)]
    return_text: bool,
}

impl TeiRequest {
    /// The request as TEI's axum `Json` extractor reads it: a body that is not JSON is
    /// refused 400 and one that does not fit the struct 422, both in plain text with
    /// serde's words ("missing field `texts` at line 1 column 278").
    fn parse(body: &[u8]) -> Result<TeiRequest, Answer> {
        serde_json::from_slice(body).map_err(|e| {
            if e.is_syntax() || e.is_eof() {
                Answer::plain_text(
                    400,
                    &format!("Failed to parse the request body as JSON: {e}"),
                )
            } else {
                Answer::plain_text(
                    422,
                    &format!("Failed to deserialize the JSON body into the target type: {e}"),
                )
            }
        })
    }

    /// Whether a pair over the limit is cut, on a server run with `auto_truncate`.
    fn truncates(&self, auto_truncate: bool) -> bool {
        self.truncate.unwrap_or(auto_truncate)
    }

    /// The most tokens of the query and one text together.
    fn longest_pair(&self, config: &Config) -> usize {
        let query = tokenize(&self.query, config.vocab_size).len();
        self.texts
            .iter()
            .map(|t| query + tokenize(t, config.vocab_size).len())
            .max()
            .unwrap_or(query)
    }

    /// Every text scored as TEI scores it (`core/src/infer.rs`, `predict`): the pair cut
    /// longest first under `truncate`, the logit's sigmoid unless `raw_scores`; each as
    /// the engine writes a result, so that the quirks after this one read it.
    fn scored(&self, config: &Config, auto_truncate: bool) -> Vec<Value> {
        let query = tokenize(&self.query, config.vocab_size);
        self.texts
            .iter()
            .enumerate()
            .map(|(index, text)| {
                let text_ids = tokenize(text, config.vocab_size);
                let (query_ids, text_ids) = if self.truncates(auto_truncate) {
                    longest_first(query.clone(), text_ids, config.max_input_tokens)
                } else {
                    (query.clone(), text_ids)
                };
                let logit = pair_logit(&query_ids, &text_ids);
                let score = if self.raw_scores {
                    logit
                } else {
                    1.0 / (1.0 + (-logit).exp())
                };
                let mut result = json!({"index": index, "relevance_score": score});
                if self.return_text {
                    result["document"] = json!({ "text": text });
                }
                result
            })
            .collect()
    }
}

/// TEI's error body, `{error, error_type}` (`ErrorResponse` in `router/src/lib.rs`).
fn tei_error(status: u16, error_type: &str, message: &str) -> Answer {
    Answer::json_body(status, &json!({"error": message, "error_type": error_type}))
}

/// TEI's rerank handler (`rerank` in `router/src/http/server.rs`) up to the model, in its
/// order: the body parsed ([`TeiRequest::parse`]); an empty `texts` refused 400
/// `Empty`; more than 32 texts (its default `--max-client-batch-size`) 422
/// `Validation`; a pair over the model's limit, with `truncate: false`, 422 `Validation`
/// ("`inputs` must have less than 512 tokens. Given: N", `core/src/tokenization.rs`).
/// A request it takes is read into the engine's: `texts` as `documents`, `return_text`
/// as `return_documents`, every other field dropped; [`tei_answer`] applies
/// `raw_scores` and `truncate` to the answer.
pub(super) fn tei_request(
    request: &mut Incoming,
    config: &Config,
    auto_truncate: bool,
) -> Option<Answer> {
    let tei = match TeiRequest::parse(&request.body) {
        Ok(tei) => tei,
        Err(refused) => return Some(refused),
    };
    if tei.texts.is_empty() {
        return Some(tei_error(400, "Empty", "`texts` cannot be empty"));
    }
    let texts = tei.texts.len();
    if texts > TEI_MAX_CLIENT_BATCH_SIZE {
        let message =
            format!("batch size {texts} > maximum allowed batch size {TEI_MAX_CLIENT_BATCH_SIZE}");
        return Some(tei_error(422, "Validation", &message));
    }
    let tokens = tei.longest_pair(config);
    if !tei.truncates(auto_truncate) && tokens > config.max_input_tokens {
        let message = format!(
            "Input validation error: `inputs` must have less than {} tokens. Given: {tokens}",
            config.max_input_tokens
        );
        return Some(tei_error(422, "Validation", &message));
    }
    edit(request, |f| {
        if let Some(texts) = f.remove("texts") {
            f.insert("documents".to_owned(), texts);
        }
        if let Some(echo) = f.remove("return_text") {
            f.insert("return_documents".to_owned(), echo);
        }
        f.retain(|name, _| TEI_FIELDS.contains(&name.as_str()));
    });
    None
}

/// TEI's `--max-client-batch-size` default: more texts in one request are refused 422
/// (rerank-contracts §1, TEI's `router/src/http/server.rs`).
const TEI_MAX_CLIENT_BATCH_SIZE: usize = 32;

/// What TEI's `RerankRequest` reads, as the engine names it after [`tei_request`].
const TEI_FIELDS: [&str; 3] = ["query", "documents", "return_documents"];

/// The engine's answer to a TEI request as TEI gives it: what the engine refuses and TEI
/// scores (an empty text beside a query, a pair `truncate` cuts) scored, every text
/// rescored under `raw_scores` or `truncate`, and the results sorted as TEI sorts them,
/// ascending then reversed, so that equal scores come out highest index first.
pub(super) fn tei_answer(
    request: &Incoming,
    answer: &mut Answer,
    config: &Config,
    auto_truncate: bool,
) {
    if !is_rerank(request) {
        return;
    }
    let Ok(tei) = TeiRequest::parse(&request.body) else {
        return;
    };
    let refused_by_the_engine_alone = answer.status == 400
        && answer.openai_error_object().is_some_and(|e| {
            let message = e.get("message").and_then(Value::as_str).unwrap_or_default();
            message.contains("maximum context length") || message.contains("must not be empty")
        });
    if refused_by_the_engine_alone {
        *answer = Answer::json_body(200, &json!({"results": [], "model": config.model_id}));
    }
    if answer.status != 200 {
        return;
    }
    let Some(mut body) = answer.json() else {
        return;
    };
    let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) else {
        return;
    };
    if refused_by_the_engine_alone || tei.truncates(auto_truncate) || tei.raw_scores {
        *results = tei.scored(config, auto_truncate);
    }
    let key = |r: &Value| {
        (
            r["relevance_score"].as_f64().unwrap_or_default(),
            r["index"].as_u64().unwrap_or_default(),
        )
    };
    results.sort_by(|a, b| {
        let ((x, i), (y, j)) = (key(a), key(b));
        x.total_cmp(&y).then(i.cmp(&j))
    });
    results.reverse();
    answer.set_json(&body);
}

/// Each score a dialect documents as a raw logit written as its sigmoid instead: NIM's
/// `rankings[].logit`, and TEI's scores under `raw_scores: true` (before the bare
/// array is written).
pub(super) fn probabilities_for_logits(request: &Incoming, answer: &mut Answer) {
    let Some(mut body) = answer.json() else {
        return;
    };
    let raw_in_tei = fields(request).is_some_and(|f| f.get("raw_scores") == Some(&json!(true)));
    let (list, name) = if raw_in_tei {
        ("results", "relevance_score")
    } else {
        ("rankings", "logit")
    };
    let Some(items) = body.get_mut(list).and_then(Value::as_array_mut) else {
        return;
    };
    for item in items.iter_mut() {
        if let Some(logit) = item[name].as_f64() {
            item[name] = json!(1.0 / (1.0 + (-logit).exp()));
        }
    }
    answer.set_json(&body);
}

/// `config` cutting an over-length pair instead of refusing it: a dialect's truncation
/// switch turned on.
fn cutting(config: &Config) -> Config {
    Config {
        overlength: OverlengthPolicy::Truncate,
        ..config.clone()
    }
}

/// The engine's answer to `body`, in its own words, at its rerank route, under `config`.
fn engine_answer(request: &Incoming, body: &Map<String, Value>, config: &Config) -> Answer {
    let asked = Incoming {
        path: "/v1/rerank".to_owned(),
        body: Value::Object(body.clone()).to_string().into_bytes(),
        ..request.clone()
    };
    Answer::from(reference_server::Engine::new(config.clone()).handle(&asked.as_engine_request()))
}
