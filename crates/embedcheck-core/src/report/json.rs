//! `report.json`: the machine-readable report other tools read.
//!
//! The field names are a public contract, published as
//! `specs/schemas/report.schema.json` and versioned by `schema_version`; the snapshot
//! test below fails on any change to them, and the schema test keeps the two in step.
//!
//! ```json
//! {
//!   "schema_version": "1.0",
//!   "tool": { "name": "embedcheck", "version": "0.1.0" },
//!   "label": "staging", "endpoint": "http://…/v1/embeddings", "model": null,
//!   "results": [{ "id": "RESP-001", "outcome": "pass", "evidence": [ … ], … }],
//!   …
//! }
//! ```

use crate::model::Report;

/// Pretty-printed JSON of the whole report, newline-terminated like any text file.
pub fn render(report: &Report) -> String {
    // The model holds only strings, integers, floats, booleans and string-keyed maps,
    // which serde_json always serialises (a non-finite float becomes `null`).
    let mut text =
        serde_json::to_string_pretty(report).expect("the report model always serialises");
    text.push('\n');
    text
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
        let problems = Schemas::get().report_problems(&value);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn aborted_run_without_model_validates_against_published_schema() {
        let mut report = sample::report();
        report.audit.model = None;
        report.audit.aborted = Some("interrupted".to_owned());
        let value: Value = serde_json::from_str(&render(&report)).unwrap();
        let problems = Schemas::get().report_problems(&value);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn schema_rejects_an_unknown_outcome() {
        let mut value: Value = serde_json::from_str(&render(&sample::report())).unwrap();
        value["results"][0]["outcome"] = "passed".into();
        let problems = Schemas::get().report_problems(&value);
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
            crate::model::REPORT_SCHEMA_VERSION
        );
    }

    #[test]
    fn schema_requires_every_section_of_a_migration() {
        let mut value: Value = serde_json::from_str(&render(&sample::report())).unwrap();
        value["migration"] = serde_json::json!({ "baseline": { "label": "old" } });
        let problems = Schemas::get().report_problems(&value);
        assert!(
            problems.iter().any(|p| p.contains("vector_equivalence")),
            "{problems:?}"
        );
    }
}
