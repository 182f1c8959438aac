//! rerank-limits: the edges of a rerank request (RRL-001 … RRL-007).
//!
//! Empty lists and documents, `top_n: 0`, inputs past the model's limit, a thousand
//! documents and plain client mistakes: each may be refused or answered, but never with
//! a 5xx (the retry hazard again: the OpenAI and Cohere SDKs retry it) and never with a
//! 200 that hides the mistake.

use super::rerank_shape::answered;
use super::{Check, CheckResult, check};
use crate::http::{Body, Reply, RerankRoute};
use crate::session::facts::LongInputPolicy;
use crate::session::rerank::{self, DOCUMENTS, QUERY};
use crate::session::{ProbeError, Session, Throttled};
use crate::verdict::Verdict;
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("RRL-001", empty_list_refused),
        check!("RRL-002", empty_document_handled),
        check!("RRL-003", top_n_zero),
        check!("RRL-004", long_inputs),
        check!("RRL-005", many_documents),
        check!("RRL-006", mistakes_refused),
        check!("RRL-007", throttling_says_when, log),
    ]
}

/// The route, once the portable request is a rerank answer; else the verdict.
async fn route(s: &Session) -> Result<Result<RerankRoute, Verdict>, ProbeError> {
    Ok(answered(s).await?.map(|(route, _, _)| route))
}

/// RRL-001: "documents: [] is refused with a 4xx; never a 5xx and never a 200."
async fn empty_list_refused(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let request = rerank::body(s, QUERY, json!([]), &[]);
    let reply = s
        .send(rerank::invalid(
            route,
            Body::Json(request),
            "documents is an empty list",
        ))
        .await?;
    Ok(if reply.is_client_error() {
        Verdict::pass(format!("documents: [] refused with {}", reply.status))
    } else if reply.is_success() {
        Verdict::fail(format!(
            "documents: [] answered {}: the client's mistake is hidden",
            reply.summary()
        ))
    } else {
        Verdict::fail(format!(
            "documents: [] answered {}: a 5xx for a client mistake is retried by the SDKs",
            reply.summary()
        ))
    }
    .with(&reply.exchange))
}

/// RRL-002: "A list holding an empty-string document is refused with a 4xx, or answered
/// 200 with a finite score for every document; never with a 5xx."
async fn empty_document_handled(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let documents = [DOCUMENTS[0], "", DOCUMENTS[1]];
    let request = rerank::body(s, QUERY, json!(documents), &[]);
    let reply = s
        .send(rerank::either(route, request, "an empty-string document"))
        .await?;
    let scored = reply
        .rerank()
        .ok()
        .filter(|_| reply.is_success())
        .and_then(|a| a.all_scores(documents.len()).ok());
    Ok(match (reply.is_client_error(), scored) {
        (true, _) => Verdict::pass(format!("an empty document refused with {}", reply.status)),
        (false, Some(scores)) => Verdict::pass(format!(
            "an empty document scored {:.4}, beside the others",
            scores[1]
        )),
        (false, None) if reply.is_success() => Verdict::fail(format!(
            "an empty document answered {} without a finite score for every document",
            reply.summary()
        )),
        (false, None) => Verdict::fail(format!(
            "an empty document answered {}: neither refused with a 4xx nor scored",
            reply.summary()
        )),
    }
    .with(&reply.exchange))
}

/// RRL-003: "top_n: 0 is refused with a 4xx or read as all N documents; never answered
/// 200 with no results."
async fn top_n_zero(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let request = rerank::body(s, QUERY, json!(DOCUMENTS), &[("top_n", json!(0))]);
    let reply = s
        .send(rerank::either(
            route,
            request,
            "top_n: 0, refused or read as all",
        ))
        .await?;
    let results = reply.rerank().map(|a| a.items.len()).ok();
    Ok(match (reply.is_client_error(), reply.is_success(), results) {
        (true, _, _) => Verdict::pass(format!("top_n: 0 refused with {}", reply.status)),
        (_, true, Some(n)) if n == DOCUMENTS.len() => {
            Verdict::pass(format!("top_n: 0 read as all {n} documents"))
        }
        (_, true, Some(0)) => Verdict::fail(
            "top_n: 0 answered 200 with no results: a client that sends 0 for all silently gets nothing to rank",
        ),
        (_, true, n) => Verdict::fail(format!(
            "top_n: 0 answered 200 with {} results for {} documents",
            n.map_or("no readable".to_owned(), |n| n.to_string()),
            DOCUMENTS.len()
        )),
        _ => Verdict::fail(format!("top_n: 0 answered {}", reply.summary())),
    }
    .with(&reply.exchange))
}

/// Words of common English, for inputs longer than any reranker's limit.
fn long_text(words: usize) -> String {
    const COMMON: [&str; 12] = [
        "the", "river", "runs", "past", "old", "mills", "and", "quiet", "fields", "under", "grey",
        "skies",
    ];
    COMMON
        .iter()
        .cycle()
        .take(words)
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Past the longest rerank context a server is likely to hold (Cohere v2 reads 4096
/// tokens a document, bge-reranker-v2-m3 8192): about 10,000 tokens.
const LONG_WORDS: usize = 10_000;

/// What one long-input answer shows: the policy, or why it is wrong.
fn long_answer(what: &str, reply: &Reply) -> Result<LongInputPolicy, String> {
    if reply.is_success() {
        return Ok(LongInputPolicy::Scored);
    }
    if reply.is_client_error() {
        let message = reply.error_text();
        let about_length = [
            "length",
            "long",
            "token",
            "context",
            "exceed",
            "maximum",
            "too large",
            "limit",
        ]
        .iter()
        .any(|w| message.contains(w));
        return if about_length {
            Ok(LongInputPolicy::Refused(reply.status))
        } else {
            Err(format!(
                "{what} refused with {} without a word about length: {:?}",
                reply.status,
                reply.error_message().unwrap_or_default()
            ))
        };
    }
    Err(format!(
        "{what} answered {}: refuse it with a 4xx about length, or truncate it",
        reply.summary()
    ))
}

/// RRL-004: "A document longer than the model's input limit, and likewise a long query,
/// is refused with a 4xx whose message is about length, or answered 200 (truncated);
/// never with a 5xx."
async fn long_inputs(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let long = long_text(LONG_WORDS);
    let document = rerank::body(s, QUERY, json!([DOCUMENTS[0], long, DOCUMENTS[1]]), &[]);
    let query = rerank::body(s, &long, json!(DOCUMENTS), &[]);
    let mut evidence: Vec<Arc<Reply>> = Vec::new();
    let mut policies = Vec::new();
    for (what, request) in [
        (format!("a document of {LONG_WORDS} words"), document),
        (format!("a query of {LONG_WORDS} words"), query),
    ] {
        let reply = s
            .send(rerank::either(
                route,
                request,
                format!("{what}, refused or truncated"),
            ))
            .await?;
        evidence.push(reply.clone());
        match long_answer(&what, &reply) {
            Ok(policy) => policies.push((what, policy)),
            Err(why) => {
                return Ok(Verdict::fail(why).with_all(evidence.iter().map(|r| &r.exchange)));
            }
        }
    }
    let fact = s.detected(policies[0].1, &evidence[0].exchange);
    s.learn(|facts| facts.rerank.long_document = Some(fact));
    let shown: Vec<String> = policies
        .iter()
        .map(|(what, policy)| match policy {
            LongInputPolicy::Scored => format!("{what} scored (200)"),
            LongInputPolicy::Refused(status) => {
                format!("{what} refused with {status} about length (the whole request)")
            }
            LongInputPolicy::Neither(status) => format!("{what} answered {status}"),
        })
        .collect();
    Ok(Verdict::pass(shown.join("; ")).with_all(evidence.iter().map(|r| &r.exchange)))
}

/// RRL-005's request size: Cohere's recommended most, past TEI's 32 and NIM's 512.
const MANY: usize = 1000;

/// RRL-005: "A request of 1000 short documents is answered 200 with every result, or
/// refused with a 4xx; never with a 5xx, and the server keeps answering afterwards."
async fn many_documents(s: &Session) -> CheckResult {
    // Another clause's request of as many documents (RRQ-007's reference case) may have
    // taken the server down already: that request is this clause's evidence.
    if let Some(verdict) = down_after_many(s) {
        return Ok(verdict);
    }
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let documents: Vec<String> = (0..MANY)
        .map(|i| format!("Note {i}: the market opens at nine and closes at five."))
        .collect();
    let request = rerank::body(s, QUERY, json!(documents), &[]);
    let sent = s
        .send(rerank::either(
            route,
            request,
            format!("{MANY} documents, answered or refused"),
        ))
        .await;
    let after = s
        .send(rerank::probe(route, rerank::plain_body(s)).fresh())
        .await;
    let reply = match sent {
        Ok(reply) => reply,
        Err(ProbeError::Transport(e)) => {
            return Ok(Verdict::fail(format!(
                "{MANY} documents got no answer ({e}){}",
                match after {
                    Ok(_) => String::new(),
                    Err(e) => format!(", and the server stopped answering: {e}"),
                }
            )));
        }
        Err(other) => return Err(other),
    };
    if let Err(e) = &after {
        return Ok(Verdict::fail(format!(
            "after {MANY} documents answered {}, the server stopped answering: {e}",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    let results = reply.rerank().map(|a| a.items.len()).unwrap_or_default();
    Ok(if reply.is_success() && results == MANY {
        Verdict::pass(format!("{MANY} documents: 200 with {results} results"))
    } else if reply.is_client_error() {
        Verdict::pass(format!(
            "{MANY} documents refused with {} {:?}",
            reply.status,
            reply.error_message().unwrap_or_default()
        ))
    } else if reply.is_success() {
        Verdict::fail(format!(
            "{MANY} documents answered 200 with {results} results: some documents were dropped"
        ))
    } else {
        Verdict::fail(format!(
            "{MANY} documents answered {}: refuse a request over the limit with a 4xx",
            reply.summary()
        ))
    }
    .with(&reply.exchange))
}

/// The failure of RRL-005 when the server stopped answering right after a rerank
/// request of at least [`MANY`] documents, whichever clause sent it.
fn down_after_many(s: &Session) -> Option<Verdict> {
    let killer = s.down_after()?;
    let logged = s
        .log()
        .into_iter()
        .find(|l| l.is_rerank() && l.exchange == killer)?;
    let sent = crate::json::parse(logged.request_body.as_deref()?)?;
    let documents = sent.get("documents")?.as_array()?.len();
    (documents >= MANY).then(|| {
        Verdict::fail(format!(
            "the server stopped answering right after a rerank request of {documents} documents ({}'s, {} bytes): refuse a request over the limit with a 4xx",
            logged.clause.unwrap_or("the route search"),
            logged.request_body.as_ref().map_or(0, Vec::len)
        ))
        .with(&killer)
    })
}

/// RRL-006's mistakes, each with the body that makes it.
fn mistakes(s: &Session) -> Vec<(&'static str, Body)> {
    let with = |fields: &[(&str, Value)]| {
        let mut body = rerank::body(s, QUERY, json!(DOCUMENTS), &[]);
        for (name, value) in fields {
            match value {
                Value::Null => {
                    body.as_object_mut().map(|o| o.remove(*name));
                }
                value => body[*name] = value.clone(),
            }
        }
        Body::Json(body)
    };
    vec![
        ("no query", with(&[("query", Value::Null)])),
        (
            "documents a string, not an array",
            with(&[("documents", json!("Paris"))]),
        ),
        (
            "a number for a document",
            with(&[("documents", json!([1, 2]))]),
        ),
        ("top_n -1", with(&[("top_n", json!(-1))])),
        (
            "a body that is not JSON",
            Body::Raw {
                bytes: br#"{"query": "What is"#.to_vec(),
                content_type: "application/json",
            },
        ),
    ]
}

/// RRL-006: "A rerank request without query, with documents that are not an array, with
/// a number for a document, with top_n -1, or a body that is not JSON is refused with a
/// 4xx whose body is JSON with a message; never with a 5xx."
async fn mistakes_refused(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let mut wrong = Vec::new();
    let mut evidence = Vec::new();
    let (mut server_errors, mut answered) = (false, false);
    for (mistake, body) in mistakes(s) {
        let reply = s.send(rerank::invalid(route, body, mistake)).await?;
        server_errors |= reply.is_server_error();
        answered |= reply.is_success();
        let problem = if !reply.is_client_error() {
            Some(format!("{mistake} answered {}", reply.summary()))
        } else if reply.json.is_none() || reply.error_message().is_none() {
            Some(format!(
                "{mistake} refused with {} without a JSON message",
                reply.status
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            wrong.push(problem);
            evidence.push(reply.exchange.clone());
        }
    }
    Ok(if wrong.is_empty() {
        Verdict::pass("5 client mistakes refused with a 4xx and a JSON message")
    } else {
        // Why it matters, for what was seen: a 5xx is retried, a 2xx hides the mistake,
        // a refusal without a message leaves the client guessing.
        let why = match (server_errors, answered) {
            (true, _) => "a 5xx for a client mistake is retried by the SDKs",
            (false, true) => {
                "an answered mistake hides it: the client ranks with a request it did not mean"
            }
            (false, false) => "a JSON message tells the client what to fix",
        };
        Verdict::fail(format!("{}; {why}", wrong.join("; "))).with_all(evidence.iter().take(3))
    })
}

/// RRL-007: "Every 429 or 503 answered to a rerank request carries Retry-After (seconds
/// or an HTTP date) or retry-after-ms of at most 120 seconds." Judged on the run's
/// throttling answers to rerank requests, waited out or not.
async fn throttling_says_when(s: &Session) -> CheckResult {
    let throttled: Vec<_> = s
        .throttled()
        .into_iter()
        .filter(Throttled::is_rerank)
        .collect();
    Ok(super::judging::throttling_says_when(&throttled))
}
