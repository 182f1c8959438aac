//! Secret hygiene: with an API key given, the key reaches the server and appears in no
//! report, snapshot, log line, curl reproducer or failure message, even when the
//! server echoes it back in every answer.

use embedcheck_core::audit::audit_session;
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::http::{Secret, Target, Transport};
use embedcheck_core::report;
use embedcheck_core::report::{Report, Tool};
use embedcheck_core::session::{Interrupt, Session, Settings};
use embedcheck_core::snapshot;
use reference_server::{Config, Engine, HttpRequest};
use std::time::Duration;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "sk-embedcheck-secret-7f3a9c2e11";

/// The reference server requiring `KEY`, behind a responder that writes the
/// Authorization header it received into every answer, success or error: the worst
/// case for leaking the key into evidence.
struct EchoingServer(Engine);

impl Respond for EchoingServer {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let header = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok());
        let authorization = header("authorization").unwrap_or_default().to_owned();
        let answer = self.0.handle(&HttpRequest {
            method: request.method.as_str(),
            path: request.url.path(),
            authorization: header("authorization"),
            content_type: header("content-type"),
            body: &request.body,
        });
        let mut body: serde_json::Value =
            serde_json::from_slice(&answer.body).unwrap_or_else(|_| serde_json::json!({}));
        body["echo"] = serde_json::json!(format!("you sent {authorization}"));
        if let Some(error) = body.get_mut("error") {
            error["message"] = serde_json::json!(format!("rejected; you sent {authorization}"));
            // An integer code, as vLLM sends: ERR-008 fails, so reproducers are rendered.
            error["code"] = serde_json::json!(answer.status);
        }
        ResponseTemplate::new(answer.status)
            .insert_header("x-echo", authorization.as_str())
            .set_body_raw(body.to_string(), answer.content_type)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_is_sent_but_never_shown() {
    let config = Config {
        api_key: Some(KEY.to_owned()),
        ..Config::default()
    };
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(EchoingServer(Engine::new(config)))
        .mount(&server)
        .await;
    let transport = Transport::new(
        Target::parse(&format!("{}/v1", server.uri())).expect("loopback URL"),
        Some(Secret::new(KEY.to_owned())),
        Duration::from_secs(10),
    );
    let settings = Settings {
        large_batch: 16,
        seed: 3,
        ..Settings::default()
    };
    let clauses: Vec<&Clause> = Catalogue::shipped().clauses.iter().collect();
    let mut session = Session::new(transport, settings, Interrupt::default());
    let audit = audit_session(&mut session, "secrets".to_owned(), &clauses).await;

    let sent = server.received_requests().await.unwrap_or_default();
    let with_key = sent
        .iter()
        .filter(|r| {
            r.headers
                .get("authorization")
                .is_some_and(|v| v.as_bytes().ends_with(KEY.as_bytes()))
        })
        .count();
    assert!(
        with_key > 10,
        "the key was sent ({with_key} requests carried it)"
    );
    assert!(
        audit.results.iter().any(|r| r.curl.is_some()),
        "some clause fails (integer error codes), so reproducers exist"
    );

    let report = Report::new(Tool::this(), false, 3, vec![audit], Vec::new(), false);
    let dir = std::env::temp_dir().join(format!("embedcheck-secrets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    report::write_all(&report, &dir).expect("reports written");
    snapshot::record(&session.log(), &dir.join("snapshots"));

    let mut shown = vec![
        report::terminal::render(&report),
        format!("{report:?}"),
        format!("{:?}", session.settings()),
        format!("{:?}", session.facts()),
    ];
    shown.extend(
        report
            .subject()
            .results
            .iter()
            .map(report::terminal::failure_detail),
    );
    shown.extend(
        files_under(&dir)
            .iter()
            .map(|path| std::fs::read_to_string(path).unwrap_or_default()),
    );
    for (i, text) in shown.iter().enumerate() {
        assert!(!text.contains(KEY), "output {i} contains the key:\n{text}");
    }
    assert!(
        shown.iter().any(|t| t.contains("Bearer $KEY")),
        "curl reproducers name the key as $KEY"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}
