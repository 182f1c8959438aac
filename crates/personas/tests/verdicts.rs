//! The full verdict table of every real-server persona, reviewed as a snapshot under
//! `snapshots/personas/<persona>.snap`.
//!
//! A change in a verdict is a change in what the suite says about a real server, so
//! it shows up in review. Each table reads:
//!
//! ```text
//! persona: tei (model BAAI/bge-base-en-v1.5)
//! fails: ERR-006, ERR-007, ERR-008
//!
//! RESP-001  pass          single and batch answers match the response schema
//! ```

use crate::common;

use embedcheck_core::audit::ServerAudit;

use embedcheck_core::verdict::Outcome;
use personas::Persona;
use std::fmt::Write;

/// One test per persona, named after it, each auditing it as
/// [`verdicts_of_real_server_persona`] does.
macro_rules! verdicts_of_real_server_personas {
    ($($name:ident),* $(,)?) => {
        mod verdicts_of_real_server_personas {
            $(#[tokio::test]
            async fn $name() {
                super::verdicts_of_real_server_persona(personas::$name()).await
            })*
        }
    };
}

verdicts_of_real_server_personas![
    openai,
    old_fastapi,
    dynamo_vllm,
    vllm,
    tei,
    infinity,
    llama_cpp,
    ollama,
    litellm,
    asymmetric_cpu,
    vllm_reranker,
    infinity_reranker,
    litellm_reranker,
    litserve_reranker,
    tei_reranker,
    nim_reranker,
    voyage_reranker,
    python_http_server,
];

/// Audits `persona` on every clause and compares its verdict table with its snapshot.
async fn verdicts_of_real_server_persona(persona: Persona) {
    let settings = common::settings(&persona, false);
    let timeout = std::time::Duration::from_secs(10);
    let (audit, log) =
        common::audit_logged(&persona, settings, &common::every_clause(), timeout).await;
    let contradictions = common::contradictions(&audit, &log);
    assert!(contradictions.is_empty(), "{contradictions:#?}");
    let table = render(&audit);
    insta::with_settings!({
        snapshot_path => "../../../snapshots/personas",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!(persona.name, table);
    });
}

/// TEI 1.9.3 aborts on token ids that decode to nothing: with `--aggressive` the
/// report names that probe as the one that took the server down, and the rest of the
/// run ends inconclusive instead of hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggressive_audit_names_the_probe_that_takes_tei_down() {
    let audit = common::audit(&personas::tei(), true).await;
    let result = |id: &str| {
        audit
            .results
            .iter()
            .find(|r| r.id == id)
            .expect("clause ran")
    };
    let down = result("ERR-010");
    assert_eq!(down.outcome, Outcome::Fail, "{}", down.reason);
    assert!(down.reason.contains("999999"), "{}", down.reason);
    assert!(
        embedcheck_core::contracts::observations(&audit.facts)["server_down_after"]
            .contains("999999")
    );
    let cut_short = audit
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Inconclusive && r.reason.contains("stopped answering"))
        .count();
    assert!(cut_short > 0, "later clauses end inconclusive, naming why");
}

/// A persona added to `real_servers()` or `rerank_servers()` needs a line in
/// `verdicts_of_real_server_personas!` above, which writes its snapshot.
#[test]
fn every_real_persona_has_a_verdict_snapshot() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../snapshots/personas");
    let missing: Vec<&str> = personas::real_servers()
        .iter()
        .chain(&personas::rerank_servers())
        .map(|p| p.name)
        .filter(|name| !dir.join(format!("{name}.snap")).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "personas without a verdict case: {missing:?}"
    );
}

/// Clause → outcome and reason, what the suite observed about the server, then each
/// client profile with its reasons.
fn render(audit: &ServerAudit) -> String {
    let failed: Vec<&str> = audit
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .map(|r| r.id.as_str())
        .collect();
    let mut table = format!(
        "persona: {} (model {})\nfails: {}\n\n",
        audit.label,
        audit.model.as_deref().unwrap_or("unknown"),
        if failed.is_empty() {
            "none".to_owned()
        } else {
            failed.join(", ")
        },
    );
    for result in &audit.results {
        let _ = writeln!(
            table,
            "{:<9} {:<13} {}",
            result.id,
            result.outcome.as_str(),
            common::paced(&result.reason)
        );
    }
    table.push_str("\nobservations:\n");
    for (name, value) in &embedcheck_core::contracts::observations(&audit.facts) {
        let _ = writeln!(table, "  {name}: {value}");
    }
    table.push_str("\nclients:\n");
    for profile in &audit.clients {
        let works = match profile.works {
            Some(true) => "works",
            Some(false) => "breaks",
            None => "unknown",
        };
        let _ = writeln!(
            table,
            "  {} {}: {works}",
            profile.client.name(),
            profile.version
        );
        for reason in &profile.because {
            let _ = writeln!(table, "    - {reason}");
        }
    }
    if let Some(why) = &audit.aborted {
        let _ = writeln!(table, "\naborted: {why}");
    }
    table
}

/// SPR-001 holds no transcript a second identical request does not repeat: a server
/// re-decoding at a higher temperature where 0 was asked for (whisper.cpp's default,
/// which OpenAI documents temperature 0 may do) is not judged, while one answering with
/// another model, twice alike, fails (its breaker).
#[tokio::test]
async fn a_transcript_that_is_not_repeated_is_not_held_to_the_known_answer() {
    use personas::{Quirk, SpeechQuirk};
    let mut persona = personas::reference();
    persona
        .quirks
        .push(Quirk::Speech(SpeechQuirk::FallbackSampling));
    let clause = embedcheck_core::catalogue::Catalogue::shipped()
        .clauses
        .iter()
        .find(|c| c.id == "SPR-001")
        .expect("SPR-001 is catalogued");
    let settings = common::settings(&persona, false);
    let audit = common::audit_with(&persona, settings, &[clause]).await;
    let result = &audit.results[0];
    assert_eq!(result.outcome, Outcome::Skip, "{}", result.reason);
    assert!(
        result.reason.contains("falls back to sampling"),
        "{}",
        result.reason
    );
    assert_eq!(result.evidence.len(), 2);
}
