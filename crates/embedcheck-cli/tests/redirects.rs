//! A redirect is not the server's answer, through the command line: an endpoint that
//! answers every request `307` with a `Location` elsewhere is not audited (exit 3), the
//! one line names the `Location`, no clause is judged on it, and the key never goes
//! there.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::process::ExitCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_ends_the_run_as_not_audited_and_nothing_follows_it() {
    // The Location: another server, which must never be reached.
    let elsewhere = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    elsewhere.set_nonblocking(true).expect("non-blocking");
    let location: &'static str = Box::leak(
        format!(
            "http://{}/v1/embeddings",
            elsewhere.local_addr().expect("bound")
        )
        .into_boxed_str(),
    );
    let persona = personas::Persona {
        name: "redirecting",
        quirks: vec![personas::Quirk::RedirectTo(location)],
        ..personas::reference()
    };
    let server = persona.start().await;
    let scratch = tempfile::Builder::new()
        .prefix("redirect-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a temp dir");
    let words: Vec<String> = [
        "--endpoint",
        &server.base_url(),
        "--model",
        "embedcheck-reference",
        "--api-key-env",
        "PATH",
        "--report-dir",
        &scratch.path().display().to_string(),
    ]
    .map(str::to_owned)
    .to_vec();
    let code = tokio::task::spawn_blocking(move || embedcheck_cli::main_without_trials(words))
        .await
        .expect("the run ends");
    assert_eq!(format!("{code:?}"), format!("{:?}", ExitCode::from(3)));
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(scratch.path().join("report.json")).expect("report.json"),
    )
    .expect("valid JSON");
    let why = report["aborted"].as_str().expect("not audited, with why");
    assert!(
        why.starts_with("redirected: the plain request was answered 307 with Location ")
            && why.contains(location),
        "{why}"
    );
    let judged = report["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["outcome"] == "pass" || r["outcome"] == "fail")
        .count();
    assert_eq!(judged, 0, "no clause is judged on a redirect");
    assert_eq!(report["summary"]["conclusion"], "not_audited");
    match elsewhere.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the redirect was followed: {other:?}"),
    }
}
