//! Secret hygiene: with an API key given (as a Bearer token or in a header of its
//! own), secret headers and a key in the query string, every secret reaches the server
//! and appears in no report, snapshot, log line, curl reproducer or failure message,
//! even when the server echoes them back in every answer.

use embedcheck_core::audit::audit_session;
use embedcheck_core::catalogue::{Catalogue, Clause};
use embedcheck_core::contracts;
use embedcheck_core::contracts::embeddings::EmbeddingsSettings;
use embedcheck_core::http::{Access, Header, KeyHeader, Secret, Transport};
use embedcheck_core::report;
use embedcheck_core::report::{Report, Tool};
use embedcheck_core::session::{Interrupt, Session, Settings};
use embedcheck_core::snapshot;
use personas::http::{Request, Response, Server};
use reference_server::{Config, Engine, HttpRequest};
use std::time::Duration;

const KEY: &str = "sk-embedcheck-secret-7f3a9c2e11";

/// The reference server requiring `KEY`, behind a responder that writes the
/// Authorization header it received into every answer, success or error: the worst
/// case for leaking the key into evidence.
struct EchoingServer(Engine);

impl EchoingServer {
    /// Serves the echoing server on a free port, keeping every request it receives.
    async fn start(engine: Engine) -> Server {
        let echoing = EchoingServer(engine);
        Server::start_recording(move |request| echoing.respond(request)).await
    }

    fn respond(&self, request: &Request) -> Response {
        let authorization = ["authorization", "api-key", "x-gw-key"]
            .iter()
            .filter_map(|name| request.header(name))
            .chain(request.query.as_deref())
            .collect::<Vec<_>>()
            .join(" ");
        let answer = self.0.handle(&HttpRequest {
            method: request.method.as_str(),
            path: &request.path,
            authorization: request.header("authorization"),
            content_type: request.header("content-type"),
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
        Response::new(answer.status)
            .header("x-echo", authorization.as_str())
            .body(body.to_string(), answer.content_type)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_is_sent_but_never_shown() {
    let config = Config {
        api_key: Some(KEY.to_owned()),
        ..Config::default()
    };
    let server = EchoingServer::start(Engine::new(config)).await;
    let transport = Transport::new(
        contracts::target(&format!("{}/v1", server.uri())).expect("loopback URL"),
        Some(Secret::new(KEY.to_owned())),
        Duration::from_secs(10),
    );
    let (shown, sent) = audit_and_show(transport, &server).await;
    let with_key = sent
        .iter()
        .filter(|r| r.header("authorization").is_some_and(|v| v.ends_with(KEY)))
        .count();
    assert!(
        with_key > 10,
        "the key was sent ({with_key} requests carried it)"
    );
    for (i, text) in shown.iter().enumerate() {
        assert!(!text.contains(KEY), "output {i} contains the key:\n{text}");
    }
    assert!(
        shown.iter().any(|t| t.contains("Bearer $KEY")),
        "curl reproducers name the key as $KEY"
    );
}

const GATEWAY_KEY: &str = "gw-embedcheck-secret-55d1";
const QUERY_KEY: &str = "q-embedcheck-secret-90ab";

/// Azure's `api-key` header, a gateway's secret header (`--header-env`) and a key in
/// the query string: each is sent on every request and shown only as a variable or
/// REDACTED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_in_other_headers_and_the_query_are_sent_but_never_shown() {
    let server = EchoingServer::start(Engine::new(Config::default())).await;
    let access = Access {
        key: Some(Secret::new(KEY.to_owned())),
        key_header: KeyHeader::parse("api-key").expect("a header name"),
        headers: vec![
            Header::plain("X-Title: embedcheck").expect("a header"),
            Header::secret("x-gw-key", "GW_KEY", Secret::new(GATEWAY_KEY.to_owned()))
                .expect("a header"),
        ],
        ..Access::default()
    };
    let url = format!(
        "{}/v1/embeddings?api-version=2024-10-21&key={QUERY_KEY}",
        server.uri()
    );
    let transport = Transport::with_access(
        contracts::target(&url).expect("loopback URL"),
        access,
        Duration::from_secs(10),
    )
    .expect("a plain client");
    let (shown, sent) = audit_and_show(transport, &server).await;
    let carried = |name: &str, value: &str| {
        sent.iter()
            .filter(|r| r.header(name).is_some_and(|v| v == value))
            .count()
    };
    assert!(carried("api-key", KEY) > 10 && carried("x-gw-key", GATEWAY_KEY) > 10);
    assert!(carried("x-title", "embedcheck") > 10);
    assert_eq!(
        carried("authorization", KEY),
        0,
        "the key travels in api-key only"
    );
    assert!(
        sent.iter()
            .all(|r| r.query.as_ref().is_some_and(|q| q.contains(QUERY_KEY)))
    );
    for (i, text) in shown.iter().enumerate() {
        for secret in [KEY, GATEWAY_KEY, QUERY_KEY] {
            assert!(
                !text.contains(secret),
                "output {i} contains {secret}:\n{text}"
            );
        }
    }
    let all = shown.join("\n");
    for variable in [
        "api-key: $KEY",
        "x-gw-key: $GW_KEY",
        "key=REDACTED",
        "api-version=2024-10-21",
    ] {
        assert!(all.contains(variable), "no {variable:?} in the outputs");
    }
}

/// Audits through `transport` on every clause and returns every output a user could
/// see (terminal, debug forms, failure details, every report and snapshot file) and
/// the requests the server received.
async fn audit_and_show(transport: Transport, server: &Server) -> (Vec<String>, Vec<Request>) {
    let settings = Settings {
        seed: 3,
        ..Settings::default()
    }
    .with(EmbeddingsSettings {
        large_batch: 16,
        ..EmbeddingsSettings::default()
    });
    let clauses: Vec<&Clause> = Catalogue::shipped().clauses.iter().collect();
    let mut session = Session::new(transport, settings, Interrupt::default());
    let audit = audit_session(&mut session, "secrets".to_owned(), &clauses).await;

    let sent = server.received();
    assert!(
        audit.results.iter().any(|r| r.curl.is_some()),
        "some clause fails (integer error codes), so reproducers exist"
    );

    let report = Report::new(Tool::this(), false, 3, vec![audit], Vec::new(), false);
    // Each test's own directory, removed when it ends: the tests of this file run on
    // parallel threads of one process.
    let scratch = tempfile::Builder::new()
        .prefix("embedcheck-secrets-")
        .tempdir()
        .expect("a temp dir");
    let dir = scratch.path().to_path_buf();
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
    (shown, sent)
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
