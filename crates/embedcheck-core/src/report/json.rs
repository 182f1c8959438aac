//! `report.json`: the machine-readable report other tools read.
//!
//! The field names are a public contract, published as
//! `specs/schemas/report.schema.json` and versioned by `schema_version`; the snapshot
//! test below fails on any change to them, and the schema test keeps the two in step.
//!
//! ```json
//! {
//!   "schema_version": "1.9",
//!   "tool": { "name": "embedcheck", "version": "0.1.0" },
//!   "label": "staging", "endpoint": "http://…/v1/embeddings", "model": null,
//!   "results": [{ "id": "RESP-001", "outcome": "pass", "evidence": [ … ], … }],
//!   …
//! }
//! ```

use crate::audit::{ClauseResult, RunSummary, ServerAudit};
use crate::contracts::FactsByContract;
use crate::migration::Migration;
use crate::migration::replay::Replay;
use crate::profiles::ClientProfile;
use crate::report::{ContractScore, Report, Tool};
use crate::session::Facts;
use serde::Serialize;
use std::collections::BTreeMap;

/// The version of `specs/schemas/report.schema.json` this build writes. 1.1 added
/// `facts`, each result's `gate`, the run's `summary` and the comparison's own counts;
/// 1.2 the migration's `fixes_applied`; 1.3 each audit's `clients` (the client
/// profiles); 1.4 the migration's per-document cosines (`cosines`, beside min /
/// median / max) and each latency phase's `distribution`; 1.5 the `reference`
/// family and the `reference_tokens` fact; 1.6 vendor-documented and flaky
/// expectations (`documented_by`, `flaky`, `mismatch_allowed`), the gate
/// `not_as_expected_allowed`, the model source `not_sent` and the contract version;
/// 1.7 the conclusion `incomplete`, the gate `unjudged` and the summary's `unjudged`;
/// 1.8 the rerank contract: its families, `contract.rerank`, `facts.rerank`, the
/// migration topic `rerank`, the rerank clients and the model source `rerank_model`;
/// 1.9 the facts `desynchronised`, `unrepeatable`, `token_ids_as_sent` and rerank's
/// `top_n_zero` and `unknown_model`, and `replay`: the subject against a recorded
/// baseline; 1.10 the speech-to-text contract: its families and `contract.speech`;
/// 1.11 the speech clients, the model source `speech_model` and the migration topic
/// `speech`; 1.12 the speech client `langchain-openai-whisper-parser`; 1.13 each
/// result's `level_evidence` and `level_line`, why the clause has its level; 1.14 the
/// speech fact `model_class` (`facts.speech`) and the family `speech-options`. Every
/// earlier field is still written.
pub(crate) const REPORT_SCHEMA_VERSION: &str = "1.14";

/// Pretty-printed JSON of the whole report, newline-terminated like any text file.
pub fn render(report: &Report) -> String {
    // The document holds only strings, integers, floats, booleans and string-keyed
    // maps, which serde_json always serialises (a non-finite float becomes `null`).
    let mut text = serde_json::to_string_pretty(&Document::of(report))
        .expect("the report document always serialises");
    text.push('\n');
    text
}

/// `report.json`: the subject server's audit at the top level (as in schema 1.0), a
/// migration's baseline inside `migration`.
#[derive(Serialize)]
struct Document<'a> {
    schema_version: &'static str,
    tool: &'a Tool,
    strict: bool,
    seed: u64,
    contract: &'a ContractScore,
    #[serde(flatten)]
    audit: Audit<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    migration: Option<Comparison<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<&'a Replay>,
    summary: &'a RunSummary,
}

/// One server's audit, with its facts also rendered as schema 1.0's observations.
#[derive(Serialize)]
struct Audit<'a> {
    label: &'a str,
    endpoint: &'a str,
    model: Option<&'a str>,
    results: &'a [ClauseResult],
    requests_sent: u64,
    tokens_used: u64,
    wall_seconds: f64,
    observations: BTreeMap<String, String>,
    facts: FactsView<'a>,
    clients: &'a [ClientProfile],
    #[serde(skip_serializing_if = "Option::is_none")]
    aborted: Option<&'a str>,
}

/// The facts an audit learned: the shared ones, then each contract's under its name.
#[derive(Serialize)]
struct FactsView<'a> {
    #[serde(flatten)]
    shared: &'a Facts,
    #[serde(flatten)]
    contracts: FactsByContract<'a>,
}

/// The candidate as the migration section names it (its full audit is the top level).
#[derive(Serialize)]
struct ServerRef<'a> {
    label: &'a str,
    endpoint: &'a str,
    model: Option<&'a str>,
}

#[derive(Serialize)]
struct Comparison<'a> {
    baseline: Audit<'a>,
    candidate: ServerRef<'a>,
    #[serde(flatten)]
    migration: &'a Migration,
}

impl<'a> Document<'a> {
    fn of(report: &'a Report) -> Self {
        let subject = report.subject();
        Document {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: &report.tool,
            strict: report.strict,
            seed: report.seed,
            contract: &report.contract,
            audit: Audit::of(report, subject),
            migration: report.migration().map(|view| Comparison {
                baseline: Audit::of(report, view.baseline),
                candidate: ServerRef {
                    label: &view.candidate.label,
                    endpoint: &view.candidate.endpoint,
                    model: view.candidate.model.as_deref(),
                },
                migration: view.migration,
            }),
            replay: report.replay.as_ref(),
            summary: &report.summary,
        }
    }
}

impl<'a> Audit<'a> {
    fn of(report: &'a Report, audit: &'a ServerAudit) -> Self {
        Audit {
            label: &audit.label,
            endpoint: &audit.endpoint,
            model: audit.model.as_deref(),
            results: &audit.results,
            requests_sent: audit.requests_sent,
            tokens_used: audit.tokens_used,
            wall_seconds: audit.wall_seconds,
            observations: super::text::observations(report, audit),
            facts: FactsView {
                shared: &audit.facts,
                contracts: FactsByContract::of(&audit.facts.contracts),
            },
            clients: &audit.clients,
            aborted: audit.aborted.as_deref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample;
    use crate::schemas::Schemas;
    use serde_json::Value;

    #[test]
    fn json_report_matches_snapshot() {
        let text = render(&sample::report());
        sample::snapshots().bind(|| insta::assert_snapshot!("json", text));
    }

    #[test]
    fn json_report_validates_against_published_schema() {
        let value: Value = serde_json::from_str(&render(&sample::report())).unwrap();
        let problems = crate::schemas::full::problems(Schemas::report_schema_text(), &value);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn aborted_run_without_model_validates_against_published_schema() {
        let mut audit = sample::audit();
        audit.model = None;
        audit.aborted = Some("interrupted".to_owned());
        let report = sample::judged(vec![audit], false);
        let value: Value = serde_json::from_str(&render(&report)).unwrap();
        let problems = crate::schemas::full::problems(Schemas::report_schema_text(), &value);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn schema_rejects_an_unknown_outcome() {
        let mut value: Value = serde_json::from_str(&render(&sample::report())).unwrap();
        value["results"][0]["outcome"] = "passed".into();
        let problems = crate::schemas::full::problems(Schemas::report_schema_text(), &value);
        assert!(
            problems.iter().any(|p| p.contains("/results/0/outcome")),
            "{problems:?}"
        );
    }

    #[test]
    fn schema_version_in_schema_matches_the_model() {
        let schema: Value = serde_json::from_str(Schemas::report_schema_text()).unwrap();
        assert_eq!(
            schema["properties"]["schema_version"]["const"],
            REPORT_SCHEMA_VERSION
        );
    }

    #[test]
    fn schema_requires_every_section_of_a_migration() {
        let mut value: Value = serde_json::from_str(&render(&sample::report())).unwrap();
        value["migration"] = serde_json::json!({ "baseline": { "label": "old" } });
        let problems = crate::schemas::full::problems(Schemas::report_schema_text(), &value);
        assert!(
            problems.iter().any(|p| p.contains("vector_equivalence")),
            "{problems:?}"
        );
    }
}
