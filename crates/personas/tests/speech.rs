//! Speech verdicts found false on servers of a class no breaker had: each persona here
//! behaves as a whole class of servers does, and the clause must judge it.

use crate::common;
use embedcheck_core::audit::ServerAudit;
use embedcheck_core::verdict::Outcome;
use personas::{Persona, Quirk, SpeechQuirk};
use reference_server::Config;

/// The reference server with `quirks`.
fn persona(name: &'static str, quirks: &[Quirk]) -> Persona {
    Persona {
        name,
        config: Config::default(),
        quirks: quirks.to_vec(),
    }
}

/// The audit of `quirks` on the reference server, on the speech clauses alone.
async fn speech_audit(name: &'static str, quirks: &[Quirk]) -> ServerAudit {
    common::speech_audit(&persona(name, quirks), None).await
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
    common::assert_all_skipped(&audit, &["--speech-model"]);
    let named = common::speech_audit(
        &persona("cannot_transcribe_named", &quirks),
        Some(Config::default().model_id),
    )
    .await;
    let (outcome, reason) = outcome(&named, "SPS-001");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(reason.contains("answered 500"), "{reason}");
}
