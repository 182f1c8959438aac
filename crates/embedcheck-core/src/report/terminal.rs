//! The summary printed at the end of a run: one aligned row per clause, failures first,
//! then a single totals line.
//!
//! ```text
//! ID        LEVEL   OUTCOME       REASON
//! IN-003    MUST    fail          token-id input rejected with 422
//!                                 MUST: RFC 9110 §15.5/§15.6 (an input form the server will not …
//! DIM-002   SHOULD  fail*         `dimensions` ignored: got 384 values, asked for 256
//! RESP-001  MUST    pass          response matches the schema
//!
//! * fails the run only with --strict
//! client openai-python 3.57.0     works   one sentence: base64 float32 strings, decoded to the float vectors …
//! client langchain-openai 1.7.4   breaks  "hello world" as cl100k token ids [15339, 1917] (what LangChain sends…
//! embedcheck: 3 clauses — 1 pass, 2 fail (1 MUST), 0 skip, 0 inconclusive; 64 requests, 1,234 tokens, 2.1 s
//! ```
//!
//! The totals line deliberately avoids libtest's "N passed; N failed" wording: CI scripts
//! grep for it, and when the suite runs under `cargo test` cargo's own line must stay
//! the one they find.

use super::text;
use crate::audit::{ClauseResult, Gate, ServerAudit};
use crate::report::{ContractScore, Report};
use crate::verdict::Outcome;
use std::fmt::Write;

/// Reasons longer than this are cut: the full text is in `report.md` and `report.json`.
const REASON_WIDTH: usize = 90;

/// The width of the longest usual outcome word, `inconclusive`.
const OUTCOME_WIDTH: usize = 12;

/// The table and totals line. Failures that do not fail the run (their gate says
/// tolerated) are marked with `*`, so a reader sees why a red table can still exit 0.
pub fn render(report: &Report) -> String {
    let audit = report.subject();
    let results = failures_first(&audit.results);
    let id_width = results.iter().map(|r| r.id.len()).max().unwrap_or(0).max(2);
    let outcome_width = results
        .iter()
        .map(|r| outcome(r).chars().count())
        .max()
        .unwrap_or(0)
        .max(OUTCOME_WIDTH);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<id_width$}  {:<6}  {:<outcome_width$}  REASON",
        "ID", "LEVEL", "OUTCOME"
    );
    for result in &results {
        let _ = writeln!(
            out,
            "{:<id_width$}  {:<6}  {:<outcome_width$}  {}",
            result.id,
            // `Level`'s `Display` ignores width, so pad its text instead.
            result.level.to_string(),
            outcome(result),
            text::one_line(&result.reason, REASON_WIDTH)
        );
        if let Some(line) = level_line(result) {
            let indent = id_width + 2 + 6 + 2 + outcome_width + 2;
            let _ = writeln!(out, "{:indent$}{}", "", text::one_line(line, REASON_WIDTH));
        }
    }
    out.push('\n');
    if results.iter().any(|r| r.gate == Gate::Tolerated) {
        out.push_str("* fails the run only with --strict\n");
    }
    if let Some(reason) = &audit.aborted {
        let _ = writeln!(out, "aborted: {}", text::one_line(reason, REASON_WIDTH));
    }
    if let Some(line) = audit.unjudged_line() {
        let _ = writeln!(out, "incomplete: {line}");
    }
    clients(&mut out, audit);
    let _ = writeln!(out, "{}", totals(audit, &report.contract));
    if let Some(line) = migration_line(report) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(replay) = &report.replay {
        let _ = writeln!(out, "{}", replay.line());
    }
    out
}

/// The level's evidence shown under a failure, so a server author reads at once why
/// it is a MUST (or a SHOULD).
fn level_line(result: &ClauseResult) -> Option<&str> {
    (result.outcome == Outcome::Fail)
        .then_some(result.level_line.as_deref())
        .flatten()
}

/// `migration: old → new: vectors equivalent (cosine min 0.9996); 4 of 6 expectations
/// broken; top hit changed for 0 of 14 queries; 5 client changes (see report.md)`.
fn migration_line(report: &Report) -> Option<String> {
    use crate::migration::contract::Judgement;
    let view = report.migration()?;
    let m = view.migration;
    let v = &m.vector_equivalence;
    let vectors = match (v.equivalent, v.cosine_min) {
        (true, Some(min)) => format!("vectors equivalent (cosine min {min:.4})"),
        (false, Some(min)) => format!("vectors differ (cosine min {min:.4})"),
        (_, None) => "vectors not compared".to_owned(),
    };
    let broken = m
        .contract
        .iter()
        .filter(|e| e.judgement == Judgement::Broken)
        .count();
    let ranking = m
        .retrieval
        .scenario(m.retrieval.migrated)
        .and_then(|s| {
            Some((
                s.versus_reference.as_ref()?.top_hit_changed.len(),
                s.queries.len(),
            ))
        })
        .map_or("rankings not compared".to_owned(), |(changed, n)| {
            format!("top hit changed for {changed} of {n} queries")
        });
    Some(format!(
        "migration: {} → {}: {vectors}; {broken} of {} expectations broken; {ranking}; {} client changes (see report.md); {} requests in all",
        view.baseline.label,
        view.candidate.label,
        m.contract.len(),
        m.remediation.len(),
        text::thousands(view.requests_sent()),
    ))
}

/// One line per client profile: the verdict and the reason that weighs most.
fn clients(out: &mut String, audit: &ServerAudit) {
    let names: Vec<String> = audit
        .clients
        .iter()
        .map(|p| format!("{} {}", p.client.name(), p.version))
        .collect();
    let width = names.iter().map(String::len).max().unwrap_or(0);
    for (profile, name) in audit.clients.iter().zip(&names) {
        // Reasons are sorted by weight: a working client's first one is a warning
        // when it has any.
        let first = profile.because.first().map_or("", String::as_str);
        let shown = match (profile.works, profile.warnings()) {
            (Some(true), 0) => first.to_owned(),
            (Some(true), 1) => format!("1 warning: {first}"),
            (Some(true), n) => format!("{n} warnings, first: {first}"),
            _ => first.to_owned(),
        };
        let _ = writeln!(
            out,
            "client {name:<width$}  {:<7} {}",
            text::works_label(profile.works),
            text::one_line(&shown, REASON_WIDTH)
        );
    }
}

/// Failures lead because they are what a reader acts on; the rest keep catalogue order.
fn failures_first(results: &[ClauseResult]) -> Vec<&ClauseResult> {
    let (mut first, rest): (Vec<_>, Vec<_>) =
        results.iter().partition(|r| r.outcome == Outcome::Fail);
    first.extend(rest);
    first
}

/// The outcome word, starred when the failure is tolerated (a known failure says so
/// in its label instead).
fn outcome(result: &ClauseResult) -> String {
    let marker = if result.gate == Gate::Tolerated {
        "*"
    } else {
        ""
    };
    format!("{}{marker}", text::outcome_label(result))
}

/// `embedcheck: 4 clauses — …; 64 requests, 1,234 tokens, 2.1 s; contract 1.2`.
fn totals(audit: &ServerAudit, contract: &ContractScore) -> String {
    format!(
        "embedcheck: {}; {} requests, {} tokens, {}; {}",
        text::outcome_counts(audit),
        text::thousands(audit.requests_sent),
        text::thousands(audit.tokens_used),
        text::seconds(audit.wall_seconds),
        contract.line()
    )
}

/// Everything a server author needs about one failed clause, for libtest's failure
/// section: the clause, the reason, each exchange with its bodies, the reproducer.
pub fn failure_detail(result: &ClauseResult) -> String {
    let mut lines = vec![
        format!(
            "{} {} ({}): {}",
            result.level, result.id, result.title, result.reason
        ),
        format!("  clause: {}", result.statement),
    ];
    for exchange in &result.evidence {
        lines.push(format!("  evidence: {}", text::exchange_line(exchange)));
        if let Some(body) = &exchange.request_body {
            lines.push(format!("    sent: {body}"));
        }
        if let Some(body) = &exchange.response_body {
            lines.push(format!("    got:  {body}"));
        }
    }
    if let Some(curl) = &result.curl {
        lines.push(format!("  reproduce: {curl}"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Level;
    use crate::report::sample;

    #[test]
    fn known_failures_are_labelled_and_never_starred() {
        let file = "[IN-003]\nexpect = \"fail\"\nreason = \"tracked upstream\"\n";
        let path = std::path::Path::new("x.toml");
        let expectations = crate::expectations::Expectations::parse(file, path).unwrap();
        let out = render(&sample::judged_with(
            vec![sample::audit()],
            &expectations,
            true,
        ));
        assert!(out.contains("fail (known)"), "{out}");
        assert!(out.contains("1 known failures, 0 not as expected"), "{out}");
    }

    #[test]
    fn terminal_summary_matches_snapshot() {
        let out = render(&sample::report());
        sample::snapshots().bind(|| insta::assert_snapshot!("terminal", out));
    }

    /// CI greps for libtest's summary form; our totals line must never match it.
    #[test]
    fn totals_line_is_not_mistaken_for_a_libtest_summary() {
        let out = render(&sample::report());
        for line in out.lines() {
            assert!(
                !line.contains(" passed") && !line.contains(" failed"),
                "{line}"
            );
        }
    }

    cases! { should_failure_is_marked_tolerated_only_without_strict:
        a_should_failure_is_tolerated_without_strict => (false, "fail*"),
        a_should_failure_fails_with_strict => (true, "fail "),
    }

    fn should_failure_is_marked_tolerated_only_without_strict(strict: bool, shown: &str) {
        let mut audit = sample::audit();
        for result in &mut audit.results {
            result.level = Level::Should;
        }
        let out = render(&sample::judged(vec![audit], strict));
        let row = out.lines().find(|l| l.starts_with("IN-003")).unwrap();
        assert!(row.contains(shown), "{row}");
        assert_eq!(out.contains("* fails the run only with --strict"), !strict);
    }

    #[test]
    fn long_reasons_are_cut() {
        let mut report = sample::report();
        report.servers[0].results[0].reason = "x".repeat(200);
        let out = render(&report);
        let row = out.lines().find(|l| l.starts_with("RESP-001")).unwrap();
        assert!(
            row.ends_with(&format!("{}…", "x".repeat(REASON_WIDTH))),
            "{row}"
        );
    }
}
