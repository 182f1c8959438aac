//! rerank-limits: the edges of a rerank request (RRL-001 … RRL-011).
//!
//! Empty lists and documents, `top_n: 0`, inputs past the model's limit, a thousand
//! documents and plain client mistakes: each may be refused or answered as the server's
//! documented contract says, but never with a 5xx (the retry hazard again: the OpenAI
//! and Cohere SDKs retry it) and never with a 200 that is silently wrong.

use super::scores::{largest_difference, scores, tolerance};
use super::shape::answered;
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::rerank::RerankRoute;
use crate::contracts::rerank::facts::{LongInputPolicy, TopNZero};
use crate::contracts::rerank::learn;
use crate::contracts::rerank::requests::{self as rerank, DOCUMENTS, QUERY};
use crate::http::{Body, Probe, Reply};
use crate::session::{ProbeError, Session};
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
        check!("RRL-008", long_refusals_say_length),
        check!("RRL-009", query_kept_whole),
        check!("RRL-010", mistakes_refused_with_a_message),
        check!("RRL-011", negative_top_n_keeps_every_document),
    ]
}

/// The route, once the portable request is a rerank answer; else the verdict.
async fn route(s: &Session) -> Result<Result<RerankRoute, Verdict>, ProbeError> {
    Ok(answered(s).await?.map(|(route, _, _)| route))
}

/// RRL-001: "documents: [] is refused with a 4xx or answered 200; never a 5xx."
/// Every measured client short-circuits an empty list, so a 200 breaks none; a 5xx is
/// retried.
async fn empty_list_refused(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let reply = s.send(empty_list_probe(s, route)).await?;
    Ok(if reply.is_client_error() {
        Verdict::pass(format!("documents: [] refused with {}", reply.status))
    } else if reply.is_success() {
        Verdict::pass(format!(
            "documents: [] answered {} (clients short-circuit an empty list: nothing breaks)",
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

/// RRL-001's request, `documents: []`.
pub(super) fn empty_list_probe(s: &Session, route: RerankRoute) -> Probe {
    let request = rerank::body(s, QUERY, json!([]), &[]);
    rerank::invalid(route, Body::Json(request), "documents is an empty list")
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

/// RRL-003: "top_n: 0 is refused with a 4xx, read as all N documents, or answered with
/// no results (the server's policy, recorded); never a 5xx." Cohere documents
/// `minimum: 1`, vLLM reads 0 as all, and Dify, the one client found sending 0, means it
/// literally: the documented contracts differ, so only a 5xx fails.
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
            "top_n: 0, refused, read as all or literally",
        ))
        .await?;
    let results = reply.rerank().map(|a| a.items.len()).ok();
    let policy = match (reply.is_client_error(), reply.is_success(), results) {
        (true, _, _) => TopNZero::Refused(reply.status),
        (_, true, Some(n)) if n == DOCUMENTS.len() => TopNZero::All,
        (_, true, Some(0)) => TopNZero::None,
        (_, true, Some(n)) => TopNZero::Some(n),
        _ => {
            return Ok(Verdict::fail(format!(
                "top_n: 0 answered {}: refuse it with a 4xx, or answer it",
                reply.summary()
            ))
            .with(&reply.exchange));
        }
    };
    let fact = s.detected(policy, &reply.exchange);
    learn(s, |facts| facts.top_n_zero = Some(fact));
    Ok(Verdict::pass(format!("top_n: 0 {policy}")).with(&reply.exchange))
}

/// Words of common English, for inputs longer than any reranker's limit.
pub(super) fn long_text(words: usize) -> String {
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
pub(super) const LONG_WORDS: usize = 10_000;

/// What one long-input answer shows: the policy, or why it is wrong.
fn long_answer(what: &str, reply: &Reply) -> Result<LongInputPolicy, String> {
    if reply.is_success() {
        return Ok(LongInputPolicy::Scored);
    }
    if reply.is_client_error() {
        return Ok(LongInputPolicy::Refused(reply.status));
    }
    Err(format!(
        "{what} answered {}: refuse it with a 4xx, or truncate it",
        reply.summary()
    ))
}

/// Whether a refusal's message is about length: an English keyword guess, which is why
/// RRL-008, which rests on it, is a SHOULD.
fn about_length(reply: &Reply) -> bool {
    let message = reply.error_text().to_lowercase();
    [
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
    .any(|w| message.contains(w))
}

/// RRL-004: "A document longer than the model's input limit, and likewise a long query,
/// is refused with a 4xx or answered 200 (truncated); never with a 5xx."
async fn long_inputs(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let mut evidence: Vec<Arc<Reply>> = Vec::new();
    let mut policies = Vec::new();
    for (what, probe) in long_requests(s, route) {
        let reply = s.send(probe).await?;
        evidence.push(reply.clone());
        match long_answer(&what, &reply) {
            Ok(policy) => policies.push((what, policy)),
            Err(why) => {
                return Ok(Verdict::fail(why).with_all(evidence.iter().map(|r| &r.exchange)));
            }
        }
    }
    let fact = s.detected(policies[0].1, &evidence[0].exchange);
    learn(s, |facts| facts.long_document = Some(fact));
    let shown: Vec<String> = policies
        .iter()
        .map(|(what, policy)| match policy {
            LongInputPolicy::Scored => format!("{what} scored (200)"),
            LongInputPolicy::Refused(status) => {
                format!("{what} refused with {status} (the whole request)")
            }
        })
        .collect();
    Ok(Verdict::pass(shown.join("; ")).with_all(evidence.iter().map(|r| &r.exchange)))
}

/// RRL-004's two requests, a long document and a long query, with what each is.
fn long_requests(s: &Session, route: RerankRoute) -> [(String, Probe); 2] {
    let query = rerank::body(s, &long_text(LONG_WORDS), json!(DOCUMENTS), &[]);
    let what = format!("a query of {LONG_WORDS} words");
    let why = format!("{what}, refused or truncated");
    [
        (
            format!("a document of {LONG_WORDS} words"),
            long_document_probe(s, route, None),
        ),
        (what, rerank::either(route, query, why)),
    ]
}

/// RRL-004's long document: [`LONG_WORDS`] words between two short documents.
/// With `switch`, a dialect's truncation switch set to a value (RRD-002's requests).
pub(super) fn long_document_probe(
    s: &Session,
    route: RerankRoute,
    switch: Option<(&str, &Value)>,
) -> Probe {
    let long = long_text(LONG_WORDS);
    let extra: Vec<(&str, Value)> = switch.iter().map(|(f, v)| (*f, (*v).clone())).collect();
    let document = rerank::body(s, QUERY, json!([DOCUMENTS[0], long, DOCUMENTS[1]]), &extra);
    let why = match switch {
        None => format!("a document of {LONG_WORDS} words, refused or truncated"),
        Some((field, value)) => format!("a document of {LONG_WORDS} words with {field}: {value}"),
    };
    rerank::either(route, document, why)
}

/// RRL-008: "A long document or query refused with a 4xx is refused with a message
/// about length." Judged on RRL-004's answers.
async fn long_refusals_say_length(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let mut refused = Vec::new();
    for (what, probe) in long_requests(s, route) {
        let reply = s.send(probe).await?;
        if reply.is_client_error() {
            refused.push((what, reply));
        }
    }
    if let Some((what, reply)) = refused.iter().find(|(_, r)| !about_length(r)) {
        return Ok(Verdict::fail(format!(
            "{what} refused with {} without a word about length: {:?}; a client cannot tell it from another mistake",
            reply.status,
            reply.error_message().unwrap_or_default()
        ))
        .with(&reply.exchange));
    }
    Ok(match refused.as_slice() {
        [] => Verdict::skip("no long input was refused (see RRL-004): nothing to judge"),
        [_] => Verdict::pass("the long input refused says it is about length")
            .with_all(refused.iter().map(|(_, r)| &r.exchange)),
        _ => Verdict::pass(format!(
            "{} long inputs refused, each with a message about length",
            refused.len()
        ))
        .with_all(refused.iter().map(|(_, r)| &r.exchange)),
    })
}

/// RRL-009's query lengths in words, doubling: one of them falls between half the
/// model's window and all of it, for windows of about 150 to 3000 tokens.
const QUERY_WORDS: [usize; 5] = [96, 192, 384, 768, 1536];

/// How many words the long document is shorter than the query: longest-first
/// truncation then cuts the query before it cuts the document.
const SHORTER_BY: usize = 16;

/// The short document, and the start of the long ones: about cats.
const ABOUT_CATS: &str = "A note about cats.";

/// The word before a query's last, which the long documents end on or not: the query's
/// own word, so that it counts for the document wherever the document is read whole.
const NEXT_TO_LAST: &str = "whiskers";

/// A query of `words` words whose last words are [`NEXT_TO_LAST`] and `last`.
fn query_ending(words: usize, last: &str) -> String {
    format!("{} {NEXT_TO_LAST} {last}", long_text(words))
}

/// A document about cats, [`SHORTER_BY`] words shorter than a query of `words` words,
/// whose last word is `last`.
fn long_document_ending(words: usize, last: &str) -> String {
    let filler = long_text(words.saturating_sub(SHORTER_BY));
    format!("{ABOUT_CATS} {filler} {last}")
}

/// How many words the long documents beside a query of `words` words have.
fn long_document_words(words: usize) -> usize {
    long_document_ending(words, "birds")
        .split_whitespace()
        .count()
}

/// RRL-009's two requests at one size: the query ending "cats" with the short document
/// and two long ones, one ending on the query's [`NEXT_TO_LAST`] word and one not; the
/// query ending "dogs" with the short document and the first long one.
fn query_requests(s: &Session, route: RerankRoute, words: usize) -> [Probe; 2] {
    let long = |last| long_document_ending(words, last);
    let cats = rerank::body(
        s,
        &query_ending(words, "cats"),
        json!([ABOUT_CATS, long(NEXT_TO_LAST), long("birds")]),
        &[],
    );
    let dogs = rerank::body(
        s,
        &query_ending(words, "dogs"),
        json!([ABOUT_CATS, long(NEXT_TO_LAST)]),
        &[],
    );
    let why = format!("a query of {words} words beside a long document, scored or refused");
    [cats, dogs].map(|body| rerank::either(route, body, why.clone()))
}

/// The scores of one RRL-009 size: the short and the long document for each query, and
/// the other long document for the query ending "cats".
#[derive(Clone, Copy, Debug, PartialEq)]
struct QuerySize {
    words: usize,
    short: (f64, f64),
    long: (f64, f64),
    long_other_end: f64,
}

/// What one size shows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum QueryShows {
    /// The query's last word changed no score even beside the short document: the
    /// model does not read it, or the query alone is over the window.
    LastWordUnread,
    /// The query's last word counted beside the short document and not beside the long.
    QueryCut,
    /// The long document's last word still counted: nothing was cut.
    NothingCut,
    /// The long document was cut and the query's last word still counted.
    QueryKept,
}

impl QuerySize {
    fn shows(&self, tolerance: f64) -> QueryShows {
        let differ = |(a, b): (f64, f64)| largest_difference(&[a], &[b]) > tolerance;
        if !differ(self.short) {
            QueryShows::LastWordUnread
        } else if !differ(self.long) {
            QueryShows::QueryCut
        } else if differ((self.long.0, self.long_other_end)) {
            QueryShows::NothingCut
        } else {
            QueryShows::QueryKept
        }
    }

    /// The verdict this size decides, if it decides one.
    fn verdict(&self, shows: QueryShows) -> Option<Verdict> {
        let words = self.words;
        let document = long_document_words(words);
        let (short, long) = (self.short, self.long);
        match shows {
            QueryShows::QueryCut => Some(Verdict::fail(format!(
                "a document of {document} words cut the query's last words: beside it, queries of {words} words ending \"cats\" and \"dogs\" scored alike ({:.4} and {:.4}), beside a short document they did not ({:.4} and {:.4}); keep the query whole and cut the document (Cohere keeps a query's first 2048 tokens)",
                long.0, long.1, short.0, short.1
            ))),
            QueryShows::QueryKept => Some(Verdict::pass(format!(
                "a query of {words} words kept its last word beside a document cut to fit: queries ending \"cats\" and \"dogs\" scored it {:.4} and {:.4}, while the document's own last word no longer counted (ending on \"whiskers\" or not, {:.4} and {:.4})",
                long.0, long.1, long.0, self.long_other_end
            ))),
            QueryShows::LastWordUnread | QueryShows::NothingCut => None,
        }
    }
}

/// RRL-009: "A query is scored whole beside a document the server cuts to fit."
async fn query_kept_whole(s: &Session) -> CheckResult {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(verdict),
    };
    let tolerance = tolerance(s).await?;
    for words in QUERY_WORDS {
        let [cats, dogs] = query_requests(s, route, words);
        let (cats, dogs) = (s.send(cats).await?, s.send(dogs).await?);
        let evidence = [&cats.exchange, &dogs.exchange];
        if let Some(refused) = [&cats, &dogs].into_iter().find(|r| !r.is_success()) {
            let document = long_document_words(words);
            return Ok(Verdict::skip(format!(
                "a query of {words} words beside a document of {document} words was answered {}: nothing was scored after a cut, nothing to judge (RRL-004 judges long inputs)",
                refused.summary()
            ))
            .with_all(evidence));
        }
        let (Some(a), Some(b)) = (scores(&cats, 3), scores(&dogs, 2)) else {
            return Ok(Verdict::skip(format!(
                "the scores of the {words}-word queries cannot be read (see RRS-002)"
            ))
            .with_all(evidence));
        };
        let size = QuerySize {
            words,
            short: (a[0], b[0]),
            long: (a[1], b[1]),
            long_other_end: a[2],
        };
        let shows = size.shows(tolerance);
        if let Some(verdict) = size.verdict(shows) {
            return Ok(verdict.with_all(evidence));
        }
        if shows == QueryShows::LastWordUnread {
            return Ok(Verdict::skip(format!(
                "queries of {words} words ending \"cats\" and \"dogs\" scored a short document about cats alike ({:.4} and {:.4}) before any document was cut: the query's last word is not read, nothing to judge",
                a[0], b[0]
            ))
            .with_all(evidence));
        }
    }
    let most = QUERY_WORDS[QUERY_WORDS.len() - 1];
    Ok(Verdict::skip(format!(
        "nothing was cut: a query and a document of up to {most} words each were scored whole"
    )))
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
    let sent = s.send(many_documents_probe(s, route)).await;
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

/// RRL-005's request of [`MANY`] short documents.
pub(super) fn many_documents_probe(s: &Session, route: RerankRoute) -> Probe {
    let documents: Vec<String> = (0..MANY)
        .map(|i| format!("Note {i}: the market opens at nine and closes at five."))
        .collect();
    let request = rerank::body(s, QUERY, json!(documents), &[]);
    rerank::either(
        route,
        request,
        format!("{MANY} documents, answered or refused"),
    )
}

/// The failure of RRL-005 when the server stopped answering right after a rerank
/// request of at least [`MANY`] documents, whichever clause sent it.
fn down_after_many(s: &Session) -> Option<Verdict> {
    let killer = s.down_after()?;
    let logged = s
        .log()
        .into_iter()
        .find(|l| l.contract() == Some(crate::contracts::rerank::ID) && l.exchange == killer)?;
    let sent = crate::json::parse(logged.request_body.as_deref()?)?;
    let documents = crate::contracts::rerank::reply::sent_documents(&sent)?.len();
    (documents >= MANY).then(|| {
        Verdict::fail(format!(
            "the server stopped answering right after a rerank request of {documents} documents ({}'s, {} bytes): refuse a request over the limit with a 4xx",
            logged.clause.unwrap_or("the route search"),
            logged.request_body.as_ref().map_or(0, Vec::len)
        ))
        .with(&killer)
    })
}

/// RRL-006's mistake that a lenient server may answer wrong.
const NEGATIVE_TOP_N: &str = "top_n -1";

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
        (NEGATIVE_TOP_N, with(&[("top_n", json!(-1))])),
        (
            "a body that is not JSON",
            Body::Raw {
                bytes: br#"{"query": "What is"#.to_vec(),
                content_type: "application/json",
            },
        ),
    ]
}

/// RRL-006's mistakes as the server answered them, those its dialect can make; the
/// verdict instead where the server answers no rerank request. RRL-006, RRL-010 and
/// RRL-011 judge the same answers (the session's cache sends each mistake once).
async fn mistakes_answered(
    s: &Session,
) -> Result<Result<Vec<(&'static str, Arc<Reply>)>, Verdict>, ProbeError> {
    let route = match route(s).await? {
        Ok(route) => route,
        Err(verdict) => return Ok(Err(verdict)),
    };
    let mut answered = Vec::new();
    for (mistake, body) in mistakes(s) {
        match s.send(rerank::invalid(route, body, mistake)).await {
            Ok(reply) => answered.push((mistake, reply)),
            // A mistake the server's dialect cannot make (TEI's has no top_n).
            Err(ProbeError::NotInDialect(_)) => continue,
            Err(other) => return Err(other),
        }
    }
    Ok(Ok(answered))
}

/// RRL-006: "A rerank request without query, with documents that are not an array,
/// with a number for a document, with top_n -1, or a body that is not JSON is refused
/// with a 4xx or answered 200 (the server's lenient reading, recorded in the reason);
/// never with a 5xx." A 200 is the server's reading (vLLM documents a single string as
/// documents); what a refusal says is RRL-010's, what a 200 holds RRL-011's.
async fn mistakes_refused(s: &Session) -> CheckResult {
    let answered = match mistakes_answered(s).await? {
        Ok(answered) => answered,
        Err(verdict) => return Ok(verdict),
    };
    let wrong: Vec<&(&str, Arc<Reply>)> = answered
        .iter()
        .filter(|(_, reply)| !reply.is_success() && !reply.is_client_error())
        .collect();
    let read: Vec<&str> = answered
        .iter()
        .filter(|(_, reply)| reply.is_success())
        .map(|(mistake, _)| *mistake)
        .collect();
    let read = match read.as_slice() {
        [] => String::new(),
        some => format!("; answered 200 (the server's reading): {}", some.join(", ")),
    };
    Ok(if wrong.is_empty() {
        Verdict::pass(format!(
            "{} client mistakes refused with a 4xx{read}",
            answered.iter().filter(|(_, r)| r.is_client_error()).count()
        ))
    } else {
        let said: Vec<String> = wrong
            .iter()
            .map(|(mistake, reply)| format!("{mistake} answered {}", reply.summary()))
            .collect();
        Verdict::fail(format!(
            "{}: a 5xx for a client mistake says the server erred, and the SDKs retry it",
            said.join("; ")
        ))
        .with_all(wrong.iter().take(3).map(|(_, reply)| &reply.exchange))
    })
}

/// RRL-010: "Each of RRL-006's client mistakes that is refused (4xx) is refused with a
/// JSON body carrying a message." Judged in every dialect: its parser's plain-text
/// refusal is what TEI's own API does not declare.
async fn mistakes_refused_with_a_message(s: &Session) -> CheckResult {
    let answered = match mistakes_answered(s).await? {
        Ok(answered) => answered,
        Err(verdict) => return Ok(verdict),
    };
    let refused: Vec<&(&str, Arc<Reply>)> = answered
        .iter()
        .filter(|(_, reply)| reply.is_client_error())
        .collect();
    let silent: Vec<&&(&str, Arc<Reply>)> = refused
        .iter()
        .filter(|(_, reply)| reply.json.is_none() || reply.error_message().is_none())
        .collect();
    Ok(match (refused.len(), silent.as_slice()) {
        (0, _) => Verdict::skip("no client mistake was refused with a 4xx: no refusal to read"),
        (n, []) => Verdict::pass(format!(
            "{n} refusals of client mistakes carry a JSON message"
        )),
        (n, silent) => {
            let said: Vec<String> = silent
                .iter()
                .map(|(mistake, reply)| format!("{mistake} refused with {}", reply.summary()))
                .collect();
            Verdict::fail(format!(
                "{} of {n} refusals without a JSON message: {}; a message tells the client what to fix",
                silent.len(),
                said.join("; ")
            ))
            .with_all(silent.iter().take(3).map(|(_, reply)| &reply.exchange))
        }
    })
}

/// RRL-011: "top_n: -1 answered 200 (RRL-006's lenient reading) is answered with all N
/// results, as without top_n; fewer results than documents fail."
async fn negative_top_n_keeps_every_document(s: &Session) -> CheckResult {
    let answered = match mistakes_answered(s).await? {
        Ok(answered) => answered,
        Err(verdict) => return Ok(verdict),
    };
    let Some((_, reply)) = answered.iter().find(|(m, _)| *m == NEGATIVE_TOP_N) else {
        return Ok(Verdict::skip(
            "the server's dialect has no top_n: nothing to read as negative",
        ));
    };
    if !reply.is_success() {
        return Ok(Verdict::skip(format!(
            "{NEGATIVE_TOP_N} answered {}, not 200: no reading to judge (RRL-006 judges the answer)",
            reply.summary()
        )));
    }
    Ok(match dropped_by_negative_top_n(reply) {
        Some(dropped) => Verdict::fail(format!(
            "{dropped}; refuse a negative top_n, or read it as all"
        ))
        .with(&reply.exchange),
        None => match reply.rerank() {
            Ok(answer) => Verdict::pass(format!(
                "{NEGATIVE_TOP_N} answered 200 with {} results for {} documents",
                answer.items.len(),
                DOCUMENTS.len()
            )),
            Err(_) => Verdict::skip(format!(
                "{NEGATIVE_TOP_N} answered 200 without a rerank answer to count (RRS-001's)"
            )),
        },
    })
}

/// A 200 to `top_n: -1` with fewer results than documents: Python's `results[:-1]`,
/// the last document silently dropped.
fn dropped_by_negative_top_n(reply: &Reply) -> Option<String> {
    let results = reply.rerank().ok()?.items.len();
    (results < DOCUMENTS.len()).then(|| {
        format!(
            "{NEGATIVE_TOP_N} answered 200 with {results} results for {} documents: a document is silently dropped",
            DOCUMENTS.len()
        )
    })
}

/// RRL-007: "Every 429 or 503 answered to a rerank request carries Retry-After (seconds
/// or an HTTP date) or retry-after-ms of at most 120 seconds." Judged on the run's
/// throttling answers to rerank requests, waited out or not.
async fn throttling_says_when(s: &Session) -> CheckResult {
    let throttled: Vec<_> = s
        .throttled()
        .into_iter()
        .filter(|t| t.contract() == Some(crate::contracts::rerank::ID))
        .collect();
    Ok(crate::clauses::judging::throttling_says_when(&throttled))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(short: (f64, f64), long: (f64, f64), long_other_end: f64) -> QuerySize {
        QuerySize {
            words: 384,
            short,
            long,
            long_other_end,
        }
    }

    #[test]
    fn a_query_cut_beside_the_long_document_fails_whether_or_not_the_document_was_cut() {
        let cut = size((0.9, 0.1), (0.5, 0.5), 0.5);
        assert_eq!(cut.shows(1e-5), QueryShows::QueryCut);
        let only_the_query_cut = size((0.9, 0.1), (0.5, 0.5), 0.6);
        assert_eq!(only_the_query_cut.shows(1e-5), QueryShows::QueryCut);
        assert!(cut.verdict(QueryShows::QueryCut).is_some());
    }

    #[test]
    fn a_query_kept_beside_a_cut_document_passes_and_an_uncut_one_decides_nothing() {
        let kept = size((0.9, 0.1), (0.8, 0.2), 0.8);
        assert_eq!(kept.shows(1e-5), QueryShows::QueryKept);
        let uncut = size((0.9, 0.1), (0.8, 0.2), 0.7);
        assert_eq!(uncut.shows(1e-5), QueryShows::NothingCut);
        assert!(uncut.verdict(QueryShows::NothingCut).is_none());
    }

    #[test]
    fn differences_within_the_servers_noise_are_no_differences() {
        let noisy = size((0.5, 0.5 + 1e-4), (0.4, 0.4), 0.4);
        assert_eq!(noisy.shows(1e-3), QueryShows::LastWordUnread);
    }

    #[test]
    fn the_long_document_is_shorter_than_the_query_and_both_end_on_the_word_that_differs() {
        let query = query_ending(96, "cats");
        let document = long_document_ending(96, "birds");
        let words = |t: &str| t.split_whitespace().count();
        assert!(words(&document) < words(&query));
        assert!(query.ends_with(" whiskers cats") && document.ends_with(" birds"));
        assert!(document.starts_with(ABOUT_CATS));
    }
}
