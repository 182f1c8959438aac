//! `report.md`: the report a person pastes into a design doc or an issue.
//!
//! Settings and observations first, so a reader knows what was audited; then one
//! verdict row per clause in catalogue order; then, for each failure only, the evidence
//! and a curl command that reproduces it. Passing clauses carry no evidence here:
//! `report.json` has it for whoever needs it.
//!
//! ```markdown
//! # embedcheck report: staging
//! | Setting | Value |
//! …
//! | ID | Family | Level | Outcome | Reason |
//! | IN-003 | input | MUST | **fail** | token-id input rejected with 422 |
//! ## Failures
//! ### IN-003 (MUST): Token-id input
//! ```

use super::text;
use crate::model::{ClauseResult, Exchange, Outcome, Report};
use std::fmt::Write;

/// The whole Markdown document.
pub fn render(report: &Report) -> String {
    let mut doc = super::migration::render(report);
    let _ = writeln!(
        doc,
        "# embedcheck report: {}",
        text::flat(&report.audit.label)
    );
    settings(&mut doc, report);
    observations(&mut doc, report);
    verdicts(&mut doc, report);
    failures(&mut doc, report);
    unfinished(&mut doc, report);
    doc
}

fn settings(doc: &mut String, report: &Report) {
    let audit = &report.audit;
    let model = audit
        .model
        .as_deref()
        .map_or("(server default)".to_owned(), code);
    let rows = [
        ("Endpoint", code(&audit.endpoint)),
        ("Model", model),
        (
            "Tool",
            format!("{} {}", report.tool.name, report.tool.version),
        ),
        ("Seed", report.seed.to_string()),
        (
            "Strict",
            if report.strict { "yes" } else { "no" }.to_owned(),
        ),
        ("Requests sent", text::thousands(audit.requests_sent)),
        ("Tokens used", text::thousands(audit.tokens_used)),
        ("Wall time", text::seconds(audit.wall_seconds)),
    ];
    doc.push_str("\n## Settings\n\n| Setting | Value |\n|---|---|\n");
    for (name, value) in rows {
        table_row(doc, &[name, &value]);
    }
    if let Some(reason) = &audit.aborted {
        let _ = writeln!(doc, "\n> **Run aborted:** {}", text::flat(reason));
    }
}

fn observations(doc: &mut String, report: &Report) {
    doc.push_str("\n## Observations\n\n");
    if report.audit.observations.is_empty() {
        doc.push_str("None recorded.\n");
        return;
    }
    doc.push_str("| Observation | Value |\n|---|---|\n");
    for (name, value) in &report.audit.observations {
        table_row(doc, &[name, value]);
    }
}

fn verdicts(doc: &mut String, report: &Report) {
    let _ = writeln!(
        doc,
        "\n## Verdicts\n\n{}.\n\n| ID | Family | Level | Outcome | Reason |\n|---|---|---|---|---|",
        text::outcome_counts(report)
    );
    for result in &report.audit.results {
        let outcome = match result.outcome {
            // Bold so a new failure stands out in a long table.
            Outcome::Fail if !result.is_known_failure() => "**fail**".to_owned(),
            _ => text::outcome_label(result),
        };
        table_row(
            doc,
            &[
                &result.id,
                result.family.as_str(),
                &result.level.to_string(),
                &outcome,
                &result.reason,
            ],
        );
    }
}

fn failures(doc: &mut String, report: &Report) {
    let failed = with_outcomes(report, &[Outcome::Fail]);
    if failed.is_empty() {
        return;
    }
    doc.push_str("\n## Failures\n");
    for result in failed {
        failure(doc, result);
    }
}

fn failure(doc: &mut String, result: &ClauseResult) {
    let _ = writeln!(
        doc,
        "\n### {} ({}): {}\n\n> {}\n\n**Reason:** {}",
        result.id,
        result.level,
        text::flat(&result.title),
        text::flat(&result.statement),
        text::flat(&result.reason)
    );
    if !result.evidence.is_empty() {
        doc.push_str("\n**Evidence**\n");
        for exchange in &result.evidence {
            evidence(doc, exchange);
        }
    }
    if let Some(curl) = &result.curl {
        let _ = write!(doc, "\n**Reproduce**\n\n{}", fenced("sh", curl));
    }
}

fn evidence(doc: &mut String, exchange: &Exchange) {
    let _ = writeln!(doc, "\n- `{}`", text::exchange_line(exchange));
    let bodies = [
        ("Request", &exchange.request_body),
        ("Response", &exchange.response_body),
    ];
    for (name, body) in bodies {
        if let Some(body) = body {
            // Indented to stay inside the list item.
            let block = fenced("", body).replace('\n', "\n  ");
            let _ = writeln!(doc, "\n  {name}:\n\n  {}", block.trim_end());
        }
    }
}

/// Skips and inconclusives, listed with their reasons: neither is a failure, but a
/// reader must see what was not verified.
fn unfinished(doc: &mut String, report: &Report) {
    let unfinished = with_outcomes(report, &[Outcome::Inconclusive, Outcome::Skip]);
    if unfinished.is_empty() {
        return;
    }
    doc.push_str("\n## Inconclusive and skipped\n\n");
    for result in unfinished {
        let _ = writeln!(
            doc,
            "- **{}** ({}): {}",
            result.id,
            result.outcome.as_str(),
            text::flat(&result.reason)
        );
    }
}

fn with_outcomes<'a>(report: &'a Report, outcomes: &[Outcome]) -> Vec<&'a ClauseResult> {
    report
        .audit
        .results
        .iter()
        .filter(|r| outcomes.contains(&r.outcome))
        .collect()
}

pub(super) fn table_row(doc: &mut String, cells: &[&str]) {
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    let _ = writeln!(doc, "| {} |", cells.join(" | "));
}

/// A table cell: a `|` would end the cell and a newline the row.
pub(super) fn cell(text: &str) -> String {
    text.trim()
        .replace('|', r"\|")
        .replace("\r\n", "<br>")
        .replace('\n', "<br>")
}

/// Inline code; the value is short and single-line (an URL, a model name).
pub(super) fn code(text: &str) -> String {
    format!("`{text}`")
}

/// A fenced block whose fence is longer than any backtick run inside, so a server
/// that answers with Markdown cannot close the block early.
fn fenced(lang: &str, body: &str) -> String {
    let longest_run = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}\n", body.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn markdown_report_matches_snapshot() {
        let doc = render(&sample::report());
        sample::snapshots().bind(|| insta::assert_snapshot!("markdown", doc));
    }

    #[test]
    fn table_cells_escape_pipes_and_newlines() {
        assert_eq!(cell("a | b\nc"), r"a \| b<br>c");
    }

    #[test]
    fn fence_outgrows_backticks_in_the_body() {
        assert_eq!(fenced("", "x ```` y"), "`````\nx ```` y\n`````\n");
        assert_eq!(fenced("sh", "curl"), "```sh\ncurl\n```\n");
    }

    #[test]
    fn aborted_run_says_why_under_the_settings() {
        let mut report = sample::report();
        report.audit.aborted = Some("server unreachable".to_owned());
        assert!(render(&report).contains("> **Run aborted:** server unreachable\n"));
    }

    #[test]
    fn clean_run_has_no_failures_section() {
        let mut report = sample::report();
        report.audit.results.retain(|r| r.outcome == Outcome::Pass);
        let doc = render(&report);
        assert!(!doc.contains("## Failures") && !doc.contains("## Inconclusive"));
    }
}
