//! The rerank clients' profiles: the clients people point at a self-hosted reranker,
//! each configured as its documentation says, sending its default request and reading
//! the answer as its source does (measured against an echo server with canned answers,
//! `lab/clients/rerank_check.py`; the table in `lab/rerank/README.md`).
//!
//! | client | route (base URL as documented) | body | reads |
//! |---|---|---|---|
//! | cohere-v1 5.21.1 | `{root}/v1/rerank` | `{model, query, documents}` | `results[]` unvalidated: `index` through `int()`, the score as sent; order as sent |
//! | cohere-v2 5.21.1 | `{root}/v2/rerank` | the same | the same |
//! | langchain-cohere 0.6.0 | `{root}/v2/rerank` | `top_n: 3, max_tokens_per_doc: null` | an index past the list raises `IndexError`; order as sent |
//! | dify-openai-compatible 0.0.63 | `{endpoint_url}/rerank`, `endpoint_url` = `…/v1` | `top_n` = N | a missing score becomes 0.0, a missing index 0; re-sorted; `score_threshold` |
//! | open-webui-external | the URL as configured, `…/v1/rerank` | `top_n` = N | sorted by `index`, then the scores zipped to the documents by position |
//! | llama-index-tei-rerank 0.6.0 | `{base_url}/rerank`, base the server's root | TEI's `{query, texts}` | a bare list, one item per text (`assert`), `index` and `score`; re-sorted by score, top 5 |
//! | haystack-tei-ranker 2.29.0 | `urljoin(url, "/rerank")` | `{query, texts, raw_scores: false}` | a bare list (an `{error}` object raises RuntimeError, anything else TypeError), `index` and `score`; order as sent, top 10 |
//! | voyageai-python 0.5.0 | `{base_url}/rerank`, base `…/v1` | Voyage's `{query, documents, model, top_k: null, truncation: true}` | `data[]`, each `index` (indexes the documents: `IndexError` past them) and `relevance_score`, and `usage.total_tokens` (`AttributeError` without); order as sent; a 4xx's `detail` |
//! | langchain-nvidia-rerank 1.4.3 | `{base_url}/ranking`, base `…/v1` | NIM's `{model, query: {text}, passages: [{text}]}` | `rankings[]` of `{index: int, logit: float}` (an index outside the passages fails an assert); order as sent, top 5 |
//!
//! A profile breaks when the client raises or returns a ranking that is not the
//! server's (scores moved to other documents, silently 0.0, wrong order kept). Profiles
//! run only where the server serves rerank at some route: a server without rerank is
//! no rerank client's server.

mod findings;

pub use findings::RerankFinding;

use crate::contracts::rerank::RerankRoute;
use crate::contracts::rerank::facts::ScoreScale;
use crate::contracts::rerank::learned;
use crate::contracts::rerank::reference::{RERANK_DOCUMENTS as DOCUMENTS, RERANK_QUERY as QUERY};
use crate::contracts::rerank::reply::RerankDialect;
use crate::contracts::rerank::requests as rerank;
use crate::http::Reply;
use crate::profiles::{Client, ClientProfile, Finding, no_answer};
use crate::session::Session;
use serde_json::{Value, json};

impl Client {
    /// The Cohere Python SDK's `Client` (v1 rerank), with the server's root as base URL.
    pub const COHERE_V1: Client = Client::new("cohere-v1", "5.21.1");
    /// The Cohere Python SDK's `ClientV2`. LlamaIndex's `CohereRerank` calls it, but sends
    /// `top_n: 2` and reads scores and indices its own way: not profiled.
    pub const COHERE_V2: Client = Client::new("cohere-v2", "5.21.1");
    /// LangChain's `CohereRerank` (PyPI `langchain-cohere`), on `ClientV2`.
    pub const LANGCHAIN_COHERE: Client = Client::new("langchain-cohere", "0.6.0");
    /// Dify's OpenAI-API-compatible model plugin, its rerank model.
    pub const DIFY: Client = Client::new("dify-openai-compatible", "0.0.63");
    /// Open WebUI's external reranker (no release names the code read: its commit).
    pub const OPEN_WEBUI: Client = Client::new("open-webui-external", "ab233f82");
    /// LlamaIndex's TEI reranker, `TextEmbeddingInference` (PyPI
    /// `llama-index-postprocessor-tei-rerank`): TEI's dialect at `{base_url}/rerank`.
    pub const LLAMA_INDEX_TEI: Client = Client::new("llama-index-tei-rerank", "0.6.0");
    /// Haystack's `HuggingFaceTEIRanker` (PyPI `haystack-ai`): TEI's dialect at
    /// `/rerank` of its `url`.
    pub const HAYSTACK_TEI: Client = Client::new("haystack-tei-ranker", "2.29.0");
    /// NVIDIA's `NVIDIARerank` (PyPI `langchain-nvidia-ai-endpoints`): NIM's dialect at
    /// `{base_url}/ranking`, the base URL ending in `/v1`.
    pub const NVIDIA_RERANK: Client = Client::new("langchain-nvidia-rerank", "1.4.3");
    /// Voyage's own Python client (PyPI `voyageai`), `Client(base_url=…).rerank()`:
    /// Voyage's dialect at `{base_url}/rerank`, the base URL ending in `/v1`.
    pub const VOYAGE_AI: Client = Client::new("voyageai-python", "0.5.0");

    /// Every profiled rerank client, in the order reports show them (after the
    /// embeddings clients, and only for a server that serves rerank).
    pub const RERANK: [Client; 9] = [
        Client::COHERE_V1,
        Client::COHERE_V2,
        Client::LANGCHAIN_COHERE,
        Client::DIFY,
        Client::OPEN_WEBUI,
        Client::LLAMA_INDEX_TEI,
        Client::HAYSTACK_TEI,
        Client::NVIDIA_RERANK,
        Client::VOYAGE_AI,
    ];
}

/// What a rerank client sends and how it reads the answer.
struct Profile {
    client: Client,
    route: RerankRoute,
    /// The dialect the client speaks, whatever the server does.
    dialect: RerankDialect,
    /// Fields the client adds to `{model, query, documents}`.
    extra: fn(usize) -> Vec<(&'static str, Value)>,
    read: fn(&Value, usize) -> Read,
}

/// What the client made of a 200.
pub(crate) enum Read {
    /// The client returns this ranking (document indices, best first).
    Ranked(Vec<usize>),
    /// The client raises, or returns something other than the server's ranking.
    Wrong(String),
}

const PROFILES: [Profile; 9] = [
    Profile {
        client: Client::COHERE_V1,
        route: RerankRoute::V1,
        dialect: RerankDialect::Cohere,
        extra: |_| Vec::new(),
        read: read_cohere,
    },
    Profile {
        client: Client::COHERE_V2,
        route: RerankRoute::V2,
        dialect: RerankDialect::Cohere,
        extra: |_| Vec::new(),
        read: read_cohere,
    },
    Profile {
        client: Client::LANGCHAIN_COHERE,
        route: RerankRoute::V2,
        dialect: RerankDialect::Cohere,
        extra: |_| vec![("top_n", json!(3)), ("max_tokens_per_doc", Value::Null)],
        read: read_langchain,
    },
    Profile {
        client: Client::DIFY,
        route: RerankRoute::V1,
        dialect: RerankDialect::Cohere,
        extra: |n| vec![("top_n", json!(n))],
        read: read_dify,
    },
    Profile {
        client: Client::OPEN_WEBUI,
        route: RerankRoute::V1,
        dialect: RerankDialect::Cohere,
        extra: |n| vec![("top_n", json!(n))],
        read: read_open_webui,
    },
    Profile {
        client: Client::LLAMA_INDEX_TEI,
        route: RerankRoute::Bare,
        dialect: RerankDialect::Tei,
        extra: |_| Vec::new(),
        read: read_llama_index_tei,
    },
    Profile {
        client: Client::HAYSTACK_TEI,
        route: RerankRoute::Bare,
        dialect: RerankDialect::Tei,
        extra: |_| vec![("raw_scores", json!(false))],
        read: read_haystack_tei,
    },
    Profile {
        client: Client::NVIDIA_RERANK,
        route: RerankRoute::Ranking,
        dialect: RerankDialect::Nim,
        extra: |_| Vec::new(),
        read: read_nvidia,
    },
    Profile {
        client: Client::VOYAGE_AI,
        route: RerankRoute::V1,
        dialect: RerankDialect::Voyage,
        extra: |_| vec![("top_k", Value::Null), ("truncation", json!(true))],
        read: read_voyage,
    },
];

fn results(body: &Value) -> Option<&Vec<Value>> {
    body.get("results").and_then(Value::as_array)
}

/// Python's `int()` of a JSON value, as the Cohere SDK applies it to `index`.
fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f.trunc() as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The Cohere SDKs parse without validation: `results` must be a list for the caller to
/// iterate, each `index` goes through `int()`, and a missing or non-numeric score comes
/// back as it is (`None`, a string), which the caller's sort or threshold then trips on.
fn read_cohere(body: &Value, n: usize) -> Read {
    let Some(items) = results(body) else {
        return Read::Wrong(if body.is_array() {
            "raises TypeError in rerank(): its response model is built from a mapping, and the answer is a bare array".to_owned()
        } else {
            "finds no `results` list: the response object's `results` is None, and iterating it raises TypeError".to_owned()
        });
    };
    let mut ranking = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(index) = item.get("index").and_then(int) else {
            return Read::Wrong(format!("reads result {i} without an integer index (None)"));
        };
        if !item.get("relevance_score").is_some_and(Value::is_number) {
            return Read::Wrong(format!(
                "reads result {i}'s relevance_score as {}, not a number",
                item.get("relevance_score")
                    .map_or("None".to_owned(), Value::to_string)
            ));
        }
        match usize::try_from(index).ok().filter(|&x| x < n) {
            Some(x) => ranking.push(x),
            None => {
                return Read::Wrong(format!(
                    "returns index {index}, which names none of the {n} documents"
                ));
            }
        }
    }
    Read::Ranked(ranking)
}

/// LangChain maps each result to `documents[index]` (an index past the list raises
/// `IndexError`) and keeps the server's order.
fn read_langchain(body: &Value, n: usize) -> Read {
    match read_cohere(body, n) {
        Read::Wrong(why) if why.starts_with("returns index") => Read::Wrong(format!(
            "raises IndexError: the answer {}",
            &why["returns ".len()..]
        )),
        other => other,
    }
}

/// Dify's plugin reads each result with pydantic defaults (`index` 0, `relevance_score`
/// 0.0 when missing; `null` raises `InvokeError`), drops indices outside the list and
/// re-sorts by score.
fn read_dify(body: &Value, n: usize) -> Read {
    let Some(items) = results(body) else {
        return Read::Wrong("finds no `results` list and raises InvokeError".to_owned());
    };
    let mut scored = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let index = match item.get("index") {
            None => 0,
            Some(v) => match int(v) {
                Some(x) => x,
                None => {
                    return Read::Wrong(format!("raises InvokeError on result {i}'s index {v}"));
                }
            },
        };
        let score = match item.get("relevance_score") {
            None => {
                return Read::Wrong(format!(
                    "scores result {i} 0.0: it has no relevance_score, and Dify's default fills it in silently"
                ));
            }
            // pydantic's lax mode reads a numeric string as its float.
            Some(v) => match v.as_f64().or_else(|| v.as_str()?.trim().parse().ok()) {
                Some(s) => s,
                None => {
                    return Read::Wrong(format!(
                        "raises InvokeError on result {i}'s relevance_score {v}"
                    ));
                }
            },
        };
        if let Some(x) = usize::try_from(index).ok().filter(|&x| x < n) {
            scored.push((x, score));
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    Read::Ranked(scored.into_iter().map(|(x, _)| x).collect())
}

/// Open WebUI sorts the results by `index` and gives the i-th score to the i-th
/// document: unless the indices are exactly 0..N, scores move to other documents. It
/// passes scores through as they come (a numeric string is compared as text, and with
/// the default threshold 0.0 nothing filters them), and catches any error, returning
/// the documents unreranked.
fn read_open_webui(body: &Value, n: usize) -> Read {
    let Some(items) = results(body) else {
        return Read::Wrong(
            "finds no `results` list: the documents come back unreranked, without an error"
                .to_owned(),
        );
    };
    let mut by_index: Vec<(i64, Score)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let score = match item.get("relevance_score") {
            Some(Value::Number(x)) => x.as_f64().map(Score::Number),
            Some(Value::String(text)) => Some(Score::Text(text.clone())),
            _ => None,
        };
        let (Some(index), Some(score)) = (item.get("index").and_then(int), score) else {
            return Read::Wrong(format!(
                "cannot sort result {i} (its index or relevance_score is missing or null): TypeError, the documents come back unreranked"
            ));
        };
        by_index.push((index, score));
    }
    by_index.sort_by_key(|(index, _)| *index);
    let indices: Vec<i64> = by_index.iter().map(|(index, _)| *index).collect();
    if indices != (0..n as i64).collect::<Vec<_>>() {
        return Read::Wrong(format!(
            "gets indices {indices:?} for {n} documents and zips the scores to the documents by position: scores move to other documents"
        ));
    }
    let mut ranking: Vec<usize> = (0..n).collect();
    ranking.sort_by(|&a, &b| by_index[b].1.cmp_as_python(&by_index[a].1));
    Read::Ranked(ranking)
}

/// A score as Open WebUI holds it: Python compares numbers as numbers, strings as text.
enum Score {
    Number(f64),
    Text(String),
}

impl Score {
    fn cmp_as_python(&self, other: &Score) -> std::cmp::Ordering {
        match (self, other) {
            (Score::Number(a), Score::Number(b)) => a.total_cmp(b),
            (Score::Text(a), Score::Text(b)) => a.cmp(b),
            // Python raises on mixed types; a mixed answer is not one this models.
            (Score::Number(_), Score::Text(_)) => std::cmp::Ordering::Less,
            (Score::Text(_), Score::Number(_)) => std::cmp::Ordering::Greater,
        }
    }
}

/// Each item's `index` and numeric `score` in a TEI-dialect bare list, or what the
/// client raises: Python's `KeyError` for a missing field, `float()`'s `TypeError` or
/// `ValueError` for a score that is no number.
fn tei_items(items: &[Value], n: usize) -> Result<Vec<(usize, f64)>, String> {
    let mut read = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(int)
            .ok_or_else(|| format!("raises KeyError or TypeError on item {i}: no integer index"))?;
        let score = item
            .get("score")
            .and_then(|v| v.as_f64().or_else(|| v.as_str()?.trim().parse().ok()))
            .ok_or_else(|| format!("raises on item {i}: its score is no number"))?;
        let index = usize::try_from(index)
            .ok()
            .filter(|&x| x < n)
            .ok_or_else(|| {
                format!("raises IndexError: item {i} has index {index} for {n} texts")
            })?;
        read.push((index, score));
    }
    Ok(read)
}

/// LlamaIndex's `TextEmbeddingInference` asserts one score per text, maps each by its
/// `index` and re-sorts by score, keeping the top 5.
fn read_llama_index_tei(body: &Value, n: usize) -> Read {
    let Some(items) = body.as_array() else {
        return Read::Wrong(
            "iterates an answer that is not a list and fails its assert len(scores) == len(nodes)"
                .to_owned(),
        );
    };
    if items.len() != n {
        return Read::Wrong(format!(
            "fails its assert len(scores) == len(nodes): {} items for {n} texts",
            items.len()
        ));
    }
    match tei_items(items, n) {
        Ok(mut read) => {
            read.sort_by(|a, b| b.1.total_cmp(&a.1));
            Read::Ranked(read.into_iter().take(5).map(|(i, _)| i).collect())
        }
        Err(why) => Read::Wrong(why),
    }
}

/// Haystack's `HuggingFaceTEIRanker` requires a bare list (an object with `error`
/// raises RuntimeError, any other object TypeError) and keeps the server's order,
/// cut to its top 10.
fn read_haystack_tei(body: &Value, n: usize) -> Read {
    let Some(items) = body.as_array() else {
        return Read::Wrong(if body.get("error").is_some() {
            "raises RuntimeError: the answer is an {error} object".to_owned()
        } else {
            "raises TypeError (\"Unexpected response format\"): the answer is not a bare list"
                .to_owned()
        });
    };
    match tei_items(items, n) {
        Ok(read) => Read::Ranked(read.into_iter().take(10).map(|(i, _)| i).collect()),
        Err(why) => Read::Wrong(why),
    }
}

/// NVIDIA's `NVIDIARerank` reads `rankings[]` as `Ranking(index: int, logit: float)`
/// (pydantic), asserts each index names a passage, and keeps the server's order, cut to
/// its top 5.
fn read_nvidia(body: &Value, n: usize) -> Read {
    let Some(rankings) = body.get("rankings").and_then(Value::as_array) else {
        return Read::Wrong("raises KeyError: the answer has no rankings list".to_owned());
    };
    let mut ranked = Vec::new();
    for (i, ranking) in rankings.iter().enumerate() {
        let (Some(index), Some(_)) = (
            ranking.get("index").and_then(int),
            ranking.get("logit").and_then(Value::as_f64),
        ) else {
            return Read::Wrong(format!(
                "raises a pydantic ValidationError on ranking {i}: no integer index and float logit"
            ));
        };
        match usize::try_from(index).ok().filter(|&x| x < n) {
            Some(x) => ranked.push(x),
            None => {
                return Read::Wrong(format!(
                    "fails its assert: ranking {i} has index {index} for {n} passages"
                ));
            }
        }
    }
    Read::Ranked(ranked.into_iter().take(5).collect())
}

/// Voyage's client builds `RerankingObject` from attribute reads of the answer:
/// `data[]`, each item's `index` (which indexes the caller's documents) and
/// `relevance_score`, then `usage.total_tokens`; a missing one raises `AttributeError`.
/// It keeps the server's order and every result.
fn read_voyage(body: &Value, n: usize) -> Read {
    let Some(data) = body.get("data").and_then(Value::as_array) else {
        return Read::Wrong(
            "raises AttributeError: the answer has no data list (Voyage's client reads response.data)"
                .to_owned(),
        );
    };
    let mut ranked = Vec::new();
    for (i, item) in data.iter().enumerate() {
        let Some(index) = item.get("index").and_then(Value::as_i64) else {
            return Read::Wrong(format!(
                "raises AttributeError or TypeError on item {i}: no integer index"
            ));
        };
        if item.get("relevance_score").is_none() {
            return Read::Wrong(format!(
                "raises AttributeError on item {i}: no relevance_score"
            ));
        }
        match usize::try_from(index).ok().filter(|&x| x < n) {
            Some(x) => ranked.push(x),
            None => {
                return Read::Wrong(format!(
                    "raises IndexError (or takes another document): item {i} has index {index} for {n} documents"
                ));
            }
        }
    }
    if body.pointer("/usage/total_tokens").is_none() {
        return Read::Wrong(
            "raises AttributeError: the answer has no usage.total_tokens, which the client reads after the results"
                .to_owned(),
        );
    }
    Read::Ranked(ranked)
}

/// The server's own ranking of the canonical documents, from its answer.
fn servers_ranking(reply: &Reply, n: usize) -> Option<Vec<usize>> {
    let scores = reply.rerank().ok()?.all_scores(n).ok()?;
    let mut ranking: Vec<usize> = (0..n).collect();
    ranking.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    Some(ranking)
}

/// Every rerank client's profile, where the server serves rerank; none where it does not.
pub(crate) async fn profile_all(s: &Session) -> Vec<ClientProfile> {
    if learned(s)
        .routes
        .as_ref()
        .and_then(|r| r.value.used)
        .is_none()
    {
        return Vec::new();
    }
    let scale = learned(s).scale.map(|f| f.value);
    let mut profiles = Vec::new();
    for profile in &PROFILES {
        profiles.push(profile_one(s, profile, scale).await);
    }
    profiles
}

async fn profile_one(s: &Session, profile: &Profile, scale: Option<ScoreScale>) -> ClientProfile {
    let n = DOCUMENTS.len();
    let cohere = rerank::body(s, QUERY, json!(DOCUMENTS), &(profile.extra)(n));
    // The client's own dialect, whatever the server speaks.
    let body = profile
        .dialect
        .translate(&cohere, &rerank::model(s))
        .unwrap_or(cohere);
    let path = profile.route.path();
    // A client of another dialect than the server's sends what the server may refuse:
    // its throttling of a refusal is then not waited out as a valid request's.
    let server = rerank::dialect(s);
    let probe = if profile.dialect == server {
        rerank::probe(profile.route, body)
    } else {
        let why = format!(
            "a client of {} rerank dialect; the server speaks {}",
            profile.dialect.described(),
            server.described()
        );
        rerank::either(profile.route, body, why)
    };
    let reply = match s.send(probe.verbatim()).await {
        Ok(reply) => reply,
        Err(error) => {
            let finding = RerankFinding::NotProbed {
                path,
                why: no_answer(&error),
            };
            return ClientProfile::of(profile.client, vec![finding.into()], Vec::new());
        }
    };
    let mut findings: Vec<Finding> = vec![judge(profile, path, &reply, n).into()];
    // Dify filters on `score_threshold` and Open WebUI on its relevance threshold, both
    // set on Cohere's [0, 1] scale.
    let thresholds = matches!(profile.client, Client::DIFY | Client::OPEN_WEBUI);
    if let Some(scale) = scale.filter(|&s| thresholds && s != ScoreScale::Probability) {
        findings.push(RerankFinding::Threshold { scale }.into());
    }
    ClientProfile::of(profile.client, findings, vec![reply.exchange.clone()])
}

fn judge(profile: &Profile, path: &'static str, reply: &Reply, n: usize) -> RerankFinding {
    if !reply.is_success() {
        return RerankFinding::Raises {
            path,
            status: reply.status,
            message: reply.error_message(),
        };
    }
    let Some(body) = &reply.json else {
        return RerankFinding::Wrong {
            path,
            why: "cannot parse the body as JSON and raises".to_owned(),
        };
    };
    match (profile.read)(body, n) {
        Read::Wrong(why) => RerankFinding::Wrong { path, why },
        Read::Ranked(ranking) => {
            // The client's ranking against the server's own (the top 3 where it asks
            // for 3): a client that keeps the server's order ranks wrongly when the
            // answer is not sorted.
            let expected = servers_ranking(reply, n);
            match expected {
                Some(mut expected) if !ranking.is_empty() => {
                    expected.truncate(ranking.len());
                    if expected == ranking {
                        RerankFinding::Read {
                            path,
                            results: ranking.len(),
                        }
                    } else {
                        RerankFinding::Wrong {
                            path,
                            why: format!(
                                "returns the documents in the order {ranking:?} where the server's scores rank them {expected:?}: it keeps the order the server listed them in"
                            ),
                        }
                    }
                }
                _ => RerankFinding::Read {
                    path,
                    results: ranking.len(),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(read: Read) -> Vec<usize> {
        match read {
            Read::Ranked(r) => r,
            Read::Wrong(why) => panic!("{why}"),
        }
    }

    fn wrong(read: Read) -> String {
        match read {
            Read::Wrong(why) => why,
            Read::Ranked(r) => panic!("ranked {r:?}"),
        }
    }

    #[test]
    fn open_webui_moves_scores_when_results_are_fewer() {
        let two = json!({"results": [{"index": 1, "relevance_score": 0.9}, {"index": 2, "relevance_score": 0.2}]});
        assert!(wrong(read_open_webui(&two, 3)).contains("scores move"));
        let past = json!({"results": [{"index": 1, "relevance_score": 0.9}, {"index": 3, "relevance_score": 0.2}, {"index": 0, "relevance_score": 0.1}]});
        assert!(wrong(read_open_webui(&past, 3)).contains("[0, 1, 3]"));
        let text = json!({"results": [{"index": 0, "relevance_score": "0.1"}, {"index": 1, "relevance_score": "0.9"}]});
        assert_eq!(ranked(read_open_webui(&text, 2)), [1, 0]);
        let all = json!({"results": [{"index": 2, "relevance_score": 0.1}, {"index": 0, "relevance_score": 0.9}, {"index": 1, "relevance_score": 0.5}]});
        assert_eq!(ranked(read_open_webui(&all, 3)), [0, 1, 2]);
    }

    #[test]
    fn dify_fills_a_missing_score_with_zero() {
        let body = json!({"results": [{"index": 0}]});
        assert!(wrong(read_dify(&body, 1)).contains("0.0"));
        let strings = json!({"results": [{"index": 0, "relevance_score": "0.9"}]});
        assert_eq!(ranked(read_dify(&strings, 1)), [0]);
        let shuffled = json!({"results": [{"index": 1, "relevance_score": 0.1}, {"index": 0, "relevance_score": 0.9}]});
        assert_eq!(ranked(read_dify(&shuffled, 2)), [0, 1]);
    }

    #[test]
    fn the_cohere_sdk_takes_int_of_an_index_and_keeps_the_order() {
        let body = json!({"results": [{"index": "1", "relevance_score": 0.2}, {"index": 0.0, "relevance_score": 0.9}]});
        assert_eq!(ranked(read_cohere(&body, 2)), [1, 0]);
        let bare = json!([{"index": 0, "score": 0.9}]);
        assert!(wrong(read_cohere(&bare, 1)).contains("TypeError"));
        let past = json!({"results": [{"index": 2, "relevance_score": 0.9}]});
        assert!(wrong(read_langchain(&past, 2)).starts_with("raises IndexError"));
    }
}
