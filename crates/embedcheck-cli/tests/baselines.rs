//! Baselines that cannot rot, through the command line: a server pinned to a contract
//! version stays green when the suite adds a clause it fails (the clause runs and is
//! reported as not scored), and a known failure that starts passing fails the run
//! until the file is updated, unless `--allow-fixed`; and `embedcheck diff` of two runs
//! fails on the server's new failures only.

use std::path::Path;
use std::process::ExitCode;

/// A directory of this test's own under the tests' temp dir, removed when it drops:
/// tests run on parallel threads, and a shared directory is one's to remove while
/// another writes into it.
fn out_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a temp dir")
}

fn report(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("valid JSON")
}

fn result<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["id"] == id)
        .expect("the clause ran")
}

/// Runs the command line without libtest's lines, off the test's runtime.
async fn run(words: Vec<String>) -> String {
    let code = tokio::task::spawn_blocking(move || embedcheck_cli::main_without_trials(words))
        .await
        .expect("the run ends");
    format!("{code:?}")
}

fn status(code: u8) -> String {
    format!("{:?}", ExitCode::from(code))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clause_after_the_pinned_contract_runs_and_is_not_scored() {
    let persona = personas::breaker("REF-002").expect("a breaker");
    let server = persona.start().await;
    let scratch = out_dir("contract");
    let dir = scratch.path();
    let reference = dir.join("known-answers.jsonl");
    std::fs::write(&reference, personas::known_answers(&persona.config)).expect("written");
    let words = |contract: &str, report_dir: &Path| -> Vec<String> {
        format!(
            "--endpoint {} --reference {} --seed 7 --report-dir {} --contract {contract} reference",
            server.base_url(),
            reference.display(),
            report_dir.display()
        )
        .split_whitespace()
        .map(str::to_owned)
        .collect()
    };
    let pinned = dir.join("pinned-1.0");
    assert_eq!(run(words("1.0", &pinned)).await, status(0));
    let pinned_report = report(&pinned);
    let ref002 = result(&pinned_report, "REF-002");
    assert_eq!(ref002["outcome"], "fail", "it ran and failed");
    assert_eq!(ref002["gate"], "not_scored");
    assert!(
        ref002["not_scored"]
            .as_str()
            .unwrap_or_default()
            .contains("added in contract 1.1")
    );
    assert_eq!(pinned_report["contract"]["scored"], "1.0");

    let current = dir.join("pinned-1.1");
    assert_eq!(run(words("1.1", &current)).await, status(101));
    assert_eq!(result(&report(&current), "REF-002")["gate"], "fails_run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_failure_that_passes_fails_the_run_unless_allowed() {
    let server = personas::reference().start().await;
    let scratch = out_dir("fixed");
    let dir = scratch.path();
    let file = dir.join("expectations.toml");
    std::fs::write(
        &file,
        "[RESP-001]\nexpect = \"fail\"\nreason = \"no data array (fixed since)\"\n",
    )
    .expect("written");
    let words = |extra: &str, report_dir: &Path| -> Vec<String> {
        format!(
            "--endpoint {} --expectations {} --seed 7 --report-dir {} {extra} RESP-001 --exact",
            server.base_url(),
            file.display(),
            report_dir.display()
        )
        .split_whitespace()
        .map(str::to_owned)
        .collect()
    };
    let strict = dir.join("default");
    assert_eq!(run(words("", &strict)).await, status(101));
    assert_eq!(
        result(&report(&strict), "RESP-001")["gate"],
        "not_as_expected"
    );
    let allowed = dir.join("allowed");
    assert_eq!(run(words("--allow-fixed", &allowed)).await, status(0));
    assert_eq!(
        result(&report(&allowed), "RESP-001")["gate"],
        "not_as_expected_allowed"
    );
}

/// A server upgraded to break one clause (DIM-001's breaker answers `dimensions` 500,
/// which also fails the clauses that need a truncated vector): `embedcheck diff` of
/// the runs before and after names each new failure with the server behind it, and
/// fails; the clauses now skipped are changes, not failures; the same run against
/// itself changes nothing and passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_fails_on_what_an_upgrade_broke() {
    let before = personas::reference().start().await;
    let after = personas::breaker("DIM-001")
        .expect("a breaker")
        .start()
        .await;
    let scratch = out_dir("diff");
    let (old, new) = (scratch.path().join("old"), scratch.path().join("new"));
    for (server, dir) in [(&before, &old), (&after, &new)] {
        let words = format!(
            "--endpoint {} --seed 7 --report-dir {} dimensions",
            server.base_url(),
            dir.display()
        );
        run(words.split_whitespace().map(str::to_owned).collect()).await;
    }
    let text = |dir: &Path| std::fs::read_to_string(dir.join("report.json")).expect("a report");
    let (old_text, new_text) = (text(&old), text(&new));
    let compared = embedcheck_core::report::diff::diff((&old_text, "old"), (&new_text, "new"))
        .expect("two reports");
    let page = compared.markdown(false);
    let regressions: Vec<&str> = compared.regressions().map(|c| c.id.as_str()).collect();
    assert!(regressions.contains(&"DIM-001"), "{page}");
    assert!(
        regressions.iter().all(|id| id.starts_with("DIM-")),
        "{page}"
    );
    let skipped = compared
        .changes
        .iter()
        .filter(|c| c.new.as_ref().is_some_and(|n| n.outcome == "skip"));
    assert!(skipped.clone().count() > 0, "{page}");
    assert!(skipped.clone().all(|c| !c.is_regression()), "{page}");
    assert!(page.contains("| DIM-001 "), "{page}");
    let diff = |a: &Path, b: &Path| {
        let words = ["diff", &a.display().to_string(), &b.display().to_string()];
        run(words.map(str::to_owned).to_vec())
    };
    assert_eq!(diff(&old, &new).await, status(101));
    assert_eq!(diff(&old, &old).await, status(0));
    assert_eq!(diff(&old, &scratch.path().join("none")).await, status(2));
}
