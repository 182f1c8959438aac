//! The hosted-vendor personas over plain HTTP: each answers its documented URL with
//! the key in its documented header, refuses the wrong header, key or path the way
//! its vendor documents, and reads its vendor's field names. Then each audited through
//! its vendor profile, as `--vendor` audits the real API.

use embedcheck_core::audit::{ServerAudit, audit_server};
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::contracts;
use embedcheck_core::contracts::embeddings::EmbeddingsSettings;
use embedcheck_core::http::{Access, Secret, Transport};
use embedcheck_core::session::{Interrupt, Settings};
use embedcheck_core::vendor::Profile;
use embedcheck_core::verdict::Outcome;
use personas::vendors::{self, VOYAGE_DOCUMENT_PROMPT, VOYAGE_QUERY_PROMPT};
use personas::{API_KEY, Persona, PersonaServer};
use reference_server::DEFAULT_QUERY_INSTRUCTION;
use serde_json::{Value, json};
use std::time::Duration;

/// An answer: status and JSON body (`Value::Null` when the body is not JSON).
#[derive(Debug)]
struct Answer {
    status: u16,
    body: Value,
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

async fn send(method: &str, url: &str, headers: &[(&str, &str)], body: Option<&Value>) -> Answer {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a valid method");
    let mut request = client().request(method, url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await.expect("the persona answers");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a body");
    Answer {
        status,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    }
}

/// The header that carries the key for `persona`'s vendor.
fn key_header(persona: &Persona, key: &str) -> (&'static str, String) {
    if persona.name == "azure" {
        ("api-key", key.to_owned())
    } else {
        ("authorization", format!("Bearer {key}"))
    }
}

/// POSTs `body` to the persona's documented endpoint with the right key.
async fn embed(persona: &Persona, server: &PersonaServer, body: &Value) -> Answer {
    let (name, value) = key_header(persona, API_KEY);
    send(
        "POST",
        &server.endpoint_url(),
        &[(name, &value)],
        Some(body),
    )
    .await
}

/// A body with the persona's model and `extra` fields.
fn body(persona: &Persona, input: Value, extra: Value) -> Value {
    let mut body = json!({"model": persona.config.model_id, "input": input});
    if let (Some(fields), Value::Object(more)) = (body.as_object_mut(), extra) {
        fields.extend(more);
    }
    body
}

fn vector(answer: &Answer, item: usize) -> Vec<f64> {
    answer.body["data"][item]["embedding"]
        .as_array()
        .unwrap_or_else(|| panic!("a float vector: {answer:?}"))
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

fn url_with_path(server: &PersonaServer, path: &str) -> String {
    format!("http://{}{path}", server.addr())
}

#[tokio::test]
async fn every_vendor_answers_its_documented_url_with_the_key_in_its_header() {
    for persona in vendors::vendors() {
        let server = persona.start().await;
        let answer = embed(
            &persona,
            &server,
            &body(&persona, json!(["hello"]), json!({})),
        )
        .await;
        assert_eq!(answer.status, 200, "{}: {answer:?}", persona.name);
        assert_eq!(
            vector(&answer, 0).len(),
            persona.config.native_dimensions,
            "{}",
            persona.name
        );
        assert_eq!(answer.body["model"], persona.config.model_id.as_str());
    }
}

#[tokio::test]
async fn every_vendor_refuses_a_missing_or_wrong_key_with_401() {
    for persona in vendors::vendors() {
        let server = persona.start().await;
        let request = body(&persona, json!("hello"), json!({}));
        let url = server.endpoint_url();
        let missing = send("POST", &url, &[], Some(&request)).await;
        let (name, wrong) = key_header(&persona, "sk-wrong");
        let wrong = send("POST", &url, &[(name, &wrong)], Some(&request)).await;
        assert_eq!(
            (missing.status, wrong.status),
            (401, 401),
            "{}",
            persona.name
        );
    }
}

#[tokio::test]
async fn azure_reads_the_key_from_api_key_only_and_says_access_denied() {
    let azure = vendors::azure();
    let server = azure.start().await;
    let bearer = format!("Bearer {API_KEY}");
    let request = json!({"input": "hello"});
    let answer = send(
        "POST",
        &server.endpoint_url(),
        &[("authorization", &bearer)],
        Some(&request),
    )
    .await;
    assert_eq!(answer.status, 401);
    let error = answer.body["error"].as_object().expect("an error object");
    assert_eq!(error["code"], "401");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with("Access denied due to invalid subscription key"));
    assert_eq!(error.len(), 2, "no type or param: {error:?}");
}

#[tokio::test]
async fn azure_embeds_without_model_and_ignores_the_model_named() {
    let azure = vendors::azure();
    let server = azure.start().await;
    let bare = embed(&azure, &server, &json!({"input": "hello"})).await;
    let named = embed(
        &azure,
        &server,
        &json!({"input": "hello", "model": "anything"}),
    )
    .await;
    assert_eq!(
        (bare.status, named.status),
        (200, 200),
        "{bare:?} {named:?}"
    );
    assert_eq!(vector(&bare, 0), vector(&named, 0));
}

#[tokio::test]
async fn azure_answers_resource_not_found_without_api_version_or_off_its_path() {
    let azure = vendors::azure();
    let server = azure.start().await;
    let (name, key) = key_header(&azure, API_KEY);
    let request = json!({"input": "hello"});
    let not_found = json!({"error": {"code": "404", "message": "Resource not found"}});
    let endpoint = server.endpoint_url();
    let without_version = endpoint.split('?').next().unwrap().to_owned();
    let models = endpoint.replace("/embeddings?", "/models?");
    let v1 = url_with_path(&server, "/v1/embeddings?api-version=2024-10-21");
    for (method, url) in [
        ("POST", without_version.as_str()),
        ("GET", models.as_str()),
        ("POST", v1.as_str()),
    ] {
        let answer = send(method, url, &[(name, &key)], Some(&request)).await;
        assert_eq!(answer.status, 404, "{method} {url}: {answer:?}");
        assert_eq!(answer.body, not_found, "{method} {url}");
    }
}

#[tokio::test]
async fn vendors_with_their_own_path_answer_404_at_the_openai_one() {
    for persona in [vendors::gemini_openai(), vendors::cohere_compat()] {
        let server = persona.start().await;
        let bearer = format!("Bearer {API_KEY}");
        let request = body(&persona, json!("hello"), json!({}));
        for path in ["/v1/embeddings", "/embeddings"] {
            let url = url_with_path(&server, path);
            let answer = send("POST", &url, &[("authorization", &bearer)], Some(&request)).await;
            assert_eq!(answer.status, 404, "{} {path}", persona.name);
        }
    }
    let mistral = vendors::mistral();
    let server = mistral.start().await;
    let bearer = format!("Bearer {API_KEY}");
    let url = url_with_path(&server, "/embeddings");
    let request = body(&mistral, json!("hello"), json!({}));
    let answer = send("POST", &url, &[("authorization", &bearer)], Some(&request)).await;
    assert_eq!(answer.status, 404, "no alias without /v1");
}

#[tokio::test]
async fn gemini_refuses_base64_and_serves_floats() {
    let gemini = vendors::gemini_openai();
    let server = gemini.start().await;
    let base64 = body(
        &gemini,
        json!("hello"),
        json!({"encoding_format": "base64"}),
    );
    assert_eq!(embed(&gemini, &server, &base64).await.status, 400);
    let float = body(&gemini, json!("hello"), json!({"encoding_format": "float"}));
    assert_eq!(embed(&gemini, &server, &float).await.status, 200);
}

#[tokio::test]
async fn mistral_sizes_with_output_dimension_and_forbids_dimensions_with_422() {
    let mistral = vendors::mistral();
    let server = mistral.start().await;
    let sized = body(&mistral, json!("hello"), json!({"output_dimension": 256}));
    let answer = embed(&mistral, &server, &sized).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(vector(&answer, 0).len(), 256);

    for extra in [json!({"dimensions": 256}), json!({"user": "u"})] {
        let request = body(&mistral, json!("hello"), extra.clone());
        let answer = embed(&mistral, &server, &request).await;
        assert_eq!(answer.status, 422, "{extra}: {answer:?}");
        assert_eq!(answer.body["object"], "error");
        let detail = &answer.body["message"]["detail"][0];
        assert_eq!(detail["msg"], "Extra inputs are not permitted", "{extra}");
        assert_eq!(detail["type"], "extra_forbidden");
    }

    let base64 = body(
        &mistral,
        json!("hello"),
        json!({"encoding_format": "base64"}),
    );
    let answer = embed(&mistral, &server, &base64).await;
    assert_eq!(vector(&answer, 0).len(), 1536, "floats even for base64");

    let zero = body(&mistral, json!("hello"), json!({"output_dimension": 0}));
    let answer = embed(&mistral, &server, &zero).await;
    assert_eq!(answer.status, 400);
    let flat = &answer.body;
    assert_eq!(flat["object"], "error");
    assert_eq!(flat["raw_status_code"], 400);
    assert_eq!(flat["param"], "output_dimension", "{flat}");
    assert!(
        flat["message"]
            .as_str()
            .unwrap()
            .contains("'output_dimension'")
    );
    assert_eq!(flat.get("error"), None);
}

#[tokio::test]
async fn voyage_reads_its_fields_and_prompts_and_refuses_float() {
    let voyage = vendors::voyage();
    let server = voyage.start().await;
    let call = |extra: Value| body(&voyage, json!(["hello"]), extra);

    let sized = embed(&voyage, &server, &call(json!({"output_dimension": 256}))).await;
    assert_eq!(vector(&sized, 0).len(), 256, "{sized:?}");
    for refused in [
        json!({"dimensions": 256}),
        json!({"encoding_format": "float"}),
        json!({"input_type": "passage"}),
    ] {
        let answer = embed(&voyage, &server, &call(refused.clone())).await;
        assert_eq!(answer.status, 400, "{refused}: {answer:?}");
        let detail = answer.body["detail"].as_str();
        assert!(
            detail.is_some_and(|d| !d.is_empty()),
            "{refused}: {answer:?}"
        );
        assert_eq!(answer.body.as_object().map(|b| b.len()), Some(1));
    }
    let base64 = embed(
        &voyage,
        &server,
        &call(json!({"encoding_format": "base64"})),
    )
    .await;
    assert!(
        base64.body["data"][0]["embedding"].is_string(),
        "{base64:?}"
    );
    let nulls = json!({"encoding_format": null, "input_type": null, "output_dimension": null});
    let plain = embed(&voyage, &server, &call(nulls)).await;
    assert_eq!(plain.status, 200, "{plain:?}");

    for (kind, prompt) in [
        ("query", VOYAGE_QUERY_PROMPT),
        ("document", VOYAGE_DOCUMENT_PROMPT),
    ] {
        let typed = embed(&voyage, &server, &call(json!({"input_type": kind}))).await;
        let spelled = body(&voyage, json!([format!("{prompt}hello")]), json!({}));
        let spelled = embed(&voyage, &server, &spelled).await;
        assert_eq!(vector(&typed, 0), vector(&spelled, 0), "{kind}");
        assert_ne!(vector(&typed, 0), vector(&plain, 0), "{kind}");
    }

    let batch: Vec<String> = (0..1001).map(|i| format!("text {i}")).collect();
    let answer = embed(&voyage, &server, &body(&voyage, json!(batch), json!({}))).await;
    assert_eq!(answer.status, 400, "at most 1000 inputs");
}

#[tokio::test]
async fn jina_reads_task_and_embedding_type_and_validates_with_422() {
    let jina = vendors::jina();
    let server = jina.start().await;
    let call = |extra: Value| body(&jina, json!(["hello"]), extra);

    let query = embed(&jina, &server, &call(json!({"task": "retrieval.query"}))).await;
    let spelled = body(
        &jina,
        json!([format!("{DEFAULT_QUERY_INSTRUCTION}hello")]),
        json!({}),
    );
    let spelled = embed(&jina, &server, &spelled).await;
    assert_eq!(vector(&query, 0), vector(&spelled, 0));
    let passage = embed(&jina, &server, &call(json!({"task": "retrieval.passage"}))).await;
    let plain = embed(&jina, &server, &call(json!({}))).await;
    assert_eq!(vector(&passage, 0), vector(&plain, 0));

    let sized = embed(&jina, &server, &call(json!({"dimensions": 64}))).await;
    assert_eq!(vector(&sized, 0).len(), 64);
    let base64 = call(json!({"embedding_type": "base64", "normalized": true}));
    let base64 = embed(&jina, &server, &base64).await;
    assert!(
        base64.body["data"][0]["embedding"].is_string(),
        "{base64:?}"
    );

    for (extra, kind, field) in [
        (json!({"task": "query"}), "literal_error", "task"),
        (
            json!({"input_type": "query"}),
            "extra_forbidden",
            "input_type",
        ),
    ] {
        let answer = embed(&jina, &server, &call(extra.clone())).await;
        assert_eq!(answer.status, 422, "{extra}: {answer:?}");
        let detail = answer.body["detail"].as_str().unwrap_or_default();
        assert!(detail.starts_with("[RID: "), "{extra}: {answer:?}");
        let error = &answer.body["errors"][0];
        assert_eq!(error["type"], kind, "{extra}");
        let expected = format!("body -> jina-embeddings-v3 -> {field}");
        assert_eq!(error["field"], expected.as_str());
    }
}

#[tokio::test]
async fn cohere_compat_serves_base64_at_its_compatibility_path() {
    let cohere = vendors::cohere_compat();
    let server = cohere.start().await;
    assert!(
        server
            .endpoint_url()
            .ends_with("/compatibility/v1/embeddings")
    );
    let request = body(
        &cohere,
        json!("hello"),
        json!({"encoding_format": "base64"}),
    );
    let answer = embed(&cohere, &server, &request).await;
    assert!(
        answer.body["data"][0]["embedding"].is_string(),
        "{answer:?}"
    );
}

/// Each vendor persona audited as a user audits the vendor: through its endpoint URL
/// and its profile (`--vendor`), every catalogued clause. The run reaches the server
/// (the plain request embeds; without the key it is refused, so AUTH-001 passes), and
/// every deviation the profile documents comes out as a documented failure, exactly
/// as expected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_vendor_is_audited_through_its_profile() {
    for persona in vendors::vendors() {
        let profile_name = persona.name.replace('_', "-");
        let profile = Profile::named(&profile_name).expect("a shipped profile");
        let server = persona.start().await;
        let audit = audit_through(&persona, &server, &profile).await;
        let outcome = |id: &str| {
            let r = audit.results.iter().find(|r| r.id == id).expect("ran");
            (r.outcome, r.reason.clone())
        };
        assert_eq!(audit.aborted, None, "{}", persona.name);
        assert_eq!(
            outcome("IN-001").0,
            Outcome::Pass,
            "{}: {:?}",
            persona.name,
            outcome("IN-001")
        );
        assert_eq!(
            outcome("AUTH-001").0,
            Outcome::Pass,
            "{}: {:?}",
            persona.name,
            outcome("AUTH-001")
        );
        for id in profile.documented.keys() {
            let result = audit.results.iter().find(|r| &r.id == id).expect("ran");
            let matched = result.expectation.as_ref().expect("documented");
            assert!(
                matched.as_expected
                    && matched.expectation.documented_by.as_deref() == Some(&profile_name),
                "{}: {id} documented as {:?}, came out {:?}: {}",
                persona.name,
                matched.expectation.expect,
                result.outcome,
                result.reason
            );
        }
    }
}

/// The Azure persona with a wrong key: the run stops at once as not audited, naming
/// access, and no clause passes or fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_key_to_azure_is_access_refused_not_a_verdict() {
    let persona = vendors::azure();
    let profile = Profile::named("azure").expect("shipped");
    let server = persona.start().await;
    let started = std::time::Instant::now();
    let audit = audit_with_key(&persona, &server, &profile, "sk-wrong").await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let why = audit.aborted.expect("not audited");
    assert!(
        why.starts_with("access refused: the plain request was answered 401"),
        "{why}"
    );
    assert!(
        audit
            .results
            .iter()
            .all(|r| matches!(r.outcome, Outcome::Skip | Outcome::Inconclusive))
    );
    assert!(audit.requests_sent <= 2, "{} requests", audit.requests_sent);
}

async fn audit_through(
    persona: &Persona,
    server: &PersonaServer,
    profile: &Profile,
) -> ServerAudit {
    audit_with_key(persona, server, profile, API_KEY).await
}

/// Audits `server` on every clause, addressed as `profile` says, with `key`, and judges
/// the results against the profile's documented deviations.
async fn audit_with_key(
    persona: &Persona,
    server: &PersonaServer,
    profile: &Profile,
    key: &str,
) -> ServerAudit {
    let target = contracts::target(&server.endpoint_url()).expect("a persona URL");
    let access = Access {
        key: Some(Secret::new(key.to_owned())),
        key_header: profile.key_header().expect("a valid header"),
        fields: profile.fields(),
        ..Access::default()
    };
    let mut settings = Settings {
        model: profile.send_model.then(|| persona.config.model_id.clone()),
        seed: 7,
        ..Settings::default()
    }
    .with(EmbeddingsSettings {
        large_batch: 64,
        ..EmbeddingsSettings::default()
    });
    profile.adjust(&mut settings, target.is_loopback());
    let transport =
        Transport::with_access(target, access, Duration::from_secs(10)).expect("a plain client");
    let clauses: Vec<&Clause> = Catalogue::shipped().clauses.iter().collect();
    let mut audit = audit_server(
        transport,
        settings,
        persona.name.to_owned(),
        &clauses,
        Interrupt::default(),
    )
    .await;
    audit.judge(&profile.expectations(), false);
    audit
}
