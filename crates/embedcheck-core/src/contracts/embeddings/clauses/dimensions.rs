//! dimensions: `dimensions` honoured exactly or refused cleanly (DIM-001 … DIM-007).
//!
//! Matryoshka support is declared (`--matryoshka yes|no`) or detected from one request
//! for half the native size, and the `matryoshka` observation says which. DIM-002 …
//! DIM-004 run over generated d in [1, native): they draw the same values, so they
//! share answers, and a server that ignores `dimensions` fails as
//! "… shrunk in 8 steps to d=1: 200 with 256 values".

use crate::clauses::judging;
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings;
use crate::contracts::embeddings::facts::{Matryoshka, MatryoshkaEvidence};
use crate::contracts::embeddings::requests::{self, SENTENCE, body};
use crate::contracts::embeddings::settings;
use crate::declared::Matryoshka as DeclaredMatryoshka;
use crate::http::Exchange;
use crate::http::{Body, Probe, Reply, Validity};
use crate::property::{Case, Property};
use crate::session::{Fact, ProbeError, Session};
use crate::vectors::{SAME_EMBEDDING, cosine, norm, renormalised_prefix};
use crate::verdict::{Outcome, Verdict};
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("DIM-001", native_accepted),
        check!("DIM-002", exact_length),
        check!("DIM-003", matryoshka_prefix),
        check!("DIM-004", truncated_unit_length),
        check!("DIM-005", unhonourable_refused),
        check!("DIM-006", invalid_values_refused),
        check!("DIM-007", unhonourable_refusals_name_dimensions),
    ]
}

/// Tolerances, as stated in the catalogue.
const PREFIX_COSINE: f64 = 0.999;
const NORM_TOLERANCE: f64 = 0.001;

/// The property label of generated d values, shared by DIM-002 … DIM-004.
const GENERATED_D: &str = "dimensions-d";

/// The full (native) vector of the single-string probe.
struct Full {
    vector: Vec<f64>,
    exchange: Exchange,
}

/// The native vector, or a skip when the plain probe gave none (IN-001 judges that).
async fn full_vector(s: &Session) -> Result<Result<Full, Verdict>, ProbeError> {
    let reply = requests::single(s).await?;
    Ok(match super::vectors_or_verdict(&reply, 1) {
        Ok(vectors) => match vectors.into_iter().next().filter(|v| !v.is_empty()) {
            Some(vector) => Ok(Full {
                vector,
                exchange: reply.exchange.clone(),
            }),
            None => Err(Verdict::skip(
                "the plain probe gave an empty vector; see RESP-005",
            )),
        },
        Err(verdict) => Err(Verdict::skip(format!(
            "the native size is unknown: {} (see IN-001)",
            verdict.reason
        ))
        .with(&reply.exchange)),
    })
}

/// Declared support, or support detected from one request for half the native size;
/// learned once as the `matryoshka` fact and read from it afterwards.
async fn support(s: &Session, native: usize) -> Result<Matryoshka, ProbeError> {
    if let Some(known) = embeddings::learned(s).matryoshka {
        return Ok(known.value);
    }
    let fact = match settings::of(s).matryoshka {
        _ if native < 2 => {
            let plain = requests::single(s).await?;
            let because = MatryoshkaEvidence::NothingToTruncate { native };
            s.detected(
                Matryoshka {
                    honoured: false,
                    because,
                },
                &plain.exchange,
            )
        }
        declared @ (DeclaredMatryoshka::Yes | DeclaredMatryoshka::No) => Fact::declared(
            Matryoshka {
                honoured: declared == DeclaredMatryoshka::Yes,
                because: MatryoshkaEvidence::Declared,
            },
            "--matryoshka",
        ),
        DeclaredMatryoshka::Auto => {
            let d = native / 2;
            let reply = s.send(dimensions_probe(s, json!(d), native, None)).await?;
            s.detected(detected(&reply, d), &reply.exchange)
        }
    };
    let support = fact.value.clone();
    embeddings::learn(s, |facts| facts.matryoshka = Some(fact));
    Ok(support)
}

fn detected(reply: &Reply, d: usize) -> Matryoshka {
    let because = if reply.is_success() {
        MatryoshkaEvidence::Answered {
            d,
            got: first_length(reply),
        }
    } else {
        MatryoshkaEvidence::Refused {
            d,
            status: reply.status,
        }
    };
    Matryoshka {
        honoured: because == MatryoshkaEvidence::Answered { d, got: Some(d) },
        because,
    }
}

fn first_length(reply: &Reply) -> Option<usize> {
    reply.float_vectors().ok()?.first().map(Vec::len)
}

/// The single-string probe with `dimensions: d`. Values the server may be unable to
/// honour are client mistakes under the contract, marked so ERR-009 can name them;
/// `honoured` is the Matryoshka support, when known.
fn dimensions_probe(s: &Session, d: Value, native: usize, honoured: Option<bool>) -> Probe {
    let request = body(s, json!(SENTENCE), &[("dimensions", d.clone())]);
    match validity(&d, native, honoured) {
        Validity::Valid => requests::probe(request),
        Validity::Invalid(why) => requests::invalid(Body::Json(request), why),
        Validity::Either(why) => requests::either(request, why),
    }
}

fn validity(d: &Value, native: usize, honoured: Option<bool>) -> Validity {
    match d.as_u64().map(|d| d as usize) {
        Some(n) if n == native => Validity::Valid,
        Some(n) if n > native => {
            Validity::Invalid(format!("dimensions={n}, above the native size {native}"))
        }
        Some(n) if n >= 1 && honoured == Some(true) => Validity::Valid,
        Some(n) if n >= 1 => Validity::Invalid(format!(
            "dimensions={n}, below the native size {native}, without Matryoshka support"
        )),
        _ if d.is_null() => Validity::Either(
            "dimensions=null, which a server may refuse or read as absent".to_owned(),
        ),
        _ => Validity::Invalid(format!("dimensions={d} is not a positive integer")),
    }
}

/// DIM-001: "A request with dimensions equal to the native vector size is answered 200
/// or refused with a 4xx (the server's policy, given in the reason); never a 5xx."
///
/// OpenAI refuses `dimensions` on text-embedding-ada-002 and vLLM on a model without
/// Matryoshka support, so a refusal is a documented policy; the length of a 200 is
/// DIM-002's to judge.
async fn native_accepted(s: &Session) -> CheckResult {
    let native = match full_vector(s).await? {
        Ok(full) => full.vector.len(),
        Err(verdict) => return Ok(verdict),
    };
    let reply = s
        .send(dimensions_probe(s, json!(native), native, None))
        .await?;
    Ok(if reply.is_success() {
        Verdict::pass(format!("dimensions={native} (the native size) answered 200"))
    } else if reply.is_client_error() {
        Verdict::pass(format!(
            "dimensions={native} (the native size) refused with {}: the server's policy, as OpenAI's on text-embedding-ada-002; clients that always send dimensions must leave it unset here",
            reply.status
        ))
    } else {
        Verdict::fail(format!(
            "dimensions={native}, the native size, answered {}: answer it, or refuse it with a 4xx (a 5xx is retried as an outage)",
            reply.summary()
        ))
    }
    .with(&reply.exchange))
}

/// The exact-length property on one answer: only 200s are judged.
fn exact_length_case(reply: &Reply, d: usize) -> Case<Verdict> {
    if !reply.is_success() {
        return Case::Inapplicable;
    }
    let failure = match reply.float_vectors() {
        Err(why) => format!("200 without usable vectors: {why}"),
        Ok(vectors) => match vectors.iter().find(|v| v.len() != d) {
            Some(v) => format!("200 with {} values", v.len()),
            None => return Case::Holds,
        },
    };
    Case::Fails(Verdict::fail(failure).with(&reply.exchange))
}

/// DIM-002: "A 200 answer to a request with dimensions = d carries vectors of exactly d
/// values."
///
/// Judged on generated d in [1, native) first (a server that ignores `dimensions`
/// shrinks to d=1), then on the native size and on twice it (older vLLM slices
/// silently above the native size).
async fn exact_length(s: &Session) -> CheckResult {
    let native = match full_vector(s).await? {
        Ok(full) => full.vector.len(),
        Err(verdict) => return Ok(verdict),
    };
    let honoured = support(s, native).await?.honoured;
    let finding = Property::new(s.settings(), GENERATED_D)
        .check(&(1..native.max(2)), move |d| async move {
            let reply = s
                .send(dimensions_probe(s, json!(d), native, Some(honoured)))
                .await?;
            Ok::<_, ProbeError>(exact_length_case(&reply, d))
        })
        .await?;
    let (cases, generated_refused) = match finding.held(|d| format!("d={d}")) {
        Ok((cases, applicable)) => (cases, cases - applicable),
        Err(failed) => return Ok(failed),
    };
    let mut refused = Vec::new();
    if generated_refused > 0 {
        refused.push(format!("{generated_refused} generated"));
    }
    for d in [native, 2 * native] {
        let reply = s
            .send(dimensions_probe(s, json!(d), native, Some(honoured)))
            .await?;
        match exact_length_case(&reply, d) {
            Case::Fails(failure) => {
                return Ok(with_reason(failure, |why| format!("dimensions={d}: {why}")));
            }
            Case::Inapplicable => refused.push(format!("d={d}")),
            Case::Holds => {}
        }
    }
    Ok(Verdict::pass(format!(
        "every 200 had exactly d values ({cases} generated d < {native}, d={native}, d={}; refused: {})",
        2 * native,
        if refused.is_empty() {
            "none".to_owned()
        } else {
            refused.join(", ")
        }
    )))
}

/// Rewrites a verdict's reason, keeping its outcome and evidence.
fn with_reason(mut verdict: Verdict, reason: impl FnOnce(&str) -> String) -> Verdict {
    verdict.reason = reason(&verdict.reason);
    verdict
}

/// The truncated vector of a 200 with exactly d values; anything else is another
/// clause's business (refusals: DIM-005; wrong lengths: DIM-002).
fn truncated_vector(reply: &Reply, d: usize) -> Option<Vec<f64>> {
    if !reply.is_success() {
        return None;
    }
    reply
        .float_vectors()
        .ok()?
        .into_iter()
        .next()
        .filter(|v| v.len() == d)
}

/// The full vector of a server that honours Matryoshka sizes, or the verdict for a
/// clause about truncated vectors when there is none to judge.
async fn truncatable_full_vector(s: &Session) -> Result<Result<Full, Verdict>, ProbeError> {
    let full = match full_vector(s).await? {
        Ok(full) => full,
        Err(verdict) => return Ok(Err(verdict)),
    };
    let support = support(s, full.vector.len()).await?;
    Ok(if support.honoured {
        Ok(full)
    } else {
        Err(unsupported(&support))
    })
}

/// Skips a Matryoshka clause when there is no support to judge.
fn unsupported(support: &Matryoshka) -> Verdict {
    Verdict::skip(format!(
        "no Matryoshka support ({}); nothing is truncated",
        support.how()
    ))
}

/// One generated case of a truncated-vector clause: sends `dimensions = d` and lets
/// `judge` find what is wrong with the vector (None when it holds); a refusal is
/// judged by [`refused_case`].
async fn truncated_case(
    s: &Session,
    d: usize,
    native: usize,
    judge: impl FnOnce(&[f64], &Reply) -> Option<Verdict>,
) -> Result<Case<Verdict>, ProbeError> {
    let reply = s
        .send(dimensions_probe(s, json!(d), native, Some(true)))
        .await?;
    let declared = settings::of(s).matryoshka == DeclaredMatryoshka::Yes;
    Ok(match truncated_vector(&reply, d) {
        None => refused_case(&reply, declared),
        Some(v) => judge(&v, &reply).map_or(Case::Holds, Case::Fails),
    })
}

/// A refusal under `--matryoshka yes` fails: the user relies on every d in [1, native).
fn refused_case(reply: &Reply, declared: bool) -> Case<Verdict> {
    if declared && !reply.is_success() {
        Case::Fails(
            Verdict::fail(format!(
                "answered {} although --matryoshka yes was declared",
                reply.summary()
            ))
            .with(&reply.exchange),
        )
    } else {
        Case::Inapplicable
    }
}

/// DIM-003: "With Matryoshka support, the vector for dimensions = d (1 <= d < native)
/// has cosine similarity of at least 0.999 to the re-normalised first d components of
/// the full vector."
async fn matryoshka_prefix(s: &Session) -> CheckResult {
    let full = match truncatable_full_vector(s).await? {
        Ok(full) => full,
        Err(verdict) => return Ok(verdict),
    };
    let native = full.vector.len();
    let full = &full;
    let finding = Property::new(s.settings(), GENERATED_D)
        .check(&(1..native), move |d| {
            truncated_case(s, d, native, move |v, reply| {
                let similarity = cosine(&renormalised_prefix(&full.vector, d), v);
                (similarity < PREFIX_COSINE).then(|| {
                    Verdict::fail(format!(
                        "cosine {similarity:.6} to the re-normalised first {d} components of the full vector (< {PREFIX_COSINE})"
                    ))
                    .with(&reply.exchange)
                    .with(&full.exchange)
                })
            })
        })
        .await?;
    Ok(finding.into_verdict(
        |d| format!("d={d}"),
        |cases, applicable| match applicable {
            0 => Verdict::skip(format!(
                "all {cases} generated d were refused; the server honours only some sizes"
            )),
            _ => Verdict::pass(format!(
                "{applicable} of {cases} generated d < {native} match the re-normalised prefix of the full vector"
            )),
        },
    ))
}

/// DIM-004: "With Matryoshka support and unit-length full vectors, the vector for
/// dimensions = d has an L2 norm of 1 within 0.001."
async fn truncated_unit_length(s: &Session) -> CheckResult {
    let full = match truncatable_full_vector(s).await? {
        Ok(full) => full,
        Err(verdict) => return Ok(verdict),
    };
    let native = full.vector.len();
    let full_norm = norm(&full.vector);
    if (full_norm - 1.0).abs() > NORM_TOLERANCE {
        return Ok(Verdict::skip(format!(
            "full vectors have L2 norm {full_norm:.6}, not 1 (see CONS-003)"
        ))
        .with(&full.exchange));
    }
    let finding = Property::new(s.settings(), GENERATED_D)
        .check(&(1..native), move |d| {
            truncated_case(s, d, native, |v, reply| {
                let n = norm(v);
                ((n - 1.0).abs() > NORM_TOLERANCE).then(|| {
                    Verdict::fail(format!("L2 norm {n:.6}: the prefix was not re-normalised"))
                        .with(&reply.exchange)
                })
            })
        })
        .await?;
    Ok(finding.into_verdict(
        |d| format!("d={d}"),
        |cases, applicable| match applicable {
            0 => Verdict::skip(format!("all {cases} generated d were refused")),
            _ => Verdict::pass(format!(
                "{applicable} of {cases} generated truncated vectors have unit length"
            )),
        },
    ))
}

/// Why an answer to a `dimensions` the server cannot honour is not a 4xx.
fn unhonourable_answer(reply: &Reply) -> Result<(), String> {
    if reply.is_success() {
        let got = first_length(reply).map_or("no usable vectors".to_owned(), |len| {
            format!("{len} values")
        });
        return Err(format!("answered 200 with {got} instead of a 4xx"));
    }
    if !reply.is_client_error() {
        return Err(format!("answered {}, expected a 4xx", reply.summary()));
    }
    Ok(())
}

/// The answers to `dimensions` values the server cannot honour (twice the native size,
/// and half of it without Matryoshka support), each with what it asked, and the
/// support found; the verdict instead where there is no vector to size. DIM-005 and
/// DIM-007 judge the same answers (the session's cache sends each once).
async fn unhonourable_answers(
    s: &Session,
) -> Result<Result<(Vec<(String, Arc<Reply>)>, String), Verdict>, ProbeError> {
    let native = match full_vector(s).await? {
        Ok(full) => full.vector.len(),
        Err(verdict) => return Ok(Err(verdict)),
    };
    let support = support(s, native).await?;
    let mut values = vec![2 * native];
    if !support.honoured && native >= 2 {
        values.push(native / 2);
    }
    let mut answers = Vec::new();
    for d in values {
        let probe = dimensions_probe(s, json!(d), native, Some(support.honoured));
        let why = match &probe.validity {
            Validity::Invalid(why) | Validity::Either(why) => why.clone(),
            Validity::Valid => format!("dimensions={d}"),
        };
        answers.push((why, s.send(probe).await?));
    }
    Ok(Ok((answers, support.how())))
}

/// DIM-005: "dimensions the server cannot honour (above the native size, or below it
/// without Matryoshka support) is refused with a 4xx; never a 5xx or a 200." What the
/// refusal says is DIM-007's.
async fn unhonourable_refused(s: &Session) -> CheckResult {
    let (answers, how) = match unhonourable_answers(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let mut refused = Vec::new();
    for (why, reply) in &answers {
        if let Err(problem) = unhonourable_answer(reply) {
            return Ok(
                Verdict::fail(format!("{why} (Matryoshka: {how}): {problem}"))
                    .with(&reply.exchange),
            );
        }
        refused.push(format!("{why}: refused with {}", reply.status));
    }
    Ok(
        Verdict::pass(format!("{} (Matryoshka: {how})", refused.join("; ")))
            .with_all(answers.iter().map(|(_, r)| &r.exchange)),
    )
}

/// DIM-007: "A refusal of dimensions the server cannot honour names dimensions in its
/// message." A client's author learns which field to drop; no client reads it.
async fn unhonourable_refusals_name_dimensions(s: &Session) -> CheckResult {
    let (answers, how) = match unhonourable_answers(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let refused: Vec<&(String, Arc<Reply>)> = answers
        .iter()
        .filter(|(_, r)| r.is_client_error())
        .collect();
    if refused.is_empty() {
        return Ok(Verdict::skip(
            "no dimensions the server cannot honour was refused with a 4xx: no refusal to read (DIM-005 judges the answers)",
        ));
    }
    for (why, reply) in &refused {
        if let Err(problem) = judging::refused_naming(reply, "dimensions") {
            return Ok(
                Verdict::fail(format!("{why} (Matryoshka: {how}): {problem}"))
                    .with(&reply.exchange),
            );
        }
    }
    let named = match refused.len() {
        1 => "the refusal names dimensions".to_owned(),
        n => format!("all {n} refusals name dimensions"),
    };
    Ok(Verdict::pass(named).with_all(refused.iter().map(|(_, r)| &r.exchange)))
}

/// DIM-006: "dimensions given as 0, a negative number, a fractional number or a
/// string is refused with a 4xx; null is refused with a 4xx or read as absent (200 with
/// the vector of the same request without dimensions)."
///
/// Null for an optional field is how many clients spell "not given" (pydantic's
/// `Optional[int] = None`, serde's `Option`), and reading it so harms no one; what
/// would harm is a null that changes the vector or breaks the server.
async fn invalid_values_refused(s: &Session) -> CheckResult {
    let full = match full_vector(s).await? {
        Ok(full) => full,
        Err(verdict) => return Ok(verdict),
    };
    let native = full.vector.len();
    let values = [
        json!(0),
        json!(-1),
        json!(1.5),
        json!((native / 2).max(1).to_string()),
    ];
    let mistakes = values
        .into_iter()
        .map(|d| {
            (
                format!("dimensions={d}"),
                dimensions_probe(s, d, native, None),
            )
        })
        .collect();
    let refused =
        judging::expect_all_refused(s, mistakes, "0, -1, 1.5 and a string were refused with 4xx")
            .await?;
    if refused.outcome != Outcome::Pass {
        return Ok(refused);
    }
    let null = s
        .send(dimensions_probe(s, Value::Null, native, None))
        .await?;
    Ok(match null_answer(&null, &full) {
        Ok(how) => Verdict::pass(format!("{}; null {how}", refused.reason))
            .with_all(&refused.evidence)
            .with(&null.exchange),
        Err(why) => Verdict::fail(format!("dimensions=null {why}"))
            .with(&null.exchange)
            .with(&full.exchange),
    })
}

/// How a server took `dimensions: null`: refused, or read as absent; or why neither.
fn null_answer(reply: &Reply, full: &Full) -> Result<&'static str, String> {
    if reply.is_client_error() {
        return Ok("was refused too");
    }
    if !reply.is_success() {
        return Err(format!(
            "answered {}: refuse it with a 4xx or read it as absent",
            reply.summary()
        ));
    }
    let vector = match reply.float_vectors() {
        Ok(mut v) if v.len() == 1 => v.remove(0),
        _ => return Err("answered 200 without one usable vector".to_owned()),
    };
    if vector.len() != full.vector.len() {
        return Err(format!(
            "answered 200 with {} values where the request without dimensions has {}",
            vector.len(),
            full.vector.len()
        ));
    }
    let similarity = cosine(&vector, &full.vector);
    if similarity < SAME_EMBEDDING {
        return Err(format!(
            "answered 200 with another vector than the request without dimensions (cosine {similarity:.6})"
        ));
    }
    Ok("was read as absent (200, the same vector as without dimensions)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(v: Validity) -> bool {
        matches!(v, Validity::Invalid(_))
    }

    #[test]
    fn only_dimensions_a_server_can_honour_are_valid_probes() {
        assert_eq!(validity(&json!(256), 256, None), Validity::Valid);
        assert_eq!(validity(&json!(128), 256, Some(true)), Validity::Valid);
        assert!(invalid(validity(&json!(128), 256, None)));
        assert!(invalid(validity(&json!(128), 256, Some(false))));
        assert!(invalid(validity(&json!(512), 256, Some(true))));
        for bad in [json!(0), json!(-1), json!(1.5), json!("128")] {
            assert!(invalid(validity(&bad, 256, Some(true))), "{bad}");
        }
    }

    #[test]
    fn null_is_neither_valid_nor_a_client_mistake() {
        assert!(matches!(
            validity(&Value::Null, 256, Some(true)),
            Validity::Either(_)
        ));
    }
}
