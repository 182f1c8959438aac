//! The single-server part of `report.md`: settings, observations, verdicts, the client
//! profiles, then the evidence of each failure and the list of what was not verified.

use super::table::{code, fenced, table_row};
use crate::audit::{ClauseResult, Gate, ServerAudit};
use crate::http::Exchange;
use crate::report::Report;
use crate::report::text;
use crate::verdict::Outcome;
use std::fmt::Write;

/// The report of the run's subject server.
pub(super) fn render(report: &Report) -> String {
    let audit = report.subject();
    let mut doc = String::new();
    let _ = writeln!(doc, "# embedcheck report: {}", text::flat(&audit.label));
    settings(&mut doc, report, audit);
    observations(&mut doc, report, audit);
    verdicts(&mut doc, audit);
    clients(&mut doc, audit);
    failures(&mut doc, audit);
    unfinished(&mut doc, audit);
    doc
}

fn settings(doc: &mut String, report: &Report, audit: &ServerAudit) {
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
        ("Contract", report.contract.versions()),
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
    if let Some(line) = audit.unjudged_line() {
        let _ = writeln!(doc, "\n> **Incomplete:** {}", text::flat(&line));
    }
}

fn observations(doc: &mut String, report: &Report, audit: &ServerAudit) {
    doc.push_str("\n## Observations\n\n");
    let observations = text::observations(report, audit);
    if observations.is_empty() {
        doc.push_str("None recorded.\n");
        return;
    }
    doc.push_str("| Observation | Value |\n|---|---|\n");
    for (name, value) in &observations {
        table_row(doc, &[name, value]);
    }
}

fn verdicts(doc: &mut String, audit: &ServerAudit) {
    let _ = writeln!(
        doc,
        "\n## Verdicts\n\n{}.\n\n| ID | Family | Level | Outcome | Reason |\n|---|---|---|---|---|",
        text::outcome_counts(audit)
    );
    for result in &audit.results {
        let outcome = match result.outcome {
            // Bold so a new failure stands out in a long table.
            Outcome::Fail if result.gate != Gate::KnownFailure => "**fail**".to_owned(),
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

/// Each client's verdict in a table, then its reasons; the evidence of a client that
/// breaks, as a failure's.
fn clients(doc: &mut String, audit: &ServerAudit) {
    if audit.clients.is_empty() {
        return;
    }
    doc.push_str(
        "\n## Client profiles\n\nWhether each client, with its default settings, works against this server.\n\n| Client | Version | Works | Warnings |\n|---|---|---|---|\n",
    );
    for profile in &audit.clients {
        table_row(
            doc,
            &[
                profile.client.name(),
                profile.version,
                text::works_label(profile.works),
                &profile.warnings().to_string(),
            ],
        );
    }
    for profile in &audit.clients {
        let _ = writeln!(
            doc,
            "\n### {} {}: {}\n",
            profile.client.name(),
            profile.version,
            text::works_label(profile.works)
        );
        for reason in &profile.because {
            let _ = writeln!(doc, "- {}", text::flat(reason));
        }
        if profile.works == Some(false) && !profile.evidence.is_empty() {
            doc.push_str("\n**Evidence**\n");
            for exchange in &profile.evidence {
                evidence(doc, exchange);
            }
        }
    }
}

fn failures(doc: &mut String, audit: &ServerAudit) {
    let failed = with_outcomes(audit, &[Outcome::Fail]);
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
    if let Some(line) = &result.level_line {
        let _ = writeln!(doc, "\n**Level:** {}", text::flat(line));
    }
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
fn unfinished(doc: &mut String, audit: &ServerAudit) {
    let unfinished = with_outcomes(audit, &[Outcome::Inconclusive, Outcome::Skip]);
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

fn with_outcomes<'a>(audit: &'a ServerAudit, outcomes: &[Outcome]) -> Vec<&'a ClauseResult> {
    audit
        .results
        .iter()
        .filter(|r| outcomes.contains(&r.outcome))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn markdown_report_matches_snapshot() {
        let doc = super::super::render(&sample::report());
        sample::snapshots().bind(|| insta::assert_snapshot!("markdown", doc));
    }

    #[test]
    fn aborted_run_says_why_under_the_settings() {
        let mut report = sample::report();
        report.servers[0].aborted = Some("server unreachable".to_owned());
        assert!(render(&report).contains("> **Run aborted:** server unreachable\n"));
    }

    #[test]
    fn clean_run_has_no_failures_section() {
        let mut report = sample::report();
        report.servers[0]
            .results
            .retain(|r| r.outcome == Outcome::Pass);
        let doc = render(&report);
        assert!(!doc.contains("## Failures") && !doc.contains("## Inconclusive"));
    }
}
