//! Hostile servers: whatever a server does, the suite never hangs, panics or reads an
//! unbounded body; each case ends as fail or inconclusive with a reason, and the rest
//! of the run goes on. Everything listens on 127.0.0.1.

use embedcheck_core::audit::ServerAudit;
use embedcheck_core::audit::audit_server;
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::contracts;
use embedcheck_core::contracts::embeddings::EmbeddingsSettings;
use embedcheck_core::http::{Secret, Transport};
use embedcheck_core::session::{Interrupt, Settings};
use embedcheck_core::verdict::Outcome;
use personas::http::{Request, Response, Server};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A hang guard, not a performance target: the slowest case finishes in a few seconds.
const NO_HANG: Duration = Duration::from_secs(120);

async fn audit(base_url: &str, key: Option<&str>) -> ServerAudit {
    let transport = Transport::new(
        contracts::target(base_url).expect("test URL"),
        key.map(|k| Secret::new(k.to_owned())),
        Duration::from_secs(1),
    );
    let settings = Settings {
        model: Some("hostile-model".to_owned()),
        max_retry_wait: Duration::from_secs(3),
        ..Settings::default()
    }
    .with(EmbeddingsSettings {
        large_batch: 8,
        ..EmbeddingsSettings::default()
    });
    let selected: Vec<&Clause> = Catalogue::shipped().clauses.iter().collect();
    let run = audit_server(
        transport,
        settings,
        "hostile".to_owned(),
        &selected,
        Interrupt::default(),
    );
    tokio::time::timeout(NO_HANG, run)
        .await
        .expect("the audit never hangs")
}

fn outcome(audit: &ServerAudit, id: &str) -> (Outcome, String) {
    let result = audit
        .results
        .iter()
        .find(|r| r.id == id)
        .expect("clause ran");
    (result.outcome, result.reason.clone())
}

/// Every clause ended with a reason, and none passed by accident.
fn every_clause_has_a_reason(audit: &ServerAudit) {
    assert_eq!(audit.results.len(), Catalogue::shipped().clauses.len());
    for result in &audit.results {
        assert!(!result.reason.is_empty(), "{} has no reason", result.id);
    }
}

/// A server answering every request with `response`.
async fn serving(response: Response) -> Server {
    Server::start(move |_| response.clone()).await
}

/// The answer to a request a test does not script: 404, as to a route the server does
/// not have.
fn unmatched() -> Response {
    Response::new(404)
}

fn one_vector(values: serde_json::Value) -> serde_json::Value {
    json!({
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": values}],
        "model": "hostile-model",
        "usage": {"prompt_tokens": 3, "total_tokens": 3}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_slower_than_the_timeout_end_inconclusive() {
    let server = serving(Response::new(200).delay(Duration::from_secs(3))).await;
    let audit = audit(&server.uri(), None).await;
    every_clause_has_a_reason(&audit);
    assert!(
        audit
            .aborted
            .as_deref()
            .is_some_and(|a| a.contains("no answer within its deadline of 1 s, the --timeout")),
        "{:?}",
        audit.aborted
    );
    assert_eq!(outcome(&audit, "IN-001").0, Outcome::Inconclusive);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_502_pages_fail_the_error_body_clause() {
    let page = "<html><body><h1>502 Bad Gateway</h1></body></html>";
    let server = serving(Response::new(502).body(page, "text/html")).await;
    let audit = audit(&server.uri(), None).await;
    every_clause_has_a_reason(&audit);
    let (in001, reason) = outcome(&audit, "IN-001");
    assert_eq!(in001, Outcome::Fail, "{reason}");
    assert!(reason.contains("502"), "{reason}");
    let (err007, reason) = outcome(&audit, "ERR-007");
    assert_eq!(err007, Outcome::Fail);
    assert!(
        reason.contains("text/html, neither JSON nor plain text"),
        "{reason}"
    );
}

/// A plain text says why (the SDKs raise with it): ERR-007 passes, and only ERR-008,
/// OpenAI's envelope, fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_text_errors_say_why_but_are_not_openais_envelope() {
    let server = Server::start(|request| match request.method.as_str() {
        "POST" => Response::new(400).body("bad request", "text/plain"),
        _ => Response::new(404).body("not found", "text/plain"),
    })
    .await;
    let audit = audit(&server.uri(), None).await;
    let (err007, reason) = outcome(&audit, "ERR-007");
    assert_eq!(err007, Outcome::Pass, "{reason}");
    assert_eq!(outcome(&audit, "ERR-008").0, Outcome::Fail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_json_is_a_failure_not_a_crash() {
    let body = one_vector(json!([0.1, 0.2, 0.3])).to_string();
    let cut = body[..body.len() / 2].to_owned();
    let server = serving(Response::new(200).body(cut, "application/json")).await;
    let audit = audit(&server.uri(), None).await;
    every_clause_has_a_reason(&audit);
    let (resp001, reason) = outcome(&audit, "RESP-001");
    assert_eq!(resp001, Outcome::Fail);
    assert!(reason.contains("not JSON"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nan_and_strings_inside_vectors_fail_finite_numbers() {
    for body in [
        r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,NaN]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}"#.to_owned(),
        one_vector(json!([0.1, "Infinity"])).to_string(),
    ] {
        let server = serving(Response::new(200).body(body, "application/json")).await;
        let audit = audit(&server.uri(), None).await;
        let (resp004, reason) = outcome(&audit, "RESP-004");
        assert_eq!(resp004, Outcome::Fail, "{reason}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_length_and_duplicated_indices_fail_shape_clauses() {
    let body = json!({
        "object": "list",
        "data": [
            {"object": "embedding", "index": 0, "embedding": [0.6, 0.8]},
            {"object": "embedding", "index": 0, "embedding": [1.0, 0.0, 0.0]},
            {"object": "embedding", "index": 2, "embedding": [0.0, 1.0]},
            {"object": "embedding", "index": 3, "embedding": [0.0, 0.0, 1.0]}
        ],
        "model": "m",
        "usage": {"prompt_tokens": 4, "total_tokens": 4}
    });
    let server = serving(Response::new(200).json(&body)).await;
    let audit = audit(&server.uri(), None).await;
    assert_eq!(outcome(&audit, "RESP-005").0, Outcome::Fail);
    let (resp003, reason) = outcome(&audit, "RESP-003");
    assert_eq!(resp003, Outcome::Fail);
    assert!(reason.contains("data[1].index is 0"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mb_body_is_not_read_to_the_end() {
    let huge = format!("[{}]", vec!["0.125"; 50 * 1024 * 1024 / 6].join(","));
    let server = serving(Response::new(200).body(huge, "application/json")).await;
    let audit = audit(&server.uri(), None).await;
    every_clause_has_a_reason(&audit);
    let (in001, reason) = outcome(&audit, "IN-001");
    assert_eq!(in001, Outcome::Inconclusive);
    assert!(reason.contains("exceeds the"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_with_retry_after_is_waited_out() {
    let throttled = AtomicBool::new(false);
    let server = Server::start(move |request| match request.path.as_str() {
        "/v1/embeddings" if !throttled.swap(true, Ordering::Relaxed) => {
            Response::new(429).header("retry-after", "1")
        }
        _ => Response::new(200).json(&one_vector(json!([0.6, 0.8]))),
    })
    .await;
    let audit = audit(&format!("{}/v1", server.uri()), None).await;
    let (in001, reason) = outcome(&audit, "IN-001");
    assert_eq!(in001, Outcome::Pass, "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_429s_end_inconclusive_within_the_wait_budget() {
    let server = Server::start(|request| match request.path.as_str() {
        "/v1/embeddings" => Response::new(429),
        _ => Response::new(200).json(&json!({"data": [{"id": "m"}]})),
    })
    .await;
    let audit = audit(&format!("{}/v1", server.uri()), None).await;
    let (in001, reason) = outcome(&audit, "IN-001");
    assert_eq!(in001, Outcome::Inconclusive);
    assert!(
        reason.contains("still rate limited") || reason.contains("every request is answered 429"),
        "{reason}"
    );
    let why = audit.aborted.as_deref().unwrap_or_default();
    assert!(
        why.contains("every request is answered 429") && why.contains("MUST clauses"),
        "a server that only answers 429 is not audited, not passed: {why}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_not_followed_and_never_carry_the_key() {
    let elsewhere = Server::start_recording(|_| unmatched()).await;
    let server = serving(
        Response::new(307).header("location", format!("{}/v1/embeddings", elsewhere.uri())),
    )
    .await;
    let audit = audit(&server.uri(), Some("sk-hostile-secret-123")).await;
    let why = audit.aborted.as_deref().unwrap_or_default();
    assert!(
        why.starts_with("redirected: the plain request was answered 307 with Location ")
            && why.contains(&elsewhere.uri()),
        "a redirect is not the server's answer: {why}"
    );
    assert_eq!(outcome(&audit, "IN-001").0, Outcome::Inconclusive);
    let reached = elsewhere.received();
    assert!(
        reached.is_empty(),
        "a redirect was followed to another host"
    );
}

/// A raw server that answers every connection with `respond`.
async fn raw_server<F, Fut>(respond: F) -> String
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let url = format!("http://{}/v1", listener.local_addr().expect("local addr"));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(respond(stream));
        }
    });
    url
}

/// Reads what the client sent (enough of it to answer).
async fn read_request(stream: &mut tokio::net::TcpStream) {
    let mut buffer = vec![0u8; 64 * 1024];
    let _ = tokio::time::timeout(Duration::from_millis(200), stream.read(&mut buffer)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closed_mid_body_ends_inconclusive() {
    let url = raw_server(|mut stream| async move {
        read_request(&mut stream).await;
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5000\r\n\r\n";
        let _ = stream.write_all(head.as_bytes()).await;
        let _ = stream.write_all(br#"{"object":"list","data":[{"#).await;
        // Dropping the stream closes the connection 4,970 bytes early.
    })
    .await;
    let audit = audit(&url, None).await;
    every_clause_has_a_reason(&audit);
    assert!(
        audit
            .results
            .iter()
            .all(|r| r.outcome == Outcome::Inconclusive || r.outcome == Outcome::Skip),
        "no verdict can be reached on a server that never completes an answer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_ends_the_run_with_a_reason() {
    let url = raw_server(|mut stream| async move {
        read_request(&mut stream).await;
        tokio::time::sleep(Duration::from_secs(600)).await;
        drop(stream);
    })
    .await;
    let audit = audit(&url, None).await;
    every_clause_has_a_reason(&audit);
    assert!(audit.aborted.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_ends_the_run_at_once_with_a_partial_report() {
    let slow = one_vector(json!([0.6, 0.8]));
    let server = serving(
        Response::new(200)
            .json(&slow)
            .delay(Duration::from_millis(200)),
    )
    .await;
    let transport = Transport::new(
        contracts::target(&server.uri()).expect("test URL"),
        None,
        Duration::from_secs(10),
    );
    let settings = Settings {
        model: Some("hostile-model".to_owned()),
        ..Settings::default()
    }
    .with(EmbeddingsSettings {
        large_batch: 8,
        ..EmbeddingsSettings::default()
    });
    let interrupt = Interrupt::default();
    let trigger = interrupt.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(700)).await;
        trigger.trigger();
    });
    let selected: Vec<&Clause> = Catalogue::shipped().clauses.iter().collect();
    let started = std::time::Instant::now();
    let run = audit_server(
        transport,
        settings,
        "hostile".to_owned(),
        &selected,
        interrupt,
    );
    let audit = tokio::time::timeout(NO_HANG, run)
        .await
        .expect("the audit never hangs");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "stopped at once"
    );
    assert_eq!(audit.aborted.as_deref(), Some("interrupted by Ctrl-C"));
    every_clause_has_a_reason(&audit);
    let interrupted = audit
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Inconclusive && r.reason.contains("interrupted"))
        .count();
    assert!(
        interrupted > 30,
        "clauses after Ctrl-C end inconclusive ({interrupted})"
    );
}

/// A key the server does not accept (or none) is the user's configuration, not the
/// server's conformance: every embeddings request answered 401, 403, 402, or 429 with
/// a spent quota, ends the audit at once as not audited (no wait for the quota), with
/// no clause passing or failing on those answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_access_is_not_audited_and_judges_nothing() {
    let wrong_key = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}});
    // OpenAI's answer when the account's quota is spent: a 429 no wait can cure.
    let quota = json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "code": "insufficient_quota"}});
    for (status, body) in [
        (401, &wrong_key),
        (402, &wrong_key),
        (403, &wrong_key),
        (429, &quota),
    ] {
        let refusal = Response::new(status).json(body);
        let server = Server::start(move |request| match request.method.as_str() {
            "POST" => refusal.clone(),
            _ => unmatched(),
        })
        .await;
        let started = std::time::Instant::now();
        let audit = audit(&format!("{}/v1", server.uri()), Some("wrong-key")).await;
        let why = audit.aborted.as_deref().expect("not audited");
        assert!(why.starts_with("access refused"), "{why}");
        assert!(why.contains(&status.to_string()), "{why}");
        assert!(
            audit
                .results
                .iter()
                .all(|r| matches!(r.outcome, Outcome::Inconclusive | Outcome::Skip)),
            "{status}: a clause was judged on refused answers"
        );
        assert!(audit.requests_sent <= 3, "{} requests", audit.requests_sent);
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}

/// No clause passes without evidence: on a server that answers every `POST` 500, the
/// only passes are about what its answers show (it stayed up; a `GET` got a 404; a 500
/// after a 500 on one connection was a 500 on a new one too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_clause_passes_over_nothing() {
    let server = Server::start(|request| match request.method.as_str() {
        "POST" => Response::new(500).text("boom"),
        _ => unmatched(),
    })
    .await;
    let audit = audit(&format!("{}/v1", server.uri()), None).await;
    let passed: Vec<String> = audit
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Pass)
        .map(|r| format!("{}: {}", r.id, r.reason))
        .collect();
    assert!(
        passed.iter().all(|p| ["ERR-010", "ERR-005", "ERR-014"]
            .iter()
            .any(|id| p.starts_with(id))),
        "passed without evidence: {passed:#?}"
    );
}

/// The reference server, except that every request it refuses as a client mistake is
/// answered 429 with `Retry-After: 20`, as quota-style gateways answer requests that
/// can never succeed; valid requests succeed.
struct MistakesAs429(reference_server::Engine);

impl MistakesAs429 {
    fn respond(&self, request: &Request) -> Response {
        let answer = self.0.handle(&reference_server::HttpRequest {
            method: request.method.as_str(),
            path: &request.path,
            authorization: request.header("authorization"),
            content_type: request.header("content-type"),
            body: &request.body,
        });
        if (400..500).contains(&answer.status) && request.method.as_str() == "POST" {
            return Response::new(429)
                .header("retry-after", "20")
                .json(&json!({"error": {"message": "Too many requests", "type": "rate_limit"}}));
        }
        Response::new(answer.status).body(answer.body, answer.content_type)
    }
}

/// A 429 repeated for the same invalid request while valid requests succeed is a
/// refusal, judged by ERR-011 at once: the run does not wait out Retry-After 20 on
/// every mistake (which, with the default 60 s retry wait, used to end the run as
/// "every request is answered 429" with nothing judged).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_for_every_mistake_fails_err_011_within_seconds() {
    let server = MistakesAs429(reference_server::Engine::new(
        reference_server::Config::default(),
    ));
    let server = Server::start(move |request| server.respond(request)).await;
    let transport = Transport::new(
        contracts::target(&format!("{}/v1", server.uri())).expect("test URL"),
        None,
        Duration::from_secs(5),
    );
    let settings = Settings::default().with(EmbeddingsSettings {
        large_batch: 8,
        ..EmbeddingsSettings::default()
    });
    assert_eq!(
        settings.max_retry_wait,
        Duration::from_secs(60),
        "the default"
    );
    let selected: Vec<&Clause> = Catalogue::shipped().clauses.iter().collect();
    let started = std::time::Instant::now();
    let run = audit_server(
        transport,
        settings,
        "quota".into(),
        &selected,
        Interrupt::default(),
    );
    let audit = tokio::time::timeout(NO_HANG, run).await.expect("no hang");
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
    assert_eq!(audit.aborted, None);
    let (err011, reason) = outcome(&audit, "ERR-011");
    assert_eq!(err011, Outcome::Fail, "{reason}");
    assert!(
        reason.contains("429 (input is an empty array; 429 again at once while a valid request"),
        "{reason}"
    );
    let (in001, _) = outcome(&audit, "IN-001");
    assert_eq!(in001, Outcome::Pass);
}

/// LiteLLM 1.106 without a database answers an unknown key 400 "No connected db." and
/// a request without a key 500: a rejected key in the dress of a client error. The
/// same answer to an obviously wrong key shows it is the key, so the audit stops as
/// access refused instead of failing IN-001 and the rest on the user's key. A server
/// answering every request the same 400, key or none, is still audited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_key_answered_400_is_access_refused() {
    let server = Server::start(|request| {
        match (request.method.as_str(), request.header("authorization")) {
            ("POST", Some(_)) => Response::new(400).json(
                &json!({"error": {"message": "No connected db.", "type": "no_db_connection", "param": null, "code": "400"}}),
            ),
            ("POST", None) => Response::new(500).text("Internal Server Error"),
            _ => unmatched(),
        }
    })
    .await;
    let refused = audit(&format!("{}/v1", server.uri()), Some("sk-user-key")).await;
    let why = refused.aborted.as_deref().expect("not audited");
    assert!(
        why.contains("the same as with an obviously wrong key"),
        "{why}"
    );
    // The key's request, the wrong key's, and the second 400 on one connection sent
    // again on a new one (ERR-014) before it is believed.
    assert!(
        refused.requests_sent <= 4,
        "{} requests",
        refused.requests_sent
    );

    let same_for_all = serving(Response::new(400).json(
        &json!({"error": {"message": "input must be a list", "type": "invalid_request_error"}}),
    ))
    .await;
    let alike = audit(&format!("{}/v1", same_for_all.uri()), Some("sk-user-key")).await;
    assert_eq!(
        alike.aborted, None,
        "a server that refuses everything alike is audited"
    );
    assert_eq!(outcome(&alike, "IN-001").0, Outcome::Fail);
}

/// A speech-only server that refuses the run's key: its embeddings route is absent, so
/// the plain embeddings request says nothing of access; the speech route's 401 does,
/// and the audit is not run on the user's key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_speech_only_server_refusing_the_key_is_not_audited() {
    let wrong_key = json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}});
    let refusal = Response::new(401).json(&wrong_key);
    let server = Server::start(move |request| {
        if request.method == "POST" && request.path.ends_with("/audio/transcriptions") {
            refusal.clone()
        } else {
            unmatched()
        }
    })
    .await;
    let audit = audit(&format!("{}/v1", server.uri()), Some("wrong-key")).await;
    let why = audit.aborted.as_deref().unwrap_or_default();
    assert!(why.starts_with("access refused"), "{why}");
    assert!(
        audit
            .results
            .iter()
            .all(|r| matches!(r.outcome, Outcome::Inconclusive | Outcome::Skip)),
        "a clause was judged on refused answers: {:?}",
        audit
            .results
            .iter()
            .filter(|r| r.outcome == Outcome::Fail)
            .map(|r| &r.id)
            .collect::<Vec<_>>()
    );
}
