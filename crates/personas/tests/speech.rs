//! Speech verdicts found false on servers of a class no breaker had: each persona here
//! behaves as a whole class of servers does, and the clause must judge it.

use crate::common;
use embedcheck_core::audit::ServerAudit;
use embedcheck_core::catalogue::ContractId;
use embedcheck_core::verdict::Outcome;
use personas::{Persona, Quirk, SpeechQuirk};
use reference_server::Config;

/// The audit of `quirks` on the reference server, on the speech clauses alone.
async fn speech_audit(name: &'static str, quirks: &[Quirk]) -> ServerAudit {
    let persona = Persona {
        name,
        config: Config::default(),
        quirks: quirks.to_vec(),
    };
    let speech: Vec<_> = common::every_clause()
        .into_iter()
        .filter(|c| c.contract() == ContractId::Speech)
        .collect();
    common::audit_with(&persona, common::settings(&persona, false), &speech).await
}

fn outcome<'a>(audit: &'a ServerAudit, id: &str) -> (Outcome, &'a str) {
    let r = audit.results.iter().find(|r| r.id == id).expect("judged");
    (r.outcome, &r.reason)
}

/// A cue whose end is printed with a leading minus on a zero field
/// (`00:00:00,000 --> -00:00:01,500`) ends before it starts; the sign was lost, and
/// SPS-004/005 read "1 cue, times running forward from 0 ms".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cue_that_ends_before_it_starts_fails_however_its_sign_is_printed() {
    let quirks = [Quirk::Speech(SpeechQuirk::CueEndsBeforeStart)];
    let audit = speech_audit("cue_ends_before_start", &quirks).await;
    for id in ["SPS-004", "SPS-005"] {
        let (outcome, reason) = outcome(&audit, id);
        assert_eq!(outcome, Outcome::Fail, "{id}: {reason}");
        assert!(reason.contains("to -1500 ms"), "{id}: {reason}");
    }
}

/// A gateway in front of an embeddings model answers every speech request 500
/// (LiteLLM 1.106.2: "Unmapped provider passed in"). Asked with the model the
/// embeddings route embeds with, that says nothing of its speech-to-text: every speech
/// clause is skipped, saying to name the speech model. Named with `--speech-model`, the
/// same answers are the server's own and fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embeddings_model_asked_to_transcribe_is_not_a_speech_verdict() {
    let quirks = [Quirk::Speech(SpeechQuirk::CannotTranscribe)];
    let audit = speech_audit("cannot_transcribe", &quirks).await;
    for result in &audit.results {
        assert_eq!(
            result.outcome,
            Outcome::Skip,
            "{}: {}",
            result.id,
            result.reason
        );
        assert!(
            result.reason.contains("--speech-model"),
            "{}",
            result.reason
        );
    }
    let persona = Persona {
        name: "cannot_transcribe_named",
        config: Config::default(),
        quirks: quirks.to_vec(),
    };
    let settings = common::settings(&persona, false).with(
        embedcheck_core::contracts::speech::SpeechSettings {
            model: Some(Config::default().model_id),
            ..Default::default()
        },
    );
    let speech: Vec<_> = common::every_clause()
        .into_iter()
        .filter(|c| c.contract() == ContractId::Speech)
        .collect();
    let named = common::audit_with(&persona, settings, &speech).await;
    let (outcome, reason) = outcome(&named, "SPS-001");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(reason.contains("answered 500"), "{reason}");
}
