//! The consumer contract: what an existing client of the baseline can rely on,
//! read from the baseline's audit, and the candidate judged against it.
//!
//! A client written against the old server depends on what that server did, not on
//! what a specification says: if the old server truncated long inputs, the client
//! never learned to truncate. Each expectation is read from the baseline's facts
//! (established once, by the clause that learned it, with that clause's thresholds);
//! then the old client's request is replayed to the candidate and judged, and the
//! candidate's own facts say why it answered so:
//!
//! | topic | the baseline's fact | the request replayed |
//! |---|---|---|
//! | `matryoshka` | `matryoshka` (DIM-002 … DIM-004) | `dimensions: native/2` and `native` |
//! | `instruction` | `instruction_fields` (UNK-003) | `input_type: "query"` |
//! | `overlength` | `input_limit`, `overlength_policy` (LEN-001 …) | its shortest over-length input |
//! | `encoding` | `base64` (ENC-003) | — (the candidate's own fact) |
//! | `error_shape` | a body without `input` | the same body |
//! | `server_errors` | every request of the audit | every request of the audit |
//!
//! Then each other contract's topics, judged in its folder (`consumer.rs`) with the
//! shared types of `contracts::consumer`: rerank's route, dialect and scale, speech's
//! transcript and formats.
//!
//! The replayed requests are the clauses' own (from each contract's `requests`), so when
//! the two servers agree on the parameters the session cache answers them.

pub use crate::contracts::consumer::{Expectation, Judgement, Topic};

use super::behaviour::{Answer, BehaviourDiff};
use crate::contracts::consumer::{Pair, Server, evidence, expectation, replay};
use crate::contracts::embeddings::clauses::TEMPLATE_COSINE;
use crate::contracts::embeddings::facts::OverlengthPolicy;
use crate::contracts::embeddings::facts::{
    self as embeddings_facts, BareIs, Base64, EmbeddingsFacts, FieldHandling, InputLimit,
};
use crate::contracts::embeddings::requests::{self, body, words};
use crate::http::{Body, Encoding, Probe, Reply};
use crate::session::{Facts, Session};
use crate::vectors::cosine;
use serde_json::json;
use std::sync::Arc;

impl Topic {
    /// The `matryoshka` topic.
    pub const MATRYOSHKA: Topic = Topic::named("matryoshka");
    /// The `instruction` topic.
    pub const INSTRUCTION: Topic = Topic::named("instruction");
    /// The `overlength` topic.
    pub const OVERLENGTH: Topic = Topic::named("overlength");
    /// The `encoding` topic.
    pub const ENCODING: Topic = Topic::named("encoding");
    /// The `error_shape` topic.
    pub const ERROR_SHAPE: Topic = Topic::named("error_shape");
    /// The `server_errors` topic.
    pub const SERVER_ERRORS: Topic = Topic::named("server_errors");

    /// Every topic, in the order reports show them: embeddings' and the server
    /// errors, which the migration judges itself, then each contract's own.
    pub fn all() -> Vec<Topic> {
        let mut all = vec![
            Topic::MATRYOSHKA,
            Topic::INSTRUCTION,
            Topic::OVERLENGTH,
            Topic::ENCODING,
            Topic::ERROR_SHAPE,
            Topic::SERVER_ERRORS,
        ];
        all.extend(crate::contracts::consumer_topics());
        all
    }
}

/// One server of the pair: its session (for replays) and what its audit learned.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub session: &'a Session,
    pub facts: &'a Facts,
    /// The embeddings side of `facts`.
    pub embeddings: &'a EmbeddingsFacts,
}

impl<'a> Side<'a> {
    /// The server as the contracts' topics see it.
    fn server(self) -> Server<'a> {
        Server {
            session: self.session,
            facts: self.facts,
        }
    }
}

/// Judges the candidate against every expectation read from the baseline.
pub async fn judge(b: Side<'_>, c: Side<'_>, diff: &BehaviourDiff) -> Vec<Expectation> {
    let mut all = vec![
        matryoshka(b, c).await,
        instruction(b, c).await,
        overlength(b, c).await,
        encoding(b, c),
        error_shape(b, c).await,
        server_errors(diff),
    ];
    let pair = Pair {
        baseline: b.server(),
        candidate: c.server(),
        answer,
    };
    all.extend(crate::contracts::judge_consumer(pair).await);
    all
}

/// Every topic "not probed", when a server could not be audited: nothing is sent to
/// a server that did not answer its audit.
pub(crate) fn unavailable(why: &str) -> Vec<Expectation> {
    let not_probed = format!("not probed: {why}");
    Topic::all()
        .into_iter()
        .map(|topic| expectation(topic, None, not_probed.clone(), not_probed.clone(), true))
        .collect()
}

fn answer(reply: Option<&Arc<Reply>>) -> String {
    reply.map_or("no answer".to_owned(), |r| summary(r).to_string())
}

fn summary(reply: &Reply) -> Answer {
    Answer::of_reply(reply)
}

/// 200 with exactly `d` values.
fn honours(reply: Option<&Arc<Reply>>, d: usize) -> bool {
    reply
        .and_then(|r| r.first_vector())
        .is_some_and(|v| v.len() == d)
}

async fn matryoshka(b: Side<'_>, c: Side<'_>) -> Expectation {
    let native = b.embeddings.native_dimension.as_ref().map(|f| f.value);
    let Some(n) = native.filter(|&n| n >= 2) else {
        return expectation(
            Topic::MATRYOSHKA,
            None,
            "no vector to learn the native size from".into(),
            "not probed".into(),
            true,
        );
    };
    let d = n / 2;
    let b_honours = b
        .embeddings
        .matryoshka
        .as_ref()
        .is_some_and(|f| f.value.honoured);
    let (b_reduced, b_native) = (
        replay(b.session, requests::sentence_with_dimensions(b.session, d)).await,
        replay(b.session, requests::sentence_with_dimensions(b.session, n)).await,
    );
    let (c_reduced, c_native) = (
        replay(c.session, requests::sentence_with_dimensions(c.session, d)).await,
        replay(c.session, requests::sentence_with_dimensions(c.session, n)).await,
    );
    let both = |reduced: &Option<Arc<Reply>>, native: &Option<Arc<Reply>>| {
        format!(
            "dimensions: {d} → {}; dimensions: {n} → {}",
            answer(reduced.as_ref()),
            answer(native.as_ref())
        )
    };
    let b_accepts_native = honours(b_native.as_ref(), n);
    let c_accepts_native = honours(c_native.as_ref(), n);
    let relies_on = match (b_honours, b_accepts_native) {
        (true, _) => Some(format!(
            "`dimensions` is honoured: {d} returns {d} values (Matryoshka truncation){}",
            if b_accepts_native {
                format!(", {n} (the native size) is accepted")
            } else {
                String::new()
            }
        )),
        (false, true) => Some(format!("`dimensions: {n}` (the native size) is accepted")),
        (false, false) => None,
    };
    let kept =
        (!b_honours || honours(c_reduced.as_ref(), d)) && (!b_accepts_native || c_accepts_native);
    let mut e = expectation(
        Topic::MATRYOSHKA,
        relies_on,
        both(&b_reduced, &b_native),
        both(&c_reduced, &c_native),
        kept,
    );
    e.evidence = evidence(&[
        b_reduced.as_ref(),
        c_reduced.as_ref(),
        b_native.as_ref(),
        c_native.as_ref(),
    ]);
    e.findings.native = Some(n);
    e.findings.refuses_native = !c_accepts_native;
    e.findings.reduced = b_honours.then_some(d);
    e
}

/// The query with `input_type: "query"`, as UNK-003 and UNK-004 send it.
fn input_type_probe(s: &Session) -> Probe {
    let (field, value) = requests::as_query();
    requests::instruction_probe(s, field, value)
}

/// UNK-003's finding in words: `200, instruction prepended (28 tokens; 9 without)`.
fn instruction_text(handling: Option<&FieldHandling>) -> String {
    match handling {
        Some(FieldHandling::Honoured {
            side: embeddings_facts::Side::Query,
            bare_tokens: Some(bare),
            tokens: Some(with),
            ..
        }) if bare != with => format!("200, instruction prepended ({with} tokens; {bare} without)"),
        Some(FieldHandling::Honoured {
            bare_is: BareIs::Query,
            cosine,
            ..
        }) => format!(
            "200, bare queries embedded as queries; `input_type: \"document\"` embeds as a document (cosine {cosine:.4} to the bare query)"
        ),
        Some(FieldHandling::Honoured { side, cosine, .. }) => {
            format!("200, the {side} side's vector changes (cosine {cosine:.4} to the bare query)")
        }
        Some(FieldHandling::Dropped {
            tokens: Some(with), ..
        }) => format!("200, field ignored ({with} tokens, the same vector as without)"),
        Some(FieldHandling::Dropped { .. }) => {
            "200, field ignored (the same vector as without)".to_owned()
        }
        Some(FieldHandling::Refused { status }) => format!("refused: {status}"),
        Some(FieldHandling::Broken { why }) => why.clone(),
        None => "not probed (UNK-003 did not run)".to_owned(),
    }
}

async fn instruction(b: Side<'_>, c: Side<'_>) -> Expectation {
    let honoured =
        |f: &EmbeddingsFacts| matches!(f.input_type(), Some(FieldHandling::Honoured { .. }));
    let relies_on = honoured(b.embeddings).then(|| match b.embeddings.bare_is() {
        Some(BareIs::Query) => "the server embeds bare requests and `input_type: \"query\"` as queries (the model's query instruction applied) and `input_type: \"document\"` as documents".to_owned(),
        _ => "`input_type: \"query\"` makes the server prepend the model's query instruction".to_owned(),
    });
    let b_query = replay(b.session, input_type_probe(b.session)).await;
    let c_query = replay(c.session, input_type_probe(c.session)).await;
    // UNK-004's tolerance: the same instruction gives the same vector.
    let same_as_baseline = match (
        b_query.as_deref().and_then(Reply::first_vector),
        c_query.as_deref().and_then(Reply::first_vector),
    ) {
        (Some(x), Some(y)) => cosine(&x, &y) >= TEMPLATE_COSINE,
        _ => false,
    };
    let kept = honoured(c.embeddings) && same_as_baseline;
    let mut candidate = instruction_text(c.embeddings.input_type());
    if honoured(c.embeddings) && !same_as_baseline {
        candidate.push_str(", but not the baseline's instruction");
    }
    let mut e = expectation(
        Topic::INSTRUCTION,
        relies_on,
        instruction_text(b.embeddings.input_type()),
        candidate,
        kept,
    );
    e.evidence = evidence(&[b_query.as_ref(), c_query.as_ref()]);
    e
}

/// What a server's over-length facts say, in words: `truncates at 256 tokens (found:
/// …)`, `refuses (400) over 512 tokens`, or why the limit is unknown.
fn overlength_text(f: &EmbeddingsFacts) -> String {
    let policy = f.overlength_policy.as_ref().map(|p| p.value);
    match (&f.input_limit.as_ref().map(|l| &l.value), policy) {
        (
            Some(InputLimit::Known {
                tokens, because, ..
            }),
            Some(OverlengthPolicy::Truncate),
        ) => {
            format!("200, truncated to {tokens} tokens ({because})")
        }
        (
            Some(InputLimit::Known {
                tokens, because, ..
            }),
            Some(policy),
        ) => {
            format!("{policy} over {tokens} tokens ({because})")
        }
        (
            Some(InputLimit::Known {
                tokens, because, ..
            }),
            None,
        ) => {
            format!("limit {tokens} tokens ({because})")
        }
        (Some(InputLimit::Unknown { why }), _) => why.clone(),
        (None, _) => "not probed (the over-length clauses did not run)".to_owned(),
    }
}

async fn overlength(b: Side<'_>, c: Side<'_>) -> Expectation {
    let policy = b.embeddings.overlength_policy.as_ref().map(|p| p.value);
    let limit = b.embeddings.known_limit();
    let truncates_at = limit
        .filter(|_| policy == Some(OverlengthPolicy::Truncate))
        .map(|(tokens, _)| tokens);
    let relies_on = match (truncates_at, policy) {
        (Some(t), _) => Some(format!("input over the limit is truncated to {t} tokens")),
        (None, Some(OverlengthPolicy::Reject(_))) => {
            Some("input over the limit is refused with a 4xx".to_owned())
        }
        _ => None,
    };
    // The baseline's shortest over-length input, as the over-length clauses sent it.
    let over = |s: &Session, words_over: usize, tokens: u64| {
        let why = format!("input of {words_over} words, over the baseline's {tokens}-token limit");
        requests::invalid(Body::Json(body(s, json!(words(words_over)), &[])), why)
    };
    let (b_reply, c_reply) = match limit.filter(|_| relies_on.is_some()) {
        Some((tokens, words_over)) => (
            replay(b.session, over(b.session, words_over, tokens)).await,
            replay(c.session, over(c.session, words_over, tokens)).await,
        ),
        None => (None, None),
    };
    let kept = match (truncates_at, c_reply.as_deref()) {
        _ if relies_on.is_none() => true,
        (_, None) => false,
        (Some(_), Some(r)) => r.is_success(),
        (None, Some(r)) => !r.is_server_error(),
    };
    let mut candidate = overlength_text(c.embeddings);
    if let Some(reply) = c_reply.as_deref() {
        candidate = format!(
            "{} to the baseline's over-length input; {candidate}",
            summary(reply)
        );
    }
    let mut e = expectation(
        Topic::OVERLENGTH,
        relies_on,
        overlength_text(b.embeddings),
        candidate,
        kept,
    );
    e.evidence = evidence(&[b_reply.as_ref(), c_reply.as_ref()]);
    e.findings.truncates_at = truncates_at;
    e
}

/// The encoding a base64 request gets back, from ENC-003's `base64` fact.
fn encoding_of(f: &EmbeddingsFacts) -> Option<Encoding> {
    match &f.base64.as_ref()?.value {
        Base64::Refused(_) => None,
        b if b.honoured() => Some(Encoding::Base64),
        Base64::Ignored(_) => Some(Encoding::Float),
        _ => None,
    }
}

fn encoding_text(f: &EmbeddingsFacts) -> String {
    match (encoding_of(f), f.base64.as_ref().map(|b| &b.value)) {
        (Some(Encoding::Float), _) => "field ignored, float array".to_owned(),
        (Some(Encoding::Base64), _) => "base64 string".to_owned(),
        (None, Some(Base64::Refused(status))) => format!("refused: {status}"),
        (None, Some(_)) => "answered without comparable vectors".to_owned(),
        (None, None) => "not probed (ENC-003 did not run)".to_owned(),
    }
}

fn encoding(b: Side<'_>, c: Side<'_>) -> Expectation {
    let (b_enc, c_enc) = (encoding_of(b.embeddings), encoding_of(c.embeddings));
    let relies_on = b_enc.map(|enc| match enc {
        Encoding::Float => {
            "`encoding_format: \"base64\"` is ignored: vectors come as float arrays".to_owned()
        }
        Encoding::Base64 => {
            "`encoding_format: \"base64\"` is honoured: vectors come as base64 strings".to_owned()
        }
    });
    let mut e = expectation(
        Topic::ENCODING,
        relies_on,
        encoding_text(b.embeddings),
        encoding_text(c.embeddings),
        b_enc == c_enc,
    );
    e.findings.candidate_encoding = c_enc;
    e
}

async fn error_shape(b: Side<'_>, c: Side<'_>) -> Expectation {
    let b_reply = replay(b.session, requests::missing_input(b.session)).await;
    let c_reply = replay(c.session, requests::missing_input(c.session)).await;
    let shape = |r: &Option<Arc<Reply>>| r.as_deref().map(|r| (r.status, summary(r).shape));
    let (b_shape, c_shape) = (shape(&b_reply), shape(&c_reply));
    let relies_on = match b_shape {
        Some((status, shape)) if (400..500).contains(&status) && shape.is_error() => Some(format!(
            "a client mistake gets a 4xx with an {} body",
            shape.label()
        )),
        _ => None,
    };
    let kept = match (b_shape, c_shape) {
        (Some((_, bs)), Some((cs, cshape))) => (400..500).contains(&cs) && cshape == bs,
        _ => false,
    };
    let mut e = expectation(
        Topic::ERROR_SHAPE,
        relies_on,
        answer(b_reply.as_ref()),
        answer(c_reply.as_ref()),
        kept,
    );
    e.evidence = evidence(&[b_reply.as_ref(), c_reply.as_ref()]);
    e
}

/// Requests the baseline answered (2xx or 4xx) and the candidate answered 5xx: a
/// client that retries 5xx would resend each of them to no avail.
fn server_errors(diff: &BehaviourDiff) -> Expectation {
    let rows: Vec<_> = diff
        .probes
        .iter()
        .filter_map(|row| {
            let (b, c) = (row.baseline.as_ref()?, row.candidate.as_ref()?);
            (b.status.is_some() && !b.is_server_error() && c.is_server_error())
                .then(|| (row.request.clone(), c.status.unwrap_or(500)))
        })
        .collect();
    let answered = diff
        .probes
        .iter()
        .filter(|r| r.baseline.as_ref().is_some_and(|b| b.status.is_some()))
        .count();
    let baseline_5xx = diff
        .probes
        .iter()
        .filter(|r| r.baseline.as_ref().is_some_and(Answer::is_server_error))
        .count();
    let relies_on = (answered > 0).then(|| {
        "a request answered 2xx or 4xx is never answered 5xx, so retrying a 5xx only retries real failures".to_owned()
    });
    let candidate = match rows.len() {
        0 => "no 5xx where the baseline answered".to_owned(),
        n => format!("{n} requests the baseline answered got a 5xx"),
    };
    let mut e = expectation(
        Topic::SERVER_ERRORS,
        relies_on,
        format!("{baseline_5xx} of {answered} requests answered with a 5xx"),
        candidate,
        rows.is_empty(),
    );
    e.findings.server_errors = rows;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_are_report_jsons() {
        let all = Topic::all();
        for topic in &all {
            assert_eq!(serde_json::to_value(topic).unwrap(), topic.name());
        }
        let names: Vec<&str> = all.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                "matryoshka",
                "instruction",
                "overlength",
                "encoding",
                "error_shape",
                "server_errors",
                "rerank",
                "speech"
            ]
        );
    }

    #[test]
    fn nothing_relied_on_is_never_broken() {
        let e = expectation(
            Topic::ENCODING,
            None,
            "refused".into(),
            "refused".into(),
            false,
        );
        assert_eq!(e.judgement, Judgement::NotRelied);
    }

    #[test]
    fn instruction_words_come_from_the_clauses_finding() {
        let prepended = FieldHandling::Honoured {
            side: embeddings_facts::Side::Query,
            cosine: 0.82,
            bare_tokens: Some(9),
            tokens: Some(28),
            bare_is: BareIs::Document,
        };
        assert_eq!(
            instruction_text(Some(&prepended)),
            "200, instruction prepended (28 tokens; 9 without)"
        );
        let query_by_default = FieldHandling::Honoured {
            side: embeddings_facts::Side::Document,
            cosine: 0.9503,
            bare_tokens: Some(10),
            tokens: Some(9),
            bare_is: BareIs::Query,
        };
        assert_eq!(
            instruction_text(Some(&query_by_default)),
            "200, bare queries embedded as queries; `input_type: \"document\"` embeds as a document (cosine 0.9503 to the bare query)"
        );
        let dropped = FieldHandling::Dropped {
            cosine: 1.0,
            bare_tokens: Some(9),
            tokens: Some(9),
        };
        assert_eq!(
            instruction_text(Some(&dropped)),
            "200, field ignored (9 tokens, the same vector as without)"
        );
    }
}
