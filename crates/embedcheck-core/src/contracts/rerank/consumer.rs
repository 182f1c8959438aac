//! Rerank's part of the migration's consumer contract: a rerank client of the
//! baseline calls its route, in its dialect, and may threshold on its scale.

use super::RerankDialect;
use super::RerankRoute;
use super::facts::{RerankFacts, ScoreScale};
use super::requests;
use crate::contracts::consumer::{
    Consumer, Expectation, Pair, Topic, evidence, expectation, replay,
};
use crate::http::Reply;
use crate::session::{Facts, Session};
use futures::future::BoxFuture;
use std::sync::Arc;

/// The topic, as report.json spells it.
const TOPIC: Topic = Topic::named("rerank");

impl Topic {
    /// Rerank's topic of the consumer contract.
    pub const RERANK: Topic = TOPIC;
}

/// Rerank's part of the consumer contract.
pub(crate) struct RerankConsumer;

impl Consumer for RerankConsumer {
    fn topics(&self) -> &'static [Topic] {
        &[TOPIC]
    }

    fn judge<'a>(&'a self, pair: Pair<'a>) -> BoxFuture<'a, Vec<Expectation>> {
        Box::pin(async move { vec![rerank(pair).await] })
    }
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
    let n = requests::DOCUMENTS.len();
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
async fn rerank(pair: Pair<'_>) -> Expectation {
    let (b, c) = (pair.baseline, pair.candidate);
    let (b_route, b_scale) = rerank_of(b.facts);
    let (c_route, c_scale) = rerank_of(c.facts);
    let Some(route) = b_route else {
        return expectation(
            TOPIC,
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
        let plain = requests::plain_body(s);
        let said = b_dialect
            .translate(&plain, &requests::model(s))
            .unwrap_or(plain);
        requests::probe(route, said).verbatim()
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
            (pair.answer)(c_reply.as_ref()),
            route.path()
        );
    }
    let mut e = expectation(
        TOPIC,
        relies_on,
        rerank_text(b.facts, b_reply.as_ref()),
        candidate,
        kept,
    );
    let scales = match (b_scale, c_scale) {
        (Some(x), Some(y)) if x != y => Some((x, y)),
        _ => None,
    };
    let dialects = (c_route.is_some() && b_dialect != c_dialect).then_some((b_dialect, c_dialect));
    e.findings.action = Some(action(dialects, (route, c_route), scales));
    e.evidence = evidence(&[b_reply.as_ref(), c_reply.as_ref()]);
    e
}

/// What a rerank client changes: its dialect, its route, its score threshold, or
/// where it reranks.
fn action(
    dialects: Option<(RerankDialect, RerankDialect)>,
    routes: (RerankRoute, Option<RerankRoute>),
    scales: Option<(ScoreScale, ScoreScale)>,
) -> String {
    if let Some((old, new)) = dialects {
        return format!(
            "change every rerank client from {} dialect {} to {} {}: the candidate does not read the baseline's request (TEI's clients: LlamaIndex's TextEmbeddingInference, Haystack's HuggingFaceTEIRanker; NIM's: NVIDIARerank; Cohere's: the Cohere SDKs, LangChain's and LlamaIndex's CohereRerank, Dify, Open WebUI)",
            old.described(),
            old.request(),
            new.described(),
            new.request()
        );
    }
    match (routes, scales) {
        ((_, None), _) => "keep reranking on the baseline (or another reranker): the candidate serves no rerank route".to_owned(),
        ((old, Some(new)), _) if old != new => format!(
            "point rerank clients at {} (the candidate does not answer {}): a Cohere SDK base URL without `/v1`, or the full URL where the client takes one",
            new.path(),
            old.path()
        ),
        (_, Some((old, new))) => format!(
            "re-tune every score threshold: the baseline answered {old}, the candidate {new}"
        ),
        _ => "hold the candidate's ranking against the baseline's before switching: the same request ranks another document first".to_owned(),
    }
}
