//! rerank-shape: the Cohere and Jina shape of a rerank answer (RRS-001 … RRS-015).
//!
//! No standard exists; the clients people point at self-hosted rerankers read
//! `results[].index` and `results[].relevance_score`, sorted, `top_n` of them, with the
//! document echoed as `{"text"}` when it is echoed at all. Servers answering another
//! shape (TEI's bare array) are named as what they are.

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::rerank::RerankRoute;
use crate::contracts::rerank::facts::UnknownModel;
use crate::contracts::rerank::reply::{Echo, RerankAnswer, RerankDialect, RerankShape};
use crate::contracts::rerank::requests::{self as rerank, DOCUMENTS, QUERY};
use crate::contracts::rerank::{learn, learned};
use crate::http::{Body, Reply};
use crate::session::facts::UnknownField;
use crate::session::{Logged, ProbeError, Session};
use crate::verdict::Verdict;
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("RRS-001", cohere_shape),
        check!("RRS-002", valid_indices),
        check!("RRS-003", finite_scores, log),
        check!("RRS-004", sorted_by_score, log),
        check!("RRS-005", top_n_honoured),
        check!("RRS-006", documents_echoed_as_sent, log),
        check!("RRS-007", null_is_absent),
        check!("RRS-008", unknown_field_never_5xx),
        check!("RRS-009", served_at_v1),
        check!("RRS-010", documents_as_text_objects, log),
        check!("RRS-011", object_documents),
        check!("RRS-012", served_at_v2),
        check!("RRS-013", return_documents_honoured),
        check!("RRS-014", unknown_model_never_5xx),
        check!("RRS-015", counts_well_formed, log),
    ]
}

/// The skip of every rerank clause on a server that serves no rerank route: not a
/// failure, the contract is not offered.
pub(crate) fn not_offered(s: &Session) -> Verdict {
    Verdict::skip(format!(
        "rerank is not offered: no rerank route serves the portable request ({})",
        rerank::tried(s)
    ))
}

/// The portable request's answer when it is a rerank answer in any recognised shape,
/// else the verdict a clause that needs one returns: skip when rerank is not offered
/// or the answer is not one (RRS-001 judges that).
pub(crate) async fn answered(
    s: &Session,
) -> Result<Result<(RerankRoute, Arc<Reply>, RerankAnswer), Verdict>, ProbeError> {
    let Some((route, reply)) = rerank::plain(s).await? else {
        return Ok(Err(not_offered(s)));
    };
    if !reply.is_success() {
        return Ok(Err(Verdict::skip(format!(
            "the portable request was answered {} (see RRS-001)",
            reply.summary()
        ))
        .with(&reply.exchange)));
    }
    match reply.rerank() {
        Ok(answer) => Ok(Ok((route, reply, answer))),
        Err(why) => Ok(Err(Verdict::skip(format!(
            "the portable request's 200 is no rerank answer: {why} (see RRS-001)"
        ))
        .with(&reply.exchange))),
    }
}

/// RRS-001: "The portable request {model, query, documents: [strings]} to the rerank
/// route is answered 200 with a JSON object whose results is an array of objects, each
/// with an integer index and a relevance_score; another shape is named and fails."
async fn cohere_shape(s: &Session) -> CheckResult {
    let Some((route, reply)) = rerank::plain(s).await? else {
        return Ok(not_offered(s));
    };
    let dialect = rerank::dialect(s);
    if dialect != RerankDialect::Cohere {
        return another_dialect(s, route, dialect, &reply).await;
    }
    if !reply.is_success() {
        return Ok(Verdict::fail(format!(
            "the portable request to {} was answered {}: a Cohere-shaped client gets no ranking",
            route.path(),
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    let answer = match reply.rerank() {
        Ok(answer) => answer,
        Err(why) => {
            return Ok(
                Verdict::fail(format!("200 without a rerank answer: {why}")).with(&reply.exchange)
            );
        }
    };
    let fact = s.detected(answer.shape, &reply.exchange);
    learn(s, |facts| facts.shape = Some(fact));
    if answer.shape != RerankShape::Results {
        return Ok(Verdict::fail(format!(
            "answered {}: clients of the Cohere shape (the Cohere SDKs, LangChain's and LlamaIndex's CohereRerank, Dify, Open WebUI, LiteLLM) read results[].index and relevance_score and get nothing",
            answer.shape.described()
        ))
        .with(&reply.exchange));
    }
    let odd = answer
        .items
        .iter()
        .enumerate()
        .find(|(_, item)| item.position().is_none() || item.number().is_none());
    if let Some((i, item)) = odd {
        return Ok(Verdict::fail(format!(
            "results[{i}] has index {} and relevance_score {}: an integer and a number are expected",
            item.index, item.score
        ))
        .with(&reply.exchange));
    }
    Ok(Verdict::pass(format!(
        "{} at {}: results[] of {{index, relevance_score}}, {} results for {} documents",
        reply.status,
        route.path(),
        answer.items.len(),
        DOCUMENTS.len()
    ))
    .with(&reply.exchange))
}

/// RRS-001 on a server that speaks another dialect: the portable request as a client
/// of Cohere's dialect sends it (the route search's, from the cache) and what it got,
/// beside the dialect the server does answer in.
async fn another_dialect(
    s: &Session,
    route: RerankRoute,
    dialect: RerankDialect,
    in_dialect: &Reply,
) -> CheckResult {
    let portable = s
        .send(rerank::probe(route, rerank::plain_body(s)).verbatim())
        .await?;
    let answered = match in_dialect.rerank() {
        Ok(answer) => {
            let fact = s.detected(answer.shape, &in_dialect.exchange);
            learn(s, |facts| facts.shape = Some(fact));
            match answer.shape {
                RerankShape::BareArray => "a bare array of {index, score}",
                RerankShape::Results => "results[]",
                RerankShape::Data => "data[]",
                RerankShape::Rankings => "rankings[]",
            }
            .to_owned()
        }
        Err(_) => in_dialect.summary(),
    };
    let got = if portable.is_success() {
        format!(
            "{} with {answered}, where they read results[]",
            portable.status
        )
    } else {
        portable.summary()
    };
    Ok(Verdict::fail(format!(
        "the server speaks {} rerank dialect ({} answered with {answered}), and the portable request to {} was answered {got}: clients of Cohere's dialect (the Cohere SDKs, LangChain's and LlamaIndex's CohereRerank, Dify, Open WebUI, LiteLLM) get no ranking; the other rerank clauses judge it in its own dialect",
        dialect.described(),
        dialect.request(),
        route.path(),
    ))
    .naming_its_dialect()
    .with(&portable.exchange)
    .with(&in_dialect.exchange))
}

/// RRS-002: "Every result's index is an integer in [0, N) for N documents, and no index
/// appears twice."
async fn valid_indices(s: &Session) -> CheckResult {
    let (_, reply, answer) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let n = DOCUMENTS.len();
    let mut seen = vec![false; n];
    for (i, item) in answer.items.iter().enumerate() {
        let Some(index) = item.position().filter(|&p| p < n) else {
            return Ok(Verdict::fail(format!(
                "result {i} has index {} for {n} documents: a client maps it to no document, or the wrong one",
                item.index
            ))
            .with(&reply.exchange));
        };
        if std::mem::replace(&mut seen[index], true) {
            return Ok(Verdict::fail(format!(
                "index {index} appears twice: a client ranks that document twice and loses another"
            ))
            .with(&reply.exchange));
        }
    }
    Ok(Verdict::pass(format!(
        "{} distinct indices, all in 0..{n}",
        answer.items.len()
    ))
    .with(&reply.exchange))
}

/// The request asking for the documents back (`return_documents: true`), which a
/// server may not know.
async fn echo_request(s: &Session, route: RerankRoute) -> Result<Arc<Reply>, ProbeError> {
    let request = rerank::body(
        s,
        QUERY,
        json!(DOCUMENTS),
        &[("return_documents", json!(true))],
    );
    s.send(rerank::either(
        route,
        request,
        "return_documents: a server may not know it",
    ))
    .await
}

/// Every rerank 200 of the run, after the request asking for the documents back, so
/// that every clause judging the run's answers (RRS-003, RRS-004, RRS-006, RRQ-005)
/// judges the same ones.
pub(crate) async fn judged_answers(
    s: &Session,
) -> Result<Vec<(Arc<Reply>, usize, Logged)>, ProbeError> {
    if let Ok((route, _, _)) = answered(s).await? {
        // A server that is down by now (SGLang after a thousand documents) still has
        // the answers it gave before to judge.
        // A dialect without the field (NIM's echoes nothing) leaves the run's answers.
        match echo_request(s, route).await {
            Ok(_)
            | Err(
                ProbeError::ServerDown(_) | ProbeError::Transport(_) | ProbeError::NotInDialect(_),
            ) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(rerank_answers(s))
}

/// Every rerank 200 of the run, with the number of documents its request sent.
fn rerank_answers(s: &Session) -> Vec<(Arc<Reply>, usize, Logged)> {
    s.log()
        .into_iter()
        .filter(|l| l.contract() == Some(crate::contracts::rerank::ID))
        .filter_map(|l| {
            let reply = l.reply.clone().filter(|r| r.is_success())?;
            let sent = crate::json::parse(l.request_body.as_deref()?)?;
            let n = crate::contracts::rerank::reply::sent_documents(&sent)?.len();
            Some((reply, n, l))
        })
        .collect()
}

/// The skip of a clause judging the run's rerank answers when there are none.
async fn no_rerank_answers(s: &Session) -> Result<Verdict, ProbeError> {
    Ok(match answered(s).await? {
        Err(verdict) => verdict,
        Ok(_) => Verdict::skip("no rerank request of the run was answered 200"),
    })
}

/// RRS-003: "Every relevance_score is a finite JSON number." Judged on every rerank
/// answer of the run.
async fn finite_scores(s: &Session) -> CheckResult {
    let answers = judged_answers(s).await?;
    if answers.is_empty() {
        return no_rerank_answers(s).await;
    }
    let mut scores = 0;
    for (reply, _, logged) in &answers {
        let Ok(answer) = reply.rerank() else { continue };
        for (i, item) in answer.items.iter().enumerate() {
            scores += 1;
            if !item.number().is_some_and(f64::is_finite) {
                return Ok(Verdict::fail(format!(
                    "in the answer to {}, result {i}'s score is {}, not a finite number",
                    crate::session::facts::describe_request(&logged.exchange),
                    item.score
                ))
                .with(&reply.exchange));
            }
        }
    }
    if scores == 0 {
        return Ok(Verdict::skip(format!(
            "{} rerank answers hold no result: no score to judge (see RRS-002)",
            answers.len()
        )));
    }
    Ok(Verdict::pass(format!(
        "all {scores} scores of {} rerank answers are finite numbers",
        answers.len()
    )))
}

/// RRS-004: "Results are sorted by relevance_score, highest first (non-increasing)."
/// Judged on every rerank answer of the run.
async fn sorted_by_score(s: &Session) -> CheckResult {
    let answers = judged_answers(s).await?;
    if answers.is_empty() {
        return no_rerank_answers(s).await;
    }
    for (reply, _, logged) in &answers {
        let Ok(answer) = reply.rerank() else { continue };
        let scores: Vec<f64> = answer.items.iter().filter_map(|i| i.number()).collect();
        if let Some(i) = scores.windows(2).position(|w| w[1] > w[0]) {
            return Ok(Verdict::fail(format!(
                "in the answer to {}, result {} scores {} after result {i}'s {}: the results are not sorted, and clients that keep the server's order (LlamaIndex, the Cohere SDKs) rank wrongly",
                crate::session::facts::describe_request(&logged.exchange),
                i + 1,
                scores[i + 1],
                scores[i]
            ))
            .with(&reply.exchange));
        }
    }
    Ok(Verdict::pass(format!(
        "all {} rerank answers of the run are sorted by score, highest first",
        answers.len()
    )))
}

/// The indices of the `k` best documents of a full ranking's scores.
fn best(scores: &[f64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order.truncate(k);
    order.sort_unstable();
    order
}

/// RRS-005: "With top_n k below N there are exactly k results, the k best of the full
/// ranking; without top_n, and with top_n above N, all N."
async fn top_n_honoured(s: &Session) -> CheckResult {
    let (route, plain, answer) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let n = DOCUMENTS.len();
    let full = match answer.all_scores(n) {
        Ok(scores) => scores,
        Err(why) => {
            return Ok(Verdict::fail(format!(
                "without top_n: {why}; all {n} documents are expected"
            ))
            .with(&plain.exchange));
        }
    };
    let mut evidence = vec![plain.exchange.clone()];
    for (k, expected) in [(2, 2), (n + 5, n)] {
        let request = rerank::body(s, QUERY, json!(DOCUMENTS), &[("top_n", json!(k))]);
        let reply = s.send(rerank::probe(route, request)).await?;
        evidence.push(reply.exchange.clone());
        let got = match reply.rerank() {
            Ok(answer) if reply.is_success() => answer,
            _ => {
                return Ok(Verdict::fail(format!(
                    "top_n {k} for {n} documents answered {}",
                    reply.summary()
                ))
                .with_all(&evidence));
            }
        };
        if got.items.len() != expected {
            return Ok(Verdict::fail(format!(
                "top_n {k} for {n} documents gave {} results, expected {expected}: Open WebUI reads scores by position and misaligns them",
                got.items.len()
            ))
            .with_all(&evidence));
        }
        let mut indices: Vec<usize> = got.order().into_iter().flatten().collect();
        indices.sort_unstable();
        if expected < n && indices != best(&full, expected) {
            return Ok(Verdict::fail(format!(
                "top_n {k} gave documents {indices:?}, not the {expected} best of the full ranking {:?}",
                best(&full, expected)
            ))
            .with_all(&evidence));
        }
    }
    Ok(Verdict::pass(format!(
        "all {n} results without top_n and with top_n {}, the 2 best with top_n 2",
        n + 5
    ))
    .with_all(&evidence))
}

/// RRS-006: "A result's document, where present and not null, carries the text of
/// the input document it stands for, unchanged: as {"text": …}, or as a bare string;
/// anything else fails." Judged on every rerank answer of the run, after one asking
/// for the documents.
async fn documents_echoed_as_sent(s: &Session) -> CheckResult {
    let (echo, answers) = match echoed_answers(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    if echo.is_server_error() {
        return Ok(Verdict::fail(format!(
            "return_documents: true answered {}: a client that asks for the documents gets no ranking, and the SDKs retry the 5xx",
            echo.summary()
        ))
        .with(&echo.exchange));
    }
    let mut echoed = 0;
    for (reply, answer, sent, logged) in &answers {
        for item in &answer.items {
            let input = item.position().and_then(|i| sent.get(i));
            if let Some(wrong) = not_the_input(&item.document, input) {
                return Ok(Verdict::fail(format!(
                    "in the answer to {}, a result's document is {wrong}: a client that shows or uses it gets another text than it sent",
                    crate::session::facts::describe_request(&logged.exchange)
                ))
                .with(&reply.exchange));
            }
            echoed += usize::from(matches!(item.document, Echo::Text(_) | Echo::String(_)));
        }
    }
    if echoed == 0 {
        return Ok(nothing_echoed(&echo, answers.len()));
    }
    Ok(Verdict::pass(format!(
        "{echoed} echoed documents in {} rerank answers, each the input's text",
        answers.len()
    ))
    .with(&echo.exchange))
}

/// RRS-010: "A result's document, where present, is an object {"text": …}: omitted
/// rather than null when documents were not asked for, and never a bare string."
async fn documents_as_text_objects(s: &Session) -> CheckResult {
    let (echo, answers) = match echoed_answers(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let dialect = rerank::dialect(s);
    let mut present = 0;
    for (reply, answer, _, logged) in &answers {
        for item in &answer.items {
            let form = match (&item.document, dialect) {
                (Echo::Absent, _) => continue,
                // TEI's `Rank` carries `text: Option<String>`, Voyage's data[] a plain
                // `document`, and their clients read them so.
                (Echo::String(_), RerankDialect::Tei | RerankDialect::Voyage) => {
                    present += 1;
                    continue;
                }
                (_, RerankDialect::Tei | RerankDialect::Voyage) => {
                    "not the plain string its dialect documents (TEI's text, Voyage's document): its clients read a string"
                }
                (Echo::Null, _) => {
                    "null: LiteLLM's cohere provider builds a typed response whose document is not Optional and fails on it; omit the document instead"
                }
                (Echo::String(_), _) => {
                    "a bare string, not {\"text\": …}: LiteLLM's hosted_vllm provider fails on it ('str' object has no attribute 'get')"
                }
                _ => {
                    present += 1;
                    continue;
                }
            };
            return Ok(Verdict::fail(format!(
                "in the answer to {}, a result's document is {form}",
                crate::session::facts::describe_request(&logged.exchange)
            ))
            .with(&reply.exchange));
        }
    }
    if present == 0 {
        return Ok(nothing_echoed(&echo, answers.len()));
    }
    let form = match dialect {
        RerankDialect::Tei => "a text string, as TEI's dialect documents",
        RerankDialect::Voyage => "a plain string, as Voyage's dialect documents",
        RerankDialect::Cohere | RerankDialect::Nim => "{\"text\": …}; none null or a bare string",
    };
    Ok(Verdict::pass(format!(
        "{present} documents in {} rerank answers, each {form}",
        answers.len()
    ))
    .with(&echo.exchange))
}

/// A rerank 200 with its parsed answer, the texts its request sent, and its log entry.
type EchoAnswer = (Arc<Reply>, RerankAnswer, Vec<String>, Logged);

/// What RRS-006 and RRS-010 judge: the answer to the request asking for the documents,
/// and every rerank answer of the run with the documents its request sent.
async fn echoed_answers(
    s: &Session,
) -> Result<Result<(Arc<Reply>, Vec<EchoAnswer>), Verdict>, ProbeError> {
    let route = match answered(s).await? {
        Ok((route, _, _)) => route,
        Err(verdict) => return Ok(Err(verdict)),
    };
    let echo = echo_request(s, route).await?;
    let answers = judged_answers(s)
        .await?
        .into_iter()
        .filter_map(|(reply, _, logged)| {
            let answer = reply.rerank().ok()?;
            let sent = sent_documents(&logged);
            Some((reply, answer, sent, logged))
        })
        .collect();
    Ok(Ok((echo, answers)))
}

/// The skip of RRS-006 and RRS-010 when no answer echoed a document.
fn nothing_echoed(echo: &Reply, answers: usize) -> Verdict {
    Verdict::skip(format!(
        "no document echoed in {answers} rerank answers (return_documents: true answered {}): nothing to judge",
        echo.summary()
    ))
    .with(&echo.exchange)
}

/// The text of each document `logged`'s request sent, a bare string or `{"text": …}`,
/// read once per answer: an answer to 1000 documents has 1000 results to judge.
fn sent_documents(logged: &Logged) -> Vec<String> {
    let sent = logged
        .request_body
        .as_deref()
        .and_then(crate::json::parse)
        .unwrap_or_default();
    let documents = crate::contracts::rerank::reply::sent_documents(&sent)
        .map(Vec::as_slice)
        .unwrap_or_default();
    documents
        .iter()
        .map(|d| {
            d.get("text")
                .unwrap_or(d)
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// What is wrong with a result's echoed document against the `input` it stands for:
/// `None` when it is absent, null, or the input's text (RRS-010 judges the form).
fn not_the_input(document: &Echo, input: Option<&String>) -> Option<String> {
    match document {
        Echo::Absent | Echo::Null => None,
        Echo::Text(text) | Echo::String(text) if Some(text) == input => None,
        Echo::Text(text) | Echo::String(text) => Some(format!("{text:?}, not the input document")),
        Echo::Other(json) => Some(format!("{json}, which carries no text")),
    }
}

/// The optional fields clients send as null: Cohere v1's, and v2's `max_tokens_per_doc`,
/// which LangChain's CohereRerank sends on every call.
const NULLABLE: [&str; 3] = ["top_n", "return_documents", "max_tokens_per_doc"];

/// RRS-007: "top_n: null, return_documents: null and max_tokens_per_doc: null are read
/// as absent: answered 200 like the request without them."
async fn null_is_absent(s: &Session) -> CheckResult {
    let (route, plain, _) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let mut refused = Vec::new();
    // The refused requests lead the evidence (views show the first one's curl), the
    // plain request's answer after them.
    let mut evidence = Vec::new();
    let mut answered = Vec::new();
    let mut judged = Vec::new();
    for field in NULLABLE {
        let request = rerank::body(s, QUERY, json!(DOCUMENTS), &[(field, Value::Null)]);
        let sent = s
            .send(rerank::either(
                route,
                request,
                format!("{field}: null, read as absent or refused"),
            ))
            .await;
        let reply = match sent {
            Ok(reply) => reply,
            // A field the server's dialect does not have (Voyage's max_tokens_per_doc).
            Err(ProbeError::NotInDialect(_)) => continue,
            Err(other) => return Err(other),
        };
        judged.push(field);
        let all = reply
            .rerank()
            .is_ok_and(|a| reply.is_success() && a.items.len() == DOCUMENTS.len());
        if all {
            answered.push(reply.exchange.clone());
        } else {
            refused.push(format!("{field}: null answered {}", reply.summary()));
            evidence.push(reply.exchange.clone());
        }
    }
    evidence.extend(answered);
    evidence.push(plain.exchange.clone());
    if judged.is_empty() {
        return Ok(Verdict::skip(format!(
            "none of {} has a meaning in {} rerank dialect",
            NULLABLE.join(", "),
            rerank::dialect(s).described()
        )));
    }
    Ok(if refused.is_empty() {
        Verdict::pass(format!(
            "{} null read as absent (all results)",
            judged.join(", ")
        ))
    } else {
        Verdict::fail(format!(
            "{}: the Cohere Python SDK and Dify send null for an argument the caller set to None, LangChain's CohereRerank max_tokens_per_doc null on every call",
            refused.join("; ")
        ))
    }
    .with_all(&evidence))
}

/// RRS-008: "A request with an unknown field (top_k) is refused with a 4xx or answered
/// as without it; never with a 5xx."
async fn unknown_field_never_5xx(s: &Session) -> CheckResult {
    let (route, _, _) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let request = rerank::body(s, QUERY, json!(DOCUMENTS), &[("top_k", json!(2))]);
    let reply = s
        .send(rerank::invalid(
            route,
            Body::Json(request),
            "unknown field top_k (Voyage's name for top_n)",
        ))
        .await?;
    let handled = if reply.is_client_error() {
        match crate::clauses::judging::refused_naming(&reply, "top_k") {
            Ok(()) => UnknownField::RefusedNaming(reply.status),
            Err(_) => UnknownField::RefusedSilently(reply.status),
        }
    } else if reply.is_success() {
        UnknownField::Ignored
    } else {
        return Ok(Verdict::fail(format!(
            "top_k answered {}: an unknown field is refused with a 4xx or ignored, never 5xx",
            reply.summary()
        ))
        .with(&reply.exchange));
    };
    let fact = s.detected(handled, &reply.exchange);
    learn(s, |facts| facts.top_k = Some(fact));
    let results = reply.rerank().map(|a| a.items.len()).unwrap_or_default();
    let what = match handled {
        UnknownField::Ignored if results == 2 => {
            "answered as top_n 2 (the server reads Voyage's top_k)".to_owned()
        }
        UnknownField::Ignored => format!(
            "ignored: {results} results for top_k 2 (a client that sends Voyage's name gets every document)"
        ),
        refused => refused.to_string(),
    };
    Ok(Verdict::pass(format!("top_k: {what}")).with(&reply.exchange))
}

/// The model LlamaIndex's `CohereRerank` names unless told otherwise: a name a
/// self-hosted server does not serve.
const UNKNOWN_MODEL: &str = "rerank-english-v3.0";

/// RRS-014: "A rerank request naming a model the server does not serve is refused with
/// a 4xx or served; never a 5xx. Which one is recorded."
async fn unknown_model_never_5xx(s: &Session) -> CheckResult {
    let (route, _, _) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let request = rerank::body(
        s,
        QUERY,
        json!(DOCUMENTS),
        &[("model", json!(UNKNOWN_MODEL))],
    );
    let why = format!("model {UNKNOWN_MODEL:?} (LlamaIndex's default), refused or served");
    let reply = s.send(rerank::either(route, request, why)).await?;
    let policy = if reply.is_success() {
        UnknownModel::Served
    } else if reply.is_client_error() {
        UnknownModel::Refused(reply.status)
    } else {
        return Ok(Verdict::fail(format!(
            "model {UNKNOWN_MODEL:?} answered {}: refuse a model name the server does not serve with a 4xx (404 model_not_found, as OpenAI), or serve it; a 5xx is retried",
            reply.summary()
        ))
        .with(&reply.exchange));
    };
    let fact = s.detected(policy, &reply.exchange);
    learn(s, |facts| facts.unknown_model = Some(fact));
    Ok(Verdict::pass(format!("model {UNKNOWN_MODEL:?} {policy}")).with(&reply.exchange))
}

/// The counts a rerank answer may carry: vLLM's and Infinity's OpenAI-style `usage`,
/// Cohere's `meta` (LiteLLM's `RerankResponse` types each an `int`, the Cohere SDK a
/// number).
const COUNTS: [&str; 8] = [
    "/usage/prompt_tokens",
    "/usage/total_tokens",
    "/meta/billed_units/search_units",
    "/meta/billed_units/total_tokens",
    "/meta/billed_units/input_tokens",
    "/meta/billed_units/output_tokens",
    "/meta/tokens/input_tokens",
    "/meta/tokens/output_tokens",
];

/// What is wrong with one answer's `usage` and `meta`, if anything: each an object where
/// present, each count a non-negative whole number (an integral float is read as one by
/// LiteLLM's validation, a fraction or a string is not).
fn counts_wrong(body: &Value) -> Option<String> {
    for name in ["usage", "meta"] {
        if let Some(v) = body.get(name).filter(|v| !v.is_object() && !v.is_null()) {
            return Some(format!("`{name}` is {v}, not an object"));
        }
    }
    let whole = |v: &Value| {
        v.as_u64().is_some() || v.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0)
    };
    COUNTS.iter().find_map(|pointer| {
        let v = body.pointer(pointer).filter(|v| !v.is_null())?;
        let name = pointer.trim_start_matches('/').replace('/', ".");
        (!whole(v)).then(|| format!("{name} is {v}, not a non-negative whole number"))
    })
}

/// RRS-015: "Where a rerank answer carries usage or meta, each is an object and each
/// count in it a non-negative whole number." Judged on every rerank answer of the run.
async fn counts_well_formed(s: &Session) -> CheckResult {
    let answers = judged_answers(s).await?;
    if answers.is_empty() {
        return no_rerank_answers(s).await;
    }
    let mut counted = 0;
    for (reply, _, logged) in &answers {
        let Some(body) = reply
            .json
            .as_ref()
            .filter(|b| b.get("usage").is_some() || b.get("meta").is_some())
        else {
            continue;
        };
        counted += 1;
        if let Some(wrong) = counts_wrong(body) {
            return Ok(Verdict::fail(format!(
                "in the answer to {}, {wrong}: LiteLLM's RerankResponse types each count an int and bills from it",
                crate::session::facts::describe_request(&logged.exchange)
            ))
            .with(&reply.exchange));
        }
    }
    Ok(match counted {
        0 => Verdict::skip(format!(
            "none of {} rerank answers carries usage or meta: nothing to judge",
            answers.len()
        )),
        _ => Verdict::pass(format!(
            "{counted} of {} rerank answers carry usage or meta, every count a non-negative whole number",
            answers.len()
        )),
    })
}

/// RRS-009: "The rerank route answers at /v1/rerank; /rerank and /v2/rerank are
/// recorded as well."
async fn served_at_v1(s: &Session) -> CheckResult {
    served_at(
        s,
        RerankRoute::V1,
        "the Cohere SDK v1 and clients configured with a /v1 base URL call /v1/rerank",
    )
    .await
}

/// RRS-012: "The rerank route answers at /v2/rerank, the path Cohere's ClientV2,
/// LangChain's and LlamaIndex's CohereRerank call."
async fn served_at_v2(s: &Session) -> CheckResult {
    served_at(
        s,
        RerankRoute::V2,
        "Cohere's ClientV2 and LangChain's and LlamaIndex's CohereRerank call /v2/rerank on every request",
    )
    .await
}

/// Whether the route search found the portable request answered 200 at `route`; the
/// failure says which clients call it (`callers`).
async fn served_at(s: &Session, route: RerankRoute, callers: &str) -> CheckResult {
    if rerank::route(s).await?.is_none() {
        return Ok(not_offered(s));
    }
    let Some(routes) = learned(s).routes.map(|f| f.value) else {
        return Ok(not_offered(s));
    };
    if routes.dialect != RerankDialect::Cohere {
        return Ok(Verdict::skip(format!(
            "the server speaks {} rerank dialect ({}), whose clients call the route it serves ({}); where clients of Cohere's call has no meaning for it (see RRS-001)",
            routes.dialect.described(),
            routes.dialect.request(),
            routes.statuses()
        )));
    }
    let answered = routes.statuses();
    let found = routes.tried.iter().find(|a| a.route == route);
    // The route search's own request there (answered from the run's cache).
    let evidence = s
        .send(rerank::probe(route, rerank::plain_body(s)).verbatim())
        .await?;
    let path = route.path();
    Ok(match found {
        Some(a) if a.status == 200 => Verdict::pass(format!("served at {path} ({answered})")),
        _ => Verdict::fail(format!("not served at {path} ({answered}): {callers}")),
    }
    .with(&evidence.exchange))
}

/// RRS-013: "return_documents: true is honoured (every result carries its document) or
/// refused with a 4xx; never ignored."
async fn return_documents_honoured(s: &Session) -> CheckResult {
    let (route, _, _) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let echo = echo_request(s, route).await?;
    if echo.is_client_error() {
        return Ok(Verdict::pass(format!(
            "return_documents: true refused with {}: a client learns that it must keep its documents",
            echo.status
        ))
        .with(&echo.exchange));
    }
    let answer = match echo.rerank() {
        Ok(answer) if echo.is_success() => answer,
        _ => {
            return Ok(Verdict::fail(format!(
                "return_documents: true answered {}",
                echo.summary()
            ))
            .with(&echo.exchange));
        }
    };
    let without = answer
        .items
        .iter()
        .filter(|item| !matches!(item.document, Echo::Text(_) | Echo::String(_)))
        .count();
    Ok(match without {
        0 => Verdict::pass(format!(
            "return_documents: true honoured: all {} results carry their document",
            answer.items.len()
        )),
        n => Verdict::fail(format!(
            "return_documents: true answered 200 with {n} of {} results without their document: a client that asked for them (Cohere v1, Jina) gets nothing to show",
            answer.items.len()
        )),
    }
    .with(&echo.exchange))
}

/// RRS-011: "Documents sent as objects {"text": …} (Cohere v1, Jina and NIM accept them)
/// are answered with a score for every document, or refused with a 4xx; never with a
/// 5xx."
async fn object_documents(s: &Session) -> CheckResult {
    let (route, _, _) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let objects: Vec<Value> = DOCUMENTS.iter().map(|d| json!({ "text": d })).collect();
    let request = rerank::body(s, QUERY, json!(objects), &[]);
    let reply = s
        .send(rerank::either(
            route,
            request,
            "documents as {\"text\"} objects, answered or refused",
        ))
        .await?;
    let scored = reply
        .rerank()
        .ok()
        .filter(|_| reply.is_success())
        .is_some_and(|a| a.all_scores(DOCUMENTS.len()).is_ok());
    Ok(if scored {
        Verdict::pass(format!(
            "documents as {{\"text\"}} objects answered with all {} scores",
            DOCUMENTS.len()
        ))
    } else if reply.is_client_error() {
        Verdict::pass(format!(
            "documents as {{\"text\"}} objects refused with {}: clients of this server send strings",
            reply.status
        ))
    } else if reply.is_success() {
        Verdict::fail(format!(
            "documents as {{\"text\"}} objects answered {} without a score for every document",
            reply.summary()
        ))
    } else {
        Verdict::fail(format!(
            "documents as {{\"text\"}} objects answered {}: Cohere v1, Jina and NIM clients send them, and the SDKs retry a 5xx",
            reply.summary()
        ))
    }
    .with(&reply.exchange))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_objects_of_non_negative_whole_numbers() {
        assert_eq!(
            counts_wrong(&json!({"usage": {"prompt_tokens": 24, "total_tokens": 24}})),
            None
        );
        assert_eq!(
            counts_wrong(&json!({"meta": {"billed_units": {"search_units": 1.0}}})),
            None
        );
        assert_eq!(
            counts_wrong(&json!({"usage": {"total_tokens": null}, "meta": null})),
            None
        );
        assert_eq!(
            counts_wrong(&json!({"usage": {"total_tokens": "24"}})).as_deref(),
            Some("usage.total_tokens is \"24\", not a non-negative whole number")
        );
        assert!(counts_wrong(&json!({"meta": {"tokens": {"input_tokens": -3}}})).is_some());
        assert!(counts_wrong(&json!({"meta": {"billed_units": {"search_units": 0.5}}})).is_some());
        assert!(counts_wrong(&json!({"usage": 24})).is_some());
    }

    #[test]
    fn the_best_k_of_a_ranking_are_its_highest_scores() {
        assert_eq!(best(&[0.1, 0.9, 0.5, 0.7], 2), [1, 3]);
        assert_eq!(best(&[0.5, 0.5, 0.1], 1), [0]);
    }
}
