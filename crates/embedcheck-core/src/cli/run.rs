//! One audit from options to written reports.

use super::error::{EXIT_CLAUSE_FAILED, EXIT_CONFORMANT, EXIT_INTERRUPTED, EXIT_RUNTIME, RunError};
use super::options::Options;
use crate::audit;
use crate::catalogue::Clause;
use crate::expectations::Expectations;
use crate::http::{Secret, Target, Transport};
use crate::migration::{Server, audit_pair};
use crate::model::{REPORT_SCHEMA_VERSION, Report, ServerAudit, Tool};
use crate::report;
use crate::session::{Interrupt, Session, Settings};
use crate::snapshot;
use reference_server::RunningServer;
use std::path::PathBuf;
use std::time::Duration;

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
        } else if self.report.audit.aborted.is_some() || self.baseline_aborted() {
            EXIT_RUNTIME
        } else if clause_failed {
            EXIT_CLAUSE_FAILED
        } else {
            EXIT_CONFORMANT
        }
    }

    fn baseline_aborted(&self) -> bool {
        let migration = self.report.migration.as_ref();
        migration.is_some_and(|m| m.baseline.aborted.is_some())
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
    // Snapshots compare runs request by request, so they need the same generated
    // inputs every time: a fixed seed unless the user chose one.
    let seed = options
        .seed
        .unwrap_or_else(|| if options.snapshot { 0 } else { fresh_seed() });
    let interrupt = Interrupt::default();
    watch_ctrl_c(interrupt.clone());
    println!(
        "embedcheck: auditing {} as {label:?} (seed {seed}; replay with --seed {seed})",
        target.display()
    );
    let expectations = Expectations::load(options.expectations.as_deref(), &label)?;
    let transport = Transport::new(target, key, Duration::from_secs(options.timeout));
    let settings = settings(options, seed);
    let (mut audit, migration) = match super::migration::prepare(options, &settings)? {
        None => {
            let mut session = Session::new(transport, settings, interrupt.clone());
            let mut audit = audit::audit_session(&mut session, label, selected).await;
            if options.snapshot {
                record_snapshots(&session, &mut audit);
            }
            (audit, None)
        }
        Some((baseline, plan)) => {
            println!(
                "embedcheck: migration audit, baseline {} as {:?}",
                baseline.transport.target().display(),
                baseline.label
            );
            let candidate = Server {
                transport,
                settings,
                label,
            };
            let pair = audit_pair(baseline, candidate, &plan, selected, interrupt.clone()).await;
            (pair.candidate, Some(pair.migration))
        }
    };
    expectations.apply(&mut audit.results);
    let baseline_aborted = migration.as_ref().and_then(|m| m.baseline.aborted.as_ref());
    for why in [audit.aborted.as_ref(), baseline_aborted]
        .into_iter()
        .flatten()
    {
        eprintln!("embedcheck: {why}");
    }
    Ok(Finished {
        interrupted: interrupt.is_triggered(),
        report: Report {
            schema_version: REPORT_SCHEMA_VERSION,
            tool: Tool::this(),
            strict: options.strict,
            seed,
            audit,
            migration,
        },
    })
}

/// Compares this run's exchanges with `snapshots/<label>/` and says what changed.
fn record_snapshots(session: &Session, audit: &mut ServerAudit) {
    let dir = std::env::current_dir()
        .unwrap_or_default()
        .join("snapshots")
        .join(&audit.label);
    let summary = snapshot::record(&session.log(), &dir);
    let verdict = if summary.pending.is_empty() {
        format!("{} unchanged", summary.unchanged)
    } else {
        format!(
            "{} unchanged, {} new or changed ({}): review with `cargo insta review`",
            summary.unchanged,
            summary.pending.len(),
            summary.pending.join(", ")
        )
    };
    println!(
        "behaviour snapshots in {}: {verdict}",
        summary.dir.display()
    );
    audit
        .observations
        .insert("behaviour_snapshots".to_owned(), verdict);
}

/// The key from the variable the user named; an unset variable is a usage error
/// rather than a silent unauthenticated run.
fn api_key(options: &Options) -> Result<Option<Secret>, RunError> {
    key_from_env(options.api_key_env.as_deref(), "--api-key-env")
}

/// The key in the variable `name`, named by option `flag`; none when no variable
/// was named.
pub(super) fn key_from_env(
    name: Option<&str>,
    flag: &'static str,
) -> Result<Option<Secret>, RunError> {
    let Some(name) = name else {
        return Ok(None);
    };
    match std::env::var(name) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(Secret::new(key.trim().to_owned()))),
        _ => Err(RunError::MissingKey {
            variable: name.to_owned(),
            flag,
        }),
    }
}

/// The endpoint to audit, its label, and the reference server when we started one
/// (kept alive for the run by the caller holding it).
async fn resolve_target(
    options: &Options,
) -> Result<(Target, String, Option<RunningServer>), RunError> {
    if let Some(endpoint) = &options.endpoint {
        let target = Target::parse(endpoint)?;
        let label = options.label(Some(target.label()));
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
        model: options.model.clone(),
        max_requests: options.max_requests,
        max_tokens: options.max_tokens,
        large_batch: options.large_batch as usize,
        max_retry_wait: Duration::from_secs(options.max_retry_wait),
        seed,
        aggressive: options.aggressive,
        cases: options.cases,
        matryoshka: options.matryoshka,
        overlength: options.overlength,
        max_input_tokens: options.max_input_tokens,
        query_instruction: options.query_instruction.clone(),
        query_task: options.query_task.clone(),
    }
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
