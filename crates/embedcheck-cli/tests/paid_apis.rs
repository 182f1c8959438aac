//! Manners for APIs that bill by the token, through the command line: `--dry-run`
//! sends nothing at all, and `--max-cost` stops the run before its spend could pass
//! the cap.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;

/// A directory of this test's own under the tests' temp dir, removed when it drops:
/// tests run on parallel threads, and a shared directory is one's to remove while
/// another writes into it.
fn out_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{name}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("a temp dir")
}

fn read(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn a_dry_run_sends_nothing() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.set_nonblocking(true).expect("non-blocking");
    let url = format!("http://{}/v1", listener.local_addr().expect("bound"));
    let code = embedcheck_cli::main_without_trials(words(&format!(
        "--endpoint {url} --dry-run --api-key-env PATH --api-key-header api-key --price-per-mtok 0.02"
    )));
    assert_eq!(
        format!("{code:?}"),
        format!("{:?}", std::process::ExitCode::SUCCESS)
    );
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("a dry run connected to the server: {other:?}"),
    }
}

#[test]
fn max_cost_stops_before_the_spend_passes_it() {
    let scratch = out_dir("max-cost");
    let dir = scratch.path();
    // 1500 tokens at $1 per million: a cap of $0.0015, far below a full audit.
    let code = embedcheck_cli::main_without_trials(words(&format!(
        "--price-per-mtok 1 --max-cost 0.0015 --seed 7 --large-batch 8 --report-dir {}",
        dir.display()
    )));
    let report = read(&dir.join("report.json"));
    let server = &report;
    let tokens = server["tokens_used"].as_u64().expect("tokens_used");
    assert!(tokens <= 1500, "spent {tokens} tokens, over the cap");
    let stopped = server["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| {
            r["reason"]
                .as_str()
                .is_some_and(|t| t.contains("token budget (--max-tokens"))
        })
        .count();
    assert!(stopped > 0, "the cap stopped some clause");
    assert_eq!(
        format!("{code:?}"),
        format!(
            "{:?}",
            std::process::ExitCode::from(embedcheck_cli::EXIT_RUNTIME)
        ),
        "a run the cap cut short is not audited"
    );
}
