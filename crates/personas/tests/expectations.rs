//! Known failures: with the checked-in `expectations/dynamo_vllm.toml`, an audit of the
//! Dynamo-like persona fails the run only for new failures, and an expected failure
//! that starts passing is reported.

use crate::common;

use embedcheck_core::audit::Gate;
use embedcheck_core::expectations::Expectations;
use embedcheck_core::verdict::Outcome;
use std::path::Path;

fn expectations_file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../expectations/dynamo_vllm.toml")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn known_failures_gate_on_new_failures_only() {
    let mut audit = common::audit(&personas::dynamo_vllm(), false).await;
    let text = std::fs::read_to_string(expectations_file()).expect("the file is checked in");
    let file = Expectations::parse(&text, &expectations_file()).expect("the file is valid");
    audit.judge(&file, true);
    let failing_run: Vec<&str> = audit
        .results
        .iter()
        .filter(|r| r.gate == Gate::FailsRun)
        .map(|r| r.id.as_str())
        .collect();
    assert!(failing_run.is_empty(), "unlisted failures: {failing_run:?}");
    assert_eq!(audit.gated(Gate::NotAsExpected), 0);

    // A new failure (ERR-009, the file's last entry, no longer listed) fails the run again.
    let without_err009 = &text[..text.find("[ERR-009]").expect("ERR-009 is listed")];
    let edited =
        Expectations::parse(without_err009, Path::new("edited.toml")).expect("still valid");
    audit.judge(&edited, false);
    let err009 = audit
        .results
        .iter()
        .find(|r| r.id == "ERR-009")
        .expect("ran");
    assert!(
        err009.gate == Gate::FailsRun,
        "an unlisted MUST failure fails the run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expected_failure_that_passes_is_reported() {
    let mut audit = common::audit(&personas::reference(), false).await;
    let file = "[ERR-008]\nexpect = \"fail\"\nreason = \"flat errors, fixed since\"\n";
    let file = Expectations::parse(file, Path::new("reference.toml")).expect("valid");
    audit.judge(&file, false);
    let err008 = audit
        .results
        .iter()
        .find(|r| r.id == "ERR-008")
        .expect("ran");
    assert_eq!(err008.outcome, Outcome::Pass);
    assert!(
        err008.gate == Gate::NotAsExpected,
        "an expected failure now passing is flagged"
    );
}
