//! One audit from options to written reports.

use super::error::{EXIT_CLAUSE_FAILED, EXIT_CONFORMANT, EXIT_INTERRUPTED, EXIT_RUNTIME, RunError};
use super::options::Options;
use crate::audit;
use crate::catalogue::Clause;
use crate::http::{Probe, Secret, Target, Transport};
use crate::model::{ClauseResult, REPORT_SCHEMA_VERSION, Report, ServerAudit, Tool, Verdict};
use crate::report;
use crate::session::{Interrupt, ProbeError, Session, Settings};
use reference_server::RunningServer;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A finished (possibly partial) audit and how it ended.
pub struct Finished {
    pub report: Report,
    interrupted: bool,
}

impl Finished {
    /// The process exit status, given whether libtest saw a failing trial.
    pub fn exit_status(&self, clause_failed: bool) -> u8 {
        if self.interrupted {
            EXIT_INTERRUPTED
        } else if self.report.audit.aborted.is_some() {
            EXIT_RUNTIME
        } else if clause_failed {
            EXIT_CLAUSE_FAILED
        } else {
            EXIT_CONFORMANT
        }
    }
}

/// Audits the endpoint of `options` (or the reference server) on the selected
/// clauses, prints the summary and writes every report.
pub fn audit(options: &Options, selected: &[&Clause]) -> Result<Finished, RunError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(RunError::Runtime)?;
    let finished = runtime.block_on(audit_async(options, selected))?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    print!(
        "{}",
        report::terminal::render(&finished.report, options.strict)
    );
    let dir = report_dir(options, &finished.report.audit.label);
    report::write_all(&finished.report, &dir)?;
    println!("reports: {}", dir.display());
    Ok(finished)
}

async fn audit_async(options: &Options, selected: &[&Clause]) -> Result<Finished, RunError> {
    let key = api_key(options)?;
    let (target, label, _reference) = resolve_target(options).await?;
    let seed = options.seed.unwrap_or_else(fresh_seed);
    let interrupt = Interrupt::default();
    watch_ctrl_c(interrupt.clone());
    let mut session = Session::new(
        Transport::new(target.clone(), key, Duration::from_secs(options.timeout)),
        settings(options, seed),
        interrupt.clone(),
    );
    let started = Instant::now();
    println!(
        "embedcheck: auditing {} as {label:?} (seed {seed}; replay with --seed {seed})",
        target.display()
    );
    let (results, aborted) = match resolve_model(&mut session, options).await {
        Ok(()) => (audit::run(&session, selected).await, None),
        Err(why) => (unaudited(selected, &why), Some(why)),
    };
    let aborted = aborted.or_else(|| {
        interrupt
            .is_triggered()
            .then(|| "interrupted by Ctrl-C".to_owned())
    });
    if let Some(why) = &aborted {
        eprintln!("embedcheck: {why}");
    }
    let audit = ServerAudit {
        label,
        endpoint: target.display(),
        model: Some(session.model().to_owned()).filter(|m| !m.is_empty()),
        results,
        requests_sent: session.requests_sent(),
        tokens_used: session.tokens_used(),
        wall_seconds: started.elapsed().as_secs_f64(),
        observations: session.observations(),
        aborted,
    };
    Ok(Finished {
        interrupted: interrupt.is_triggered(),
        report: Report {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: Tool::this(),
            strict: options.strict,
            seed,
            audit,
        },
    })
}

/// The key from the variable the user named; an unset variable is a usage error
/// rather than a silent unauthenticated run.
fn api_key(options: &Options) -> Result<Option<Secret>, RunError> {
    let Some(name) = &options.api_key_env else {
        return Ok(None);
    };
    match std::env::var(name) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(Secret::new(key.trim().to_owned()))),
        _ => Err(RunError::MissingKey(name.clone())),
    }
}

/// The endpoint to audit, its label, and the reference server when we started one
/// (kept alive for the run by the caller holding it).
async fn resolve_target(
    options: &Options,
) -> Result<(Target, String, Option<RunningServer>), RunError> {
    if let Some(endpoint) = &options.endpoint {
        let target = Target::parse(endpoint)?;
        let host =
            target
                .embeddings_url()
                .host_str()
                .map(|h| match target.embeddings_url().port() {
                    Some(port) => format!("{h}:{port}"),
                    None => h.to_owned(),
                });
        let label = options.label(host.as_deref());
        return Ok((target, label, None));
    }
    let server = reference_server::spawn(
        reference_server::Config::default(),
        ([127, 0, 0, 1], 0).into(),
    )
    .await
    .map_err(RunError::ReferenceServer)?;
    let target = Target::parse(&server.base_url())?;
    Ok((target, options.label(None), Some(server)))
}

fn settings(options: &Options, seed: u64) -> Settings {
    Settings {
        model: options.model.clone().unwrap_or_default(),
        max_requests: options.max_requests,
        max_tokens: options.max_tokens,
        large_batch: options.large_batch as usize,
        max_retry_wait: Duration::from_secs(options.max_retry_wait),
        seed,
    }
}

/// Checks the endpoint answers at all and learns the model: `--model`, else the first
/// id of `GET /models`.
async fn resolve_model(session: &mut Session, options: &Options) -> Result<(), String> {
    let listing = session.send(Probe::list_models()).await;
    if let Some(model) = &options.model {
        session.observe("model_source", "--model");
        return match listing {
            Err(ProbeError::Transport(e)) => Err(format!(
                "failed to reach {}: {e}",
                session.transport().target().display()
            )),
            _ => Ok(()).map(|()| session.set_model(model.clone())),
        };
    }
    let reply = listing.map_err(|e| {
        format!(
            "failed to reach {}: {e}",
            session.transport().target().display()
        )
    })?;
    let first = reply
        .json
        .as_ref()
        .and_then(|j| j.pointer("/data/0/id"))
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    match first {
        Some(model) if reply.is_success() => {
            session.observe("model_source", "first id of GET /models");
            session.set_model(model);
            Ok(())
        }
        _ => Err(format!(
            "could not learn the model: GET {} answered {}; pass --model",
            session.transport().target().models_url().path(),
            reply.summary()
        )),
    }
}

/// Results for clauses that never ran because the audit could not start.
fn unaudited(selected: &[&Clause], why: &str) -> Vec<ClauseResult> {
    selected
        .iter()
        .map(|c| ClauseResult::new(c, Verdict::inconclusive(format!("not run: {why}"))))
        .collect()
}

fn watch_ctrl_c(interrupt: Interrupt) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("embedcheck: interrupted; finishing with a partial report");
            interrupt.trigger();
        }
    });
}

fn report_dir(options: &Options, label: &str) -> PathBuf {
    options
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("target").join("embedcheck").join(label))
}

/// A seed from the clock, for runs that did not ask for one; printed so it can be replayed.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64 % 1_000_000_007)
}
