//! Audits one server: learns its model, runs the selected clauses, joins the verdicts
//! with the catalogue, and profiles the clients against what the run found, into a
//! [`ServerAudit`]. Printing and files are the
//! caller's business, so tests and the CLI share this path.

use crate::audit::{ClauseResult, ServerAudit};
use crate::catalogue::{Clause, Level};
use crate::clauses::{Check, Stage};
use crate::contracts::{self, Contract, Offered};
use crate::http::{Credentials, Probe, Reply, Transport};
use crate::profiles::{ClauseOutcome, ClientProfile, Judged};
use crate::session::facts::ModelSource;
use crate::session::{Fact, Interrupt, ProbeError, Session, Settings};
use crate::verdict::{Outcome, Verdict};
use std::time::Instant;

/// Audits the server behind `transport` on the selected clauses. Never fails: an
/// endpoint that cannot be audited gives inconclusive results and `aborted` says why.
pub async fn audit_server(
    transport: Transport,
    settings: Settings,
    label: String,
    selected: &[&Clause],
    interrupt: Interrupt,
) -> ServerAudit {
    let mut session = Session::new(transport, settings, interrupt);
    audit_session(&mut session, label, selected).await
}

/// Audits through a session the caller keeps, so it can go on probing the same server
/// with the same budgets and cache afterwards (the migration audit does).
pub async fn audit_session(
    session: &mut Session,
    label: String,
    selected: &[&Clause],
) -> ServerAudit {
    let started = Instant::now();
    session.install(crate::contracts::hooks());
    let endpoint = session.transport().target().display();
    let ready = match resolve_model(session).await {
        Ok(()) => reachable_with_access(session).await,
        Err(why) => Err(why),
    };
    let ready = match ready {
        Ok(()) => crate::contracts::offered(session).await,
        Err(why) => Err(why),
    };
    let (results, aborted, offered) = match ready {
        Ok(offered) => {
            let not_offered = offered.not_offered().to_vec();
            session.learn(|facts| facts.not_offered = not_offered);
            let (audited, skipped): (Vec<&Clause>, Vec<&Clause>) =
                selected.iter().partition(|c| offered.offers(c.contract()));
            let mut results = run(session, &audited).await;
            for clause in skipped {
                let why = offered.why_not(clause.contract()).unwrap_or_default();
                results.push(ClauseResult::new(clause, Verdict::skip(why.to_owned())));
            }
            let order = |r: &ClauseResult| selected.iter().position(|c| c.id == r.id);
            results.sort_by_key(order);
            (results, None, Some(offered))
        }
        Err(why) => (unaudited(selected, &why), Some(why), None),
    };
    let clients = match (&offered, &aborted) {
        (Some(offered), _) => profile_clients(session, &results, offered).await,
        (None, why) => contracts::not_probed(why.as_deref().unwrap_or_default()),
    };
    let aborted = aborted
        .or_else(|| {
            session
                .interrupted()
                .then(|| "interrupted by Ctrl-C".to_owned())
        })
        .or_else(|| stalled_before_must_verdicts(session, &results));
    ServerAudit {
        label,
        endpoint,
        model: Some(session.model().to_owned()).filter(|m| !m.is_empty()),
        results,
        requests_sent: session.requests_sent(),
        tokens_used: session.tokens_used(),
        wall_seconds: started.elapsed().as_secs_f64(),
        facts: session.facts(),
        clients,
        aborted,
    }
}

/// The client profiles of the contracts offered, read from the clause run's results
/// and facts.
async fn profile_clients(
    session: &Session,
    results: &[ClauseResult],
    offered: &Offered,
) -> Vec<ClientProfile> {
    let facts = session.facts();
    let judged = Judged {
        clauses: results
            .iter()
            .map(|r| ClauseOutcome {
                id: &r.id,
                outcome: r.outcome,
                reason: &r.reason,
                evidence: &r.evidence,
            })
            .collect(),
        facts: &facts,
    };
    crate::contracts::profile(session, &judged, offered).await
}

/// Why the audit could not be completed when the server stopped answering, or a
/// budget ran out, and MUST clauses were left without a verdict: a CI gate must not go
/// green on a server that never answers an embeddings request, nor on a run whose
/// `--max-tokens` or `--max-cost` cut it short.
fn stalled_before_must_verdicts(session: &Session, results: &[ClauseResult]) -> Option<String> {
    let why = session
        .stalled()
        .or_else(|| session.budget_spent().map(|e| e.to_string()))?;
    let unjudged = results
        .iter()
        .filter(|r| r.level == Level::Must && r.outcome == Outcome::Inconclusive)
        .count();
    (unjudged > 0).then(|| format!("{why}; {unjudged} MUST clauses were left without a verdict"))
}

/// Runs `selected` in order, probe-stage clauses first and aggregate clauses (which
/// judge everything sent) last; results come back in `selected`'s order.
pub async fn run(session: &Session, selected: &[&Clause]) -> Vec<ClauseResult> {
    let checks = crate::contracts::checks();
    let mut order: Vec<(usize, Option<&Check>)> = selected
        .iter()
        .enumerate()
        .map(|(i, clause)| (i, checks.iter().find(|c| c.id == clause.id)))
        .collect();
    order.sort_by_key(|(i, check)| (check.map_or(Stage::Probe, |c| c.stage), *i));
    let mut results: Vec<Option<ClauseResult>> = vec![None; selected.len()];
    for (i, check) in order {
        let verdict =
            crate::contracts::as_judged(session, selected[i], run_one(session, check).await);
        results[i] = Some(ClauseResult::new(selected[i], verdict));
    }
    results.into_iter().flatten().collect()
}

async fn run_one(session: &Session, check: Option<&Check>) -> Verdict {
    let Some(check) = check else {
        return Verdict::inconclusive("no implementation for this clause in this build");
    };
    if session.interrupted() {
        return Verdict::inconclusive("interrupted before this clause ran");
    }
    session.begin_clause(check.id);
    let outcome = (check.run)(session).await;
    let pending = session.take_pending();
    match outcome {
        Ok(verdict) => verdict,
        // The server's own answer to the clause's request: no answer at all.
        Err(error @ ProbeError::Unanswered { .. }) => {
            Verdict::fail(error.to_string()).with_all(pending.iter().rev().take(2))
        }
        // The clause asks what the server's rerank dialect cannot say.
        Err(ProbeError::NotInDialect(why)) => Verdict::skip(why),
        Err(error) => inconclusive(error).with_all(pending.iter().rev().take(3)),
    }
}

fn inconclusive(error: ProbeError) -> Verdict {
    Verdict::inconclusive(match error {
        ProbeError::Interrupted => "interrupted (Ctrl-C) while this clause was probing".to_owned(),
        other => other.to_string(),
    })
}

/// Whether the plain request gets an answer that is about the server. Not when the
/// server cannot be reached, nor when the answer is about the suite's own access
/// (401, 403, 402, or a 429 saying a quota or credit is spent): every answer after it
/// would be about the key or the account, and a verdict built on them would accuse the
/// server of the user's own configuration. The plain request is each contract's in
/// the registry's order until one's route is not absent (a speech-only server says
/// nothing of access on the embeddings route); the first is IN-001's, so the clause
/// run gets it from the cache.
async fn reachable_with_access(session: &Session) -> Result<(), String> {
    let shown = || session.transport().target().display();
    let mut first = true;
    for contract in crate::contracts::ALL {
        let Some(probe) = contract.plain_request(session, Credentials::Run) else {
            continue;
        };
        let reply = match session.send(probe).await {
            Ok(reply) => reply,
            Err(ProbeError::Transport(e)) => {
                return Err(format!("failed to reach {}: {e}", shown()));
            }
            // A budget, a stall or Ctrl-C: the clause run says so clause by clause.
            Err(_) => return Ok(()),
        };
        if reply.is_absent() {
            first = false;
            continue;
        }
        return with_access(session, contract, &reply, first).await;
    }
    Ok(())
}

/// Whether `reply`, the first plain request a route answered, is about the server;
/// `first` where it is the first contract's, whose wrong-key probes tell a rejected key
/// in disguise.
async fn with_access(
    session: &Session,
    contract: &dyn Contract,
    reply: &Reply,
    first: bool,
) -> Result<(), String> {
    if reply.is_redirect() {
        return Err(redirected("the plain request", reply));
    }
    if matches!(reply.status, 401..=403) || reply.says_quota_spent() {
        return Err(format!(
            "access refused: the plain request was answered {}; this says nothing about the server's conformance (check --api-key-env, --api-key-header and --header-env: a key is sent only when named)",
            reply.summary()
        ));
    }
    if first {
        return rejected_key_in_disguise(session, contract, reply).await;
    }
    Ok(())
}

/// A redirect is not the server's answer: nothing is judged on it, and it is never
/// followed (the key would go to the `Location`'s host). The message names where it
/// points, so the user can audit that URL instead.
fn redirected(what: &str, reply: &Reply) -> String {
    let to = reply
        .location
        .as_deref()
        .map_or("no Location".to_owned(), |l| format!("Location {l}"));
    format!(
        "redirected: {what} was answered {} with {to}; embedcheck follows no redirect (it would carry the key to another host): pass the URL it points to as --endpoint",
        reply.status
    )
}

/// A server may refuse a key it rejects with another client error (LiteLLM without a
/// database answers an unknown key 400 "No connected db."). When the plain request
/// with the run's credentials is a 4xx, it is sent once with an obviously wrong key:
/// the same answer, while the request without credentials is answered otherwise, means
/// the server reads the key and takes the run's for a wrong one.
async fn rejected_key_in_disguise(
    session: &Session,
    contract: &dyn Contract,
    reply: &Reply,
) -> Result<(), String> {
    if !reply.is_client_error() || !session.transport().access().has_credentials() {
        return Ok(());
    }
    let plain = |r: &Reply| (r.status, r.error_message());
    let probes = (
        contract.plain_request(session, Credentials::Wrong),
        contract.plain_request(session, Credentials::Withheld),
    );
    let (Some(wrong), Some(bare)) = probes else {
        return Ok(());
    };
    let (Ok(wrong), Ok(bare)) = (session.send(wrong).await, session.send(bare).await) else {
        return Ok(());
    };
    if plain(&wrong) == plain(reply) && plain(&bare) != plain(reply) {
        return Err(format!(
            "access refused: the plain request was answered {} with the run's credentials, the same as with an obviously wrong key, and {} without any: the server takes the run's key for a wrong one; this says nothing about its conformance (check --api-key-env, --api-key-header and --header-env)",
            reply.summary(),
            bare.summary()
        ));
    }
    Ok(())
}

/// Learns the model: `--model`, else nothing when requests carry none (a vendor whose
/// URL names the deployment), else the first id of `GET /models`, else a contract's
/// own (`--rerank-model`, `--speech-model`), else TEI's `GET /info`. Only the last
/// three ask for the models route: an endpoint without one is audited with `--model`
/// or a contract's own.
async fn resolve_model(session: &mut Session) -> Result<(), String> {
    if session.settings().dry_run && session.settings().model.is_none() {
        // Nothing is sent, so nothing can name the model: the plan says MODEL.
        session.set_model(DRY_RUN_MODEL.to_owned());
    }
    if let Some(model) = session.settings().model.clone() {
        let fact = Fact::declared(ModelSource::Declared, "--model");
        session.learn(|facts| facts.model_source = Some(fact));
        session.set_model(model);
        return Ok(());
    }
    if !session.transport().access().fields.send_model {
        let fact = Fact::declared(ModelSource::NotSent, "--vendor");
        session.learn(|facts| facts.model_source = Some(fact));
        return Ok(());
    }
    let reply = session.send(Probe::list_models()).await.map_err(|e| {
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
    if reply.is_redirect() {
        let listing = format!("GET {}", session.transport().target().models_url().path());
        return Err(redirected(&listing, &reply));
    }
    match (first, crate::contracts::named_model(session)) {
        (Some(model), _) if reply.is_success() => {
            let fact = session.detected(ModelSource::FirstListed, &reply.exchange);
            session.learn(|facts| facts.model_source = Some(fact));
            session.set_model(model);
            Ok(())
        }
        // A rerank or speech server need not list its models (LitServe, Infinity
        // without its `/v1` prefix, whisper.cpp): the model the user named for that
        // contract names the run's.
        (_, Some((model, flag))) => {
            let fact = Fact::declared(ModelSource::ContractOption(flag), flag);
            session.learn(|facts| facts.model_source = Some(fact));
            session.set_model(model);
            Ok(())
        }
        (_, None) => match model_of_info_page(session).await {
            Some((model, exchange)) => {
                let fact = session.detected(ModelSource::InfoPage, &exchange);
                session.learn(|facts| facts.model_source = Some(fact));
                session.set_model(model);
                Ok(())
            }
            None => Err(format!(
                "could not learn the model: GET {} answered {}; pass --model (or {} to audit a server of that contract)",
                session.transport().target().models_url().path(),
                reply.summary(),
                crate::contracts::model_options().join(" or ")
            )),
        },
    }
}

/// The `model_id` TEI's `GET /info` names, with the exchange that shows it: TEI lists
/// no models, so a user pointing the suite at it needs no `--model`.
async fn model_of_info_page(session: &Session) -> Option<(String, crate::http::Exchange)> {
    let reply = session
        .send(Probe::identity(crate::http::IdentityPage::Info))
        .await
        .ok()?;
    let model = reply
        .json
        .as_ref()
        .and_then(|j| j.get("model_id"))
        .and_then(serde_json::Value::as_str)
        .filter(|m| reply.is_success() && !m.is_empty())?;
    Some((model.to_owned(), reply.exchange.clone()))
}

/// What a dry run's requests name as the model when `--model` was not given.
pub const DRY_RUN_MODEL: &str = "MODEL";

/// One clause's first request, as `--dry-run` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedRequest {
    pub clause: String,
    /// The curl command that would send it (secrets as `$KEY`), or none for a clause
    /// that judges the run's other answers.
    pub curl: Option<String>,
}

/// Each selected clause's first request, recorded and never sent (the session runs
/// with `dry_run`): the plan `--dry-run` prints.
pub async fn plan_requests(
    transport: Transport,
    settings: Settings,
    selected: &[&Clause],
) -> Vec<PlannedRequest> {
    let settings = Settings {
        dry_run: true,
        ..settings
    };
    let mut session = Session::new(transport, settings, Interrupt::default());
    // Cannot fail in a dry run: no request is sent.
    let _ = resolve_model(&mut session).await;
    run(&session, selected).await;
    let log = session.log();
    selected
        .iter()
        .map(|clause| PlannedRequest {
            clause: clause.id.clone(),
            curl: log
                .iter()
                .find(|l| l.clause == Some(clause.id.as_str()))
                .map(|l| l.exchange.curl.clone()),
        })
        .collect()
}

/// Results for clauses that never ran because the audit could not start.
fn unaudited(selected: &[&Clause], why: &str) -> Vec<ClauseResult> {
    selected
        .iter()
        .map(|c| ClauseResult::new(c, Verdict::inconclusive(format!("not run: {why}"))))
        .collect()
}
