//! Speech verdicts found false on servers of a class no breaker had: each persona here
//! behaves as a whole class of servers does, and the clause must judge it.

use crate::common;
use embedcheck_core::audit::ServerAudit;
use embedcheck_core::contracts::speech::SpeechSettings;
use embedcheck_core::contracts::speech::class::ModelClass;
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
    common::speech_audit(&persona(name, quirks), SpeechSettings::default()).await
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
        SpeechSettings {
            model: Some(Config::default().model_id),
            ..SpeechSettings::default()
        },
    )
    .await;
    let (outcome, reason) = outcome(&named, "SPS-001");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(reason.contains("answered 500"), "{reason}");
}

/// The speech audit of `persona` with `speech`'s options.
async fn speech_audit_with(persona: &Persona, speech: SpeechSettings) -> ServerAudit {
    common::speech_audit(persona, speech).await
}

/// Asserts that no clause of `audit` failed.
fn assert_none_failed(audit: &ServerAudit) {
    for result in &audit.results {
        let id = &result.id;
        assert_ne!(result.outcome, Outcome::Fail, "{id}: {}", result.reason);
    }
}

/// The model class the audit judged by, as its report's line gives it.
fn model_class(audit: &ServerAudit) -> String {
    embedcheck_core::contracts::observations(&audit.facts)
        .remove("speech_model_class")
        .expect("the speech audit names the model class")
}

/// The reference server's gpt-4o-transcribe models keep that class's contract: srt, vtt
/// and verbose_json refused in OpenAI's words. Judged by the class its name shows, no
/// speech clause fails, and each refusal's reason names the class's contract.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gpt_4o_transcribe_model_is_judged_by_its_own_contract() {
    let speech = SpeechSettings {
        model: Some("gpt-4o-mini-transcribe".to_owned()),
        ..SpeechSettings::default()
    };
    let audit = speech_audit_with(&persona("gpt_4o_mini_transcribe", &[]), speech).await;
    assert!(
        model_class(&audit)
            .starts_with("gpt-4o-transcribe (the model's name, gpt-4o-mini-transcribe;"),
        "{}",
        model_class(&audit)
    );
    assert_none_failed(&audit);
    for id in ["SPS-003", "SPS-004", "SPS-005"] {
        let (outcome, reason) = outcome(&audit, id);
        assert_eq!(outcome, Outcome::Pass, "{id}: {reason}");
        assert!(
            reason.contains("not in the gpt-4o-transcribe contract"),
            "{id}: {reason}"
        );
    }
    for (id, said) in [
        ("SPS-011", "usage of type tokens"),
        ("SPO-003", "each with its log probability"),
    ] {
        let (judged, reason) = outcome(&audit, id);
        assert_eq!(judged, Outcome::Pass, "{id}: {reason}");
        assert!(reason.contains(said), "{id}: {reason}");
    }
}

/// A gateway serving gpt-4o-transcribe under a name of its own passes OpenAI's refusals
/// through: the refusal's words show the class where the name cannot, and its srt and
/// vtt refusals get no failure. A whisper-1 model of that name would be judged by
/// whisper-1's contract, named with --speech-model-class.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_in_openais_words_shows_the_gpt_4o_transcribe_class() {
    let quirks = [Quirk::Speech(SpeechQuirk::Gpt4oTranscribeAlias)];
    let audit = speech_audit("gpt_4o_transcribe_alias", &quirks).await;
    assert!(
        model_class(&audit)
            .starts_with("gpt-4o-transcribe (verbose_json refused 400 in OpenAI's words"),
        "{}",
        model_class(&audit)
    );
    for id in ["SPS-003", "SPS-004", "SPS-005"] {
        let (outcome, reason) = outcome(&audit, id);
        assert_eq!(outcome, Outcome::Pass, "{id}: {reason}");
        assert!(
            reason.contains("not in the gpt-4o-transcribe contract"),
            "{id}: {reason}"
        );
    }
    let declared = SpeechSettings {
        model_class: Some(ModelClass::Whisper),
        ..SpeechSettings::default()
    };
    let audit = speech_audit_with(
        &persona("gpt_4o_transcribe_alias_declared", &quirks),
        declared,
    )
    .await;
    assert!(model_class(&audit).starts_with("whisper-1 (--speech-model-class;"));
    let (outcome, reason) = outcome(&audit, "SPS-004");
    assert_eq!(outcome, Outcome::Pass, "{reason}");
    assert!(reason.contains("the server does not offer it"), "{reason}");
}

/// The reference server's own model names no class and answers every format: judged by
/// whisper-1's contract, which the report says is the default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_whose_class_nothing_shows_is_judged_as_whisper_1() {
    let audit = speech_audit("reference_speech", &[]).await;
    assert!(
        model_class(&audit).starts_with("whisper-1 (default: nothing showed another"),
        "{}",
        model_class(&audit)
    );
}

/// OpenAI ignores `stream` for whisper-1 alone: a gateway answering `stream: true` with
/// the JSON transcript (LiteLLM's proxy, litellm#21310) keeps whisper-1's contract, and
/// breaks gpt-4o-transcribe's, whose SDK users iterate a stream with no events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_ignored_fails_only_where_the_class_streams() {
    let quirks = [Quirk::Speech(SpeechQuirk::StreamIgnored)];
    let whisper = speech_audit("stream_ignored", &quirks).await;
    let (judged, reason) = outcome(&whisper, "SPS-007");
    assert_eq!(judged, Outcome::Pass, "{reason}");
    let gpt_4o = Persona {
        name: "stream_ignored_gpt_4o",
        config: Config {
            model_id: "gpt-4o-transcribe".to_owned(),
            ..Config::default()
        },
        quirks: quirks.to_vec(),
    };
    let audit = speech_audit_with(&gpt_4o, SpeechSettings::default()).await;
    let (judged, reason) = outcome(&audit, "SPS-007");
    assert_eq!(judged, Outcome::Fail, "{reason}");
    assert!(
        reason.contains("where the gpt-4o-transcribe contract streams"),
        "{reason}"
    );
}

/// The reference server's diarizing model keeps its class's contract: diarized_json
/// answered as OpenAI's TranscriptionDiarized, srt and verbose_json refused, no speech
/// clause failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diarizing_model_is_judged_by_its_own_contract() {
    let speech = SpeechSettings {
        model: Some("gpt-4o-transcribe-diarize".to_owned()),
        ..SpeechSettings::default()
    };
    let audit = speech_audit_with(&persona("gpt_4o_transcribe_diarize", &[]), speech).await;
    assert!(
        model_class(&audit).starts_with("gpt-4o-transcribe-diarize (the model's name"),
        "{}",
        model_class(&audit)
    );
    assert_none_failed(&audit);
    let (judged, reason) = outcome(&audit, "SPS-012");
    assert_eq!(judged, Outcome::Pass, "{reason}");
    assert!(reason.contains("each with its speaker"), "{reason}");
}
