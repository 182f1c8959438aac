//! Client profiles on personas: each profile's verdict follows from the behaviour the
//! persona imitates, for the reason its source gives.
//!
//! The real clients against the same personas are `real_clients.rs`.

use crate::common;

use embedcheck_core::audit::ServerAudit;
use embedcheck_core::contracts;
use embedcheck_core::contracts::embeddings::profiles::{Call, EmbeddingsFinding, Wrong};
use embedcheck_core::contracts::speech::SpeechSettings;
use embedcheck_core::http::{Secret, Transport};
use embedcheck_core::profiles::{Client, ClientProfile, Finding, Made};
use embedcheck_core::session::{Interrupt, Settings};
use personas::Quirk;
use std::time::Duration;

fn profile(audit: &ServerAudit, client: Client) -> &ClientProfile {
    audit
        .clients
        .iter()
        .find(|p| p.client == client)
        .expect("every client is profiled")
}

/// The verdicts of openai-python, openai-node and langchain-openai, in that order.
fn verdicts(audit: &ServerAudit) -> [Option<bool>; 3] {
    Client::EMBEDDINGS.map(|client| profile(audit, client).works)
}

fn has(profile: &ClientProfile, found: impl Fn(&Finding) -> bool) -> bool {
    profile.findings.iter().any(found)
}

/// Whether an embeddings client's profile holds an embeddings finding like this.
fn found(profile: &ClientProfile, like: impl Fn(&EmbeddingsFinding) -> bool) -> bool {
    profile
        .findings
        .iter()
        .filter_map(Finding::contract::<EmbeddingsFinding>)
        .any(like)
}

/// The reference server reads token ids in its own (toy) vocabulary, as vLLM reads
/// them in the model's: LangChain's cl100k ids for "hello world" are accepted and get
/// an unrelated vector, while both SDKs get exactly the float vectors.
#[tokio::test]
async fn reference_server_suits_the_sdks_and_gives_langchain_unrelated_vectors() {
    let audit = common::audit(&personas::reference(), false).await;
    assert_eq!(
        verdicts(&audit),
        [Some(true), Some(true), Some(false)],
        "{:#?}",
        audit.clients
    );
    let langchain = profile(&audit, Client::LANGCHAIN_OPENAI);
    assert!(
        found(
            langchain,
            |f| matches!(f, EmbeddingsFinding::ForeignVocabulary { text: "hello world", cosine, .. } if *cosine < 0.5)
        ),
        "{:#?}",
        langchain.because
    );
    assert!(langchain.because[0].contains("check_embedding_ctx_length=False"));
    assert!(
        found(langchain, |f| matches!(
            f,
            EmbeddingsFinding::ProbeHeld { .. }
        )),
        "the out-of-vocabulary probe waits for --aggressive"
    );
    let evidence = &langchain.evidence[0];
    assert_eq!(
        evidence
            .request_body
            .as_deref()
            .map(|b| b.contains("[[15339,1917]]")),
        Some(true),
        "the evidence is LangChain's own request: {evidence:?}"
    );
    for client in [Client::OPENAI_PYTHON, Client::OPENAI_NODE] {
        let sdk = profile(&audit, client);
        assert!(
            found(sdk, |f| matches!(
                f,
                EmbeddingsFinding::Decoded {
                    call: Call::Batch,
                    ..
                }
            )),
            "{:#?}",
            sdk.because
        );
    }
}

/// OpenAI reads token ids in cl100k_base: every client works.
#[tokio::test]
async fn every_client_works_against_openai() {
    let audit = common::audit(&personas::openai(), false).await;
    assert_eq!(verdicts(&audit), [Some(true); 3], "{:#?}", audit.clients);
    let langchain = profile(&audit, Client::LANGCHAIN_OPENAI);
    assert!(found(langchain, |f| matches!(
        f,
        EmbeddingsFinding::SameVocabulary {
            text: "hello world",
            ..
        }
    )));
}

/// A server that ignores `encoding_format` (floats for base64, the study's old FastAPI
/// server) suits openai-python, which decodes only strings, and openai-node 7.55.0,
/// which passes arrays through since 7.11.0 (openai-node#2549, #2590).
#[tokio::test]
async fn float_arrays_for_base64_pass_through_both_sdks() {
    let ignores = personas::breaker("ENC-003").expect("ENC-003 has a breaker");
    assert!(
        ignores
            .quirks
            .contains(&Quirk::IgnoreFields(&["encoding_format"]))
    );
    for persona in [ignores, personas::old_fastapi()] {
        let audit = common::audit(&persona, false).await;
        for client in [Client::OPENAI_PYTHON, Client::OPENAI_NODE] {
            let sdk = profile(&audit, client);
            assert_eq!(
                sdk.works,
                Some(true),
                "{}: {:#?}",
                persona.name,
                sdk.because
            );
            assert!(
                found(sdk, |f| matches!(
                    f,
                    EmbeddingsFinding::Decoded {
                        encoding: Some(embedcheck_core::http::Encoding::Float),
                        ..
                    }
                )),
                "{:#?}",
                sdk.because
            );
        }
    }
}

/// The old FastAPI server's pydantic model refuses token ids with 422: LangChain
/// raises.
#[tokio::test]
async fn langchain_raises_where_token_ids_are_refused() {
    let audit = common::audit(&personas::old_fastapi(), false).await;
    let langchain = profile(&audit, Client::LANGCHAIN_OPENAI);
    assert_eq!(langchain.works, Some(false));
    assert!(
        found(langchain, |f| matches!(
            f,
            EmbeddingsFinding::TokenIdsRefused { status: 422, .. }
        )),
        "{:#?}",
        langchain.because
    );
}

/// Base64 of float64 bytes decodes to twice as many values in both SDKs: wrong
/// vectors, no error.
#[tokio::test]
async fn float64_base64_gives_both_sdks_wrong_vectors() {
    let persona = personas::breaker("ENC-002").expect("ENC-002 has a breaker");
    let audit = common::audit(&persona, false).await;
    assert_eq!(verdicts(&audit), [Some(false); 3], "{:#?}", audit.clients);
    let doubled = |f: &EmbeddingsFinding| {
        matches!(
            f,
            EmbeddingsFinding::WrongVectors {
                wrong: Wrong::Length { got, want, .. },
                ..
            } if *got == 2 * *want
        )
    };
    for client in [Client::OPENAI_PYTHON, Client::OPENAI_NODE] {
        assert!(found(profile(&audit, client), doubled), "{client:?}");
    }
    // LangChain's answers are decoded by the Python SDK underneath.
    let langchain = profile(&audit, Client::LANGCHAIN_OPENAI);
    assert!(
        found(
            langchain,
            |f| matches!(f, EmbeddingsFinding::ThroughSdk { finding } if doubled(finding))
        ),
        "{:#?}",
        langchain.because
    );
}

/// LiteLLM's proxy in front of Ollama answered every `encoding_format` with 500
/// (BerriAI/litellm#42426): the SDKs' default request fails after their two retries.
#[tokio::test]
async fn the_sdks_raise_after_retrying_a_500_to_their_default_request() {
    let audit = common::audit(&personas::litellm(), false).await;
    assert_eq!(verdicts(&audit), [Some(false); 3]);
    let python = profile(&audit, Client::OPENAI_PYTHON);
    assert!(
        found(python, |f| matches!(
            f,
            EmbeddingsFinding::Raises {
                call: Call::One,
                status: 500,
                attempts: 3,
                ..
            }
        )),
        "{:#?}",
        python.because
    );
    let sent = python
        .evidence
        .iter()
        .filter(|e| e.status == Some(500))
        .count();
    assert!(sent >= 3, "each attempt is evidence: {sent}");
}

/// TEI refuses more than 32 inputs a request; LangChain sends up to 1000: a warning
/// with the `chunk_size` that fits.
#[tokio::test]
async fn langchain_is_warned_of_a_batch_limit_below_its_chunk_size() {
    let audit = common::audit(&personas::tei(), false).await;
    let langchain = profile(&audit, Client::LANGCHAIN_OPENAI);
    assert!(
        found(langchain, |f| matches!(
            f,
            EmbeddingsFinding::BatchLimit { limit: 32 }
        )),
        "{:#?}",
        langchain.because
    );
    assert!(
        langchain
            .because
            .iter()
            .any(|r| r.contains("chunk_size=32"))
    );
}

/// Dynamo + vLLM answers client mistakes 500: a retry-storm warning, not a break, for
/// clients whose default requests work.
#[tokio::test]
async fn retry_storms_on_client_mistakes_are_a_warning() {
    let audit = common::audit(&personas::dynamo_vllm(), false).await;
    let python = profile(&audit, Client::OPENAI_PYTHON);
    assert_eq!(python.works, Some(true), "{:#?}", python.because);
    assert!(
        found(
            python,
            |f| matches!(f, EmbeddingsFinding::RetryHazard { requests, .. } if *requests > 0)
        ),
        "{:#?}",
        python.because
    );
    assert!(python.warnings() >= 1);
}

/// With `--aggressive`, "embedding servers" (cl100k id 95711, beyond the reference
/// server's 50,000-id vocabulary) is sent too and refused, as vLLM refuses it.
#[tokio::test]
async fn aggressive_profiles_send_ids_beyond_the_vocabulary() {
    let audit = common::audit(&personas::reference(), true).await;
    let langchain = profile(&audit, Client::LANGCHAIN_OPENAI);
    assert!(
        found(langchain, |f| matches!(
            f,
            EmbeddingsFinding::TokenIdsRefused {
                text: "embedding servers",
                status: 400,
                ..
            }
        )),
        "{:#?}",
        langchain.because
    );
}

/// A server that cannot be reached leaves every verdict open, and nothing is sent.
#[tokio::test]
async fn an_unreachable_server_leaves_every_verdict_open() {
    let target = contracts::target("http://127.0.0.1:9/v1").expect("a valid URL");
    let transport = Transport::new(
        target,
        Some(Secret::new("k".to_owned())),
        Duration::from_secs(2),
    );
    let audit = embedcheck_core::audit::audit_server(
        transport,
        Settings::default(),
        "closed".to_owned(),
        &[],
        Interrupt::default(),
    )
    .await;
    assert_eq!(verdicts(&audit), [None; 3]);
    assert!(audit.clients.iter().all(|p| p.evidence.is_empty()));
}

/// The audit of `persona` on the speech clauses alone, with its speech clients.
async fn speech_audit(persona: &personas::Persona) -> ServerAudit {
    common::speech_audit(persona, SpeechSettings::default()).await
}

/// Whether `profile` warns with a sentence containing `words`.
fn warns(profile: &ClientProfile, words: &str) -> bool {
    has(
        profile,
        |f| matches!(f, Finding::Called { made: Made::Warn { why }, .. } if why.contains(words)),
    )
}

/// The speech clients read each deviation as their sources do: the transcript as plain
/// text where JSON is due breaks both SDKs and Open WebUI (LangChain takes the str
/// openai-python returns as its page); the JSON envelope for `text` reaches both
/// SDKs' callers, Python's as the transcript and Node's as a parsed object; Open WebUI
/// loses a refusal's reason outside `error.message`; the SDKs send a refusal answered
/// 500 three times. The reference server suits all three without a warning.
#[tokio::test]
async fn speech_clients_read_each_deviation_as_their_sources_do() {
    let breaker = |id| personas::breaker(id).expect("every speech clause has a breaker");
    let reference = speech_audit(&personas::reference()).await;
    for client in Client::SPEECH {
        let p = profile(&reference, client);
        assert_eq!((p.works, p.warnings()), (Some(true), 0), "{:#?}", p.because);
    }
    let plain = speech_audit(&breaker("SPS-001")).await;
    for client in Client::SPEECH {
        let p = profile(&plain, client);
        // LangChain keeps the str openai-python returns for a body that is not JSON.
        let works = client == Client::LANGCHAIN_WHISPER;
        assert_eq!(p.works, Some(works), "{client:?}: {:#?}", p.because);
    }
    let envelope = speech_audit(&breaker("SPS-002")).await;
    let python = profile(&envelope, Client::OPENAI_PYTHON_AUDIO);
    assert_eq!(python.works, Some(true));
    assert!(warns(python, "vllm#49095"), "{:#?}", python.because);
    let node = profile(&envelope, Client::OPENAI_NODE_AUDIO);
    assert!(warns(node, "parsed JSON, an object"), "{:#?}", node.because);
    let plain_refusals = speech_audit(&breaker("SPE-002")).await;
    let webui = profile(&plain_refusals, Client::OPEN_WEBUI_STT);
    assert_eq!(webui.works, Some(true));
    assert!(warns(webui, "not in error.message"), "{:#?}", webui.because);
    let faults = speech_audit(&breaker("SPE-001")).await;
    let python = profile(&faults, Client::OPENAI_PYTHON_AUDIO);
    assert!(
        warns(python, "reaches the server 3 times"),
        "{:#?}",
        python.because
    );
    assert!(!warns(profile(&faults, Client::OPEN_WEBUI_STT), "3 times"));
}

/// `--speech-model` names the model of every speech request: a server answering that its speech route serves no such model (the reference
/// server's 404 `model_not_found`, as OpenAI's) gets every speech clause skipped with
/// that reason, never failed.
#[tokio::test]
async fn speech_requests_name_the_speech_model() {
    let audit = common::speech_audit(
        &personas::reference(),
        SpeechSettings {
            model: Some("whisper-tiny".to_owned()),
            ..SpeechSettings::default()
        },
    )
    .await;
    common::assert_all_skipped(
        &audit,
        &["\"whisper-tiny\" is not served there", "--speech-model"],
    );
    assert!(
        audit
            .clients
            .iter()
            .all(|p| !Client::SPEECH.contains(&p.client))
    );
}
