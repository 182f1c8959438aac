//! rerank-scores: scores that are wrong but look right (RRQ-001 … RRQ-007).
//!
//! Every answer can be well formed, sorted and `top_n` long while its scores move with
//! a document's position or neighbours, differ between copies of one document, sit on
//! another scale than the clients' thresholds assume, or are not the model's at all.
//! Each clause compares the server with itself (reversed, alone, repeated, duplicated)
//! within its own measured noise, or with the model's own library (`--rerank-reference`).

use super::shape::{answered, not_offered};
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::rerank::RerankRoute;
use crate::contracts::rerank::facts::ScoreScale;
use crate::contracts::rerank::reference::RerankCase;
use crate::contracts::rerank::reply::{RerankAnswer, RerankDialect};
use crate::contracts::rerank::requests::{self as rerank, ANSWER, DOCUMENTS, QUERY};
use crate::contracts::rerank::settings;
use crate::contracts::rerank::{learn, learned};
use crate::http::{Exchange, Reply};
use crate::session::{Logged, ProbeError, Session};
use crate::verdict::Verdict;
use serde_json::json;
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("RRQ-001", order_independent),
        check!("RRQ-002", neighbour_independent),
        check!("RRQ-003", repeatable),
        check!("RRQ-004", duplicates_equal),
        check!("RRQ-005", probabilities, log),
        check!("RRQ-006", relevant_first),
        check!("RRQ-007", the_models_own_scores),
    ]
}

/// The most a document's score may move between two answers, relative to the larger
/// of 1 and the score, before the move is a failure: vLLM's own score parity test
/// allows a relative 0.01 in half precision (TEI's rerank test an absolute 4e-3), and
/// half-precision servers move scores with batch composition by design. Smaller moves
/// beyond the server's noise are reported ("batch-variant numerics"), not failed.
pub(crate) const BOUND: f64 = 0.01;

/// The least difference that counts as two scores differing on a deterministic server.
const LEAST: f64 = 1e-5;

/// How many times its own noise a difference must be to count.
const NOISE_MARGIN: f64 = 3.0;

/// The largest difference of one score between two answers, relative to the larger of
/// 1 and the score.
pub(crate) fn largest_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / x.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// The server's noise between identical requests, learned once (RRQ-003 measures it);
/// `None` when there are no scores to compare.
async fn noise(s: &Session) -> Result<Option<(f64, Vec<Exchange>)>, ProbeError> {
    let (route, first, answer) = match answered(s).await? {
        Ok(found) => found,
        Err(_) => return Ok(None),
    };
    let Ok(a) = answer.all_scores(DOCUMENTS.len()) else {
        return Ok(None);
    };
    let again = s
        .send(rerank::probe(route, rerank::plain_body(s)).fresh())
        .await?;
    let Some(b) = scores(&again, DOCUMENTS.len()) else {
        return Ok(None);
    };
    let difference = largest_difference(&a, &b);
    if learned(s).noise.is_none() {
        let fact = s.searched(difference, 2);
        learn(s, |facts| facts.noise = Some(fact));
    }
    Ok(Some((
        difference,
        vec![first.exchange.clone(), again.exchange.clone()],
    )))
}

/// The tolerance two scores of this server are judged the same within.
pub(crate) async fn tolerance(s: &Session) -> Result<f64, ProbeError> {
    let measured = match learned(s).noise {
        Some(fact) => Some(fact.value),
        None => noise(s).await?.map(|(n, _)| n),
    };
    Ok((NOISE_MARGIN * measured.unwrap_or(0.0)).max(LEAST))
}

/// Every document's score of a 200 rerank answer to `n` documents.
pub(crate) fn scores(reply: &Reply, n: usize) -> Option<Vec<f64>> {
    if !reply.is_success() {
        return None;
    }
    reply.rerank().ok()?.all_scores(n).ok()
}

/// The plain answer's scores, or the verdict when there are none.
async fn plain_scores(
    s: &Session,
) -> Result<Result<(RerankRoute, Arc<Reply>, Vec<f64>), Verdict>, ProbeError> {
    let (route, reply, answer) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(Err(verdict)),
    };
    Ok(match answer.all_scores(DOCUMENTS.len()) {
        Ok(scores) => Ok((route, reply, scores)),
        Err(why) => Err(Verdict::skip(format!(
            "the portable request's scores cannot be read: {why} (see RRS-002, RRS-005)"
        ))
        .with(&reply.exchange)),
    })
}

/// The documents whose two scores differ beyond `tolerance`: `"Berlin is…" 0.12 and 0.34`.
fn moved(a: &[f64], b: &[f64], tolerance: f64) -> Vec<String> {
    a.iter()
        .zip(b)
        .enumerate()
        .filter(|(_, (x, y))| (*x - *y).abs() / x.abs().max(1.0) > tolerance)
        .map(|(i, (x, y))| format!("{:?} {x:.6} and {y:.6}", short(DOCUMENTS[i])))
        .collect()
}

/// Pairs of documents ranked one way in `a` and the other in `b`, at least one of the
/// two orders by more than [`BOUND`]: a move that changes what a client shows first
/// (two documents within the bound of each other are tied as far as numerics tell).
fn flipped(a: &[f64], b: &[f64]) -> Vec<(usize, usize)> {
    let gap = |x: f64, y: f64| (x - y).abs() / x.abs().max(1.0);
    let mut pairs = Vec::new();
    for i in 0..a.len().min(b.len()) {
        for j in i + 1..a.len().min(b.len()) {
            let reordered = (a[i] - a[j]) * (b[i] - b[j]) < 0.0;
            if reordered && gap(a[i], a[j]).max(gap(b[i], b[j])) > BOUND {
                pairs.push((i, j));
            }
        }
    }
    pairs
}

/// The verdict on two answers' scores for the same documents that should agree
/// (RRQ-001, RRQ-002): a failure for a move past [`BOUND`] or one that reorders two
/// documents; a move past the server's noise but within both is reported, not failed;
/// on a declared listwise reranker every move is reported (its design).
fn judged_moves(
    s: &Session,
    a: &[f64],
    b: &[f64],
    tolerance: f64,
    held: &str,
    moves: &str,
) -> Verdict {
    let noticed = moved(a, b, tolerance);
    let largest = largest_difference(a, b);
    let reordered = flipped(a, b);
    if noticed.is_empty() {
        return Verdict::pass(format!("{held} (within {tolerance:.0e})"));
    }
    if settings::of(s).listwise {
        return Verdict::skip(format!(
            "declared listwise (--listwise): {moves}, by design: {} (largest {largest:.2e})",
            noticed.join("; ")
        ));
    }
    if largest > BOUND || !reordered.is_empty() {
        let why = match reordered.first() {
            Some((i, j)) => format!(
                "{:?} and {:?} change places",
                short(DOCUMENTS[*i]),
                short(DOCUMENTS[*j])
            ),
            None => format!(
                "a move of {largest:.2e} is past the {BOUND} bound on the score's own scale"
            ),
        };
        return Verdict::fail(format!("{moves}: {}; {why}", noticed.join("; ")));
    }
    Verdict::pass(format!(
        "{held} within the {BOUND} bound, no ranking changed; batch-variant numerics: moves up to {largest:.2e} past the server's noise ({tolerance:.0e})"
    ))
}

fn short(text: &str) -> String {
    let cut: String = text.chars().take(24).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// RRQ-001: "Each document gets the same score when the document list is reversed: no
/// two documents change places, and no score moves by more than 0.01 relative to the
/// larger of 1 and the score."
async fn order_independent(s: &Session) -> CheckResult {
    let (route, plain, forward) = match plain_scores(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let tolerance = tolerance(s).await?;
    let reversed: Vec<&str> = DOCUMENTS.iter().rev().copied().collect();
    let reply = s
        .send(rerank::probe(
            route,
            rerank::body(s, QUERY, json!(reversed), &[]),
        ))
        .await?;
    let Some(mut backward) = scores(&reply, DOCUMENTS.len()) else {
        return Ok(Verdict::skip(format!(
            "the reversed list was answered {} without every score",
            reply.summary()
        ))
        .with(&reply.exchange));
    };
    backward.reverse();
    let verdict = judged_moves(
        s,
        &forward,
        &backward,
        tolerance,
        "every document kept its score with the list reversed",
        "scores move with a document's position: in the list and reversed",
    );
    Ok(verdict.with(&plain.exchange).with(&reply.exchange))
}

/// RRQ-002: "A document sent alone gets the score it gets among others: the same
/// ranking, and no score moving by more than 0.01 relative."
async fn neighbour_independent(s: &Session) -> CheckResult {
    let (route, plain, together) = match plain_scores(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let tolerance = tolerance(s).await?;
    let mut alone = Vec::with_capacity(DOCUMENTS.len());
    let mut evidence = vec![plain.exchange.clone()];
    for document in DOCUMENTS {
        let reply = s
            .send(rerank::probe(
                route,
                rerank::body(s, QUERY, json!([document]), &[]),
            ))
            .await?;
        evidence.push(reply.exchange.clone());
        match scores(&reply, 1) {
            Some(score) => alone.push(score[0]),
            None => {
                return Ok(Verdict::skip(format!(
                    "one document alone was answered {} without a score",
                    reply.summary()
                ))
                .with(&reply.exchange));
            }
        }
    }
    let held = format!(
        "each of {} documents scored alone as among the others",
        DOCUMENTS.len()
    );
    let moves = "scores depend on the other documents: among them and alone";
    Ok(judged_moves(s, &together, &alone, tolerance, &held, moves)
        .with_all(evidence.iter().take(3)))
}

/// RRQ-003: "The same request sent twice gets every document's score again, each within
/// 0.01 of the first (relative to the larger of 1 and the score), and the same ranking."
async fn repeatable(s: &Session) -> CheckResult {
    let Some((difference, evidence)) = noise(s).await? else {
        return Ok(match answered(s).await? {
            Err(verdict) => verdict,
            Ok(_) => Verdict::skip("the repeated request gave no scores to compare"),
        });
    };
    Ok(if difference <= LEAST {
        Verdict::pass(format!(
            "identical requests' scores differ by at most {difference:.2e}"
        ))
    } else if difference <= BOUND {
        Verdict::pass(format!(
            "identical requests' scores differ by up to {difference:.2e}, within the {BOUND} bound (nondeterministic numerics, as half precision gives)"
        ))
    } else {
        Verdict::fail(format!(
            "identical requests' scores differ by up to {difference:.2e}, past the {BOUND} bound on the score's own scale: rankings change between identical calls"
        ))
    }
    .with_all(&evidence))
}

/// RRQ-004: "Copies of one document in one request get equal scores: within the
/// server's noise, or else within 0.01 relative (reported); the order the tie comes
/// back in is recorded."
async fn duplicates_equal(s: &Session) -> CheckResult {
    let (route, _, _) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let tolerance = tolerance(s).await?;
    let (copy, other) = (DOCUMENTS[ANSWER], DOCUMENTS[0]);
    let documents = [copy, other, copy, DOCUMENTS[2], copy];
    let reply = s
        .send(rerank::probe(
            route,
            rerank::body(s, QUERY, json!(documents), &[]),
        ))
        .await?;
    let Some(scores) = scores(&reply, documents.len()) else {
        return Ok(Verdict::skip(format!(
            "the duplicates were answered {} without every score",
            reply.summary()
        ))
        .with(&reply.exchange));
    };
    let copies = [0, 2, 4];
    let answer = reply.rerank().ok();
    let order: Vec<usize> = answer
        .iter()
        .flat_map(RerankAnswer::order)
        .flatten()
        .filter(|i| copies.contains(i))
        .collect();
    let fact = s.detected(order.clone(), &reply.exchange);
    learn(s, |facts| facts.tie_order = Some(fact));
    let spread = largest_difference(&[scores[0], scores[0]], &[scores[2], scores[4]]);
    let three = format!("{:.6}, {:.6} and {:.6}", scores[0], scores[2], scores[4]);
    Ok(if spread <= tolerance {
        Verdict::pass(format!(
            "3 copies of one document scored {:.6} alike; they come back in the order {order:?}",
            scores[0]
        ))
    } else if settings::of(s).listwise {
        Verdict::skip(format!(
            "declared listwise (--listwise): 3 copies of one document scored {three}, by design"
        ))
    } else if spread <= BOUND {
        Verdict::pass(format!(
            "3 copies of one document scored {three}, within the {BOUND} bound (batch-variant numerics, past the server's noise {tolerance:.0e}); they come back in the order {order:?}"
        ))
    } else {
        Verdict::fail(format!(
            "3 copies of one document scored {three}, past the {BOUND} bound on the score's own scale: the server does not score the pair it is sent"
        ))
    }
    .with(&reply.exchange))
}

/// Every rerank answer of the run with its finite scores.
fn run_answers(s: &Session) -> Vec<(Exchange, Vec<f64>)> {
    s.log()
        .into_iter()
        .filter(|l| l.contract() == Some(crate::contracts::rerank::ID))
        .filter(|l| !asked_for_raw_scores(s, l))
        .filter_map(|l| {
            let answer = l.reply.filter(|r| r.is_success())?.rerank().ok()?;
            let scores: Vec<f64> = answer
                .items
                .into_iter()
                .filter_map(|i| i.number())
                .filter(|x| x.is_finite())
                .collect();
            Some((l.exchange, scores))
        })
        .collect()
}

/// Whether a logged request asked for raw scores (RRD-001's): its scores are logits
/// because the client asked, not the server's scale.
fn asked_for_raw_scores(s: &Session, logged: &Logged) -> bool {
    let Some(switch) = rerank::dialect(s).raw_scores_switch() else {
        return false;
    };
    logged
        .request_body
        .as_deref()
        .and_then(crate::json::parse)
        .is_some_and(|body| body.get(switch) == Some(&json!(true)))
}

fn run_scores(s: &Session) -> Vec<f64> {
    run_answers(s)
        .into_iter()
        .flat_map(|(_, scores)| scores)
        .collect()
}

/// The answer of the run holding the score farthest outside [0, 1], as evidence of the
/// scale.
fn farthest_outside(s: &Session) -> Option<Exchange> {
    let distance = |x: f64| (x - 1.0).max(-x).max(0.0);
    run_answers(s)
        .into_iter()
        .map(|(exchange, scores)| {
            (
                scores.into_iter().map(distance).fold(0.0, f64::max),
                exchange,
            )
        })
        .filter(|(d, _)| *d > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, exchange)| exchange)
}

/// The range of a set of scores, for reasons: `from -4.2000 to 3.9000`.
pub(super) fn span(scores: &[f64]) -> String {
    let (low, high) = scores
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(*x), hi.max(*x))
        });
    format!("from {low:.4} to {high:.4}")
}

/// The scale of a set of scores.
pub(crate) fn scale_of(scores: &[f64]) -> ScoreScale {
    let outside = scores.iter().any(|x| !(-1.0..=1.0).contains(x));
    let negative = scores.iter().any(|x| *x < 0.0);
    let above_one = scores.iter().any(|x| *x > 1.0);
    if outside || (negative && above_one) {
        ScoreScale::Logit
    } else if negative {
        ScoreScale::Cosine
    } else if scores.len() >= 8 && scores.iter().all(|x| (0.5..=0.74).contains(x)) {
        ScoreScale::Squeezed
    } else {
        ScoreScale::Probability
    }
}

/// RRQ-005: "Scores are probabilities in [0, 1]; the scale is classified and reported."
async fn probabilities(s: &Session) -> CheckResult {
    let plain = match plain_scores(s).await? {
        Ok((_, reply, _)) => reply,
        Err(verdict) => return Ok(verdict),
    };
    // The same answers RRS-003 counts, the request asking for the documents included.
    super::shape::judged_answers(s).await?;
    let scores = run_scores(s);
    let scale = scale_of(&scores);
    let fact = s.searched(scale, 1);
    learn(s, |facts| facts.scale = Some(fact));
    let seen = format!("{} scores of the run {}", scores.len(), span(&scores));
    // NIM's dialect documents raw logits (`rankings[].logit`); every other, Cohere's
    // [0, 1] (TEI's too, unless raw_scores is asked for).
    let nim = crate::contracts::rerank::requests::dialect(s) == RerankDialect::Nim;
    let (expected, documented) = if nim {
        (
            ScoreScale::Logit,
            "NVIDIA NIM's dialect documents raw logits (rankings[].logit), which its clients pass on as they are",
        )
    } else {
        (
            ScoreScale::Probability,
            "clients filter on Cohere's [0, 1] scale (Dify's score_threshold, Open WebUI's relevance threshold)",
        )
    };
    Ok(match scale {
        found if found == expected => {
            Verdict::pass(format!("{scale}: {seen}")).with(&plain.exchange)
        }
        _ => {
            let failed = Verdict::fail(format!("{scale}: {seen}; {documented}"));
            let failed = if nim {
                failed.naming_its_dialect()
            } else {
                failed
            };
            let verdict = failed.with(&plain.exchange);
            match farthest_outside(s) {
                Some(exchange) if exchange != plain.exchange => verdict.with(&exchange),
                _ => verdict,
            }
        }
    })
}

/// RRQ-006: "A document that answers the query ranks first among four unrelated ones.
/// With a rerank reference file the clause defers to RRQ-007."
async fn relevant_first(s: &Session) -> CheckResult {
    // With a reference, the model's own ranking of this case says which document is
    // first, where the file holds the case; else it may rightly rank otherwise.
    let expected = match &settings::of(s).reference {
        None => (ANSWER, "answers the query"),
        Some(reference) => match reference
            .cases
            .iter()
            .find(|c| c.query == QUERY && c.documents == DOCUMENTS)
        {
            Some(case) => (top(&case.scores), "the model's own library ranks first"),
            None => {
                return Ok(match answered(s).await? {
                    Err(verdict) => verdict,
                    Ok(_) => Verdict::skip(
                        "judged against the model's own ranking instead (RRQ-007): the reference file holds no ranking of this case, and a model may rightly rank otherwise",
                    ),
                });
            }
        },
    };
    let (_, reply, scores) = match plain_scores(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let (want, why) = expected;
    let first = top(&scores);
    Ok(if first == want {
        Verdict::pass(format!(
            "{:?}, which {why}, ranks first ({:.4}) for {QUERY:?}",
            DOCUMENTS[want], scores[want]
        ))
    } else {
        Verdict::fail(format!(
            "{:?} ranks first ({:.4}) for {QUERY:?}, above {:?} ({:.4}), which {why}: the index mapping or the model's prompt is wrong",
            DOCUMENTS[first], scores[first], DOCUMENTS[want], scores[want]
        ))
    }
    .with(&reply.exchange))
}

/// RRQ-007's bounds: scores within this of the library's, probabilities and logits.
/// The least Kendall's tau of the server's ranking with the library's.
const LEAST_TAU: f64 = 0.9;

/// How one reference case came out.
enum CaseOutcome {
    Agrees,
    Differs(String),
    NotScored(String),
}

/// Whether a reference case is one the contract leaves free: an empty or blank query or
/// document (RRL-002 accepts any finite score for it, and servers tokenize it
/// differently), or a pair the library truncated (RRL-004 leaves truncation to the
/// server). Such a case is reported, never judged.
fn left_free(case: &RerankCase) -> bool {
    let blank = |t: &String| t.trim().is_empty();
    blank(&case.query)
        || case.documents.iter().any(blank)
        || case.truncated.iter().flatten().any(|t| *t)
}

/// Kendall's tau of `got` against `expected`, over the pairs the library tells apart by
/// more than `tie` (pairs it scores alike may come back in either order).
fn kendall(got: &[f64], expected: &[f64], tie: f64) -> f64 {
    let n = got.len();
    let (mut sum, mut pairs) = (0.0, 0usize);
    for i in 0..n {
        for j in i + 1..n {
            if (expected[i] - expected[j]).abs() <= tie {
                continue;
            }
            pairs += 1;
            sum += ((got[i] - got[j]).signum() * (expected[i] - expected[j]).signum())
                .clamp(-1.0, 1.0);
        }
    }
    if pairs == 0 { 1.0 } else { sum / pairs as f64 }
}

fn top(scores: &[f64]) -> usize {
    (0..scores.len())
        .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)))
        .unwrap_or_default()
}

/// One case held against the library: the server's scores against the library's on
/// the server's scale.
fn judge_case(case: &RerankCase, got: &[f64], logits: bool) -> CaseOutcome {
    let (expected, unit) = if logits {
        (&case.raw, "raw logit")
    } else {
        (&case.scores, "score")
    };
    // Relative to the larger of 1 and the library's score, as vLLM's parity test holds
    // scores (an absolute 0.01 on probabilities).
    let off_by = |i: usize| (got[i] - expected[i]).abs() / expected[i].abs().max(1.0);
    let worst = (0..got.len())
        .max_by(|&a, &b| off_by(a).total_cmp(&off_by(b)))
        .unwrap_or_default();
    let tau = kendall(got, expected, BOUND);
    if off_by(worst) > BOUND {
        return CaseOutcome::Differs(format!(
            "{}: document {worst} {unit} {:.4} where the library gives {:.4}",
            case.id, got[worst], expected[worst]
        ));
    }
    // Any document the library scores as high as its best (within the bound) may lead.
    let best = expected[top(expected)];
    let first = top(got);
    if best - expected[first] > BOUND * best.abs().max(1.0) || tau < LEAST_TAU {
        return CaseOutcome::Differs(format!(
            "{}: document {} first where the library ranks {} first (Kendall's tau {tau:.2})",
            case.id,
            first,
            top(expected)
        ));
    }
    CaseOutcome::Agrees
}

/// How many differing cases RRQ-007's reason names; the rest are counted.
const SHOWN: usize = 5;

/// RRQ-007: "With a rerank reference file, for every reference case the server scores
/// and the contract does not leave free (blank or truncated inputs: reported, not
/// judged), its ranking has the same top document and Kendall's tau of at least 0.9
/// with the library's, and each score is within 0.01 of the library's, relative to
/// the larger of 1 and the library's score (raw logits where the server answers
/// logits)."
async fn the_models_own_scores(s: &Session) -> CheckResult {
    let Some(reference) = settings::of(s).reference else {
        return Ok(Verdict::skip(
            "no --rerank-reference file: nothing to hold the scores against (lab/rerank_reference.py makes one with the model's own library)",
        ));
    };
    let Some(route) = rerank::route(s).await? else {
        return Ok(not_offered(s));
    };
    let mut answers = Vec::new();
    for case in &reference.cases {
        let request = rerank::body(s, &case.query, json!(case.documents), &[]);
        let sent = s
            .send(rerank::either(
                route,
                request,
                format!("reference case {}", case.id),
            ))
            .await;
        // A case that gets no answer (a server that a thousand documents take down)
        // is not scored; the cases answered before it are still judged.
        let reply = match sent {
            Ok(reply) => Ok(reply),
            Err(e @ (ProbeError::Transport(_) | ProbeError::ServerDown(_))) => Err(e.to_string()),
            Err(other) => return Err(other),
        };
        answers.push((case, reply));
    }
    // The server's scale, from every score of the run: a logit server's scores of one
    // case may all happen to lie in [0, 1].
    let logits = scale_of(&run_scores(s)) == ScoreScale::Logit;
    let mut outcomes = Vec::new();
    let mut evidence = Vec::new();
    // Cases the contract leaves free that differ: reported, not judged.
    let mut reported = Vec::new();
    for (case, reply) in &answers {
        let n = case.documents.len();
        let outcome = match reply {
            Ok(reply) => match scores(reply, n) {
                Some(got) => judge_case(case, &got, logits),
                None => CaseOutcome::NotScored(format!("{} ({})", case.id, reply.summary())),
            },
            Err(why) => CaseOutcome::NotScored(format!("{} ({n} documents: {why})", case.id)),
        };
        if left_free(case) {
            if let CaseOutcome::Differs(why) = outcome {
                reported.push(why);
            }
            continue;
        }
        if let (CaseOutcome::Differs(_), Ok(reply)) = (&outcome, reply) {
            evidence.push(reply.exchange.clone());
        }
        outcomes.push(outcome);
    }
    let differs: Vec<&String> = outcomes
        .iter()
        .filter_map(|o| match o {
            CaseOutcome::Differs(why) => Some(why),
            _ => None,
        })
        .collect();
    let not_scored: Vec<&String> = outcomes
        .iter()
        .filter_map(|o| match o {
            CaseOutcome::NotScored(why) => Some(why),
            _ => None,
        })
        .collect();
    let compared = outcomes.len() - not_scored.len();
    if compared == 0 {
        return Ok(Verdict::skip(format!(
            "no reference case was answered with scores: {}",
            not_scored
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let made_by = reference.made_by();
    let free = match reported.as_slice() {
        [] => String::new(),
        cases => format!(
            "; the contract leaves these free (blank or truncated inputs), reported: {}",
            cases.join("; ")
        ),
    };
    let unscored = match not_scored.as_slice() {
        [] => String::new(),
        cases => format!(
            "; not scored: {}",
            cases
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Ok(if differs.is_empty() {
        Verdict::pass(format!(
            "all {compared} judged reference cases agree with {made_by}: a top document the library scores highest, Kendall's tau ≥ {LEAST_TAU}, scores within {BOUND} relative to the larger of 1 and the library's{unscored}{free}"
        ))
    } else {
        Verdict::fail(format!(
            "{} of {compared} judged reference cases differ from {made_by}: {}{}{unscored}{free}",
            differs.len(),
            differs
                .iter()
                .take(SHOWN)
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            match differs.len().saturating_sub(SHOWN) {
                0 => String::new(),
                more => format!("; and {more} more"),
            }
        ))
        .with_all(evidence.iter().take(3))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_are_told_apart() {
        assert_eq!(scale_of(&[0.9, 0.01, 0.5]), ScoreScale::Probability);
        assert_eq!(scale_of(&[2.9, -1.2, 0.3]), ScoreScale::Logit);
        assert_eq!(scale_of(&[0.8, -0.1, 0.3]), ScoreScale::Cosine);
        let squeezed = [0.73, 0.5, 0.6, 0.62, 0.7, 0.51, 0.55, 0.66];
        assert_eq!(scale_of(&squeezed), ScoreScale::Squeezed);
        assert_eq!(scale_of(&squeezed[..3]), ScoreScale::Probability);
    }

    #[test]
    fn kendall_counts_agreeing_pairs() {
        assert!((kendall(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0], 0.0) - 1.0).abs() < 1e-12);
        assert!((kendall(&[1.0, 2.0, 3.0], &[30.0, 20.0, 10.0], 0.0) + 1.0).abs() < 1e-12);
        // Copies the library scores alike may come back in either order.
        assert!((kendall(&[1.0, 1.001, 3.0], &[1.0, 1.0, 3.0], 0.01) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn duplicates_at_the_top_may_lead_in_either_order() {
        let case = RerankCase {
            id: "duplicates".into(),
            query: "q".into(),
            documents: vec!["a".into(), "b".into(), "a".into()],
            raw: vec![1.5, -1.0, 1.5],
            scores: vec![0.8176, 0.2689, 0.8176],
            truncated: None,
        };
        assert!(matches!(
            judge_case(&case, &[1.496, -1.0, 1.5], true),
            CaseOutcome::Agrees
        ));
    }

    #[test]
    fn a_case_is_judged_on_the_servers_scale() {
        let case = RerankCase {
            id: "c".into(),
            query: "q".into(),
            documents: vec!["a".into(), "b".into()],
            raw: vec![2.0, -1.0],
            scores: vec![0.8808, 0.2689],
            truncated: None,
        };
        assert!(matches!(
            judge_case(&case, &[0.8808, 0.2690], false),
            CaseOutcome::Agrees
        ));
        assert!(matches!(
            judge_case(&case, &[2.004, -1.0], true),
            CaseOutcome::Agrees
        ));
        let CaseOutcome::Differs(why) = judge_case(&case, &[0.8808, 0.2789], false) else {
            panic!("0.01 off is a difference");
        };
        assert_eq!(
            why,
            "c: document 1 score 0.2789 where the library gives 0.2689"
        );
    }
}
