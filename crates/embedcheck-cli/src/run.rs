//! One audit from options to written reports.

use crate::error::{EXIT_CLAUSE_FAILED, EXIT_CONFORMANT, EXIT_INTERRUPTED, EXIT_RUNTIME, RunError};
use crate::options::Options;
use crate::plan;
use crate::plan::Baseline;
use embedcheck_core::agreement;
use embedcheck_core::audit;
use embedcheck_core::audit::Conclusion;
use embedcheck_core::catalogue::Clause;
use embedcheck_core::contracts;
use embedcheck_core::expectations::Expectations;
use embedcheck_core::http::Target;
use embedcheck_core::migration::recording::RecordingError;
use embedcheck_core::migration::replay;
use embedcheck_core::migration::{Server, audit_pair};
use embedcheck_core::report;
use embedcheck_core::report::{Comparison, ContractScore, Report, Tool};
use embedcheck_core::session::{Interrupt, Session};
use embedcheck_core::snapshot;
use reference_server::RunningServer;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The process exit status of a finished (possibly partial) run, read from the
/// report's run summary.
pub fn exit_status(report: &Report) -> u8 {
    match report.summary.conclusion {
        Conclusion::Interrupted => EXIT_INTERRUPTED,
        Conclusion::NotAudited | Conclusion::Incomplete => EXIT_RUNTIME,
        Conclusion::ClauseFailed => EXIT_CLAUSE_FAILED,
        Conclusion::Conformant => EXIT_CONFORMANT,
    }
}

/// Audits every server of a matrix on the selected clauses with one seed, prints a
/// line per server and writes `matrix.json`, `matrix.md`, `matrix.html` and each
/// server's own reports in a folder of its own.
pub(crate) fn matrix(
    options: &Options,
    specs: &[crate::matrix::ServerSpec],
    selected: &[&Clause],
    baseline: Option<Baseline>,
) -> Result<Report, RunError> {
    let recording = match baseline {
        None => None,
        Some(Baseline::Recorded(recording)) => Some(*recording),
        Some(Baseline::Live(_)) => {
            return Err(RunError::Usage(
                "--baseline URL compares two servers; a matrix (several --endpoint or --servers) takes a recorded baseline (--baseline DIR) or none".into(),
            ));
        }
    };
    if options.migration.record_baseline.is_some() {
        return Err(RunError::Usage(
            "--record-baseline records one server; a matrix (several --endpoint or --servers) takes none".into(),
        ));
    }
    if options.migration.load {
        crate::matrix::check_load_targets(specs)?;
    }
    let runtime = runtime()?;
    let seed = options.seed.unwrap_or_else(fresh_seed);
    let plan = crate::matrix::MatrixPlan::of(options, specs, seed, recording)?;
    let interrupt = Interrupt::default();
    let audited = runtime.block_on(async {
        watch_ctrl_c(interrupt.clone());
        println!(
            "embedcheck: matrix of {} servers (seed {seed}; replay with --seed {seed}), {} at a time",
            specs.len(),
            options.parallel
        );
        crate::matrix::audit_all(plan, selected, interrupt.clone()).await
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    let mut servers = Vec::with_capacity(audited.len());
    let (mut vectors, mut corpus) = (Vec::new(), Vec::new());
    for one in audited {
        servers.push(one.audit);
        vectors.extend(one.vectors);
        corpus.push(one.corpus);
    }
    let mut report = Report::new(
        Tool::this(),
        options.strict,
        seed,
        servers,
        Vec::new(),
        interrupt.is_triggered(),
    );
    report.contract = ContractScore::pinned(&options.contract);
    let groups = agreement::compare(&vectors, options.contracts.embeddings.reference_threshold);
    for outlier in groups.iter().flat_map(|g| &g.outliers) {
        println!("{}", outlier.sentence());
    }
    let document = report::matrix::Document::of(&report, options.matrix_note.clone())
        .with_agreement(groups)
        .with_corpus(corpus);
    for server in &document.servers {
        let counts: Vec<String> = server
            .levels
            .iter()
            .map(|c| format!("{} {} pass {} fail", c.level, c.pass, c.fail))
            .collect();
        match &server.not_audited {
            Some(why) => println!("{}: not audited: {why}", server.label),
            None => println!("{}: {}", server.label, counts.join(", ")),
        }
    }
    let dir = options
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("target").join("embedcheck").join("matrix"));
    write_matrix(&report, &document, &dir)?;
    println!("reports: {}", dir.display());
    Ok(report)
}

fn write_matrix(
    report: &Report,
    document: &report::matrix::Document,
    dir: &Path,
) -> Result<(), RunError> {
    for audit in &report.servers {
        report::write_all(&report.single(audit), &dir.join(&audit.label))?;
    }
    let files = [
        ("matrix.json", document.render()),
        ("matrix.md", report::matrix::markdown::render(document)),
        ("matrix.html", report::matrix::html::render(document)),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| report::ReportError::Io { path, source })?;
    }
    Ok(())
}

/// Audits the endpoint of `options` (or the reference server) on the selected
/// clauses, prints the summary and writes every report.
pub(crate) fn audit(
    options: &Options,
    selected: &[&Clause],
    baseline: Option<Baseline>,
) -> Result<Report, RunError> {
    let runtime = runtime()?;
    let (report, recorded, outputs) = runtime.block_on(audit_async(options, selected, baseline))?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    print!("{}", report::terminal::render(&report));
    for server in &report.servers {
        println!(
            "{}: {}",
            server.label,
            outputs.spend_line(server.requests_sent, server.tokens_used)
        );
    }
    let dir = &outputs.report_dir;
    report::write_all(&report, dir)?;
    println!("reports: {}", dir.display());
    if let Some(recorded) = recorded {
        println!("{}", recorded?);
    }
    Ok(report)
}

/// A run's report, with `--record-baseline` what was recorded or why not, and what
/// is printed and written of it.
type Audited = (Report, Option<Result<String, RunError>>, plan::Outputs);

async fn audit_async(
    options: &Options,
    selected: &[&Clause],
    baseline: Option<Baseline>,
) -> Result<Audited, RunError> {
    let (target, label, _reference) = resolve_target(options).await?;
    let shown = target.display();
    let plan = plan::AuditPlan::of(options, target, &label, baseline, fresh_seed)?;
    let (seed, pins) = (plan.seed, ContractScore::pinned(&options.contract));
    let interrupt = Interrupt::default();
    watch_ctrl_c(interrupt.clone());
    println!("embedcheck: auditing {shown} as {label:?} (seed {seed}; replay with --seed {seed})");
    if let Some(summary) = &plan.vendor_summary {
        println!("embedcheck: {summary}");
    }
    println!("embedcheck: {}", plan.cost_line);
    run_prepared(plan, label, selected, interrupt, pins).await
}

/// One prepared audit, alone or beside its baseline, into its report.
async fn run_prepared(
    plan: plan::AuditPlan,
    label: String,
    selected: &[&Clause],
    interrupt: Interrupt,
    pins: ContractScore,
) -> Result<Audited, RunError> {
    let outputs = plan.outputs;
    let mut snapshots = None;
    let mut recorded = None;
    let mut replayed = None;
    let (mut servers, comparisons) = match plan.live {
        None => {
            let mut session = Session::new(plan.transport, plan.settings, interrupt.clone());
            let audit = audit::audit_session(&mut session, label, selected).await;
            if plan.snapshot {
                snapshots = Some(record_snapshots(&session, &audit.label));
            }
            if let Some(recorder) = &plan.recorder {
                recorded = Some(recorder.record_and_write(&session, &audit).await);
            }
            if let Some(recording) = &plan.recorded {
                println!(
                    "embedcheck: replaying the baseline recorded from {:?} ({} documents, {} queries)",
                    recording.header.server,
                    recording.documents.len(),
                    recording.queries.len()
                );
                replayed = Some(replay::replay(&session, recording).await);
            }
            (vec![(audit, plan.expectations)], Vec::new())
        }
        Some((baseline, baseline_expectations, migration)) => {
            println!(
                "embedcheck: migration audit, baseline {} as {:?}",
                baseline.transport.target().display(),
                baseline.label
            );
            let candidate = Server {
                transport: plan.transport,
                settings: plan.settings,
                label,
            };
            let pair =
                audit_pair(baseline, candidate, &migration, selected, interrupt.clone()).await;
            if let Some(recorder) = &plan.recorder {
                let written = pair
                    .recording
                    .map_err(|why| RecordingError::Server(why).into())
                    .and_then(|r| recorder.write(r));
                recorded = Some(written);
            }
            replayed = pair.replay;
            let comparison = Comparison {
                baseline: 0,
                candidate: 1,
                migration: pair.migration,
            };
            let servers = vec![
                (pair.baseline, baseline_expectations),
                (pair.candidate, plan.expectations),
            ];
            (servers, vec![comparison])
        }
    };
    for (audit, expectations) in &mut servers {
        audit.judge(expectations, plan.strict);
        if let Some(why) = &audit.aborted {
            eprintln!("embedcheck: {why}");
        }
    }
    let servers = servers.into_iter().map(|(audit, _)| audit).collect();
    let mut report = Report::new(
        Tool::this(),
        plan.strict,
        plan.seed,
        servers,
        comparisons,
        interrupt.is_triggered(),
    );
    report.behaviour_snapshots = snapshots;
    report.replay = replayed;
    report.contract = pins;
    Ok((report, recorded, outputs))
}

/// `--dry-run`: prints the budget and each selected clause's first request as curl
/// (secrets as shell variables) and sends nothing. Only one endpoint at a time: the
/// plan of a matrix is the plan of each server.
pub fn dry_run(options: &Options, selected: &[&Clause]) -> Result<(), RunError> {
    if options.endpoint.len() > 1
        || options.servers.is_some()
        || options.migration.baseline.is_some()
        || options.migration.record_baseline.is_some()
    {
        return Err(RunError::Usage(
            "--dry-run plans one --endpoint at a time (no --servers, several --endpoint, --baseline or --record-baseline)".into(),
        ));
    }
    let runtime = runtime()?;
    let planned = runtime.block_on(async {
        let way_in = plan::way_in(&plan::Addressing::of_endpoint(options), options)?;
        let (target, label, _reference) = resolve_target(options).await?;
        println!(
            "embedcheck: dry run of {} as {label:?}: nothing is sent",
            target.display()
        );
        if let Some(profile) = &way_in.vendor {
            println!("embedcheck: {}", profile.summary());
        }
        let mut settings = plan::settings(options, options.seed.unwrap_or(0))?;
        plan::apply_vendor(
            way_in.vendor.as_ref(),
            &target,
            &mut settings,
            Expectations::default(),
        )?;
        let names_model = way_in.access.fields.send_model && options.model.is_none();
        let transport = plan::transport(target, way_in.access, options)?;
        let planned = audit::plan_requests(transport, settings, selected).await;
        Ok::<_, RunError>((planned, names_model))
    })?;
    let (planned, names_model) = planned;
    runtime.shutdown_timeout(Duration::from_secs(1));
    println!("embedcheck: {}", plan::cost_line(options));
    if names_model {
        println!(
            "embedcheck: {} stands for the model the run would learn from GET /models (--model names it)",
            audit::DRY_RUN_MODEL
        );
    }
    for request in planned {
        match request.curl {
            Some(curl) => println!("{}: {curl}", request.clause),
            None => println!(
                "{}: no request of its own (judges the run's other answers)",
                request.clause
            ),
        }
    }
    Ok(())
}

/// Compares this run's exchanges with `snapshots/<label>/` and says what changed.
fn record_snapshots(session: &Session, label: &str) -> String {
    let dir = std::env::current_dir()
        .unwrap_or_default()
        .join("snapshots")
        .join(label);
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
    verdict
}

/// The endpoint to audit, its label, and the reference server when we started one
/// (kept alive for the run by the caller holding it).
async fn resolve_target(
    options: &Options,
) -> Result<(Target, String, Option<RunningServer>), RunError> {
    if let Some(endpoint) = options.endpoint.first() {
        let target = contracts::target(endpoint)?;
        let label = options.label(Some(target.label()));
        return Ok((target, label, None));
    }
    let server = reference_server::spawn(
        reference_server::Config::default(),
        ([127, 0, 0, 1], 0).into(),
    )
    .await
    .map_err(RunError::ReferenceServer)?;
    let target = contracts::target(&server.base_url())?;
    Ok((target, options.label(None), Some(server)))
}

fn watch_ctrl_c(interrupt: Interrupt) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("embedcheck: interrupted; finishing with a partial report");
            interrupt.trigger();
        }
    });
}

/// A seed from the clock, for runs that did not ask for one; printed so it can be replayed.
fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64 % 1_000_000_007)
}

/// The runtime every run uses: two workers, the machine's two cores.
fn runtime() -> Result<tokio::runtime::Runtime, RunError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(RunError::Runtime)
}
