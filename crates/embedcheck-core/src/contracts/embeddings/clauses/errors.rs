//! errors: client mistakes get 4xx answers a client can act on, and no request takes
//! the server down (ERR-001 … ERR-014).
//!
//! A 5xx for a client mistake is the retry hazard: the OpenAI SDKs retry every 5xx
//! twice, so such a server receives a request that can never succeed three times.

use crate::clauses::judging;
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings::requests::{self, SENTENCE, body};
use crate::http::probe::Resource;
use crate::http::{Body, Exchange, Probe, Reply, Validity};
use crate::schemas::Schemas;
use crate::session::{Logged, Persisted, ProbeError, Session, Throttled};
use crate::verdict::Verdict;
use serde_json::json;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("ERR-001", malformed_json),
        check!("ERR-002", missing_input),
        check!("ERR-003", ill_typed_input),
        check!("ERR-004", wrong_content_type),
        check!("ERR-005", wrong_method),
        check!("ERR-006", unknown_model),
        check!("ERR-007", error_bodies_have_messages, log),
        check!("ERR-008", error_bodies_are_openai_shaped, log),
        check!("ERR-009", no_retry_hazard, log),
        check!("ERR-010", server_stays_up, log),
        check!("ERR-011", no_retryable_status_for_mistakes, log),
        check!("ERR-012", throttling_says_when, log),
        check!("ERR-013", no_5xx_for_valid_requests, log),
        check!("ERR-014", refusals_leave_the_connection_in_step, log),
    ]
}

/// Passes on a 4xx, fails on anything else, naming what was expected.
fn expect_client_error(reply: &Reply, mistake: &str) -> Verdict {
    if reply.is_client_error() {
        Verdict::pass(format!("{mistake}: {}", reply.summary()))
    } else {
        Verdict::fail(format!(
            "{mistake}: answered {}, expected a 4xx",
            reply.summary()
        ))
    }
    .with(&reply.exchange)
}

fn malformed_json_probe(s: &Session) -> Probe {
    let text = format!(r#"{{"model": "{}", "input": ["unterminated"#, s.model());
    requests::raw(
        text.as_bytes(),
        "application/json",
        "body is not valid JSON",
    )
}

/// ERR-001: "A body that is not valid JSON is answered with a 4xx."
async fn malformed_json(s: &Session) -> CheckResult {
    let reply = s.send(malformed_json_probe(s)).await?;
    Ok(expect_client_error(&reply, "malformed JSON"))
}

/// ERR-002: "A request without input is answered with a 4xx."
async fn missing_input(s: &Session) -> CheckResult {
    let reply = s.send(requests::missing_input(s)).await?;
    Ok(expect_client_error(&reply, "missing input"))
}

/// ERR-003: "input given as a number, an object or null is answered with a 4xx."
async fn ill_typed_input(s: &Session) -> CheckResult {
    let mistakes = [json!(42), json!({"text": SENTENCE}), json!(null)]
        .into_iter()
        .map(|input| {
            let why = format!("input is {input}");
            (
                why.clone(),
                requests::invalid(Body::Json(body(s, input, &[])), why),
            )
        })
        .collect();
    judging::expect_all_refused(
        s,
        mistakes,
        "number, object and null inputs refused with 4xx",
    )
    .await
}

/// ERR-004: "A JSON request sent with Content-Type text/plain is answered with a 4xx
/// (415 or 400), or embedded as JSON; never a 5xx."
async fn wrong_content_type(s: &Session) -> CheckResult {
    let text = body(s, json!(SENTENCE), &[]).to_string();
    let reply = s
        .send(requests::raw(
            text.as_bytes(),
            "text/plain",
            "Content-Type is text/plain",
        ))
        .await?;
    if reply.is_success() {
        return Ok(match super::vectors_or_verdict(&reply, 1) {
            Ok(_) => Verdict::pass("text/plain body embedded as JSON").with(&reply.exchange),
            Err(verdict) => verdict,
        });
    }
    Ok(expect_client_error(&reply, "Content-Type text/plain"))
}

/// ERR-005: "GET on the embeddings path is answered with a 4xx (405 preferred)."
async fn wrong_method(s: &Session) -> CheckResult {
    let probe = requests::invalid(Body::None, "GET on the embeddings path")
        .with_method(reqwest::Method::GET);
    let reply = s.send(probe).await?;
    Ok(expect_client_error(&reply, "GET"))
}

/// ERR-006: "A request naming a model the server does not serve is refused with a
/// 4xx (404 model_not_found preferred)."
async fn unknown_model(s: &Session) -> CheckResult {
    let name = format!("embedcheck-no-such-model-{}", s.settings().seed);
    let request = json!({"model": name, "input": SENTENCE});
    let reply = s
        .send(requests::invalid(
            Body::Json(request),
            "model is not served",
        ))
        .await?;
    let fact = s.detected(reply.is_success(), &reply.exchange);
    s.learn(|facts| facts.ignores_model_name = Some(fact));
    if reply.is_success() {
        return Ok(Verdict::fail(format!(
            "model {name:?} answered 200: the server ignores the model name, so a client cannot tell which model embedded its text"
        ))
        .with(&reply.exchange));
    }
    Ok(expect_client_error(&reply, "unknown model"))
}

/// The run's requests to the embeddings endpoint: the rerank contract judges its own
/// requests, and the models listing is the suite's own bookkeeping (the model's name
/// and limit), not an answer of the contract. TEI routes no `GET /v1/models`, and its
/// empty 404 failed ERR-007 on every TEI server.
fn embeddings_log(s: &Session) -> Vec<Logged> {
    s.log()
        .into_iter()
        .filter(|l| l.resource == Resource::Contract(requests::ROUTE))
        .collect()
}

/// The run's throttling answers to embeddings requests.
fn embeddings_throttled(s: &Session) -> Vec<Throttled> {
    s.throttled()
        .into_iter()
        .filter(|t| t.resource == Resource::Contract(requests::ROUTE))
        .collect()
}

/// Every error answer of the run, after making sure the standard error probes were
/// sent (so these clauses also judge something when run alone).
async fn error_replies(s: &Session) -> Result<Vec<Arc<Reply>>, ProbeError> {
    s.send(malformed_json_probe(s)).await?;
    s.send(requests::missing_input(s)).await?;
    Ok(embeddings_log(s)
        .into_iter()
        .filter_map(|logged| logged.reply)
        .filter(|r| r.status >= 400)
        .collect())
}

/// ERR-007: "Every 4xx or 5xx answer to the suite's requests says why: a message at
/// error.message or message of a JSON body, or the text of a text/plain body." The
/// OpenAI SDKs raise their status error with the body's text either way, so a plain
/// text is read; a page of markup or an empty body tells the user nothing. Whether the
/// body is OpenAI's envelope is ERR-008's.
async fn error_bodies_have_messages(s: &Session) -> CheckResult {
    let replies = error_replies(s).await?;
    let silent: Vec<&Arc<Reply>> = replies
        .iter()
        .filter(|r| r.error_message().is_none() && r.plain_text_message().is_none())
        .collect();
    if let Some(first) = silent.first() {
        return Ok(Verdict::fail(format!(
            "{} of {} error answers say nothing a client can show; the first ({}) {}: answer a JSON message (error.message) or a plain text",
            silent.len(),
            replies.len(),
            first.status,
            says_nothing(first)
        ))
        .with_all(silent.iter().take(3).map(|r| &r.exchange)));
    }
    let plain = replies
        .iter()
        .filter(|r| r.error_message().is_none())
        .count();
    let how = match plain {
        0 => "as a JSON message".to_owned(),
        n if n == replies.len() => "as plain text".to_owned(),
        n => format!("{} as a JSON message, {n} as plain text", replies.len() - n),
    };
    Ok(Verdict::pass(format!(
        "all {} error answers say why, {how}",
        replies.len()
    ))
    .with_all(replies.iter().take(2).map(|r| &r.exchange)))
}

/// Why an error answer says nothing a client can show.
fn says_nothing(reply: &Reply) -> String {
    if reply.body.iter().all(u8::is_ascii_whitespace) {
        return "has an empty body".to_owned();
    }
    match (&reply.json, reply.content_type.as_deref()) {
        (Some(_), _) => "is JSON without a message".to_owned(),
        (None, Some(content_type)) => format!("is {content_type}, neither JSON nor plain text"),
        (None, None) => "is not JSON and has no content type".to_owned(),
    }
}

/// ERR-008: "Every error body validates against specs/schemas/error.schema.json."
async fn error_bodies_are_openai_shaped(s: &Session) -> CheckResult {
    let replies = error_replies(s).await?;
    for reply in &replies {
        let problems = match &reply.json {
            Some(json) => Schemas::get().error_problems(json),
            None => vec!["the body is not JSON".to_owned()],
        };
        if !problems.is_empty() {
            return Ok(Verdict::fail(format!(
                "a {} error body is not OpenAI-shaped: {}",
                reply.status,
                problems.join("; ")
            ))
            .with(&reply.exchange));
        }
    }
    Ok(Verdict::pass(format!(
        "all {} error bodies have the OpenAI shape",
        replies.len()
    ))
    .with_all(replies.iter().take(2).map(|r| &r.exchange)))
}

/// ERR-009: "Every request the suite sends that is invalid under the contract is
/// answered without a 5xx."
///
/// Judges the whole run's log: every probe built as a client mistake (malformed bodies,
/// unhonourable `dimensions`, unknown fields, over-length inputs, bogus
/// `encoding_format` …) and answered 5xx is named, with what made it invalid.
async fn no_retry_hazard(s: &Session) -> CheckResult {
    s.send(malformed_json_probe(s)).await?;
    s.send(requests::missing_input(s)).await?;
    let log = embeddings_log(s);
    let invalid: Vec<(&str, &Arc<Reply>)> = log
        .iter()
        .filter_map(|logged| match (&logged.validity, &logged.reply) {
            (Validity::Invalid(why), Some(reply)) => Some((why.as_str(), reply)),
            _ => None,
        })
        .collect();
    let hazards: Vec<&(&str, &Arc<Reply>)> = invalid
        .iter()
        .filter(|(_, reply)| reply.is_server_error())
        .collect();
    if invalid.is_empty() {
        return Ok(Verdict::skip(
            "no invalid request got an answer: nothing to judge",
        ));
    }
    if hazards.is_empty() {
        return Ok(Verdict::pass(format!(
            "none of the {} invalid requests was answered 5xx",
            invalid.len()
        )));
    }
    let named: Vec<String> = hazards
        .iter()
        .map(|(why, reply)| {
            let exchange = &reply.exchange;
            format!(
                "{} {} ({why}) -> {}",
                exchange.method, exchange.path, reply.status
            )
        })
        .collect();
    Ok(Verdict::fail(format!(
        "{} of {} invalid requests were answered 5xx; the OpenAI SDKs retry each twice, tripling the load of requests that can never succeed: {}",
        hazards.len(),
        invalid.len(),
        named.join("; ")
    ))
    .with_all(hazards.iter().map(|(_, reply)| &reply.exchange)))
}

/// ERR-013: "No request the suite sends that is valid under the contract, or that the
/// contract lets a server either refuse or embed, is answered with a 5xx."
///
/// The run-wide counterpart of ERR-009: a 5xx is never a right answer, whoever made
/// the mistake, and the SDKs retry it twice all the same (fp16 NaNs answered 500 on
/// particular valid texts: ollama/ollama#12921).
async fn no_5xx_for_valid_requests(s: &Session) -> CheckResult {
    requests::single(s).await?;
    let log = embeddings_log(s);
    let answered: Vec<(Option<&str>, &Arc<Reply>)> = log
        .iter()
        .filter_map(|logged| {
            let why = match &logged.validity {
                Validity::Invalid(_) => return None,
                Validity::Valid => None,
                Validity::Either(why) => Some(why.as_str()),
            };
            logged.reply.as_ref().map(|reply| (why, reply))
        })
        .collect();
    let failed: Vec<&(Option<&str>, &Arc<Reply>)> = answered
        .iter()
        .filter(|(_, reply)| reply.is_server_error())
        .collect();
    if answered.is_empty() {
        return Ok(Verdict::skip(
            "no valid request got an answer: nothing to judge",
        ));
    }
    if failed.is_empty() {
        return Ok(Verdict::pass(format!(
            "none of the {} valid requests was answered 5xx",
            answered.len()
        )));
    }
    let named: Vec<String> = failed
        .iter()
        .take(5)
        .map(|(why, reply)| {
            let request = crate::session::facts::describe_request(&reply.exchange);
            let why = why.map_or(String::new(), |why| format!(" ({why})"));
            format!("{request}{why} -> {}", reply.summary())
        })
        .collect();
    Ok(Verdict::fail(format!(
        "{} of {} valid requests were answered 5xx, which the OpenAI SDKs retry twice and no client can fix: {}{}",
        failed.len(),
        answered.len(),
        named.join("; "),
        if failed.len() > 5 { "; …" } else { "" }
    ))
    .with_all(failed.iter().take(5).map(|(_, r)| &r.exchange)))
}

/// ERR-010: "After every request the suite sends, the server still answers."
///
/// The session notices when a probe gets no answer from a server that answered
/// before and the server then fails a liveness check; that probe is the finding.
async fn server_stays_up(s: &Session) -> CheckResult {
    Ok(match s.down_after() {
        Some(killer) => Verdict::fail(format!(
            "the server stopped answering right after {} {}: any client can take it down with this request",
            killer.method,
            killer.request_body.as_deref().unwrap_or("(no body)")
        ))
        .with(&killer),
        // The requests of the log: a refusal confirmed on a new connection with the same
        // answer is one request of the run, however the pool happened to reuse
        // connections (which decides whether it was confirmed at all).
        None => Verdict::pass(format!(
            "the server answered after every one of {} requests",
            s.log().len()
        )),
    })
}

/// ERR-014: "A request that follows a refused request with a body on the same
/// kept-open connection is answered as the same request on a new connection is
/// answered."
///
/// The session confirms every such answer that is a refusal on a new connection
/// before any clause sees it ([`crate::session::reuse`]); this reads what it found.
async fn refusals_leave_the_connection_in_step(s: &Session) -> CheckResult {
    let (desync, in_step) = s.connection_reuse();
    if let Some(d) = desync {
        return Ok(Verdict::fail(format!(
            "after {} {} was refused {} and its body left unread, the next request on that connection was answered {} and the same request on a new connection {}: a pooled client gets that answer after any such refusal (read the body or close the connection, RFC 9112 §9.3)",
            d.unread.method,
            d.unread.path,
            status_of(&d.unread),
            status_of(&d.artefact),
            status_of(&d.repeated),
        ))
        .with_all([&d.unread, &d.artefact, &d.repeated]));
    }
    let Some((_, shown)) = in_step.first() else {
        return Ok(Verdict::skip(
            "no request followed a refused one on the same connection (the server closes connections after refusals, or none was reused): nothing to judge",
        ));
    };
    // Which refusals a pooled connection happened to carry varies from run to run; the
    // evidence shows one.
    Ok(Verdict::pass(
        "every request that followed a refusal on its connection was answered as on a new connection",
    )
    .with(shown))
}

fn status_of(exchange: &Exchange) -> String {
    exchange
        .status
        .map_or_else(|| "nothing".to_owned(), |s| s.to_string())
}

/// ERR-011: "No invalid request is answered with a status the OpenAI SDKs retry (408,
/// 409, 429 or any 5xx) unless the answer carries x-should-retry: false; a 429 that an
/// invalid request gets again when sent again at once, while a valid request sent in
/// between succeeds (or that persists past the run's retry wait while valid requests
/// succeed), is a client mistake misreported as throttling."
///
/// ERR-009's log, judged with the SDKs' own rule ([`Reply::is_retried_by_sdks`]), plus
/// the 429s the session found to be refusals (a quota answer to a request that can
/// never succeed) or gave up waiting out.
async fn no_retryable_status_for_mistakes(s: &Session) -> CheckResult {
    s.send(malformed_json_probe(s)).await?;
    s.send(requests::missing_input(s)).await?;
    let log = embeddings_log(s);
    let mut invalid = 0usize;
    let mut retried: Vec<(String, Arc<Reply>)> = Vec::new();
    for logged in &log {
        if let (Validity::Invalid(why), Some(reply)) = (&logged.validity, &logged.reply) {
            invalid += 1;
            // A 429 is judged by how it ended (below): waited out, it was throttling.
            if reply.status != 429 && reply.is_retried_by_sdks() {
                retried.push((why.clone(), reply.clone()));
            }
        }
    }
    let valid_succeeded = log
        .iter()
        .any(|l| l.validity == Validity::Valid && l.reply.as_ref().is_some_and(|r| r.is_success()));
    if valid_succeeded {
        for t in embeddings_throttled(s) {
            let how = match t.persisted {
                Persisted::No => continue,
                Persisted::PastRetryWait => "still 429 after the retry wait",
                Persisted::WhileValidSucceeded => {
                    "429 again at once while a valid request sent between the two succeeded"
                }
            };
            if let Validity::Invalid(why) = &t.validity {
                retried.push((format!("{why}; {how}"), t.reply));
            }
        }
    }
    if retried.is_empty() && invalid == 0 {
        return Ok(Verdict::skip(
            "no invalid request got an answer: nothing to judge",
        ));
    }
    if retried.is_empty() {
        return Ok(Verdict::pass(format!(
            "none of the {invalid} invalid requests got a status the OpenAI SDKs retry (408, 409, 429, 5xx)"
        )));
    }
    let named: Vec<String> = retried
        .iter()
        .take(8)
        .map(|(why, reply)| format!("{} ({why})", reply.status))
        .collect();
    Ok(Verdict::fail(format!(
        "{} invalid requests got a status the OpenAI SDKs retry twice without x-should-retry: false: {}",
        retried.len(),
        named.join("; ")
    ))
    .with_all(retried.iter().map(|(_, r)| &r.exchange)))
}

/// ERR-012: "Every 429 or 503 the run receives carries Retry-After (seconds or an HTTP
/// date) or retry-after-ms of at most 120 seconds." Judged on the throttling answers to
/// the embeddings requests (RRL-007 judges the rerank requests').
async fn throttling_says_when(s: &Session) -> CheckResult {
    Ok(judging::throttling_says_when(&embeddings_throttled(s)))
}
