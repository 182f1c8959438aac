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
//! | `rerank` | `rerank.routes`, `rerank.scale` (RRS-009, RRQ-005) | the portable rerank request at the baseline's route |
//! | `speech` | — (the baseline's answers) | the minimal transcription request and each `response_format` the baseline answers |
//!
//! The replayed requests are the clauses' own (from each contract's `requests`), so when
//! the two servers agree on the parameters the session cache answers them.

use super::behaviour::{Answer, BehaviourDiff};
use crate::contracts::embeddings::clauses::TEMPLATE_COSINE;
use crate::contracts::embeddings::facts::OverlengthPolicy;
use crate::contracts::embeddings::facts::{
    self as embeddings_facts, BareIs, Base64, EmbeddingsFacts, FieldHandling, InputLimit,
};
use crate::contracts::embeddings::requests::{self, body, words};
use crate::contracts::rerank::RerankDialect;
use crate::contracts::rerank::RerankRoute;
use crate::contracts::rerank::facts::RerankFacts;
use crate::contracts::rerank::facts::ScoreScale;
use crate::contracts::rerank::requests as rerank_requests;
use crate::contracts::speech::reply as speech_reply;
use crate::contracts::speech::requests as speech_requests;
use crate::http::{Body, Encoding, Exchange, Probe, Reply};
use crate::session::{Facts, Session};
use crate::vectors::cosine;
use serde::Serialize;
use serde_json::json;
use std::sync::Arc;

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
    Rerank,
    Speech,
}

impl Topic {
    /// Every topic, in the order reports show them.
    pub const ALL: [Topic; 8] = [
        Topic::Matryoshka,
        Topic::Instruction,
        Topic::Overlength,
        Topic::Encoding,
        Topic::ErrorShape,
        Topic::ServerErrors,
        Topic::Rerank,
        Topic::Speech,
    ];

    /// The topic as report.json spells it.
    pub fn name(self) -> &'static str {
        match self {
            Topic::Matryoshka => "matryoshka",
            Topic::Instruction => "instruction",
            Topic::Overlength => "overlength",
            Topic::Encoding => "encoding",
            Topic::ErrorShape => "error_shape",
            Topic::ServerErrors => "server_errors",
            Topic::Rerank => "rerank",
            Topic::Speech => "speech",
        }
    }
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

impl Judgement {
    /// The judgement as the reports word it.
    pub fn word(self) -> &'static str {
        match self {
            Judgement::Kept => "kept",
            Judgement::Broken => "broken",
            Judgement::NotRelied => "nothing to rely on",
        }
    }
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
    /// Numbers remediation needs, kept as data.
    #[serde(skip)]
    pub(crate) findings: Findings,
}

/// Numbers behind an expectation, for the remediation derived from it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Findings {
    /// The native size the `dimensions` probes were built from.
    pub native: Option<usize>,
    /// The reduced size the baseline honoured, when it did.
    pub reduced: Option<usize>,
    /// The candidate refused `dimensions` even at the native size.
    pub refuses_native: bool,
    /// The baseline truncated over-length input to this many tokens.
    pub truncates_at: Option<u64>,
    /// The candidate's encoding when asked for base64.
    pub candidate_encoding: Option<Encoding>,
    /// Requests the candidate answered 5xx and the baseline did not.
    pub server_errors: Vec<(String, u16)>,
    /// The rerank route the baseline's clients call, and where the candidate serves it.
    pub rerank_routes: Option<(RerankRoute, Option<RerankRoute>)>,
    /// The rerank scales of baseline and candidate, when they differ.
    pub rerank_scales: Option<(ScoreScale, ScoreScale)>,
    /// The rerank dialects of baseline and candidate, when they differ: the baseline's
    /// clients speak the baseline's.
    pub rerank_dialects: Option<(RerankDialect, RerankDialect)>,
    /// What a speech client of the baseline loses on the candidate, where it relies
    /// on speech-to-text.
    pub speech: Option<SpeechLoss>,
}

/// What the candidate lacks of the baseline's speech-to-text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SpeechLoss {
    /// Its route is absent (404, 405, 501).
    NotOffered,
    /// It answers, but not with a JSON transcript.
    NoTranscript,
    /// It transcribes, and refuses these formats the baseline answers (none: kept).
    Formats(Vec<String>),
}

/// One server of the pair: its session (for replays) and what its audit learned.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub session: &'a Session,
    pub facts: &'a Facts,
    /// The embeddings side of `facts`.
    pub embeddings: &'a EmbeddingsFacts,
}

/// Judges the candidate against every expectation read from the baseline.
pub async fn judge(b: Side<'_>, c: Side<'_>, diff: &BehaviourDiff) -> Vec<Expectation> {
    vec![
        matryoshka(b, c).await,
        instruction(b, c).await,
        overlength(b, c).await,
        encoding(b, c),
        error_shape(b, c).await,
        server_errors(diff),
        rerank(b, c).await,
        speech(b, c).await,
    ]
}

/// Every topic "not probed", when a server could not be audited: nothing is sent to
/// a server that did not answer its audit.
pub(crate) fn unavailable(why: &str) -> Vec<Expectation> {
    let not_probed = format!("not probed: {why}");
    Topic::ALL
        .into_iter()
        .map(|topic| expectation(topic, None, not_probed.clone(), not_probed.clone(), true))
        .collect()
}

/// Sends one of the old client's requests; `None` when no answer could be had.
async fn replay(s: &Session, probe: Probe) -> Option<Arc<Reply>> {
    s.send(probe).await.ok()
}

fn answer(reply: Option<&Arc<Reply>>) -> String {
    reply.map_or("no answer".to_owned(), |r| summary(r).to_string())
}

fn summary(reply: &Reply) -> Answer {
    Answer::of_reply(reply)
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
        .and_then(|r| r.first_vector())
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
        findings: Findings::default(),
    }
}

async fn matryoshka(b: Side<'_>, c: Side<'_>) -> Expectation {
    let native = b.embeddings.native_dimension.as_ref().map(|f| f.value);
    let Some(n) = native.filter(|&n| n >= 2) else {
        return expectation(
            Topic::Matryoshka,
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
        Topic::Matryoshka,
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
        Topic::Instruction,
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
        Topic::Overlength,
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
        Topic::Encoding,
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
        Topic::ErrorShape,
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
        Topic::ServerErrors,
        relies_on,
        format!("{baseline_5xx} of {answered} requests answered with a 5xx"),
        candidate,
        rows.is_empty(),
    );
    e.findings.server_errors = rows;
    e
}

/// The rerank facts of one side: the route its clauses used and its scale.
fn rerank_of(f: &Facts) -> (Option<RerankRoute>, Option<ScoreScale>) {
    let rerank = RerankFacts::of(f);
    (
        rerank.routes.as_ref().and_then(|r| r.value.used),
        rerank.scale.as_ref().map(|s| s.value),
    )
}

fn dialect_of(f: &Facts) -> RerankDialect {
    RerankFacts::of(f)
        .routes
        .as_ref()
        .map_or(RerankDialect::Cohere, |r| r.value.dialect)
}

/// `in TEI's dialect {query, texts}`, or nothing for Cohere's.
fn dialect_words(dialect: RerankDialect) -> String {
    match dialect {
        RerankDialect::Cohere => String::new(),
        other => format!(" in {} dialect {}", other.described(), other.request()),
    }
}

fn rerank_text(f: &Facts, reply: Option<&Arc<Reply>>) -> String {
    let (used, scale) = rerank_of(f);
    let Some(routes) = &RerankFacts::of(f).routes else {
        return "not probed (the rerank clauses did not run)".to_owned();
    };
    let tried = routes.value.statuses();
    match used {
        None => format!("not served ({tried})"),
        Some(route) => {
            let first = reply
                .filter(|r| r.is_success())
                .and_then(|r| r.rerank().ok())
                .and_then(|a| a.order().first().copied().flatten())
                .map(|i| format!(", document {i} first"))
                .unwrap_or_default();
            let scale = scale.map_or("scale not measured".to_owned(), |s| s.to_string());
            let dialect = dialect_words(dialect_of(f));
            format!("served at {}{dialect}: {scale}{first}", route.path())
        }
    }
}

/// Kendall's tau between the two servers' scores of the same documents: 1 when they
/// order every pair alike; `None` unless both answered every document.
fn order_agreement(b: Option<&Reply>, c: Option<&Reply>) -> Option<f64> {
    let n = rerank_requests::DOCUMENTS.len();
    let scores = |r: Option<&Reply>| r?.rerank().ok()?.all_scores(n).ok();
    let (x, y) = (scores(b)?, scores(c)?);
    let mut sum = 0.0;
    let mut pairs = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            sum += ((x[i] - x[j]).signum() * (y[i] - y[j]).signum()).clamp(-1.0, 1.0);
            pairs += 1.0;
        }
    }
    Some(sum / pairs)
}

/// A rerank client of the baseline calls its route and may threshold on its scale
/// (Dify's `score_threshold`, Open WebUI's relevance threshold): the candidate must
/// answer the portable request at that route, on the same scale, with the same
/// document first. The study left this unmeasured: Dynamo's vLLM backend had no rerank
/// handler.
async fn rerank(b: Side<'_>, c: Side<'_>) -> Expectation {
    let (b_route, b_scale) = rerank_of(b.facts);
    let (c_route, c_scale) = rerank_of(c.facts);
    let Some(route) = b_route else {
        return expectation(
            Topic::Rerank,
            None,
            rerank_text(b.facts, None),
            rerank_text(c.facts, None),
            true,
        );
    };
    // The baseline's clients speak the baseline's dialect, to either server.
    let b_dialect = dialect_of(b.facts);
    let c_dialect = dialect_of(c.facts);
    let portable = |s: &Session| {
        let plain = rerank_requests::plain_body(s);
        let said = b_dialect
            .translate(&plain, &rerank_requests::model(s))
            .unwrap_or(plain);
        rerank_requests::probe(route, said).verbatim()
    };
    let b_reply = replay(b.session, portable(b.session)).await;
    let c_reply = replay(c.session, portable(c.session)).await;
    let first = |r: &Option<Arc<Reply>>| {
        r.as_deref()
            .filter(|r| r.is_success())
            .and_then(|r| r.rerank().ok())
            .and_then(|a| a.order().first().copied().flatten())
    };
    let answered = c_reply.as_deref().is_some_and(Reply::is_success);
    let agreement = order_agreement(b_reply.as_deref(), c_reply.as_deref());
    let same_scale = match (b_scale, c_scale) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    };
    let kept = answered && same_scale && first(&b_reply) == first(&c_reply);
    let relies_on = Some(format!(
        "rerank at {}{}{}",
        route.path(),
        dialect_words(b_dialect),
        b_scale.map_or(String::new(), |s| format!(", scores as {s}"))
    ));
    let mut candidate = rerank_text(c.facts, c_reply.as_ref());
    if let Some(tau) = agreement {
        candidate.push_str(&format!(
            "; Kendall's tau {tau:.2} with the baseline's order of the same documents"
        ));
    }
    if !answered {
        candidate = format!(
            "{} at {}; {candidate}",
            answer(c_reply.as_ref()),
            route.path()
        );
    }
    let mut e = expectation(
        Topic::Rerank,
        relies_on,
        rerank_text(b.facts, b_reply.as_ref()),
        candidate,
        kept,
    );
    e.findings.rerank_routes = Some((route, c_route));
    e.findings.rerank_scales = match (b_scale, c_scale) {
        (Some(x), Some(y)) if x != y => Some((x, y)),
        _ => None,
    };
    e.findings.rerank_dialects =
        (c_route.is_some() && b_dialect != c_dialect).then_some((b_dialect, c_dialect));
    e.evidence = evidence(&[b_reply.as_ref(), c_reply.as_ref()]);
    e
}

/// A speech client of the baseline (Open WebUI, the SDKs' default call) sends the clip
/// with `file` and `model` and reads JSON `text`; its users may ask for the formats the
/// baseline answers. The candidate must transcribe the same clip and answer each of
/// those formats. The two transcripts are compared word by word and the difference
/// reported, not judged: engines decode alike only where they share a decoder.
async fn speech(b: Side<'_>, c: Side<'_>) -> Expectation {
    let b_default = replay(b.session, speech_requests::minimal(b.session)).await;
    let c_default = replay(c.session, speech_requests::minimal(c.session)).await;
    let transcript = |r: &Option<Arc<Reply>>| {
        r.as_deref()
            .filter(|r| r.is_success())
            .and_then(speech_requests::json_text)
            .map(str::to_owned)
    };
    let Some(b_text) = transcript(&b_default) else {
        let seen =
            |r: &Option<Arc<Reply>>| format!("{} to the minimal request", answer(r.as_ref()));
        return expectation(
            Topic::Speech,
            None,
            seen(&b_default),
            seen(&c_default),
            true,
        );
    };
    let c_text = transcript(&c_default);
    let mut served = Vec::new();
    let mut misanswered = Vec::new();
    let mut lost = Vec::new();
    let mut evidence_of_lost = None;
    let in_format = |format, r: &Option<Arc<Reply>>| {
        r.as_deref()
            .is_some_and(|r| speech_reply::in_format(format, r))
    };
    for format in speech_requests::OTHER_FORMATS {
        let b_reply = replay(b.session, speech_requests::in_format(b.session, format)).await;
        // A format answered with something else (the JSON envelope as srt) is one no
        // client of the baseline relies on.
        if !in_format(format, &b_reply) {
            if b_reply.as_deref().is_some_and(Reply::is_success) {
                misanswered.push(format);
            }
            continue;
        }
        served.push(format);
        if c_text.is_none() {
            // A candidate that does not transcribe is not asked for the formats.
            continue;
        }
        let c_reply = replay(c.session, speech_requests::in_format(c.session, format)).await;
        if !in_format(format, &c_reply) {
            let how = match c_reply.as_deref().is_some_and(Reply::is_success) {
                true => format!("{format} (answered with {})", answer(c_reply.as_ref())),
                false => format!("{format} ({})", answer(c_reply.as_ref())),
            };
            lost.push(how);
            evidence_of_lost.get_or_insert((b_reply, c_reply));
        }
    }
    let relies_on = Some(format!(
        "speech-to-text at {}: the transcript as JSON text{}",
        b.session
            .transport()
            .target()
            .url(&speech_requests::ROUTE)
            .path(),
        match served.as_slice() {
            [] => String::new(),
            formats => format!(", and response_format {}", formats.join(", ")),
        }
    ));
    let baseline = format!(
        "transcribes the clip ({} words){}{}",
        b_text.split_whitespace().count(),
        match served.as_slice() {
            [] => "; no other format".to_owned(),
            formats => format!("; answers {}", formats.join(", ")),
        },
        match misanswered.as_slice() {
            [] => String::new(),
            formats => format!(
                "; answers {} with a body not in that format",
                formats.join(", ")
            ),
        }
    );
    let candidate = match &c_text {
        None => format!("{} to the minimal request", answer(c_default.as_ref())),
        Some(text) => {
            let refused = if lost.is_empty() {
                String::new()
            } else {
                format!("; refuses {}", lost.join(", "))
            };
            format!(
                "transcribes the clip ({} words; {}){refused}",
                text.split_whitespace().count(),
                word_agreement(&b_text, text)
            )
        }
    };
    let kept = c_text.is_some() && lost.is_empty();
    let mut e = expectation(Topic::Speech, relies_on, baseline, candidate, kept);
    e.findings.speech = Some(match (&c_default, &c_text) {
        (Some(reply), None) if reply.is_absent() => SpeechLoss::NotOffered,
        (_, None) => SpeechLoss::NoTranscript,
        (_, Some(_)) => SpeechLoss::Formats(served_lost(&lost)),
    });
    let (b_lost, c_lost) = evidence_of_lost.unwrap_or((None, None));
    e.evidence = evidence(&[
        b_default.as_ref(),
        c_default.as_ref(),
        b_lost.as_ref(),
        c_lost.as_ref(),
    ]);
    e
}

/// The formats the candidate refused, by name.
fn served_lost(lost: &[String]) -> Vec<String> {
    lost.iter()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// `the same words as the baseline's`, or the word error rate against it: the word
/// edits (substitutions, insertions, deletions) over the baseline's word count.
fn word_agreement(baseline: &str, candidate: &str) -> String {
    let (x, y): (Vec<&str>, Vec<&str>) = (
        baseline.split_whitespace().collect(),
        candidate.split_whitespace().collect(),
    );
    if x == y {
        return "the same words as the baseline's".to_owned();
    }
    let mut row: Vec<usize> = (0..=y.len()).collect();
    for (i, a) in x.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, b) in y.iter().enumerate() {
            let substitute = diagonal + usize::from(a != b);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    let edits = row[y.len()];
    format!(
        "{edits} word edits from the baseline's transcript, a word error rate of {:.2}",
        edits as f64 / x.len().max(1) as f64
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_are_compared_word_by_word() {
        let old = "the cat sat on the mat";
        assert_eq!(word_agreement(old, old), "the same words as the baseline's");
        assert_eq!(
            word_agreement(old, "the cat sat on a mat today"),
            "2 word edits from the baseline's transcript, a word error rate of 0.33"
        );
        assert!(word_agreement(old, "").contains("6 word edits"));
    }

    #[test]
    fn topic_names_are_report_jsons() {
        for topic in Topic::ALL {
            assert_eq!(serde_json::to_value(topic).unwrap(), topic.name());
        }
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
