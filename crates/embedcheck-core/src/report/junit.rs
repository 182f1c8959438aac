//! `junit.xml`: one test case per clause, for CI dashboards.
//!
//! A case per clause (never one per family) so a dashboard tracks each clause's
//! history. Skips and inconclusives are both JUnit "skipped": neither is a server
//! failure, and a flaky network must not turn a CI run red; the message says which.
//! The XML is produced by `quick-junit`, so escaping is never hand-rolled.
//!
//! ```xml
//! <testsuite name="staging" tests="4" failures="1" skipped="2" …>
//!   <testcase name="IN-003" classname="embedcheck.input" time="0.012">
//!     <failure message="token-id input rejected" type="MUST">POST /v1/embeddings → 422 …</failure>
//! ```

use super::text;
use crate::audit::{ClauseResult, Gate};
use crate::report::Report;
use crate::verdict::Outcome;
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// The JUnit XML document: one `<testsuite>` named after the audited server's label.
pub fn render(report: &Report) -> String {
    let audit = report.subject();
    let mut suite = TestSuite::new(&audit.label);
    // A wall time that is not a finite, non-negative number is left out, not guessed.
    if let Ok(time) = Duration::try_from_secs_f64(audit.wall_seconds) {
        suite.set_time(time);
    }
    suite
        .add_properties(properties(report))
        .add_test_cases(audit.results.iter().map(test_case));
    let mut junit = quick_junit::Report::new(report.tool.name);
    junit.add_test_suite(suite);
    // Serialising into memory has no I/O to fail, and `XmlString` has already removed
    // the characters XML cannot hold.
    junit.to_string().expect("JUnit XML serialises into memory")
}

/// Run settings, so a CI artefact says what was audited and how to replay it.
fn properties(report: &Report) -> Vec<Property> {
    let audit = report.subject();
    vec![
        Property::new("endpoint", &audit.endpoint),
        Property::new("model", audit.model.as_deref().unwrap_or("")),
        Property::new("seed", report.seed.to_string()),
        Property::new("contract", report.contract.version.to_string()),
        Property::new(
            "contract_scored",
            report
                .contract
                .scored
                .unwrap_or(report.contract.version)
                .to_string(),
        ),
        Property::new("strict", report.strict.to_string()),
        Property::new("tool_version", report.tool.version),
    ]
}

fn test_case(result: &ClauseResult) -> TestCase {
    let mut case = TestCase::new(&result.id, status(result));
    case.set_classname(format!("embedcheck.{}", result.family))
        .set_time(Duration::from_millis(
            result.evidence.iter().map(|e| e.millis).sum(),
        ));
    case
}

fn status(result: &ClauseResult) -> TestCaseStatus {
    if let Some(known) = result
        .expectation
        .as_ref()
        .filter(|_| result.gate == Gate::KnownFailure)
    {
        let link = known
            .expectation
            .link
            .as_deref()
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        let kind = match &known.expectation.documented_by {
            Some(vendor) => format!("documented by {vendor}"),
            None => "known failure".to_owned(),
        };
        return skipped(format!(
            "{kind}: {}{link}",
            text::flat(&known.expectation.reason)
        ));
    }
    match result.outcome {
        Outcome::Pass => TestCaseStatus::success(),
        // Messages are XML attributes, where parsers turn newlines into spaces anyway:
        // flattening here keeps the file and what a dashboard shows the same.
        Outcome::Fail => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(text::flat(&result.reason))
                .set_type(result.level.to_string())
                .set_description(failure_description(result));
            status
        }
        Outcome::Skip => skipped(text::flat(&result.reason)),
        Outcome::Inconclusive => skipped(format!("inconclusive: {}", text::flat(&result.reason))),
    }
}

fn skipped(message: String) -> TestCaseStatus {
    let mut status = TestCaseStatus::skipped();
    status.set_message(message);
    status
}

/// The statement, one line per exchange and the curl reproducer: enough to act on a
/// failure from the CI page without opening `report.md`.
fn failure_description(result: &ClauseResult) -> String {
    let mut lines = vec![result.statement.clone()];
    lines.extend(result.level_line.clone());
    lines.extend(result.evidence.iter().map(text::exchange_line));
    if let Some(curl) = &result.curl {
        lines.push(format!("reproduce: {curl}"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;

    #[test]
    fn junit_report_matches_snapshot() {
        let xml = render(&sample::report());
        sample::snapshots().bind(|| insta::assert_snapshot!("junit", xml));
    }

    #[test]
    fn every_clause_is_its_own_test_case() {
        let report = sample::report();
        let parsed = quick_junit::Report::deserialize_from_str(&render(&report)).unwrap();
        let suite = &parsed.test_suites[0];
        assert_eq!(suite.name.as_str(), report.servers[0].label);
        assert_eq!(
            (suite.tests, suite.failures, suite.skipped),
            (report.servers[0].results.len(), 1, 2)
        );
        let names: Vec<&str> = suite.test_cases.iter().map(|c| c.name.as_str()).collect();
        let ids: Vec<&str> = report.servers[0]
            .results
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        assert_eq!(names, ids);
    }
}
