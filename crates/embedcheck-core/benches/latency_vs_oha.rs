//! Checks embedcheck's latency measurement against an established load generator:
//! the same server, the same body (8 fixture documents), the same request counts and
//! concurrency, measured by `migration::latency` and by `oha`, runs alternated, median
//! of 3. Prints both and the ratio; the two should agree within 10 %.
//!
//! Run through `benches/latency_vs_oha.sh`, which starts the reference server and
//! passes its URL: `latency_vs_oha URL [REQUESTS] [CONCURRENCY]`. Not part of CI.

use embedcheck_core::contracts;
use embedcheck_core::migration::corpus::{BATCH_SIZE, Corpus};
use embedcheck_core::migration::latency::{LoadPlan, Loaded, ServerLatency, measure_one};
use serde_json::{Value, json};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Duration;

/// One run's figures, from either tool.
#[derive(Clone, Copy, Debug, Default)]
struct Figures {
    seq_p50: f64,
    seq_p99: f64,
    conc_p50: f64,
    conc_p99: f64,
    docs_per_second: f64,
}

fn main() -> ExitCode {
    // `cargo bench` adds `--bench`; only positional words are ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let Some(base) = args.first() else {
        eprintln!(
            "usage: crates/embedcheck-core/benches/latency_vs_oha.sh (starts a server and passes its URL)"
        );
        return ExitCode::SUCCESS;
    };
    let number =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (requests, concurrency) = (number(1, 2000), number(2, 4));
    match compare(base, requests, concurrency) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("latency_vs_oha: {why}");
            ExitCode::FAILURE
        }
    }
}

fn compare(base: &str, requests: usize, concurrency: usize) -> Result<(), String> {
    let url = contracts::target(base)
        .map_err(|e| e.to_string())?
        .url(&embedcheck_core::contracts::embeddings::ROUTE);
    let model = std::env::var("MODEL").unwrap_or_else(|_| "embedcheck-reference".to_owned());
    let texts: Vec<String> = Corpus::shipped()
        .documents
        .into_iter()
        .take(BATCH_SIZE)
        .map(|d| d.text)
        .collect();
    let body = json!({"model": model, "input": texts}).to_string();
    let body_file = tempfile::Builder::new()
        .prefix("embedcheck-bench-body-")
        .suffix(".json")
        .tempfile()
        .map_err(|e| e.to_string())?;
    std::fs::write(body_file.path(), &body).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let loaded = Arc::new(Loaded::new(
        "embedcheck".into(),
        url.clone(),
        embedcheck_core::http::Access::default(),
        Duration::from_secs(30),
        vec![body.into_bytes()],
        BATCH_SIZE,
    ));
    let plan = LoadPlan {
        concurrency,
        sequential: requests,
        concurrent: requests,
        repeats: 1,
    };
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let measured = runtime.block_on(measure_one(loaded.clone(), plan));
        ours.push(figures_of(&measured));
        let sequential = oha(&url, body_file.path(), requests, 1)?;
        let concurrent = oha(&url, body_file.path(), requests, concurrency)?;
        theirs.push(Figures {
            seq_p50: sequential.0,
            seq_p99: sequential.1,
            conc_p50: concurrent.0,
            conc_p99: concurrent.1,
            docs_per_second: concurrent.2 * BATCH_SIZE as f64,
        });
    }
    print_table(&median(&ours), &median(&theirs), requests, concurrency);
    Ok(())
}

fn figures_of(l: &ServerLatency) -> Figures {
    Figures {
        seq_p50: l.sequential.p50_ms,
        seq_p99: l.sequential.p99_ms,
        conc_p50: l.concurrent.p50_ms,
        conc_p99: l.concurrent.p99_ms,
        docs_per_second: l.concurrent.docs_per_second,
    }
}

/// oha's p50 and p99 in ms and its requests per second, from its JSON output.
fn oha(
    url: &url::Url,
    body: &std::path::Path,
    n: usize,
    c: usize,
) -> Result<(f64, f64, f64), String> {
    let output = Command::new("oha")
        .args(["-n", &n.to_string(), "-c", &c.to_string(), "-m", "POST"])
        .args(["-H", "Content-Type: application/json", "-D"])
        .arg(body)
        .args(["--no-tui", "--output-format", "json", url.as_str()])
        .output()
        .map_err(|e| format!("failed to run oha (cargo install oha --locked): {e}"))?;
    let json: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("oha output is not JSON: {e}"))?;
    let seconds = |pointer: &str| {
        json.pointer(pointer)
            .and_then(Value::as_f64)
            .ok_or(format!("oha output lacks {pointer}"))
    };
    Ok((
        seconds("/latencyPercentiles/p50")? * 1000.0,
        seconds("/latencyPercentiles/p99")? * 1000.0,
        seconds("/summary/requestsPerSec")?,
    ))
}

fn median(runs: &[Figures]) -> Figures {
    let of = |f: fn(&Figures) -> f64| {
        let mut values: Vec<f64> = runs.iter().map(f).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    Figures {
        seq_p50: of(|f| f.seq_p50),
        seq_p99: of(|f| f.seq_p99),
        conc_p50: of(|f| f.conc_p50),
        conc_p99: of(|f| f.conc_p99),
        docs_per_second: of(|f| f.docs_per_second),
    }
}

fn print_table(ours: &Figures, theirs: &Figures, requests: usize, concurrency: usize) {
    println!(
        "{requests} requests of {BATCH_SIZE} documents, sequential and at concurrency {concurrency}; median of 3 alternated runs"
    );
    println!(
        "{:<18} {:>10} {:>10} {:>12} {:>12} {:>14}",
        "", "seq p50", "seq p99", "conc p50", "conc p99", "conc docs/s"
    );
    for (name, f) in [("embedcheck", ours), ("oha", theirs)] {
        println!(
            "{name:<18} {:>8.3}ms {:>8.3}ms {:>10.3}ms {:>10.3}ms {:>14.1}",
            f.seq_p50, f.seq_p99, f.conc_p50, f.conc_p99, f.docs_per_second
        );
    }
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
    let ratios = [
        ratio(ours.seq_p50, theirs.seq_p50),
        ratio(ours.seq_p99, theirs.seq_p99),
        ratio(ours.conc_p50, theirs.conc_p50),
        ratio(ours.conc_p99, theirs.conc_p99),
        ratio(ours.docs_per_second, theirs.docs_per_second),
    ];
    println!(
        "{:<18} {:>10.3} {:>10.3} {:>12.3} {:>12.3} {:>14.3}",
        "ratio ours/oha", ratios[0], ratios[1], ratios[2], ratios[3], ratios[4]
    );
    let within = ratios.iter().all(|r| (0.9..=1.1).contains(r));
    println!("all within 10 %: {}", if within { "yes" } else { "no" });
}
