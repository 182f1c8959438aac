//! The migration hazards (dimensions, unknown fields, over-length, encoding, the retry
//! hazard): the reference server keeps every clause in each of its configurations, and
//! a reference server broken on purpose fails exactly the clause it breaks, with a
//! reason a server author can act on.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use common::*;
use embedcheck_core::audit::ServerAudit;
use embedcheck_core::declared::{Matryoshka, Overlength, QueryTemplate};
use embedcheck_core::session::Settings;
use embedcheck_core::verdict::Outcome;
use reference_server::{ApiError, Config, HttpResponse, OverlengthPolicy, tokenize};
use serde_json::{Value, json};

/// The families this file protects.
const FAMILIES: [&str; 5] = [
    "dimensions",
    "unknown-fields",
    "over-length",
    "encoding",
    "errors",
];

/// Every selected clause passed, except `skipped`, which were skipped.
fn all_pass_except(audit: &ServerAudit, skipped: &[&str]) {
    assert!(audit.aborted.is_none(), "{:?}", audit.aborted);
    for result in &audit.results {
        let expected = if skipped.contains(&result.id.as_str()) {
            Outcome::Skip
        } else {
            Outcome::Pass
        };
        assert_eq!(result.outcome, expected, "{}: {}", result.id, result.reason);
    }
}

/// A fact as schema 1.0's observation line ("" when not learned).
fn observation(audit: &ServerAudit, name: &str) -> String {
    audit.facts.observations().remove(name).unwrap_or_default()
}

// --- the reference server keeps the clauses ---

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_reference_server_keeps_every_clause() {
    let audit = audit_reference(Config::default(), settings(), &families(&FAMILIES)).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_server_without_matryoshka_refuses_truncation_cleanly() {
    let config = Config {
        matryoshka: false,
        ..Config::default()
    };
    let audit = audit_reference(config, settings(), &families(&["dimensions", "errors"])).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejecting_reference_server_keeps_the_over_length_clauses() {
    let config = Config {
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    };
    let settings = Settings {
        overlength: Overlength::Reject,
        ..settings()
    };
    let audit = audit_reference(config, settings, &families(&["over-length", "errors"])).await;
    all_pass_except(&audit, &[]);
    assert_eq!(
        observation(&audit, "input_limit_tokens"),
        "512 (found: 1024 words refused with 400, naming 512)"
    );
    assert_eq!(observation(&audit, "overlength_policy"), "reject (400)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_support_limit_and_instruction_are_used() {
    let settings = Settings {
        matryoshka: Matryoshka::Yes,
        overlength: Overlength::Truncate,
        max_input_tokens: Some(512),
        query_instruction: Some(
            r"Instruct: {task}\nQuery: {text}"
                .parse::<QueryTemplate>()
                .expect("a template"),
        ),
        ..settings()
    };
    let audit = audit_reference(Config::default(), settings, &families(&FAMILIES)).await;
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

/// A rejecting server whose refusals do not name the limit: the search bisects.
fn unnamed_limit(forward: &Forward<'_>, body: Value) -> HttpResponse {
    let response = forward.send(&body);
    if json_of(&response)["error"]["code"] == "context_length_exceeded" {
        let message = json!({"error": {"message": "input is too long", "type": "invalid_request_error", "param": "input", "code": null}});
        return with_json(response, &message);
    }
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_search_bisects_when_the_refusal_names_no_limit() {
    let config = Config {
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    };
    let ids = ["LEN-001", "LEN-002", "LEN-004"];
    let audit = audit_altered(config, unnamed_limit, settings(), &ids).await;
    all_pass_except(&audit, &[]);
    let limit = observation(&audit, "input_limit_tokens");
    assert!(
        limit.starts_with("512 (found: 512 words (512 tokens) accepted, 51"),
        "{limit}"
    );
}

// --- dimensions broken on purpose ---

/// Newest vLLM on a model without Matryoshka: any dimensions refused.
fn dimensions_refused(forward: &Forward<'_>, body: Value) -> HttpResponse {
    if body.get("dimensions").is_some() {
        return ApiError::DimensionsNotSupported.into();
    }
    forward.send(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusing_the_native_size_fails_dim_001() {
    let audit = audit_altered(
        Config::default(),
        dimensions_refused,
        settings(),
        &["DIM-001"],
    )
    .await;
    assert_fails(
        &audit,
        "DIM-001",
        &[
            "dimensions=256",
            "400",
            "clients that always send dimensions break",
        ],
    );
}

/// llama.cpp and Dynamo's vLLM worker: dimensions silently ignored.
fn dimensions_ignored(forward: &Forward<'_>, body: Value) -> HttpResponse {
    forward.send(&without(body, "dimensions"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_dimensions_fails_dim_002_shrunk_to_d_1() {
    let audit = audit_altered(
        Config::default(),
        dimensions_ignored,
        settings(),
        &["DIM-002"],
    )
    .await;
    assert_fails(
        &audit,
        "DIM-002",
        &["(seed 7)", "to d=1: 200 with 256 values"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_replays_the_same_counterexample() {
    let first = audit_altered(
        Config::default(),
        dimensions_ignored,
        settings(),
        &["DIM-002", "DIM-005"],
    )
    .await;
    let second = audit_altered(
        Config::default(),
        dimensions_ignored,
        settings(),
        &["DIM-002", "DIM-005"],
    )
    .await;
    assert_eq!(outcome(&first, "DIM-002"), outcome(&second, "DIM-002"));
    assert_eq!(first.requests_sent, second.requests_sent);
}

/// Rewrites every vector of a `dimensions` request with `cut`, applied to the native
/// vector and d.
fn truncated_by(
    forward: &Forward<'_>,
    body: Value,
    cut: fn(&[f64], usize) -> Vec<f64>,
) -> HttpResponse {
    let Some(d) = body["dimensions"].as_u64().map(|d| d as usize) else {
        return forward.send(&body);
    };
    let response = forward.send(&without(body, "dimensions"));
    let mut json = json_of(&response);
    for item in json["data"].as_array_mut().into_iter().flatten() {
        let native: Vec<f64> = item["embedding"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_f64)
            .collect();
        if d <= native.len() {
            item["embedding"] = json!(cut(&native, d));
        }
    }
    with_json(response, &json)
}

fn unit(v: &[f64]) -> Vec<f64> {
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter().map(|x| x / norm).collect()
}

/// Another projection than Matryoshka's prefix: the last d components.
fn last_components(forward: &Forward<'_>, body: Value) -> HttpResponse {
    truncated_by(forward, body, |v, d| unit(&v[v.len() - d..]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projection_other_than_the_prefix_fails_dim_003() {
    let audit = audit_altered(Config::default(), last_components, settings(), &["DIM-003"]).await;
    assert_fails(&audit, "DIM-003", &["cosine", "re-normalised first"]);
}

/// Infinity and Dynamo's SGLang worker: sliced without re-normalising.
fn sliced_without_renormalising(forward: &Forward<'_>, body: Value) -> HttpResponse {
    truncated_by(forward, body, |v, d| v[..d].to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slicing_without_renormalising_fails_dim_004_only() {
    let ids = ["DIM-002", "DIM-003", "DIM-004"];
    let audit = audit_altered(
        Config::default(),
        sliced_without_renormalising,
        settings(),
        &ids,
    )
    .await;
    assert_fails(&audit, "DIM-004", &["L2 norm", "not re-normalised"]);
    assert_eq!(outcome(&audit, "DIM-003").0, Outcome::Pass);
}

/// Older vLLM: dimensions above the native size silently give the native size.
fn above_native_ignored(forward: &Forward<'_>, body: Value) -> HttpResponse {
    let native = forward.config().native_dimensions as u64;
    if body["dimensions"].as_u64().is_some_and(|d| d > native) {
        return forward.send(&without(body, "dimensions"));
    }
    forward.send(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_200_above_the_native_size_fails_dim_005() {
    let audit = audit_altered(
        Config::default(),
        above_native_ignored,
        settings(),
        &["DIM-005"],
    )
    .await;
    assert_fails(
        &audit,
        "DIM-005",
        &[
            "dimensions=512, above the native size 256",
            "answered 200 with 256 values",
        ],
    );
}

/// The study's Dynamo: any dimensions answered 500.
fn dimensions_crash(forward: &Forward<'_>, body: Value) -> HttpResponse {
    if body.get("dimensions").is_some() {
        return internal_error("Failed to fold embeddings stream");
    }
    forward.send(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_dimensions_fails_dim_005_and_the_retry_hazard() {
    let ids = ["DIM-005", "ERR-009"];
    let audit = audit_altered(Config::default(), dimensions_crash, settings(), &ids).await;
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

/// Ollama: 0 and negative dimensions silently ignored.
fn non_positive_ignored(forward: &Forward<'_>, body: Value) -> HttpResponse {
    if body["dimensions"].as_i64().is_some_and(|d| d <= 0) {
        return forward.send(&without(body, "dimensions"));
    }
    forward.send(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_zero_and_negative_dimensions_fails_dim_006() {
    let audit = audit_altered(
        Config::default(),
        non_positive_ignored,
        settings(),
        &["DIM-006"],
    )
    .await;
    assert_fails(
        &audit,
        "DIM-006",
        &["dimensions=0 answered 200", "dimensions=-1 answered 200"],
    );
}

// --- unknown fields broken on purpose ---

fn unknown_fields_crash(forward: &Forward<'_>, body: Value) -> HttpResponse {
    if has_unknown_field(&body) {
        return internal_error("create() got an unexpected keyword argument");
    }
    forward.send(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_an_unknown_field_fails_unk_001_with_a_small_name() {
    let audit = audit_altered(
        Config::default(),
        unknown_fields_crash,
        settings(),
        &["UNK-001"],
    )
    .await;
    assert_fails(
        &audit,
        "UNK-001",
        &["(seed 7)", "field \"", ": true", "answered 500"],
    );
}

/// vLLM, TEI, Ollama, Dynamo: unknown fields dropped.
fn unknown_fields_ignored(forward: &Forward<'_>, body: Value) -> HttpResponse {
    forward.send(&only(body, &reference_server::KNOWN_FIELDS))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignoring_unknown_fields_passes_unk_001_and_fails_unk_002() {
    let ids = ["UNK-001", "UNK-002"];
    let audit = audit_altered(Config::default(), unknown_fields_ignored, settings(), &ids).await;
    assert_eq!(outcome(&audit, "UNK-001").0, Outcome::Pass);
    assert_eq!(observation(&audit, "unknown_fields"), "ignored (200)");
    assert_fails(&audit, "UNK-002", &["ignored (200)"]);
}

/// The study's Dynamo: input_type and every other vendor field dropped.
fn input_type_dropped(forward: &Forward<'_>, body: Value) -> HttpResponse {
    forward.send(&only(
        body,
        &["model", "input", "encoding_format", "dimensions", "user"],
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_input_type_fails_unk_003_with_tokens_and_cosine() {
    let audit = audit_altered(
        Config::default(),
        input_type_dropped,
        settings(),
        &["UNK-003"],
    )
    .await;
    assert_fails(
        &audit,
        "UNK-003",
        &[
            "silently dropped, 200 with the bare input's vector and usage",
            "input_type (cosine 1.000000; prompt tokens 11 bare, 11 with the field)",
            "; instruction (cosine",
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
    let config = Config {
        query_instruction: "query: ".to_owned(),
        ..Config::default()
    };
    let settings = Settings {
        query_instruction: Some(
            r"Instruct: {task}\nQuery: {text}"
                .parse()
                .expect("a template"),
        ),
        ..settings()
    };
    let audit = audit_reference(config, settings, &clauses(&["UNK-004"])).await;
    assert_fails(
        &audit,
        "UNK-004",
        &["input_type \"query\" gave cosine", "template-filled string"],
    );
}

// --- over-length broken on purpose ---

/// llama.cpp and Dynamo: over-length input answered 500.
fn over_length_crash(forward: &Forward<'_>, body: Value) -> HttpResponse {
    let response = forward.send(&body);
    if json_of(&response)["error"]["code"] == "context_length_exceeded" {
        return internal_error("Failed to fold embeddings stream");
    }
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_for_over_length_input_fails_len_001_shrunk_to_the_first_word_over() {
    let config = Config {
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    };
    let ids = ["LEN-001", "ERR-009"];
    let audit = audit_altered(config, over_length_crash, settings(), &ids).await;
    assert_fails(&audit, "LEN-001", &["to 513 words: answered 500"]);
    assert_fails(
        &audit,
        "ERR-009",
        &["(input of 513 words, possibly over the input limit) -> 500"],
    );
}

/// Truncation that keeps the end of the input instead of its start.
fn keeps_the_end(forward: &Forward<'_>, mut body: Value) -> HttpResponse {
    let (limit, vocab) = (
        forward.config().max_input_tokens,
        forward.config().vocab_size,
    );
    let last = |text: &str| {
        let ids = tokenize(text, vocab);
        json!(ids[ids.len().saturating_sub(limit)..])
    };
    body["input"] = match &body["input"] {
        Value::String(text) => last(text),
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .map(|t| last(t.as_str().unwrap_or_default()))
            .collect(),
        other => other.clone(),
    };
    forward.send(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncation_keeping_the_end_fails_len_002() {
    let audit = audit_altered(Config::default(), keeps_the_end, settings(), &["LEN-002"]).await;
    assert_fails(&audit, "LEN-002", &["truncation does not keep the start"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_that_says_nothing_about_length_fails_len_002() {
    fn silent(forward: &Forward<'_>, body: Value) -> HttpResponse {
        let response = forward.send(&body);
        if json_of(&response)["error"]["code"] == "context_length_exceeded" {
            return with_json(
                response,
                &json!({"error": {"message": "bad request", "type": "invalid_request_error", "param": null, "code": null}}),
            );
        }
        response
    }
    let config = Config {
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    };
    let audit = audit_altered(config, silent, settings(), &["LEN-002"]).await;
    assert_fails(
        &audit,
        "LEN-002",
        &["says nothing about length", "\"bad request\""],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_other_than_the_one_relied_on_fails_len_003() {
    let relies_on_refusals = Settings {
        overlength: Overlength::Reject,
        ..settings()
    };
    let audit = audit_reference(
        Config::default(),
        relies_on_refusals,
        &clauses(&["LEN-003"]),
    )
    .await;
    assert_fails(
        &audit,
        "LEN-003",
        &["--overlength reject", "policy is truncate"],
    );
    let rejecting = Config {
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    };
    let relies_on_truncation = Settings {
        overlength: Overlength::Truncate,
        ..settings()
    };
    let audit = audit_reference(rejecting, relies_on_truncation, &clauses(&["LEN-003"])).await;
    assert_fails(
        &audit,
        "LEN-003",
        &["policy is reject (400)", "must truncate inputs itself"],
    );
}

/// A batch whose over-length items vanish from data.
fn over_length_items_dropped(forward: &Forward<'_>, body: Value) -> HttpResponse {
    let response = forward.send(&body);
    let Some(inputs) = body["input"].as_array() else {
        return response;
    };
    let (limit, vocab) = (
        forward.config().max_input_tokens,
        forward.config().vocab_size,
    );
    let mut json = json_of(&response);
    if let Some(data) = json["data"].as_array_mut() {
        data.retain(|item| {
            let index = item["index"].as_u64().unwrap_or_default() as usize;
            let text = inputs
                .get(index)
                .and_then(Value::as_str)
                .unwrap_or_default();
            tokenize(text, vocab).len() <= limit
        });
    }
    with_json(response, &json)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_an_over_length_batch_item_fails_len_004() {
    let audit = audit_altered(
        Config::default(),
        over_length_items_dropped,
        settings(),
        &["LEN-004"],
    )
    .await;
    assert_fails(
        &audit,
        "LEN-004",
        &["2 items for 3 inputs", "dropped from data"],
    );
}

// --- encoding broken on purpose ---

fn base64_by_default(forward: &Forward<'_>, mut body: Value) -> HttpResponse {
    if body.get("encoding_format").is_none() {
        body["encoding_format"] = json!("base64");
    }
    forward.send(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn base64_without_being_asked_fails_enc_001() {
    let audit = audit_altered(
        Config::default(),
        base64_by_default,
        settings(),
        &["ENC-001"],
    )
    .await;
    assert_fails(
        &audit,
        "ENC-001",
        &["without encoding_format", "not an array of numbers"],
    );
}

/// base64 of big-endian float32.
fn big_endian(forward: &Forward<'_>, body: Value) -> HttpResponse {
    let response = forward.send(&body);
    let mut json = json_of(&response);
    for item in json["data"].as_array_mut().into_iter().flatten() {
        let Some(bytes) = item["embedding"]
            .as_str()
            .and_then(|t| BASE64.decode(t).ok())
        else {
            continue;
        };
        let swapped: Vec<u8> = bytes
            .chunks_exact(4)
            .flat_map(|b| [b[3], b[2], b[1], b[0]])
            .collect();
        item["embedding"] = json!(BASE64.encode(swapped));
    }
    with_json(response, &json)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_endian_base64_fails_enc_002_naming_the_byte_order() {
    let audit = audit_altered(Config::default(), big_endian, settings(), &["ENC-002"]).await;
    assert_fails(
        &audit,
        "ENC-002",
        &["(seed 7)", "to a batch of 1 [", "big-endian float32"],
    );
}

/// LocalAI, older Ollama: encoding_format ignored, floats returned.
fn base64_ignored(forward: &Forward<'_>, body: Value) -> HttpResponse {
    forward.send(&without(body, "encoding_format"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn float_arrays_for_base64_fail_enc_002_and_enc_003() {
    let ids = ["ENC-002", "ENC-003"];
    let audit = audit_altered(Config::default(), base64_ignored, settings(), &ids).await;
    assert_fails(
        &audit,
        "ENC-002",
        &["is an array of numbers, not a base64 string"],
    );
    assert_fails(
        &audit,
        "ENC-003",
        &["as an array of numbers", "a quarter of the length"],
    );
    assert_eq!(
        observation(&audit, "base64"),
        "ignored: embeddings are an array of numbers"
    );
}

fn unknown_formats_as_floats(forward: &Forward<'_>, body: Value) -> HttpResponse {
    let known = ["float", "base64"].map(Value::from);
    if body
        .get("encoding_format")
        .is_some_and(|f| !known.contains(f))
    {
        return forward.send(&without(body, "encoding_format"));
    }
    forward.send(&body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answering_bogus_formats_fails_enc_004() {
    let audit = audit_altered(
        Config::default(),
        unknown_formats_as_floats,
        settings(),
        &["ENC-004"],
    )
    .await;
    assert_fails(
        &audit,
        "ENC-004",
        &[
            "encoding_format \"bogus\" answered 200",
            "encoding_format 123 answered 200",
        ],
    );
}
