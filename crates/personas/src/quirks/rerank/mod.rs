//! Quirks of rerank servers: what real ones do at `/v1/rerank`, `/rerank` and
//! `/v2/rerank` that the reference engine does not, and deliberate breaks of the rerank
//! clauses. Each variant's doc comment names its source (measured in the lab with the
//! tiny cross-encoders, `lab/rerank/README.md`, or the rerank notes' sources).

mod body;
mod dialects;

use crate::wire::{Answer, Incoming};
pub(super) use body::is_rerank;
use body::{edit, error, fields, longest_first, refused_as_too_long};
use reference_server::{Config, embed_tokens, pair_logit, rerank_logit, tokenize};
use serde_json::{Map, Value, json};

/// One way a persona's rerank route departs from the reference engine's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RerankQuirk {
    /// Serves no rerank route: 404 at each (OpenAI, Ollama, Dynamo with its vLLM worker,
    /// llama-cpp-python, the lab's LitServe embeddings server).
    NotServed,
    /// Serves rerank only at these paths, 404 elsewhere: TEI `/rerank` only
    /// (huggingface/text-embeddings-inference#683), llama.cpp `/rerank` and `/v1/rerank`.
    ServedAt(&'static [&'static str]),
    /// Answers every rerank request `status` with `message`: a model that cannot rerank
    /// (Infinity with an embedding model: 400 "ModelNotDeployedError: … does not
    /// support `rerank`", measured in the lab; llama-server without `--reranking`: 501
    /// "This server does not support reranking. Start it with `--reranking`"; TEI with an
    /// embedding model: 424 "model is not a re-ranker model").
    CannotRerank { status: u16, message: &'static str },
    /// Answers TEI's and SGLang's shape, a bare array of `{index, score}` (breaks RRS-001).
    BareArray,
    /// Refuses documents sent as `{"text"}` objects with this status: every lab server
    /// (vLLM and LiteLLM 400, Infinity and LitServe 422; rerank-contracts §4).
    StringDocumentsOnly(u16),
    /// Speaks TEI's rerank dialect as TEI's handler does (`RerankRequest` in
    /// `router/src/http/types.rs`, `rerank` in `router/src/http/server.rs`, in
    /// huggingface/text-embeddings-inference), before anything else: its parser's
    /// refusals (axum's plain text), `{error, error_type}` for an empty list (400),
    /// more than 32 texts (422) and a pair over the limit with `truncate: false` (422);
    /// `texts` read as the documents, `return_text` as `return_documents`, other fields
    /// ignored; `raw_scores` answered with logits, a pair over the limit cut longest
    /// first unless `truncate: false` (TEI 1.9.3's `--auto-truncate` is on); results
    /// sorted ascending then reversed. See `dialects.rs`. Measured against TEI 1.9.3
    /// built in the lab (`lab/rerank/README.md`). `auto_truncate` is the server's
    /// `--auto-truncate`, what a request without `truncate` gets (TEI 1.9.3: true).
    TeiDialect { auto_truncate: bool },
    /// Reads NVIDIA NIM's text reranking request and no other: `POST /v1/ranking` with
    /// `{model, query: {text}, passages: [{text}], truncate}` (docs.nvidia.com, NeMo
    /// Retriever text reranking, "using-reranking"); a body without them is refused 422;
    /// the rerank routes of other dialects are absent; `truncate: "END"` cuts a pair over
    /// the limit, `"NONE"` refuses it. Its answer is [`Self::RankingsOfLogits`]'s.
    NimDialect,
    /// Writes NIM's answer, `{"rankings": [{"index", "logit"}]}`, raw logits sorted
    /// highest first (last, after every other quirk).
    RankingsOfLogits,
    /// Reads Voyage's rerank request: `top_k` where Cohere's has `top_n` (which it
    /// refuses as unknown), `truncation` (default true) cutting a pair over the limit
    /// and `false` refusing it (voyageai SDK types, rerank-contracts §1). Its answer is
    /// [`Self::DataArray`]'s.
    VoyageDialect,
    /// Writes Voyage's answer, `{"object": "list", "data": [{index, relevance_score,
    /// document?}]}` with the document a plain string, and its refusals as `{detail}`
    /// (last, after every other quirk).
    DataArray,
    /// Writes the sigmoid, a probability, where the dialect documents raw logits: NIM's
    /// `rankings[].logit` (breaks RRQ-005 in NIM's dialect; after [`Self::NimDialect`]),
    /// TEI's scores under `raw_scores: true`, as a server that reads no `raw_scores`
    /// answers (breaks RRQ-008; after [`Self::TeiDialect`], before [`Self::BareArray`]).
    LogitsAsProbabilities,
    /// Lists results in input order, not by score: early llama.cpp builds (breaks
    /// RRS-004).
    InputOrder,
    /// Answers all N results whatever `top_n` says (breaks RRS-005).
    IgnoreTopN,
    /// Puts `"document": null` in every result not asked to echo it: Infinity 0.0.78
    /// (measured in the lab; LiteLLM's cohere provider fails on it; breaks RRS-010).
    NullDocument,
    /// Echoes `document` as a bare string when asked to: Infinity 0.0.78 (measured).
    DocumentAsString,
    /// Echoes `document` as `{"text"}` in every result, asked or not: vLLM 0.32
    /// (measured; `return_documents: false` is ignored).
    AlwaysEchoDocuments,
    /// Never echoes a document, even when asked to: llama-server (measured; it reads
    /// no `return_documents`).
    NeverEchoDocuments,
    /// Echoes the documents in input order beside results sorted by score, so that a
    /// result carries another document's text: a server that zips its sorted results
    /// with the request's documents (breaks RRS-006).
    DocumentsInInputOrder,
    /// Answers the classifier's raw logit instead of its sigmoid: llama-server and
    /// SGLang (measured; breaks RRQ-005).
    Logits,
    /// Scores by the cosine of the engine's embeddings of query and document, in
    /// [-1, 1]: vLLM's `/rerank` on an embedding model (measured on all-MiniLM-L6-v2).
    Cosine,
    /// Applies a sigmoid to the probabilities again, squeezing them into 0.5 to 0.73.
    DoubleSigmoid,
    /// Shifts each score by 0.01 per position in the list (breaks RRQ-001).
    PositionDependent,
    /// Shifts each score by 0.01 per other document sent (breaks RRQ-002).
    NeighbourDependent,
    /// Shifts each score by 1e-3 per place in the list, as the batch shapes of a
    /// half-precision server move it (llama-server: 0.002 to 0.004 in logit, measured in
    /// the lab): past the server's noise, within what the engines' parity tests allow.
    BatchVariant,
    /// Adds 0.01 per result and per earlier copy to a repeated request's scores, so no
    /// two copies agree, past what half precision explains (breaks RRQ-003).
    NoiseOnRepeat,
    /// Lowers each later copy of a document by 0.01: llama-server scored three copies
    /// -0.0921, -0.0921 and -0.0884 (measured; breaks RRQ-004).
    DuplicatesApart,
    /// Reports each score under another document's index (the mapping reversed), as a
    /// server that mixes up its batch order (breaks RRQ-006).
    MisattributedScores,
    /// Adds this to every score: not the model's own (breaks RRQ-007).
    DriftedScores(f64),
    /// Refuses these fields when `null` with 400, as vLLM 0.32 does for `top_n`
    /// (`top_n: int`; Dify's null, langgenius/dify#14140; breaks RRS-007) and for
    /// `max_tokens_per_doc` (`int = Field(default=0)`), which LangChain's
    /// `CohereRerank` sends as `null` on every call (measured in the lab).
    NullRefused(&'static [&'static str]),
    /// Ignores unknown rerank fields (vLLM, Infinity, llama.cpp), `top_k` among them.
    IgnoreUnknownFields,
    /// Reads `top_n: 0` as all documents: vLLM 0.32.
    TopNZeroAll,
    /// Answers `top_n: 0` with 200 and no results: llama-server (measured; breaks
    /// RRL-003).
    TopNZeroEmpty,
    /// Answers an unknown field with 500, as a Python handler passing it on (breaks
    /// RRS-008).
    UnknownFieldAs500,
    /// Answers `top_n: 0` with 500: a handler whose check raises instead of refusing
    /// (an `assert top_n > 0`; breaks RRL-003).
    TopNZeroAs500,
    /// Reads a negative `top_n` as Python's slice `results[:top_n]`, answering 200 with
    /// the last documents dropped: the home-made LitServe server (measured in the lab:
    /// `top_n: -1` answered 200; breaks RRL-011).
    NegativeTopNSlices,
    /// Refuses an input over the model's limit with 400 and this message, which says
    /// nothing about length (breaks RRL-008).
    LongRefusedSaying(&'static str),
    /// Answers `documents: []` with 500: the home-made LitServe server, whose
    /// `CrossEncoder.predict([])` raises (measured; breaks RRL-001).
    EmptyListAs500,
    /// Answers an empty-string document with 500 (breaks RRL-002).
    EmptyDocumentAs500,
    /// Answers `return_documents: true` with 500: LiteLLM 1.106.2's `hosted_vllm`
    /// transformation in front of Infinity, which echoes a bare string ("'str' object
    /// has no attribute 'get'", measured in the lab; breaks RRS-006).
    ReturnDocumentsAs500,
    /// Answers a pair over the limit 500 "input (N tokens) is too large to process.
    /// increase the physical batch size": llama-server (measured; breaks RRL-004).
    LongAs500,
    /// Answers every refused rerank request 500 instead of its 4xx: LiteLLM for
    /// documents that are not strings (measured; breaks RRL-006).
    MistakesAs500,
    /// Answers `documents` that are not a list of strings (a string, numbers) with 500
    /// `APIConnectionError`: LiteLLM 1.106.2 in front of vLLM or Infinity (measured;
    /// breaks RRL-006).
    NonStringDocumentsAs500,
    /// Cuts a pair over the model's limit longest first, as Hugging Face tokenizers do
    /// for `truncation=True` (sentence-transformers' `CrossEncoder`, so Infinity; TEI's
    /// pair truncation): a query longer than the document beside it loses its last
    /// tokens first, and a query over half the limit is cut beside any long document
    /// (rerank-contracts §4.5; breaks RRL-009).
    QueryCutLongestFirst,
    /// Drops these fields before the request is read, as a server that reads no such
    /// field: llama.cpp's TEI mode reads `texts` and `return_text` but no `truncate`
    /// (`tools/server`; breaks RRD-002 before [`Self::TeiDialect`]).
    Ignores(&'static [&'static str]),
    /// Writes TEI's `{error, error_type}` as OpenAI's `{error: {code, message, type}}`:
    /// llama.cpp's server in TEI mode, which reads `texts` and `return_text` but answers
    /// errors in its own envelope (`format_error_response` in `tools/server`; breaks
    /// RRD-003; after [`Self::TeiDialect`]).
    ErrorsInOpenAiBody,
    /// Writes each score as a string (breaks RRS-003).
    ScoresAsStrings,
    /// Serves its one model whatever name a request gives: Infinity and llama-server
    /// (rerank-contracts §4.3, measured in the lab), and the home-made LitServe server,
    /// whose request model it never reads.
    AnyModel,
    /// Writes each `usage` count as a string (breaks RRS-015).
    UsageAsStrings,
    /// Numbers the last result one past the list (breaks RRS-002).
    IndexPastTheEnd,
}

fn documents(fields: &Map<String, Value>) -> Vec<String> {
    fields
        .get("documents")
        // TEI's and NIM's dialects, as the client sent them.
        .or_else(|| fields.get("texts"))
        .or_else(|| fields.get("passages"))
        .and_then(Value::as_array)
        .map(|docs| {
            docs.iter()
                .map(|d| {
                    d.get("text")
                        .unwrap_or(d)
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

impl RerankQuirk {
    /// Rewrites the rerank request before the engine sees it, or answers it outright.
    pub(crate) fn before(&self, request: &mut Incoming, config: &Config) -> Option<Answer> {
        if let RerankQuirk::NimDialect = *self {
            return dialects::nim_request(request);
        }
        if !is_rerank(request) {
            return None;
        }
        let fields = fields(request);
        match *self {
            RerankQuirk::NotServed => Some(error(404, "Not Found")),
            RerankQuirk::ServedAt(paths) => {
                (!paths.contains(&request.path.as_str())).then(|| error(404, "Not Found"))
            }
            RerankQuirk::CannotRerank { status, message } => Some(error(status, message)),
            RerankQuirk::TeiDialect { auto_truncate } => {
                dialects::tei_request(request, config, auto_truncate)
            }
            RerankQuirk::VoyageDialect => dialects::voyage_request(request),
            RerankQuirk::Ignores(names) => {
                edit(request, |f| f.retain(|k, _| !names.contains(&k.as_str())));
                None
            }
            RerankQuirk::AnyModel => {
                edit(request, |f| {
                    f.remove("model");
                });
                None
            }
            RerankQuirk::StringDocumentsOnly(status) => fields
                .filter(|f| {
                    f.get("documents")
                        .and_then(Value::as_array)
                        .is_some_and(|docs| docs.iter().any(Value::is_object))
                })
                .map(|_| error(status, "documents: Input should be a valid string")),
            RerankQuirk::NullRefused(names) => fields.and_then(|f| {
                let name = names.iter().find(|n| f.get(**n) == Some(&Value::Null))?;
                Some(error(
                    400,
                    &format!("1 validation error: {name}: Input should be a valid integer"),
                ))
            }),
            RerankQuirk::IgnoreUnknownFields => {
                edit(request, |f| {
                    f.retain(|k, _| reference_server::RERANK_FIELDS.contains(&k.as_str()))
                });
                None
            }
            RerankQuirk::TopNZeroAs500 => fields
                .filter(|f| f.get("top_n") == Some(&json!(0)))
                .map(|_| error(500, "AssertionError")),
            RerankQuirk::NegativeTopNSlices => {
                edit(request, |f| {
                    if f.get("top_n").and_then(Value::as_i64).is_some_and(|n| n < 0) {
                        f.remove("top_n");
                    }
                });
                None
            }
            RerankQuirk::TopNZeroAll => {
                edit(request, |f| {
                    if f.get("top_n") == Some(&json!(0)) {
                        f.remove("top_n");
                    }
                });
                None
            }
            RerankQuirk::UnknownFieldAs500 => {
                let unknown = fields?
                    .keys()
                    .any(|k| !reference_server::RERANK_FIELDS.contains(&k.as_str()));
                unknown.then(|| {
                    error(
                        500,
                        "TypeError: rerank() got an unexpected keyword argument",
                    )
                })
            }
            RerankQuirk::TopNZeroEmpty => {
                fields
                    .filter(|f| f.get("top_n") == Some(&json!(0)))
                    .map(|_| {
                        Answer::json_body(
                            200,
                            &json!({"results": [], "usage": {"total_tokens": 0}}),
                        )
                    })
            }
            RerankQuirk::EmptyListAs500 => fields
                .filter(|f| f.get("documents") == Some(&json!([])))
                .map(|_| error(500, "Internal Server Error")),
            RerankQuirk::NonStringDocumentsAs500 => fields
                .filter(|f| {
                    f.get("documents").is_some_and(|docs| {
                        docs.as_array()
                            .is_none_or(|docs| docs.iter().any(|d| !d.is_string()))
                    })
                })
                .map(|_| {
                    error(
                        500,
                        "litellm.APIConnectionError: Hosted_vllmException - documents must be strings",
                    )
                }),
            RerankQuirk::ReturnDocumentsAs500 => fields
                .filter(|f| f.get("return_documents") == Some(&json!(true)))
                .map(|_| {
                    error(
                        500,
                        "litellm.APIConnectionError: 'str' object has no attribute 'get'",
                    )
                }),
            RerankQuirk::EmptyDocumentAs500 => fields
                .filter(|f| {
                    f.get("documents")
                        .and_then(Value::as_array)
                        .is_some_and(|docs| docs.iter().any(|d| d.as_str() == Some("")))
                })
                .map(|_| error(500, "Internal Server Error")),
            _ => None,
        }
    }

    /// Rewrites the answer to a rerank request.
    pub(crate) fn after(&self, request: &Incoming, answer: &mut Answer, config: &Config) {
        match *self {
            RerankQuirk::NimDialect => return dialects::nim_cut(request, answer, config),
            RerankQuirk::VoyageDialect => return dialects::voyage_cut(request, answer, config),
            RerankQuirk::RankingsOfLogits => return dialects::nim_answer(request, answer),
            RerankQuirk::DataArray => return dialects::voyage_answer(answer),
            RerankQuirk::TeiDialect { auto_truncate } => {
                return dialects::tei_answer(request, answer, config, auto_truncate);
            }
            RerankQuirk::LogitsAsProbabilities => {
                return dialects::probabilities_for_logits(request, answer);
            }
            _ => {}
        }
        if !is_rerank(request) {
            return;
        }
        let sent = fields(request).unwrap_or_default();
        if answer.status != 200 {
            match *self {
                RerankQuirk::LongAs500 if refused_as_too_long(answer) => {
                    *answer = error(
                        500,
                        "input (600 tokens) is too large to process. increase the physical batch size",
                    );
                }
                RerankQuirk::LongRefusedSaying(message) if refused_as_too_long(answer) => {
                    *answer = error(400, message);
                }
                RerankQuirk::ErrorsInOpenAiBody => {
                    let said = answer
                        .json()
                        .and_then(|b| b.get("error")?.as_str().map(str::to_owned));
                    if let Some(message) = said {
                        *answer = error(answer.status, &message);
                    }
                }
                RerankQuirk::MistakesAs500
                    if (400..500).contains(&answer.status) && answer.status != 404 =>
                {
                    *answer = error(
                        500,
                        "litellm.APIConnectionError: 'str' object has no attribute 'get'",
                    );
                }
                _ => {}
            }
            return;
        }
        let Some(mut body) = answer.json() else {
            return;
        };
        // NIM's query is `{text}`.
        let query = sent
            .get("query")
            .and_then(|q| q.get("text").unwrap_or(q).as_str())
            .unwrap_or_default()
            .to_owned();
        let docs = documents(&sent);
        let asked =
            [sent.get("return_documents"), sent.get("return_text")].contains(&Some(&json!(true)));
        let Some(results) = body.get_mut("results").and_then(Value::as_array_mut) else {
            return;
        };
        match *self {
            RerankQuirk::NegativeTopNSlices => {
                let top_n = sent.get("top_n").and_then(Value::as_i64).unwrap_or(0);
                if top_n < 0 {
                    let keep = results.len().saturating_sub(top_n.unsigned_abs() as usize);
                    results.truncate(keep);
                }
            }
            RerankQuirk::InputOrder => results.sort_by_key(|r| r["index"].as_u64()),
            RerankQuirk::IgnoreTopN if results.len() < docs.len() => {
                *answer = rescored(request, config, &sent);
                return;
            }
            RerankQuirk::NullDocument if !asked => {
                results.iter_mut().for_each(|r| r["document"] = Value::Null);
            }
            RerankQuirk::DocumentAsString => results.iter_mut().for_each(|r| {
                if let Some(text) = r.pointer("/document/text").cloned() {
                    r["document"] = text;
                }
            }),
            RerankQuirk::AlwaysEchoDocuments => results.iter_mut().for_each(|r| {
                let text = r["index"]
                    .as_u64()
                    .and_then(|i| docs.get(i as usize))
                    .cloned();
                r["document"] = json!({"text": text, "multi_modal": null});
            }),
            RerankQuirk::DocumentsInInputOrder => {
                for (k, r) in results.iter_mut().enumerate() {
                    r["document"] = json!({"text": docs.get(k)});
                }
            }
            RerankQuirk::NeverEchoDocuments => results.iter_mut().for_each(|r| {
                if let Some(result) = r.as_object_mut() {
                    result.remove("document");
                }
            }),
            RerankQuirk::Logits => rescore(results, |i| rerank_logit(&query, &docs[i], config)),
            RerankQuirk::Cosine => {
                // As many results as the engine gave (its top_n, as other quirks left
                // it), the best by cosine, not by the engine's own scores.
                let keep = results.len();
                let mut all = rescored(request, config, &sent);
                if let Some(mut full) = all.json() {
                    if let Some(every) = full.get_mut("results").and_then(Value::as_array_mut) {
                        rescore(every, |i| cosine_of(&query, &docs[i], config));
                        every.truncate(keep);
                    }
                    all.set_json(&full);
                }
                *answer = all;
                return;
            }
            RerankQuirk::DoubleSigmoid => map_scores(results, |_, s| 1.0 / (1.0 + (-s).exp())),
            // Both shifts stay within [0, 1], so only the clause they break fails.
            RerankQuirk::PositionDependent => {
                map_scores(results, |i, s| (s + 0.01 * i as f64).min(1.0))
            }
            RerankQuirk::BatchVariant => map_scores(results, |i, s| s + 1e-3 * i as f64),
            RerankQuirk::NeighbourDependent => {
                let others = docs.len().saturating_sub(1) as f64;
                map_scores(results, |_, s| (s + 0.01 * others).min(1.0));
            }
            RerankQuirk::NoiseOnRepeat if request.repeat > 0 => {
                let repeat = request.repeat as f64;
                map_scores(results, |i, s| s + 1e-2 * repeat * (i + 1) as f64);
            }
            RerankQuirk::DuplicatesApart => map_scores(results, |i, s| {
                let copies = docs[..i].iter().filter(|d| **d == docs[i]).count();
                s - 0.01 * copies as f64
            }),
            RerankQuirk::MisattributedScores => {
                let n = docs.len() as u64;
                results
                    .iter_mut()
                    .for_each(|r| r["index"] = json!(n - 1 - r["index"].as_u64().unwrap_or(0)));
            }
            RerankQuirk::DriftedScores(delta) => map_scores(results, |_, s| s + delta),
            RerankQuirk::QueryCutLongestFirst => rescore(results, |i| {
                let (query_ids, document_ids) = longest_first(
                    tokenize(&query, config.vocab_size),
                    tokenize(&docs[i], config.vocab_size),
                    config.max_input_tokens,
                );
                1.0 / (1.0 + (-pair_logit(&query_ids, &document_ids)).exp())
            }),
            RerankQuirk::ScoresAsStrings => results
                .iter_mut()
                .for_each(|r| r["relevance_score"] = json!(r["relevance_score"].to_string())),
            RerankQuirk::IndexPastTheEnd => {
                if let Some(last) = results.last_mut() {
                    last["index"] = json!(docs.len());
                }
            }
            _ => {}
        }
        if let RerankQuirk::BareArray = *self {
            // TEI's `Rank {index, text?, score}`: the text a bare string when asked for.
            let bare: Vec<Value> = results
                .iter()
                .map(|r| match r.pointer("/document/text") {
                    Some(text) => {
                        json!({"index": r["index"], "text": text, "score": r["relevance_score"]})
                    }
                    None => json!({"index": r["index"], "score": r["relevance_score"]}),
                })
                .collect();
            body = Value::Array(bare);
        }
        if let (RerankQuirk::UsageAsStrings, Some(usage)) =
            (*self, body.get_mut("usage").and_then(Value::as_object_mut))
        {
            usage.values_mut().for_each(|v| *v = json!(v.to_string()));
        }
        answer.set_json(&body);
    }
}

/// The same request answered with every document (`top_n` left out). Only called after
/// the engine answered the request 200, so fields it does not read (which a quirk
/// before it stripped) are left out too.
fn rescored(request: &Incoming, config: &Config, sent: &Map<String, Value>) -> Answer {
    let mut all = sent.clone();
    all.retain(|k, _| reference_server::RERANK_FIELDS.contains(&k.as_str()));
    all.remove("top_n");
    let retried = Incoming {
        body: Value::Object(all).to_string().into_bytes(),
        ..request.clone()
    };
    Answer::from(reference_server::Engine::new(config.clone()).handle(&retried.as_engine_request()))
}

/// Sets each result's score from its document's index, then sorts by it.
fn rescore(results: &mut [Value], score: impl Fn(usize) -> f64) {
    for r in results.iter_mut() {
        if let Some(i) = r["index"].as_u64() {
            r["relevance_score"] = json!(score(i as usize));
        }
    }
    results.sort_by(|a, b| {
        let s = |v: &Value| v["relevance_score"].as_f64().unwrap_or_default();
        s(b).total_cmp(&s(a))
    });
}

/// Maps each result's score by its document's index, then sorts by the new scores.
fn map_scores(results: &mut [Value], map: impl Fn(usize, f64) -> f64) {
    for r in results.iter_mut() {
        if let (Some(i), Some(s)) = (r["index"].as_u64(), r["relevance_score"].as_f64()) {
            r["relevance_score"] = json!(map(i as usize, s));
        }
    }
    results.sort_by(|a, b| {
        let s = |v: &Value| v["relevance_score"].as_f64().unwrap_or_default();
        s(b).total_cmp(&s(a))
    });
}

/// The cosine of the engine's embeddings of two texts.
fn cosine_of(a: &str, b: &str, config: &Config) -> f64 {
    let embed = |t: &str| embed_tokens(&tokenize(t, config.vocab_size), config.native_dimensions);
    let (x, y) = (embed(a), embed(b));
    x.iter()
        .zip(&y)
        .map(|(p, q)| f64::from(*p) * f64::from(*q))
        .sum()
}
