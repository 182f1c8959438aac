//! Wording shared by the human-readable formats, so the terminal and `report.md` never
//! count or phrase the same run differently.

use crate::audit::{ClauseResult, Gate, ServerAudit};
use crate::catalogue::Level;
use crate::expectations::ExpectedOutcome;
use crate::http::Exchange;
use crate::report::Report;
use crate::verdict::Outcome;
use std::collections::BTreeMap;

/// `1234567` → `1,234,567`: token counts are read at a glance, not parsed.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Wall time to a tenth of a second: finer digits are noise between runs.
pub(crate) fn seconds(wall_seconds: f64) -> String {
    format!("{wall_seconds:.1} s")
}

/// `4 clauses — 1 pass, 1 fail (1 MUST), 1 skip, 1 inconclusive`.
///
/// Outcomes are bare words ("pass", not "passed") on purpose: CI scripts grep for
/// libtest's "N passed; N failed" summary, and ours must never be mistaken for it.
pub(crate) fn outcome_counts(audit: &ServerAudit) -> String {
    let must_failures = audit
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail && r.level == Level::Must)
        .count();
    format!(
        "{} clauses — {} pass, {} fail ({must_failures} MUST), {} skip, {} inconclusive{}",
        audit.results.len(),
        audit.count(Outcome::Pass),
        audit.count(Outcome::Fail),
        audit.count(Outcome::Skip),
        audit.count(Outcome::Inconclusive),
        expectation_counts(audit),
    )
}

/// The outcome word, qualified by the known-failures file: `fail (known)` for an
/// expected failure, `fail (documented)` for one the vendor's profile documents,
/// `pass (expected fail)` when one stopped failing.
pub(crate) fn outcome_label(result: &ClauseResult) -> String {
    if result.not_scored.is_some() {
        return format!("{} (not scored)", result.outcome.as_str());
    }
    match &result.expectation {
        Some(m) if m.as_expected && result.outcome == Outcome::Fail => {
            match (&m.expectation.documented_by, m.expectation.expect) {
                (Some(_), _) => "fail (documented)".to_owned(),
                (None, ExpectedOutcome::Flaky) => "fail (flaky)".to_owned(),
                (None, _) => "fail (known)".to_owned(),
            }
        }
        Some(m) if !m.as_expected => format!(
            "{} (expected {})",
            result.outcome.as_str(),
            m.expectation.expect.as_str()
        ),
        _ => result.outcome.as_str().to_owned(),
    }
}

/// `; 2 known failures, 1 documented by the vendor, 1 not as expected`, or nothing
/// without a known-failures file or vendor profile.
pub(crate) fn expectation_counts(audit: &ServerAudit) -> String {
    if audit.results.iter().all(|r| r.expectation.is_none()) {
        return String::new();
    }
    let documented = audit
        .results
        .iter()
        .filter(|r| r.gate == Gate::KnownFailure)
        .filter(|r| {
            r.expectation
                .as_ref()
                .is_some_and(|m| m.expectation.documented_by.is_some())
        })
        .count();
    let known = audit.gated(Gate::KnownFailure) - documented;
    let documented = match documented {
        0 => String::new(),
        n => format!(", {n} documented by the vendor"),
    };
    format!(
        "; {known} known failures{documented}, {} not as expected",
        audit.gated(Gate::NotAsExpected)
    )
}

/// The observations a report shows for `audit`: its facts, one line each, and what
/// the run's behaviour snapshots found.
pub fn observations(report: &Report, audit: &ServerAudit) -> BTreeMap<String, String> {
    let mut lines = crate::contracts::observations(&audit.facts);
    if let Some(snapshots) = &report.behaviour_snapshots {
        lines.insert("behaviour_snapshots".to_owned(), snapshots.clone());
    }
    lines
}

/// A client profile's verdict as a word: `works`, `breaks`, or `unknown`.
pub(crate) fn works_label(works: Option<bool>) -> &'static str {
    match works {
        Some(true) => "works",
        Some(false) => "breaks",
        None => "unknown",
    }
}

/// `POST /v1/embeddings → 422 (7 ms)`, or `→ no response` with the transport error.
pub(crate) fn exchange_line(exchange: &Exchange) -> String {
    let status = match (exchange.status, &exchange.transport_error) {
        (Some(status), _) => status.to_string(),
        (None, Some(error)) => format!("no response: {error}"),
        (None, None) => "no response".to_owned(),
    };
    format!(
        "{} {} → {status} ({} ms)",
        exchange.method, exchange.path, exchange.millis
    )
}

/// `text` on one line, runs of whitespace as one space: a reason or statement must
/// not break the table row, list item or XML attribute it is shown in.
pub(crate) fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first `max` characters of [`flat`] `text`, with `…` when cut.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let flat = flat(text);
    match flat.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &flat[..end]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    cases! { thousands_groups_digits_by_three:
        zero_has_no_group => (0, "0"),
        three_digits_have_no_group => (999, "999"),
        four_digits_have_one_group => (1000, "1,000"),
        five_digits_have_one_group => (56789, "56,789"),
        seven_digits_have_two_groups => (1234567, "1,234,567"),
    }

    fn thousands_groups_digits_by_three(n: u64, expected: &str) {
        assert_eq!(thousands(n), expected);
    }

    #[test]
    fn one_line_flattens_and_cuts_on_char_boundaries() {
        assert_eq!(one_line("a\nb  c", 10), "a b c");
        assert_eq!(one_line("éééé", 2), "éé…");
        assert_eq!(one_line("abc", 3), "abc");
    }

    #[test]
    fn exchange_without_answer_names_the_transport_error() {
        let exchange = Exchange {
            method: "POST".to_owned(),
            path: "/v1/embeddings".to_owned(),
            request_body: None,
            status: None,
            response_body: None,
            millis: 30000,
            transport_error: Some("timed out".to_owned()),
            curl: String::new(),
        };
        assert_eq!(
            exchange_line(&exchange),
            "POST /v1/embeddings → no response: timed out (30000 ms)"
        );
    }
}
