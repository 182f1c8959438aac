//! rerank-dialects: what a rerank dialect documents beyond Cohere's (RRD-001 … RRD-003).
//!
//! TEI's, NVIDIA NIM's and Voyage's dialects each document switches Cohere's lacks (a
//! raw-score switch, a truncation switch) and TEI an error body of its own. Their
//! clients send those switches and read that body, so a server speaking the dialect is
//! held to them. A clause skips, saying so, on a server of a dialect that documents no
//! such thing (every one of them on a Cohere-dialect server).

use super::limits::{empty_list_probe, long_document_probe, many_documents_probe};
use super::scores::{BOUND, largest_difference, scale_of, scores, span};
use super::shape::answered;
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::rerank::facts::ScoreScale;
use crate::contracts::rerank::reply::{ErrorBody, RerankDialect, TruncationSwitch};
use crate::contracts::rerank::requests::{self as rerank, DOCUMENTS, QUERY};
use crate::http::Reply;
use crate::session::Session;
use crate::verdict::Verdict;
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("RRD-001", raw_scores_on_request),
        check!("RRD-002", truncation_switch_honoured),
        check!("RRD-003", errors_in_the_dialects_body),
    ]
}

/// A failure of this family: its reasons are about the dialect by construction, so the
/// runner adds no "judged in …" note.
fn failed(reason: String) -> Verdict {
    Verdict::fail(reason).naming_its_dialect()
}

/// Why a clause of this family has nothing to judge in `dialect`: `no meaning in
/// Cohere's rerank dialect, which documents no raw-score switch`.
fn no_meaning(dialect: RerankDialect, documents_no: &str) -> Verdict {
    Verdict::skip(format!(
        "no meaning in {} rerank dialect, which documents no {documents_no}",
        dialect.described()
    ))
}

/// RRD-001: "Where the dialect documents a raw-score switch (TEI's `raw_scores`), the
/// canonical request sent with it on is answered 200 with each document's logit: its
/// sigmoid within 0.01 of the document's default score (or the default scores
/// themselves where those are logits already)."
async fn raw_scores_on_request(s: &Session) -> CheckResult {
    let (route, plain, answer) = match answered(s).await? {
        Ok(found) => found,
        Err(verdict) => return Ok(verdict),
    };
    let dialect = rerank::dialect(s);
    let Some(switch) = dialect.raw_scores_switch() else {
        return Ok(no_meaning(dialect, "raw-score switch"));
    };
    let Ok(default) = answer.all_scores(DOCUMENTS.len()) else {
        return Ok(Verdict::skip(
            "the canonical request's scores cannot be read (see RRS-002)",
        ));
    };
    let body = rerank::body(s, QUERY, json!(DOCUMENTS), &[(switch, json!(true))]);
    let reply = s.send(rerank::probe(route, body)).await?;
    let evidence = [&plain.exchange, &reply.exchange];
    let verdict = match scores(&reply, DOCUMENTS.len()) {
        Some(raw) => judge_raw(switch, dialect, &default, &raw),
        None => failed(format!(
            "{switch}: true answered {}, no score for each of {} documents: {} dialect documents it, and its clients send it (Haystack's TEI ranker)",
            reply.summary(),
            DOCUMENTS.len(),
            dialect.described()
        )),
    };
    Ok(verdict.with_all(evidence))
}

/// RRD-001's judgement of the scores answered with the switch on (`raw`) against the
/// default ones, document by document.
fn judge_raw(switch: &str, dialect: RerankDialect, default: &[f64], raw: &[f64]) -> Verdict {
    let sigmoids: Vec<f64> = raw.iter().map(|x| 1.0 / (1.0 + (-x).exp())).collect();
    let through_sigmoid = largest_difference(&sigmoids, default);
    let unchanged = largest_difference(raw, default);
    let range = span(raw);
    if through_sigmoid <= BOUND {
        return Verdict::pass(format!(
            "{switch}: true answered logits {range}, whose sigmoids are the default scores within {through_sigmoid:.1e}"
        ));
    }
    if unchanged <= BOUND && scale_of(default) == ScoreScale::Logit {
        return Verdict::pass(format!(
            "{switch}: true answered the default's logits {range} (the default's scale is RRQ-005's)"
        ));
    }
    if unchanged <= BOUND {
        return failed(format!(
            "{switch}: true ignored: the same scores {range} as without it, where {} dialect documents raw logits; a client asking for logits gets probabilities",
            dialect.described()
        ));
    }
    failed(format!(
        "{switch}: true answered {range}, whose sigmoids differ from the default scores {} by up to {through_sigmoid:.4}: raw scores that are not the default's logits",
        span(default)
    ))
}

/// The documents in RRD-002's request.
const LONG_REQUEST_DOCUMENTS: usize = 3;

/// RRD-002: "Where the dialect documents a truncation switch (TEI's `truncate`, NIM's
/// `truncate: END | NONE`, Voyage's `truncation`), a document of 10,000 words sent with
/// the switch on is answered 200 with a score for every document; sent with it off, it
/// is refused with a 4xx where the server refused it by default (RRL-004), and never
/// answered with a 5xx."
async fn truncation_switch_honoured(s: &Session) -> CheckResult {
    let route = match answered(s).await? {
        Ok((route, _, _)) => route,
        Err(verdict) => return Ok(verdict),
    };
    let dialect = rerank::dialect(s);
    let Some(switch) = dialect.truncation_switch() else {
        return Ok(no_meaning(
            dialect,
            "truncation switch (RRL-004 judges long inputs)",
        ));
    };
    let cut = s
        .send(long_document_probe(
            s,
            route,
            Some((switch.field, &switch.cut)),
        ))
        .await?;
    let refused = s
        .send(long_document_probe(
            s,
            route,
            Some((switch.field, &switch.refuse)),
        ))
        .await?;
    // RRL-004's request without the switch (the session's cache answers it): refused,
    // the document is over the model's limit, and a 200 with the switch off is a cut the
    // client asked not to have. (A refused long query says less: a server may cap
    // queries below its window.)
    let default = s.send(long_document_probe(s, route, None)).await?;
    let default_refused = default.is_client_error();
    let verdict = judge_switch(&switch, dialect, &cut, &refused, default_refused);
    let verdict = verdict.with_all([&cut.exchange, &refused.exchange]);
    Ok(if default_refused && !refused.is_client_error() {
        verdict.with(&default.exchange)
    } else {
        verdict
    })
}

/// RRD-002's judgement of the answers with the switch on (`cut`) and off (`refused`).
fn judge_switch(
    switch: &TruncationSwitch,
    dialect: RerankDialect,
    cut: &Reply,
    refused: &Reply,
    default_refused: bool,
) -> Verdict {
    let (on, off) = (switch.cutting(), switch.refusing());
    let documented = format!("{} dialect documents the switch", dialect.described());
    if !cut.is_success() {
        return failed(format!(
            "{on} answered {}: a client asking for the cut gets no ranking; {documented}",
            cut.summary()
        ));
    }
    if scores(cut, LONG_REQUEST_DOCUMENTS).is_none() {
        return failed(format!(
            "{on} answered 200 without a score for each of {LONG_REQUEST_DOCUMENTS} documents"
        ));
    }
    if refused.is_server_error() {
        return failed(format!(
            "{off} answered {}: refuse a pair over the limit with a 4xx (a 5xx is retried)",
            refused.summary()
        ));
    }
    match (refused.is_client_error(), default_refused) {
        (true, _) => Verdict::pass(format!(
            "{on}: {LONG_REQUEST_DOCUMENTS} documents scored (200); {off}: refused with {}",
            refused.status
        )),
        (false, true) => failed(format!(
            "{off} answered {} where the same document without the switch was refused: the pair was cut though the client asked for an error; {documented}",
            refused.summary()
        )),
        (false, false) => Verdict::pass(format!(
            "{on}: {LONG_REQUEST_DOCUMENTS} documents scored (200); {off} answered {} too, as without the switch (the document may fit this model: that side is not judged)",
            refused.status
        )),
    }
}

/// RRD-003: "Where the dialect has its own error body (TEI's `{error, error_type}`,
/// Voyage's `{detail}`), each field a string, the refusals its handler makes (an empty list, a document over the
/// limit with the truncation switch off, 1000 documents) carry that body."
async fn errors_in_the_dialects_body(s: &Session) -> CheckResult {
    let route = match answered(s).await? {
        Ok((route, _, _)) => route,
        Err(verdict) => return Ok(verdict),
    };
    let dialect = rerank::dialect(s);
    let Some(body) = dialect.error_body() else {
        return Ok(no_meaning(
            dialect,
            "error body of its own (RRL-006 judges refusals)",
        ));
    };
    let mut probes = vec![
        ("an empty list", empty_list_probe(s, route)),
        ("1000 documents", many_documents_probe(s, route)),
    ];
    if let Some(switch) = dialect.truncation_switch() {
        let probe = long_document_probe(s, route, Some((switch.field, &switch.refuse)));
        probes.insert(1, ("a long document with the switch off", probe));
    }
    let mut refusals: Vec<(&str, Arc<Reply>)> = Vec::new();
    for (what, probe) in probes {
        let reply = s.send(probe).await?;
        if reply.is_client_error() {
            refusals.push((what, reply));
        }
    }
    Ok(judge_error_bodies(dialect, body, &refusals))
}

/// RRD-003's judgement of the refusals, each named by what it refused.
fn judge_error_bodies(
    dialect: RerankDialect,
    body: ErrorBody,
    refusals: &[(&str, Arc<Reply>)],
) -> Verdict {
    let shape = format!("{{{}}}", body.fields.join(", "));
    if refusals.is_empty() {
        return Verdict::skip(
            "nothing the dialect's handler refuses was refused (an empty list, a long document, 1000 documents): no error body to judge",
        );
    }
    let carries = |reply: &Reply| {
        let json = reply.json.as_ref();
        body.fields
            .iter()
            .all(|f| json.and_then(|j| j.get(*f)).is_some_and(Value::is_string))
    };
    let wrong: Vec<&(&str, Arc<Reply>)> = refusals.iter().filter(|(_, r)| !carries(r)).collect();
    let evidence = refusals.iter().map(|(_, r)| &r.exchange);
    if wrong.is_empty() {
        let said: Vec<String> = refusals
            .iter()
            .map(|(what, r)| format!("{what} {}", r.status))
            .collect();
        return Verdict::pass(format!(
            "{} refusals ({}) each carry {} {shape}",
            refusals.len(),
            said.join(", "),
            dialect.described()
        ))
        .with_all(evidence);
    }
    let said: Vec<String> = wrong
        .iter()
        .map(|(what, r)| format!("{what} refused {} with {}", r.status, outline(r)))
        .collect();
    failed(format!(
        "{}: not {} {shape}, each a string, which its clients read ({})",
        said.join("; "),
        dialect.described(),
        body.read_by
    ))
    .with_all(wrong.iter().map(|(_, r)| &r.exchange))
}

/// An error body's outline, its top-level fields and their kinds: `{error: object}`,
/// `plain text`.
fn outline(reply: &Reply) -> String {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    match &reply.json {
        Some(Value::Object(fields)) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k}: {}", kind(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Some(other) => format!("a JSON {}", kind(other)),
        None if reply.body.is_empty() => "an empty body".to_owned(),
        None => "plain text".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_scores_are_the_defaults_logits_or_the_switch_is_ignored() {
        let default = [0.9820, 0.0180, 0.5];
        let logits: Vec<f64> = default.iter().map(|p: &f64| (p / (1.0 - p)).ln()).collect();
        let tei = RerankDialect::Tei;
        let verdict = judge_raw("raw_scores", tei, &default, &logits);
        assert_eq!(
            verdict.outcome,
            crate::verdict::Outcome::Pass,
            "{}",
            verdict.reason
        );
        let verdict = judge_raw("raw_scores", tei, &default, &default);
        assert_eq!(verdict.outcome, crate::verdict::Outcome::Fail);
        assert!(verdict.reason.contains("ignored"), "{}", verdict.reason);
        // Logits by default: the same logits with the switch on are right.
        let verdict = judge_raw("raw_scores", tei, &logits, &logits);
        assert_eq!(
            verdict.outcome,
            crate::verdict::Outcome::Pass,
            "{}",
            verdict.reason
        );
        let shifted: Vec<f64> = logits.iter().map(|x| x + 1.0).collect();
        let verdict = judge_raw("raw_scores", tei, &default, &shifted);
        assert_eq!(verdict.outcome, crate::verdict::Outcome::Fail);
        assert!(
            verdict.reason.contains("not the default's logits"),
            "{}",
            verdict.reason
        );
    }
}
