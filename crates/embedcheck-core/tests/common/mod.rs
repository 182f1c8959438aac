//! Servers for testing the tester: the reference server as it is, and the reference
//! server altered on purpose behind wiremock, one alteration per broken clause.
//! Everything listens on 127.0.0.1.

use embedcheck_core::audit::ServerAudit;
use embedcheck_core::audit::audit_server;
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::http::{Target, Transport};
use embedcheck_core::session::{Interrupt, Settings};
use embedcheck_core::verdict::Outcome;
use reference_server::{ApiError, Config, Engine, HttpRequest, HttpResponse, KNOWN_FIELDS};
use serde_json::Value;
use std::time::Duration;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

/// The settings of every test run: a small large-batch probe keeps runs fast.
pub fn settings() -> Settings {
    Settings {
        large_batch: 16,
        seed: 7,
        ..Settings::default()
    }
}

/// The catalogue entries of `ids`, in catalogue order.
pub fn clauses(ids: &[&str]) -> Vec<&'static Clause> {
    Catalogue::shipped()
        .clauses
        .iter()
        .filter(|c| ids.contains(&c.id.as_str()))
        .collect()
}

/// The catalogue entries of whole families.
pub fn families(names: &[&str]) -> Vec<&'static Clause> {
    Catalogue::shipped()
        .clauses
        .iter()
        .filter(|c| names.contains(&c.family.as_str()))
        .collect()
}

/// Audits `base_url` on `selected`.
pub async fn audit_url(base_url: &str, settings: Settings, selected: &[&Clause]) -> ServerAudit {
    let transport = Transport::new(
        Target::parse(base_url).expect("a test URL"),
        None,
        Duration::from_secs(10),
    );
    audit_server(
        transport,
        settings,
        "test".to_owned(),
        selected,
        Interrupt::default(),
    )
    .await
}

/// Audits a reference server with `config` on `selected`.
pub async fn audit_reference(
    config: Config,
    settings: Settings,
    selected: &[&Clause],
) -> ServerAudit {
    let server = reference_server::spawn(config, ([127, 0, 0, 1], 0).into())
        .await
        .expect("the reference server starts on loopback");
    audit_url(&server.base_url(), settings, selected).await
}

/// How a broken server answers one embeddings request with a JSON body: it may
/// rewrite the request, forward it to the reference engine, and rewrite the answer.
pub type Alteration = fn(&Forward<'_>, Value) -> HttpResponse;

/// Forwards a (rewritten) request body to the reference engine.
pub struct Forward<'a> {
    engine: &'a Engine,
    request: &'a wiremock::Request,
}

impl Forward<'_> {
    pub fn send(&self, body: &Value) -> HttpResponse {
        self.send_bytes(body.to_string().as_bytes())
    }

    fn send_bytes(&self, body: &[u8]) -> HttpResponse {
        let content_type = self
            .request
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok());
        self.engine.handle(&HttpRequest {
            method: self.request.method.as_str(),
            path: self.request.url.path(),
            authorization: None,
            content_type,
            body,
        })
    }

    pub fn config(&self) -> &Config {
        self.engine.config()
    }
}

/// The reference engine behind `alteration`.
struct Altered {
    engine: Engine,
    alteration: Alteration,
}

impl Respond for Altered {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let forward = Forward {
            engine: &self.engine,
            request,
        };
        let json = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .filter(|_| request.url.path().ends_with("/embeddings"));
        let response = match json {
            Some(body) => (self.alteration)(&forward, body),
            None => forward.send_bytes(&request.body),
        };
        to_template(response)
    }
}

fn to_template(response: HttpResponse) -> ResponseTemplate {
    let mut template =
        ResponseTemplate::new(response.status).set_body_raw(response.body, response.content_type);
    for (name, value) in response.headers {
        template = template.insert_header(name, value.as_str());
    }
    template
}

/// Audits the reference server with `config`, altered by `alteration`, on `ids`.
pub async fn audit_altered(
    config: Config,
    alteration: Alteration,
    settings: Settings,
    ids: &[&str],
) -> ServerAudit {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(Altered {
            engine: Engine::new(config),
            alteration,
        })
        .mount(&server)
        .await;
    audit_url(&format!("{}/v1", server.uri()), settings, &clauses(ids)).await
}

/// The outcome and reason of one clause.
pub fn outcome(audit: &ServerAudit, id: &str) -> (Outcome, String) {
    let result = audit
        .results
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("{id} ran"));
    (result.outcome, result.reason.clone())
}

/// Asserts that `id` failed with a reason containing every one of `says`.
pub fn assert_fails(audit: &ServerAudit, id: &str, says: &[&str]) {
    let (outcome, reason) = outcome(audit, id);
    assert_eq!(outcome, Outcome::Fail, "{id}: {reason}");
    for phrase in says {
        assert!(
            reason.contains(phrase),
            "{id} reason lacks {phrase:?}: {reason}"
        );
    }
}

/// The body of an engine answer as JSON.
pub fn json_of(response: &HttpResponse) -> Value {
    serde_json::from_slice(&response.body).unwrap_or(Value::Null)
}

/// An engine-style answer with a rewritten JSON body.
pub fn with_json(mut response: HttpResponse, body: &Value) -> HttpResponse {
    response.body = body.to_string().into_bytes();
    response
}

/// A 500 in the OpenAI error shape, as Dynamo answers validation errors.
pub fn internal_error(message: &str) -> HttpResponse {
    HttpResponse::from(ApiError::Internal(message.to_owned()))
}

/// The request without `field`.
pub fn without(mut body: Value, field: &str) -> Value {
    if let Some(map) = body.as_object_mut() {
        map.remove(field);
    }
    body
}

/// Whether the request has a field the reference server does not know.
pub fn has_unknown_field(body: &Value) -> bool {
    body.as_object()
        .is_some_and(|map| map.keys().any(|k| !KNOWN_FIELDS.contains(&k.as_str())))
}

/// The request with every field outside `keep` removed.
pub fn only(mut body: Value, keep: &[&str]) -> Value {
    if let Some(map) = body.as_object_mut() {
        map.retain(|k, _| keep.contains(&k.as_str()));
    }
    body
}
