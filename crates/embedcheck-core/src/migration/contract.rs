//! The consumer contract: what an existing client of the baseline can rely on,
//! learned from the baseline's answers, and the candidate judged against it.
//!
//! A client written against the old server depends on what that server did, not on
//! what a specification says: if the old server truncated long inputs, the client
//! never learned to truncate. So each expectation is learned from one baseline
//! answer (or found absent: nothing to rely on), then the same request is sent to
//! the candidate:
//!
//! | topic | request | what the baseline teaches |
//! |---|---|---|
//! | `matryoshka` | `dimensions: native/2` and `native` | that `dimensions` is honoured |
//! | `instruction` | `input_type: "query"` | that the server prepends the instruction |
//! | `overlength` | a text over any usual limit | truncation at N tokens, or a 4xx |
//! | `encoding` | `encoding_format: "base64"` | float arrays or base64 strings |
//! | `error_shape` | a body without `input` | a 4xx with a given body shape |
//! | `server_errors` | every request of the audit | no 5xx where the baseline had none |
//!
//! The requests mostly repeat ones the clause run sent, so the session cache
//! answers them without a new request.

use super::behaviour::{Answer, BehaviourDiff, Encoding};
use super::vectors::embeddings;
use crate::http::Exchange;
use crate::http::{Body, Probe, Reply};
use crate::session::requests::SENTENCE;
use crate::session::{ProbeError, Session};
use crate::vectors::cosine;
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// Words in the over-length probe when no `--max-input-tokens` is declared: above
/// OpenAI's 8,192-token limit and the 512 to 1,024 of most self-hosted embedders.
const OVERLENGTH_WORDS: usize = 9_000;

/// Short words that are one token in BPE vocabularies and in the reference server's.
const FILLER: [&str; 8] = ["the", "data", "map", "text", "into", "each", "long", "line"];

/// The query of the instruction probes: the one the unknown-fields clauses send with
/// and without `input_type`, so the session cache answers both.
const QUERY: &str = "What is the capital of South Korea?";

/// Cosine above which two vectors count as the same embedding of the same tokens.
const SAME_VECTOR: f64 = 0.9999;

/// Cosine above which the candidate's instructed query counts as the baseline's.
const SAME_INSTRUCTION: f64 = 0.99;

/// What the expectation is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Topic {
    Matryoshka,
    Instruction,
    Overlength,
    Encoding,
    ErrorShape,
    ServerErrors,
}

/// How the candidate measures up to one expectation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    Kept,
    Broken,
    /// The baseline offers nothing here a client could rely on.
    NotRelied,
}

/// One expectation of the existing client and the candidate's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Expectation {
    pub topic: Topic,
    /// What a client of the baseline relies on; absent with `not_relied`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relies_on: Option<String>,
    pub baseline: String,
    pub candidate: String,
    pub judgement: Judgement,
    /// The deciding exchanges, baseline first.
    pub evidence: Vec<Exchange>,
    /// Facts remediation needs, kept as data.
    #[serde(skip)]
    pub(crate) facts: Facts,
}

/// Numbers behind an expectation, for the remediation derived from it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts {
    /// The native size the `dimensions` probes were built from.
    pub native: Option<usize>,
    /// The candidate refused `dimensions` even at the native size.
    pub refuses_native: bool,
    /// The baseline truncated over-length input to this many tokens.
    pub truncates_at: Option<u64>,
    /// The candidate's encoding when asked for base64.
    pub candidate_encoding: Option<Encoding>,
    /// Requests the candidate answered 5xx and the baseline did not.
    pub server_errors: Vec<(String, u16)>,
}

/// The contract probes' answers from one server.
#[derive(Clone, Debug, Default)]
pub struct Answers {
    reduced: Option<Arc<Reply>>,
    native: Option<Arc<Reply>>,
    query: Option<Arc<Reply>>,
    /// The same query without `input_type`.
    bare_query: Option<Arc<Reply>>,
    overlength: Option<Arc<Reply>>,
    base64: Option<Arc<Reply>>,
    missing_input: Option<Arc<Reply>>,
    /// Words in the over-length probe.
    overlength_words: usize,
    /// `d` of the reduced `dimensions` probe and the native size.
    dims: Option<(usize, usize)>,
}

/// Sends the contract probes to one server. `native` is the baseline's native size,
/// so the candidate is sent the old client's requests; without it (the baseline
/// itself) the server's own plain answer gives it.
pub async fn probe(s: &Session, native: Option<usize>) -> Answers {
    let words = s
        .settings()
        .max_input_tokens
        .map_or(OVERLENGTH_WORDS, |n| n as usize * 2 + 64);
    let send = |body: Value| async move { ok(s.send(Probe::embed(body)).await) };
    let sentence = |extra: &[(&str, Value)]| with(s, json!(SENTENCE), extra);
    let native = match native {
        Some(n) => Some(n),
        None => send(sentence(&[]))
            .await
            .as_deref()
            .and_then(first_vector)
            .map(|v| v.len()),
    };
    let dims = native.filter(|&n| n >= 2).map(|n| (n / 2, n));
    let missing = Probe::invalid(Body::Json(json!({"model": s.model()})), "input is missing");
    Answers {
        reduced: match dims {
            Some((d, _)) => send(sentence(&[("dimensions", json!(d))])).await,
            None => None,
        },
        native: match dims {
            Some((_, n)) => send(sentence(&[("dimensions", json!(n))])).await,
            None => None,
        },
        query: send(with(s, json!(QUERY), &[("input_type", json!("query"))])).await,
        bare_query: send(with(s, json!(QUERY), &[])).await,
        overlength: send(with(s, json!(filler(words)), &[])).await,
        base64: send(sentence(&[("encoding_format", json!("base64"))])).await,
        missing_input: ok(s.send(missing).await),
        overlength_words: words,
        dims,
    }
}

fn ok(sent: Result<Arc<Reply>, ProbeError>) -> Option<Arc<Reply>> {
    sent.ok()
}

fn with(s: &Session, input: Value, extra: &[(&str, Value)]) -> Value {
    crate::session::requests::body(s, input, extra)
}

fn filler(words: usize) -> String {
    FILLER
        .iter()
        .cycle()
        .take(words)
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The native size the `dimensions` probes were built from.
pub fn native_size(answers: &Answers) -> Option<usize> {
    answers.dims.map(|(_, n)| n)
}

/// Judges the candidate against every expectation learned from the baseline.
pub fn judge(b: &Answers, c: &Answers, diff: &BehaviourDiff) -> Vec<Expectation> {
    vec![
        matryoshka(b, c),
        instruction(b, c),
        overlength(b, c),
        encoding(b, c),
        error_shape(b, c),
        server_errors(diff),
    ]
}

fn first_vector(reply: &Reply) -> Option<Vec<f64>> {
    reply
        .is_success()
        .then(|| embeddings(reply).ok()?.into_iter().next())
        .flatten()
}

fn answer(reply: Option<&Arc<Reply>>) -> String {
    reply.map_or("no answer".to_owned(), |r| summary(r).to_string())
}

fn summary(reply: &Reply) -> Answer {
    Answer::of(&crate::session::Logged {
        validity: crate::http::Validity::Valid,
        exchange: reply.exchange.clone(),
        reply: Some(Arc::new(reply.clone())),
        clause: None,
        request_body: None,
    })
}

fn evidence(replies: &[Option<&Arc<Reply>>]) -> Vec<Exchange> {
    replies
        .iter()
        .flatten()
        .map(|r| r.exchange.clone())
        .collect()
}

/// 200 with exactly `d` values.
fn honours(reply: Option<&Arc<Reply>>, d: usize) -> bool {
    reply
        .and_then(|r| first_vector(r))
        .is_some_and(|v| v.len() == d)
}

fn expectation(
    topic: Topic,
    relies_on: Option<String>,
    baseline: String,
    candidate: String,
    kept: bool,
) -> Expectation {
    let judgement = match (&relies_on, kept) {
        (None, _) => Judgement::NotRelied,
        (Some(_), true) => Judgement::Kept,
        (Some(_), false) => Judgement::Broken,
    };
    Expectation {
        topic,
        relies_on,
        baseline,
        candidate,
        judgement,
        evidence: Vec::new(),
        facts: Facts::default(),
    }
}

fn matryoshka(b: &Answers, c: &Answers) -> Expectation {
    let Some((d, n)) = b.dims else {
        return expectation(
            Topic::Matryoshka,
            None,
            "no vector to learn the native size from".into(),
            "not probed".into(),
            true,
        );
    };
    let both = |a: &Answers| {
        format!(
            "dimensions: {d} → {}; dimensions: {n} → {}",
            answer(a.reduced.as_ref()),
            answer(a.native.as_ref())
        )
    };
    let (b_reduced, b_native) = (
        honours(b.reduced.as_ref(), d),
        honours(b.native.as_ref(), n),
    );
    let (c_reduced, c_native) = (
        honours(c.reduced.as_ref(), d),
        honours(c.native.as_ref(), n),
    );
    let relies_on = match (b_reduced, b_native) {
        (true, _) => Some(format!(
            "`dimensions` is honoured: {d} returns {d} values (Matryoshka truncation){}",
            if b_native {
                format!(", {n} (the native size) is accepted")
            } else {
                String::new()
            }
        )),
        (false, true) => Some(format!("`dimensions: {n}` (the native size) is accepted")),
        (false, false) => None,
    };
    let kept = (!b_reduced || c_reduced) && (!b_native || c_native);
    let mut e = expectation(Topic::Matryoshka, relies_on, both(b), both(c), kept);
    e.evidence = evidence(&[
        b.reduced.as_ref(),
        c.reduced.as_ref(),
        b.native.as_ref(),
        c.native.as_ref(),
    ]);
    e.facts.native = Some(n);
    e.facts.refuses_native = !c_native;
    e
}

/// Whether `input_type: "query"` changed the embedding compared with the plain
/// request for the same text: more tokens, or a different vector.
fn instructed(a: &Answers) -> Option<bool> {
    let (query, plain) = (a.query.as_deref()?, a.bare_query.as_deref()?);
    if !query.is_success() {
        return None;
    }
    let more_tokens = query.prompt_tokens() != plain.prompt_tokens();
    let moved = match (first_vector(query), first_vector(plain)) {
        (Some(x), Some(y)) => cosine(&x, &y) < SAME_VECTOR,
        _ => false,
    };
    Some(more_tokens || moved)
}

fn instruction_text(a: &Answers) -> String {
    let tokens = |r: &Option<Arc<Reply>>| r.as_deref().and_then(Reply::prompt_tokens);
    let status = answer(a.query.as_ref());
    match (instructed(a), tokens(&a.query), tokens(&a.bare_query)) {
        (Some(true), Some(q), Some(p)) => {
            format!("200, instruction prepended ({q} tokens; {p} without)")
        }
        (Some(true), _, _) => "200, the vector changes (instruction applied)".to_owned(),
        (Some(false), Some(q), _) => {
            format!("200, field ignored ({q} tokens, the same vector as without)")
        }
        (Some(false), None, _) => "200, field ignored (the same vector as without)".to_owned(),
        (None, _, _) => format!("refused: {status}"),
    }
}

fn instruction(b: &Answers, c: &Answers) -> Expectation {
    let relies_on = (instructed(b) == Some(true)).then(|| {
        "`input_type: \"query\"` makes the server prepend the model's query instruction".to_owned()
    });
    let same_as_baseline = match (
        b.query.as_deref().and_then(first_vector),
        c.query.as_deref().and_then(first_vector),
    ) {
        (Some(x), Some(y)) => cosine(&x, &y) >= SAME_INSTRUCTION,
        _ => false,
    };
    let kept = instructed(c) == Some(true) && same_as_baseline;
    let mut candidate = instruction_text(c);
    if instructed(c) == Some(true) && !same_as_baseline {
        candidate.push_str(", but not the baseline's instruction");
    }
    let mut e = expectation(
        Topic::Instruction,
        relies_on,
        instruction_text(b),
        candidate,
        kept,
    );
    e.evidence = evidence(&[b.query.as_ref(), c.query.as_ref()]);
    e
}

fn overlength(b: &Answers, c: &Answers) -> Expectation {
    let words = b.overlength_words as u64;
    let tokens = b
        .overlength
        .as_deref()
        .filter(|r| r.is_success())
        .and_then(Reply::prompt_tokens);
    let b_reply = b.overlength.as_deref();
    // Fewer tokens than words means the server cut the input.
    let truncates_at = tokens.filter(|&t| t < words * 9 / 10);
    let relies_on = match (truncates_at, b_reply) {
        (Some(t), _) => Some(format!("input over the limit is truncated to {t} tokens")),
        (None, Some(r)) if r.is_client_error() => {
            Some("input over the limit is refused with a 4xx".to_owned())
        }
        _ => None,
    };
    let c_reply = c.overlength.as_deref();
    let kept = match (truncates_at, c_reply) {
        (_, None) => false,
        (Some(_), Some(r)) => r.is_success(),
        (None, Some(r)) => !r.is_server_error(),
    };
    let describe = |a: &Answers| {
        let reply = a.overlength.as_ref();
        match reply.and_then(|r| r.is_success().then(|| r.prompt_tokens()).flatten()) {
            Some(t) if t < words * 9 / 10 => format!("200, truncated to {t} tokens"),
            Some(t) => format!("200, {t} tokens: the {words}-word probe is within the limit"),
            None => answer(reply),
        }
    };
    let mut e = expectation(Topic::Overlength, relies_on, describe(b), describe(c), kept);
    e.evidence = evidence(&[b.overlength.as_ref(), c.overlength.as_ref()]);
    e.facts.truncates_at = truncates_at;
    e
}

fn encoding_of(reply: Option<&Arc<Reply>>) -> Option<Encoding> {
    reply
        .filter(|r| r.is_success())
        .and_then(|r| summary(r).encoding)
}

fn encoding(b: &Answers, c: &Answers) -> Expectation {
    let (b_enc, c_enc) = (
        encoding_of(b.base64.as_ref()),
        encoding_of(c.base64.as_ref()),
    );
    let relies_on = b_enc.map(|enc| match enc {
        Encoding::Float => {
            "`encoding_format: \"base64\"` is ignored: vectors come as float arrays".to_owned()
        }
        Encoding::Base64 => {
            "`encoding_format: \"base64\"` is honoured: vectors come as base64 strings".to_owned()
        }
    });
    let describe = |enc: Option<Encoding>, reply: Option<&Arc<Reply>>| match enc {
        Some(Encoding::Float) => "field ignored, float array".to_owned(),
        Some(Encoding::Base64) => "base64 string".to_owned(),
        None => answer(reply),
    };
    let mut e = expectation(
        Topic::Encoding,
        relies_on,
        describe(b_enc, b.base64.as_ref()),
        describe(c_enc, c.base64.as_ref()),
        b_enc == c_enc,
    );
    e.evidence = evidence(&[b.base64.as_ref(), c.base64.as_ref()]);
    e.facts.candidate_encoding = c_enc;
    e
}

fn error_shape(b: &Answers, c: &Answers) -> Expectation {
    let shape = |a: &Answers| {
        a.missing_input
            .as_deref()
            .map(|r| (r.status, summary(r).shape))
    };
    let (b_shape, c_shape) = (shape(b), shape(c));
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
        Topic::ErrorShape,
        relies_on,
        answer(b.missing_input.as_ref()),
        answer(c.missing_input.as_ref()),
        kept,
    );
    e.evidence = evidence(&[b.missing_input.as_ref(), c.missing_input.as_ref()]);
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
        Topic::ServerErrors,
        relies_on,
        format!("{baseline_5xx} of {answered} requests answered with a 5xx"),
        candidate,
        rows.is_empty(),
    );
    e.facts.server_errors = rows;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filler_is_the_requested_number_of_short_words() {
        let text = filler(20);
        assert_eq!(text.split(' ').count(), 20);
        assert_eq!(reference_server::tokenize(&text, 50_000).len(), 20);
    }

    #[test]
    fn nothing_relied_on_is_never_broken() {
        let e = expectation(
            Topic::Encoding,
            None,
            "refused".into(),
            "refused".into(),
            false,
        );
        assert_eq!(e.judgement, Judgement::NotRelied);
    }
}
