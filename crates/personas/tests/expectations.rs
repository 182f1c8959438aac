//! Known failures: with the checked-in `expectations/dynamo_vllm.toml`, an audit of the
//! Dynamo-like persona fails the run only for new failures, and an expected failure
//! that starts passing is reported.

mod common;

use embedcheck_core::expectations::Expectations;
use embedcheck_core::model::Outcome;
use std::path::Path;

fn expectations_file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../expectations/dynamo_vllm.toml")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn known_failures_gate_on_new_failures_only() {
    let mut audit = common::audit(&personas::dynamo_vllm(), false).await;
    let text = std::fs::read_to_string(expectations_file()).expect("the file is checked in");
    Expectations::parse(&text, &expectations_file())
        .expect("the file is valid")
        .apply(&mut audit.results);
    let failing_run: Vec<&str> = audit
        .results
        .iter()
        .filter(|r| r.fails_run(true))
        .map(|r| r.id.as_str())
        .collect();
    assert!(failing_run.is_empty(), "unlisted failures: {failing_run:?}");
    assert!(audit.results.iter().all(|r| !r.is_unexpected()));

    // A new failure (ERR-009, the file's last entry, no longer listed) fails the run again.
    let without_err009 = &text[..text.find("[ERR-009]").expect("ERR-009 is listed")];
    Expectations::parse(without_err009, Path::new("edited.toml"))
        .expect("still valid")
        .apply(&mut audit.results);
    let err009 = audit
        .results
        .iter()
        .find(|r| r.id == "ERR-009")
        .expect("ran");
    assert!(
        err009.fails_run(false),
        "an unlisted MUST failure fails the run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expected_failure_that_passes_is_reported() {
    let mut audit = common::audit(&personas::reference(), false).await;
    let file = "[ERR-008]\nexpect = \"fail\"\nreason = \"flat errors, fixed since\"\n";
    Expectations::parse(file, Path::new("reference.toml"))
        .expect("valid")
        .apply(&mut audit.results);
    let err008 = audit
        .results
        .iter()
        .find(|r| r.id == "ERR-008")
        .expect("ran");
    assert_eq!(err008.outcome, Outcome::Pass);
    assert!(
        err008.is_unexpected(),
        "an expected failure now passing is flagged"
    );
}
