//! The migration hazards (dimensions, unknown fields, over-length, encoding, the retry
//! hazard): the reference server keeps every clause in each of its configurations, and
//! a persona that breaks one on purpose fails exactly the clause it breaks, with a
//! reason a server author can act on.
//!
//! Each persona is the reference engine plus the quirks of the server it stands for;
//! the audits use a small large-batch size and seed 7, and declare nothing unless a
//! test says so.

use crate::common;

use embedcheck_core::audit::ServerAudit;
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::contracts::embeddings::EmbeddingsSettings;
use embedcheck_core::declared::{Matryoshka, Overlength, QueryTemplate};
use embedcheck_core::session::Settings;
use embedcheck_core::verdict::Outcome;
use personas::{Persona, Quirk, Trigger};
use reference_server::{Config, OverlengthPolicy};

/// The families this file protects.
const FAMILIES: [&str; 5] = [
    "dimensions",
    "unknown-fields",
    "over-length",
    "encoding",
    "errors",
];

/// The settings of every audit here: a small large-batch probe keeps runs fast.
fn settings() -> Settings {
    Settings {
        seed: 7,
        ..Settings::default()
    }
    .with(embeddings())
}

/// The embeddings settings of [`settings`], for a test to declare more over them.
fn embeddings() -> EmbeddingsSettings {
    EmbeddingsSettings {
        large_batch: 16,
        ..EmbeddingsSettings::default()
    }
}

/// The catalogue entries of `ids`, in catalogue order.
fn clauses(ids: &[&str]) -> Vec<&'static Clause> {
    Catalogue::shipped()
        .clauses
        .iter()
        .filter(|c| ids.contains(&c.id.as_str()))
        .collect()
}

/// The catalogue entries of whole families.
fn families(names: &[&str]) -> Vec<&'static Clause> {
    Catalogue::shipped()
        .clauses
        .iter()
        .filter(|c| names.contains(&c.family.as_str()))
        .collect()
}

/// Audits `persona` on the clauses `ids` with [`settings`].
async fn audit(persona: &Persona, ids: &[&str]) -> ServerAudit {
    common::audit_with(persona, settings(), &clauses(ids)).await
}

/// The reference engine under `config`, with `quirks`.
fn persona(name: &'static str, config: Config, quirks: &[Quirk]) -> Persona {
    Persona {
        name,
        config,
        quirks: quirks.to_vec(),
    }
}

/// The reference engine as configured by default, with `quirks`.
fn broken(name: &'static str, quirks: &[Quirk]) -> Persona {
    persona(name, Config::default(), quirks)
}

/// TEI routes no `GET /v1/models` and answers it 404 with an empty body. The suite
/// reads the listing for its own bookkeeping (the model's name and limit): that 404 is
/// no answer of the embeddings contract, and ERR-007 failed every TEI server on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_listing_the_suite_reads_for_itself_is_not_judged() {
    let persona = broken("no_models_listing", &[Quirk::ModelsListingEmpty404]);
    // Nothing lists the model, so its user names it.
    let named = Settings {
        model: Some(persona.config.model_id.clone()),
        ..settings()
    };
    let (audit, log) = common::audit_logged(
        &persona,
        named,
        &common::every_clause(),
        std::time::Duration::from_secs(10),
    )
    .await;
    let listing_refused = log.iter().any(|l| {
        l.exchange.path.ends_with("/models") && l.reply.as_ref().is_some_and(|r| r.status == 404)
    });
    assert!(listing_refused, "the run asked for the models listing");
    for id in ["ERR-007", "ERR-008", "ERR-013"] {
        let (outcome, reason) = outcome(&audit, id);
        assert_eq!(outcome, Outcome::Pass, "{id}: {reason}");
    }
}

/// A published embeddings server on Python's `http.server` with keep-alive answers a
/// POST to a route it does not serve 404 without reading the body, and the next
/// request on that connection 400 "Bad request syntax". The rerank route search's
/// second request met that 400, took `/rerank` for a served route and failed RRS-001
/// on a server with no rerank; ERR-007 counted the HTML page. The artefact is ERR-014's
/// finding alone, and every later request goes on a new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_the_server_desynchronised_is_one_finding_and_no_other_verdict() {
    let persona = personas::python_http_server();
    let (audit, log) = audit_every_clause(&persona).await;
    let (outcome, reason) = outcome(&audit, "ERR-014");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(reason.contains("left unread"), "{reason}");
    for result in &audit.results {
        let rerank = result.id.starts_with("RR");
        assert!(
            !rerank || result.outcome == Outcome::Skip,
            "{} judged a rerank the server does not offer: {}",
            result.id,
            result.reason
        );
        assert_ne!(
            result.outcome,
            Outcome::Inconclusive,
            "{}: {}",
            result.id,
            result.reason
        );
    }
    assert_eq!(outcome_of(&audit, "ERR-007"), Outcome::Pass);
    let artefacts = log.iter().filter(|l| {
        l.reply
            .as_ref()
            .is_some_and(|r| String::from_utf8_lossy(&r.body).contains("Bad request syntax"))
    });
    assert_eq!(artefacts.count(), 0, "no clause reads the artefact");
}

/// A Python `http.server` handler that raises on token ids closes the connection
/// without answering them, and answers every other request. Sent again on a new
/// connection with the same result, that is the server's answer: IN-003 fails naming
/// it, where it was left inconclusive as if the suite lacked evidence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_server_never_answers_fails_the_clause_that_sent_it() {
    let persona = broken(
        "raises_on_token_ids",
        &[Quirk::HandlerRaisesOn(Trigger::TokenIds)],
    );
    let (audit, _) = audit_every_clause(&persona).await;
    let (outcome, reason) = outcome(&audit, "IN-003");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(
        reason.contains("closed the connection without a complete answer"),
        "{reason}"
    );
    assert_eq!(
        outcome_of(&audit, "ERR-010"),
        Outcome::Pass,
        "the server stayed up"
    );
    let unjudged: Vec<String> = audit
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Inconclusive)
        .map(|r| format!("{}: {}", r.id, r.reason))
        .collect();
    assert!(unjudged.is_empty(), "{unjudged:#?}");
}

/// TEI serving a decoder model answered one item of a 21-input batch at cosine 0.94
/// to the float answer once; the same batch sent again did not reproduce it, yet
/// ENC-002 blamed base64. A difference is blamed on the encoding only when it repeats:
/// here the batch is judged on the repeat, and the unrepeatable answer is reported as
/// what it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_difference_that_does_not_repeat_is_not_blamed_on_the_encoding() {
    let persona = broken(
        "varies_once",
        &[Quirk::VariesOnce {
            batch_at_least: 2,
            cosine: 0.94,
        }],
    );
    let clauses: Vec<&Clause> = common::every_clause()
        .into_iter()
        .filter(|c| c.id == "ENC-002")
        .collect();
    let audit = common::audit_with(&persona, settings(), &clauses).await;
    let (varied, reason) = outcome(&audit, "ENC-002");
    assert_eq!(varied, Outcome::Pass, "{reason}");
    let seen = &embedcheck_core::contracts::observations(&audit.facts)["unrepeatable"];
    assert!(seen.contains("float answer at cosine 0.94"), "{seen}");

    let drifted = broken("base64_drifted", &[Quirk::Base64Drifted { cosine: 0.94 }]);
    let audit = common::audit_with(&drifted, settings(), &clauses).await;
    let (repeated, reason) = outcome(&audit, "ENC-002");
    assert_eq!(
        repeated,
        Outcome::Fail,
        "a difference that repeats: {reason}"
    );
    assert!(
        reason.contains("again when both requests were sent again"),
        "{reason}"
    );
}

/// `persona` audited on every clause with this file's settings, and its log.
async fn audit_every_clause(
    persona: &Persona,
) -> (ServerAudit, Vec<embedcheck_core::session::Logged>) {
    common::audit_logged(
        persona,
        settings(),
        &common::every_clause(),
        std::time::Duration::from_secs(10),
    )
    .await
}

fn outcome_of(audit: &ServerAudit, id: &str) -> Outcome {
    outcome(audit, id).0
}

/// The reference configuration refusing over-length input.
fn rejecting() -> Config {
    Config {
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    }
}

/// The outcome and reason of one clause.
fn outcome(audit: &ServerAudit, id: &str) -> (Outcome, String) {
    let result = audit
        .results
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("{id} ran"));
    (result.outcome, result.reason.clone())
}

/// Asserts that `id` failed with a reason containing every one of `says`.
fn assert_fails(audit: &ServerAudit, id: &str, says: &[&str]) {
    let (outcome, reason) = outcome(audit, id);
    assert_eq!(outcome, Outcome::Fail, "{id}: {reason}");
    for phrase in says {
        assert!(
            reason.contains(phrase),
            "{id} reason lacks {phrase:?}: {reason}"
        );
    }
}

/// Clauses that skip on the reference server because what they judge never happens
/// there: no aggregated over-length input, no throttling, no large batch refused.
const NOT_OBSERVED: [&str; 3] = ["LEN-005", "ERR-012", "IN-011"];

/// Every selected clause passed, except `skipped` and [`NOT_OBSERVED`], which were
/// skipped.
fn all_pass_except(audit: &ServerAudit, skipped: &[&str]) {
    assert!(audit.aborted.is_none(), "{:?}", audit.aborted);
    for result in &audit.results {
        let id = result.id.as_str();
        let expected = if skipped.contains(&id) || NOT_OBSERVED.contains(&id) {
            Outcome::Skip
        } else {
            Outcome::Pass
        };
        assert_eq!(result.outcome, expected, "{}: {}", result.id, result.reason);
    }
}

/// A fact as schema 1.0's observation line ("" when not learned).
fn observation(audit: &ServerAudit, name: &str) -> String {
    embedcheck_core::contracts::observations(&audit.facts)
        .remove(name)
        .unwrap_or_default()
}

fn qwen3_template() -> QueryTemplate {
    r"Instruct: {task}\nQuery: {text}"
        .parse()
        .expect("a template")
}

// --- the reference server keeps the clauses ---

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_reference_server_keeps_every_clause() {
    let audit = common::audit_with(&personas::reference(), settings(), &families(&FAMILIES)).await;
    all_pass_except(&audit, &["UNK-004", "LEN-003"]);
    assert!(observation(&audit, "matryoshka").starts_with("yes (detected"));
    assert_eq!(
        observation(&audit, "unknown_fields"),
        "rejected with 400 naming the field"
    );
    assert!(observation(&audit, "instruction_fields").contains("input_type: honoured"));
    assert_eq!(
        observation(&audit, "input_limit_tokens"),
        "512 (found: 1024 words were truncated to 512 tokens)"
    );
    assert_eq!(observation(&audit, "overlength_policy"), "truncate");
    assert!(observation(&audit, "base64").starts_with("little-endian"));
}

/// Every answer moved by noise as a GPU server's is (two answers to one text between
/// cosine 0.9995 and 0.9999, varying per call): noise, so no clause fails. One repeat
/// measures one draw of it, and the next pair may be five times as far apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noise_as_a_gpu_server_has_it_keeps_every_clause() {
    let noisy = broken(
        "gpu_noise",
        &[Quirk::NoisyAnswers {
            least_cosine: 0.99975,
            repeats_only: false,
        }],
    );
    let judged: Vec<&str> = FAMILIES
        .iter()
        .chain(&["consistency", "response-shape", "input", "usage"])
        .copied()
        .collect();
    let deep = settings().with(EmbeddingsSettings {
        large_batch: 64,
        ..embeddings()
    });
    let audit = common::audit_with(&noisy, deep, &families(&judged)).await;
    all_pass_except(&audit, &["UNK-004", "LEN-003", "IN-009"]);
    let (_, repeat) = outcome(&audit, "CONS-001");
    assert!(repeat.contains("noise allows 0.999"), "{repeat}");

    let beyond = broken(
        "beyond_noise",
        &[Quirk::NoisyAnswers {
            least_cosine: 0.9975,
            repeats_only: false,
        }],
    );
    let clauses = clauses(&["CONS-001"]);
    let audit = common::audit_with(&beyond, settings(), &clauses).await;
    assert_fails(&audit, "CONS-001", &["(< 0.999)", "noise"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_server_without_matryoshka_refuses_truncation_cleanly() {
    let config = Config {
        matryoshka: false,
        ..Config::default()
    };
    let server = persona("no_matryoshka", config, &[]);
    let audit = common::audit_with(&server, settings(), &families(&["dimensions", "errors"])).await;
    all_pass_except(&audit, &["DIM-003", "DIM-004"]);
    assert_eq!(
        observation(&audit, "matryoshka"),
        "no (detected: dimensions=128 refused with 400)"
    );
    let (_, reason) = outcome(&audit, "DIM-005");
    assert!(
        reason.contains("dimensions=128 refused with 400"),
        "{reason}"
    );
}

/// raullenchai/Rapid-MLX#1381: truncated at the limit, the whole input counted in usage.
/// Its counts look like aggregation; its vectors are those of the input's beginning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncation_that_counts_the_whole_input_is_named_as_such() {
    let server = persona(
        "overcounting",
        Config::default(),
        &[Quirk::UsageCountsWholeInput],
    );
    let settings = settings().with(EmbeddingsSettings {
        max_input_tokens: Some(512),
        ..embeddings()
    });
    let audit = common::audit_with(&server, settings, &clauses(&["USE-005", "LEN-005"])).await;
    let (outcome, reason) = outcome(&audit, "LEN-005");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(
        reason.starts_with("truncation with over-reported usage, not aggregation"),
        "{reason}"
    );
    assert!(reason.contains("for a 512-token limit"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejecting_reference_server_keeps_the_over_length_clauses() {
    let settings = settings().with(EmbeddingsSettings {
        overlength: Overlength::Reject,
        ..embeddings()
    });
    let server = persona("rejecting", rejecting(), &[]);
    let audit = common::audit_with(&server, settings, &families(&["over-length", "errors"])).await;
    all_pass_except(&audit, &[]);
    assert_eq!(
        observation(&audit, "input_limit_tokens"),
        "512 (found: 1024 words refused with 400, naming 512)"
    );
    assert_eq!(observation(&audit, "overlength_policy"), "reject (400)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_support_limit_and_instruction_are_used() {
    let settings = settings().with(EmbeddingsSettings {
        matryoshka: Matryoshka::Yes,
        overlength: Overlength::Truncate,
        max_input_tokens: Some(512),
        query_instruction: Some(qwen3_template()),
        ..embeddings()
    });
    let audit = common::audit_with(&personas::reference(), settings, &families(&FAMILIES)).await;
    all_pass_except(&audit, &[]);
    assert_eq!(
        observation(&audit, "matryoshka"),
        "yes (declared with --matryoshka yes)"
    );
    assert_eq!(
        observation(&audit, "input_limit_tokens"),
        "512 (declared with --max-input-tokens)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_search_bisects_when_the_refusal_names_no_limit() {
    // Ollama with `truncate: false`: a refusal about length that names no number.
    let unnamed_limit = persona(
        "unnamed_limit",
        rejecting(),
        &[Quirk::OverlengthRefusalSays("input is too long")],
    );
    let audit = audit(&unnamed_limit, &["LEN-001", "LEN-002", "LEN-004"]).await;
    all_pass_except(&audit, &[]);
    let limit = observation(&audit, "input_limit_tokens");
    assert!(
        limit.starts_with("512 (found: 512 words (512 tokens) accepted, 51"),
        "{limit}"
    );
}

// --- dimensions broken on purpose ---

/// Newest vLLM on a model without Matryoshka: any `dimensions` refused, with the
/// reference server's own wording for it.
fn dimensions_refused() -> Persona {
    broken(
        "dimensions_refused",
        &[Quirk::ErrorWhen {
            trigger: Trigger::Field("dimensions"),
            status: 400,
            message: "This model does not support specifying dimensions.",
        }],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusing_the_native_size_is_a_policy_and_a_500_fails_dim_001() {
    let refused = audit(&dimensions_refused(), &["DIM-001"]).await;
    let (found, reason) = outcome(&refused, "DIM-001");
    assert_eq!(found, Outcome::Pass, "{reason}");
    assert!(
        reason.contains("refused with 400: the server's policy"),
        "{reason}"
    );
    // The study's new server.
    let crashed = broken(
        "dimensions_crash",
        &[Quirk::ErrorWhen {
            trigger: Trigger::Field("dimensions"),
            status: 500,
            message: "Internal Server Error",
        }],
    );
    let crashed = audit(&crashed, &["DIM-001"]).await;
    assert_fails(
        &crashed,
        "DIM-001",
        &["dimensions=256", "500", "a 5xx is retried"],
    );
}

/// llama.cpp and Dynamo's vLLM worker: `dimensions` silently ignored.
fn dimensions_ignored() -> Persona {
    broken(
        "dimensions_ignored",
        &[Quirk::IgnoreFields(&["dimensions"])],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_dimensions_fails_dim_002_shrunk_to_d_1() {
    let audit = audit(&dimensions_ignored(), &["DIM-002"]).await;
    assert_fails(
        &audit,
        "DIM-002",
        &["(seed 7)", "to d=1: 200 with 256 values"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_replays_the_same_counterexample() {
    let ids = ["DIM-002", "DIM-005"];
    let first = audit(&dimensions_ignored(), &ids).await;
    let second = audit(&dimensions_ignored(), &ids).await;
    assert_eq!(outcome(&first, "DIM-002"), outcome(&second, "DIM-002"));
    assert_eq!(first.requests_sent, second.requests_sent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projection_other_than_the_prefix_fails_dim_003() {
    // Another projection than Matryoshka's prefix: the last d components.
    let last_components = broken(
        "last_components",
        &[Quirk::SliceDimensions {
            suffix: true,
            renormalise: true,
        }],
    );
    let audit = audit(&last_components, &["DIM-003"]).await;
    assert_fails(&audit, "DIM-003", &["cosine", "re-normalised first"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slicing_without_renormalising_fails_dim_004_only() {
    // Infinity and Dynamo's SGLang worker: sliced without re-normalising.
    let sliced = broken(
        "sliced_without_renormalising",
        &[Quirk::SliceDimensions {
            suffix: false,
            renormalise: false,
        }],
    );
    let audit = audit(&sliced, &["DIM-002", "DIM-003", "DIM-004"]).await;
    assert_fails(&audit, "DIM-004", &["L2 norm", "not re-normalised"]);
    assert_eq!(outcome(&audit, "DIM-003").0, Outcome::Pass);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_200_above_the_native_size_fails_dim_005() {
    // Older vLLM and Ollama: dimensions above the native size give the native size.
    let above_native = broken(
        "above_native_ignored",
        &[Quirk::IgnoreDimensionsAboveNative],
    );
    let audit = audit(&above_native, &["DIM-005"]).await;
    assert_fails(
        &audit,
        "DIM-005",
        &[
            "dimensions=512, above the native size 256",
            "answered 200 with 256 values",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_dimensions_fails_dim_005_and_the_retry_hazard() {
    // The study's Dynamo: any dimensions answered 500.
    let dimensions_crash = broken(
        "dimensions_crash",
        &[Quirk::ErrorWhen {
            trigger: Trigger::Field("dimensions"),
            status: 500,
            message: "Failed to fold embeddings stream",
        }],
    );
    let audit = audit(&dimensions_crash, &["DIM-005", "ERR-009"]).await;
    assert_fails(&audit, "DIM-005", &["answered 500"]);
    assert_fails(
        &audit,
        "ERR-009",
        &[
            "retry each twice",
            "POST /v1/embeddings (dimensions=512, above the native size 256) -> 500",
            "(dimensions=128, below the native size 256, without Matryoshka support) -> 500",
        ],
    );
    assert_eq!(
        observation(&audit, "matryoshka"),
        "no (detected: dimensions=128 answered 500)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_zero_and_negative_dimensions_fails_dim_006() {
    // Ollama: 0 and negative dimensions silently ignored.
    let non_positive = broken("non_positive_ignored", &[Quirk::IgnoreDimensionsBelowOne]);
    let audit = audit(&non_positive, &["DIM-006"]).await;
    assert_fails(
        &audit,
        "DIM-006",
        &["dimensions=0 answered 200", "dimensions=-1 answered 200"],
    );
}

// --- unknown fields broken on purpose ---

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_an_unknown_field_fails_unk_001_with_a_small_name() {
    // A Python proxy passing unknown kwargs on (litellm#6001).
    let unknown_fields_crash = broken(
        "unknown_fields_crash",
        &[Quirk::ErrorWhen {
            trigger: Trigger::UnknownField {
                known: &reference_server::KNOWN_FIELDS,
            },
            status: 500,
            message: "create() got an unexpected keyword argument",
        }],
    );
    let audit = audit(&unknown_fields_crash, &["UNK-001"]).await;
    assert_fails(
        &audit,
        "UNK-001",
        &["(seed 7)", "field \"", ": true", "answered 500"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_unknown_fields_is_a_policy_and_a_bare_refusal_fails_unk_002() {
    // vLLM, TEI, Ollama, Dynamo: unknown fields dropped (`input_type` kept here).
    let ignored = broken(
        "unknown_fields_ignored",
        &[Quirk::IgnoreUnknownFields {
            keep: &reference_server::KNOWN_FIELDS,
        }],
    );
    let ignoring = audit(&ignored, &["UNK-001", "UNK-002"]).await;
    assert_eq!(outcome(&ignoring, "UNK-001").0, Outcome::Pass);
    assert_eq!(observation(&ignoring, "unknown_fields"), "ignored (200)");
    let (outcome_2, reason) = outcome(&ignoring, "UNK-002");
    assert_eq!(outcome_2, Outcome::Skip, "{reason}");
    assert!(reason.contains("a documented policy"), "{reason}");
    // A validator's bare 400.
    let bare = broken(
        "unknown_fields_refused_bare",
        &[Quirk::ErrorWhen {
            trigger: Trigger::UnknownField {
                known: &reference_server::KNOWN_FIELDS,
            },
            status: 400,
            message: "invalid request",
        }],
    );
    let bare = audit(&bare, &["UNK-002"]).await;
    assert_fails(&bare, "UNK-002", &["refused with 400", "does not name"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_input_type_fails_unk_003_with_tokens_and_cosine() {
    // The study's Dynamo: input_type and every other vendor field dropped.
    let dropped = broken(
        "input_type_dropped",
        &[Quirk::IgnoreUnknownFields { keep: &[] }],
    );
    let audit = audit(&dropped, &["UNK-003"]).await;
    assert_fails(
        &audit,
        "UNK-003",
        &[
            "input_type: dropped (\"query\" and \"document\" both gave the bare input's vector: cosine 1.000000, prompt tokens 11 bare, 11 with the field)",
            "; instruction: dropped (",
            "silently, 200 with the bare input's vector and usage",
        ],
    );
    let result = audit
        .results
        .iter()
        .find(|r| r.id == "UNK-003")
        .expect("ran");
    assert!(
        result.evidence.len() >= 2,
        "bare and altered exchanges are evidence"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_instruction_than_the_declared_one_fails_unk_004() {
    // E5's "query: " prefix where the client declared Qwen3's instruction.
    let config = Config {
        query_instruction: "query: ".to_owned(),
        ..Config::default()
    };
    let settings = settings().with(EmbeddingsSettings {
        query_instruction: Some(qwen3_template()),
        ..embeddings()
    });
    let server = persona("other_instruction", config, &[]);
    let audit = common::audit_with(&server, settings, &clauses(&["UNK-004"])).await;
    assert_fails(
        &audit,
        "UNK-004",
        &[
            "input_type \"query\" gave cosine",
            "the --query-instruction template filled with the query",
        ],
    );
}

// --- over-length broken on purpose ---

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_over_length_input_fails_len_001_shrunk_to_the_first_word_over() {
    // The study's Dynamo: the worker's refusal answered 500 "Failed to fold embeddings
    // stream", which names no limit, so the limit search bisects.
    let over_length_crash = persona(
        "over_length_crash",
        rejecting(),
        &[Quirk::InStreamErrorsAs500],
    );
    let audit = audit(&over_length_crash, &["LEN-001", "ERR-009"]).await;
    assert_fails(&audit, "LEN-001", &["to 513 words: answered 500"]);
    assert_fails(
        &audit,
        "ERR-009",
        &["(input of 513 words, possibly over the input limit) -> 500"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncation_keeping_the_end_fails_len_002() {
    // vLLM's `truncation_side: left`: truncation that keeps the end of the input.
    let keeps_the_end = broken("keeps_the_end", &[Quirk::Truncate { keep_end: true }]);
    let audit = audit(&keeps_the_end, &["LEN-002"]).await;
    assert_fails(&audit, "LEN-002", &["truncation does not keep the start"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_that_says_nothing_about_length_fails_len_002() {
    let silent = persona(
        "silent_refusal",
        rejecting(),
        &[Quirk::OverlengthRefusalSays("bad request")],
    );
    let audit = audit(&silent, &["LEN-002"]).await;
    assert_fails(
        &audit,
        "LEN-002",
        &["says nothing about length", "\"bad request\""],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_other_than_the_one_relied_on_fails_len_003() {
    let relies_on_refusals = settings().with(EmbeddingsSettings {
        overlength: Overlength::Reject,
        ..embeddings()
    });
    let audit = common::audit_with(
        &personas::reference(),
        relies_on_refusals,
        &clauses(&["LEN-003"]),
    )
    .await;
    assert_fails(
        &audit,
        "LEN-003",
        &["--overlength reject", "policy is truncate"],
    );
    let relies_on_truncation = settings().with(EmbeddingsSettings {
        overlength: Overlength::Truncate,
        ..embeddings()
    });
    let server = persona("rejecting", rejecting(), &[]);
    let audit = common::audit_with(&server, relies_on_truncation, &clauses(&["LEN-003"])).await;
    assert_fails(
        &audit,
        "LEN-003",
        &["policy is reject (400)", "must truncate inputs itself"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_an_over_length_batch_item_fails_len_004() {
    let dropped = broken(
        "over_length_items_dropped",
        &[Quirk::DropOverlengthBatchItems],
    );
    let audit = audit(&dropped, &["LEN-004"]).await;
    assert_fails(
        &audit,
        "LEN-004",
        &["2 items for 3 inputs", "dropped from data"],
    );
}

// --- encoding broken on purpose ---

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base64_without_being_asked_fails_enc_001() {
    let base64_by_default = broken("base64_by_default", &[Quirk::Base64WhenUnset]);
    let audit = audit(&base64_by_default, &["ENC-001"]).await;
    assert_fails(
        &audit,
        "ENC-001",
        &["without encoding_format", "not an array of numbers"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_endian_base64_fails_enc_002_naming_the_byte_order() {
    let big_endian = broken("big_endian", &[Quirk::Base64BigEndian]);
    let audit = audit(&big_endian, &["ENC-002"]).await;
    assert_fails(
        &audit,
        "ENC-002",
        &["(seed 7)", "to a batch of 1 [", "big-endian float32"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn float_arrays_for_base64_fail_enc_002_and_enc_003() {
    // The study's old server, LocalAI, older Ollama: encoding_format ignored, floats
    // returned.
    let base64_ignored = broken(
        "base64_ignored",
        &[Quirk::IgnoreFields(&["encoding_format"])],
    );
    let audit = audit(&base64_ignored, &["ENC-002", "ENC-003"]).await;
    assert_fails(
        &audit,
        "ENC-002",
        &["is an array of numbers, not a base64 string"],
    );
    assert_fails(
        &audit,
        "ENC-003",
        &["as an array of numbers", "before 7.11 decodes it as base64"],
    );
    assert_eq!(
        observation(&audit, "base64"),
        "ignored: embeddings are an array of numbers"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answering_bogus_formats_fails_enc_004() {
    // worker-infinity-embedding#30: the field is not validated.
    let lenient = broken("lenient_encoding_format", &[Quirk::LenientEncodingFormat]);
    let audit = audit(&lenient, &["ENC-004"]).await;
    assert_fails(
        &audit,
        "ENC-004",
        &[
            "encoding_format \"bogus\" answered 200",
            "encoding_format 123 answered 200",
        ],
    );
}

// --- servers nobody here tuned for ---

/// A server whose bare input is a query and which honours `input_type` from the
/// document side: UNK-003 names it honoured, and fails only for the fields it drops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_type_honoured_from_the_document_side_is_not_called_dropped() {
    let audit = audit(&personas::asymmetric_cpu(), &["CONS-001", "UNK-003"]).await;
    let (outcome, reason) = outcome(&audit, "UNK-003");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(
        reason.contains("input_type: honoured (the document side differs")
            && reason.contains("so bare requests are embedded as queries"),
        "{reason}"
    );
    for dropped in [
        "instruction: dropped",
        "task: dropped",
        "prompt_name: dropped",
    ] {
        assert!(reason.contains(dropped), "{dropped}: {reason}");
    }
    assert!(!reason.contains("input_type: dropped"), "{reason}");
    assert!(
        observation(&audit, "instruction_fields")
            .starts_with("input_type: honoured (the document side differs"),
        "{}",
        observation(&audit, "instruction_fields")
    );
}

/// The query instruction declared with `--query-instruction` is compared with the
/// filled template sent on the side that embeds text as it is (the document side),
/// not bare, where this server would put its own instruction on top.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_declared_instruction_is_compared_on_the_side_that_embeds_text_as_it_is() {
    let settings = settings().with(EmbeddingsSettings {
        query_instruction: Some("query: {text}".parse().expect("a template")),
        ..embeddings()
    });
    let persona = personas::asymmetric_cpu();
    let audit = common::audit_with(&persona, settings, &clauses(&["UNK-003", "UNK-004"])).await;
    let (outcome, reason) = outcome(&audit, "UNK-004");
    assert_eq!(outcome, Outcome::Pass, "{reason}");
    assert!(
        reason.contains(
            "sent with input_type \"document\", as this server embeds bare input as a query"
        ),
        "{reason}"
    );
}

/// The study's mixed-length batch with nulls for its shorter items (jundot/omlx#3507):
/// RESP-004 judges every 200 of the run, so it cannot pass beside CONS-005's failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nulls_in_any_answer_fail_resp_004() {
    let persona = personas::breaker("CONS-005").expect("a breaker");
    let audit = audit(&persona, &["CONS-005", "RESP-004"]).await;
    assert_fails(&audit, "CONS-005", &["is null"]);
    assert_fails(&audit, "RESP-004", &["is null, not a number"]);
}

/// Silent truncation at 256 tokens with usage counting the whole input, the limit
/// found by the search (nothing declared): LEN-005 sees the over-counting 200s, and
/// LEN-002 does not call it a truncation that keeps the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncation_found_by_searching_that_counts_the_whole_input_fails_len_005() {
    let config = Config {
        max_input_tokens: 256,
        overlength: OverlengthPolicy::Truncate,
        ..Config::default()
    };
    let server = persona("overcounting_256", config, &[Quirk::UsageCountsWholeInput]);
    let (audit, log) = common::audit_logged(
        &server,
        settings(),
        &families(&["usage", "consistency", "over-length"]),
        std::time::Duration::from_secs(10),
    )
    .await;
    let (outcome_005, reason) = outcome(&audit, "LEN-005");
    assert_eq!(outcome_005, Outcome::Fail, "{reason}");
    assert!(
        reason.starts_with("truncation with over-reported usage, not aggregation"),
        "{reason}"
    );
    assert_fails(
        &audit,
        "LEN-002",
        &["but usage counts", "prompt tokens for the"],
    );
    let contradictions = common::contradictions(&audit, &log);
    assert!(contradictions.is_empty(), "{contradictions:#?}");
}

/// A server that refuses over 256 tokens but embeds only the first 128 of what it
/// accepts: LEN-006 says where it really cuts, to within a few words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_before_the_limit_is_found_where_it_is() {
    let config = Config {
        max_input_tokens: 256,
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    };
    let server = persona("cuts_at_128", config, &[Quirk::EmbedOnlyFirst(128)]);
    let (audit, log) = common::audit_logged(
        &server,
        settings(),
        &families(&["consistency", "over-length"]),
        std::time::Duration::from_secs(10),
    )
    .await;
    let (outcome, reason) = outcome(&audit, "LEN-006");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    let cut: usize = reason
        .split("after about ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a cut is named: {reason}"));
    assert!((125..=128).contains(&cut), "{reason}");
    let contradictions = common::contradictions(&audit, &log);
    assert!(contradictions.is_empty(), "{contradictions:#?}");
}

/// A server that serves one request at a time, its batch of 2048 inputs taking longer
/// than the client's timeout, is audited with otherwise default options (`--large-batch
/// 2048`): each request's deadline grows with its work at the pace the server showed,
/// and every clause gets a verdict. The serial persona at a sixth of its cost against a
/// 5-s floor (its largest batch about 7 s, as the real server's 45 s against the default
/// 30 s), so the test takes seconds; the bench `serial_audit` runs it at full size with
/// the default `--timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serial_server_is_audited_to_the_end_past_its_timeout() {
    let mut persona = personas::serial_cpu();
    persona
        .quirks
        .retain(|q| !matches!(q, Quirk::Serial { .. }));
    persona.quirks.push(Quirk::Serial {
        per_request_ms: 1,
        per_input_ms: 3,
        per_token_us: 60,
    });
    let started = std::time::Instant::now();
    let (audit, log) = common::audit_logged(
        &persona,
        Settings::default(),
        &common::every_clause(),
        std::time::Duration::from_secs(5),
    )
    .await;
    let unjudged: Vec<String> = audit
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Inconclusive)
        .map(|r| format!("{}: {}", r.id, r.reason))
        .collect();
    assert!(unjudged.is_empty(), "{unjudged:#?}");
    assert!(audit.aborted.is_none(), "{:?}", audit.aborted);
    let timed_out = log.iter().filter(|l| l.reply.is_none()).count();
    assert_eq!(timed_out, 0, "no request was given up on");
    let longest = log
        .iter()
        .map(|l| l.exchange.millis)
        .max()
        .unwrap_or_default();
    assert!(
        longest > 5000,
        "the largest batch outlasts the timeout: {longest} ms"
    );
    eprintln!(
        "serial_cpu: {} requests in {:.0} s",
        audit.requests_sent,
        started.elapsed().as_secs_f64()
    );
}

// --- the model's own facts, from its reference file ---

/// The model's `max_seq_length` in the reference file outranks where a server cuts: a
/// server that refuses over 1024 tokens but embeds only the first 256 of what it takes,
/// for a model that reads 4096, fails LEN-006 with where it cuts (the 4096- and
/// 2048-word inputs refused, 1024 embedded).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_own_length_outranks_where_the_server_cuts() {
    let served = Config {
        max_input_tokens: 1024,
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    };
    let model = Config {
        max_input_tokens: 4096,
        ..Config::default()
    };
    let server = persona("cuts_at_256", served, &[Quirk::EmbedOnlyFirst(256)]);
    let settings = settings().with(EmbeddingsSettings {
        reference: Some(common::known_answers(&persona("model", model, &[]))),
        ..embeddings()
    });
    let audit = common::audit_with(
        &server,
        settings,
        &families(&["consistency", "over-length"]),
    )
    .await;
    let (outcome, reason) = outcome(&audit, "LEN-006");
    assert_eq!(outcome, Outcome::Fail, "{reason}");
    assert!(
        reason.contains("max_seq_length 4096 in the reference file: the model's own")
            && reason.contains("4094 words answered 400"),
        "{reason}"
    );
    assert!(reason.contains("after about 25"), "{reason}");
}

/// Without --query-instruction, UNK-004 holds `input_type: "query"` to the model's own
/// query prompt from the reference file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_query_prompt_is_the_instruction_to_apply() {
    let right = personas::reference();
    let settings = || {
        settings().with(EmbeddingsSettings {
            reference: Some(common::known_answers(&right)),
            ..embeddings()
        })
    };
    let audit = common::audit_with(&right, settings(), &clauses(&["UNK-004"])).await;
    let (outcome_right, reason) = outcome(&audit, "UNK-004");
    assert_eq!(outcome_right, Outcome::Pass, "{reason}");
    assert!(
        reason.contains("the reference file's query prompt filled with the query"),
        "{reason}"
    );
    let other = persona(
        "e5_prompt",
        Config {
            query_instruction: "query: ".to_owned(),
            ..Config::default()
        },
        &[],
    );
    let audit = common::audit_with(&other, settings(), &clauses(&["UNK-004"])).await;
    assert_fails(&audit, "UNK-004", &["the reference file's query prompt"]);
}

/// Token ids are the model's input as they are: a reference whose tokenizer appends an
/// EOS, given with its ids, shows whether the server needs the client to send it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_ids_without_the_eos_are_reported_as_embedded_as_sent() {
    let server = personas::reference();
    let file = personas::known_answers(&server.config);
    let mut lines: Vec<serde_json::Value> = file
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let last_id = lines[1]["ids"]
        .as_array()
        .and_then(|ids| ids.last())
        .cloned();
    lines[0]["tokenizer"] = serde_json::json!({
        "normalizer": "NFC", "appends_eos": true, "eos_token": "<|endoftext|>", "eos_token_id": last_id,
    });
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let reference =
        embedcheck_core::contracts::embeddings::reference::Reference::parse(&text, "with an EOS")
            .expect("a valid reference");
    let settings = settings().with(EmbeddingsSettings {
        reference: Some(std::sync::Arc::new(reference)),
        ..embeddings()
    });
    let audit = common::audit_with(&server, settings, &clauses(&["REF-002"])).await;
    let line = observation(&audit, "token_ids_as_sent");
    assert!(
        line.starts_with("en-cat's token ids as the tokenizer makes them: cosine 1.0000")
            && line.contains(
                "ids are embedded as sent, so a client sending ids must append <|endoftext|> itself"
            ),
        "{line}"
    );
}
