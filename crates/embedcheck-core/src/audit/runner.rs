//! Audits one server: learns its model, runs the selected clauses, joins the verdicts
//! with the catalogue, and profiles the clients against what the run found, into a
//! [`ServerAudit`]. Printing and files are the
//! caller's business, so tests and the CLI share this path.

use crate::audit::{ClauseResult, ServerAudit};
use crate::catalogue::{Clause, Level};
use crate::clauses::{self, Check, Stage};
use crate::http::{Probe, Transport};
use crate::profiles::{self, ClauseOutcome, ClientProfile, Judged};
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
    let endpoint = session.transport().target().display();
    let ready = match resolve_model(session).await {
        Ok(()) => access_refused(session).await.map_or(Ok(()), Err),
        Err(why) => Err(why),
    };
    let (results, aborted) = match ready {
        Ok(()) => (run(session, selected).await, None),
        Err(why) => (unaudited(selected, &why), Some(why)),
    };
    let clients = match &aborted {
        None => profile_clients(session, &results).await,
        Some(why) => profiles::not_probed(why),
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

/// The client profiles, read from the clause run's results and facts.
async fn profile_clients(session: &Session, results: &[ClauseResult]) -> Vec<ClientProfile> {
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
    profiles::profile_all(session, &judged).await
}

/// Why the audit could not be completed when the server stopped answering and MUST
/// clauses were left without a verdict for that reason: a CI gate must not go green
/// on a server that never answers an embeddings request.
fn stalled_before_must_verdicts(session: &Session, results: &[ClauseResult]) -> Option<String> {
    let why = session.stalled()?;
    let unjudged = results
        .iter()
        .filter(|r| r.level == Level::Must && r.outcome == Outcome::Inconclusive)
        .count();
    (unjudged > 0).then(|| format!("{why}; {unjudged} MUST clauses were left without a verdict"))
}

/// Runs `selected` in order, probe-stage clauses first and aggregate clauses (which
/// judge everything sent) last; results come back in `selected`'s order.
pub async fn run(session: &Session, selected: &[&Clause]) -> Vec<ClauseResult> {
    let checks = clauses::all();
    let mut order: Vec<(usize, Option<&Check>)> = selected
        .iter()
        .enumerate()
        .map(|(i, clause)| (i, checks.iter().find(|c| c.id == clause.id)))
        .collect();
    order.sort_by_key(|(i, check)| (check.map_or(Stage::Probe, |c| c.stage), *i));
    let mut results: Vec<Option<ClauseResult>> = vec![None; selected.len()];
    for (i, check) in order {
        let verdict = run_one(session, check).await;
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
        Err(error) => inconclusive(error).with_all(pending.iter().rev().take(3)),
    }
}

fn inconclusive(error: ProbeError) -> Verdict {
    Verdict::inconclusive(match error {
        ProbeError::Interrupted => "interrupted (Ctrl-C) while this clause was probing".to_owned(),
        other => other.to_string(),
    })
}

/// Why the audit cannot judge the server, when its plain request is refused for the
/// suite's lack of access (401, 403, 402): every answer after it would be about the
/// key or the quota, not about the server, and a verdict built on them would accuse
/// the server of the user's own configuration. The request is IN-001's, so the clause
/// run gets it from the cache.
async fn access_refused(session: &Session) -> Option<String> {
    let reply = crate::session::requests::single(session).await.ok()?;
    matches!(reply.status, 401..=403).then(|| {
        format!(
            "access refused: the plain request was answered {}; this says nothing about the server's conformance (check --api-key-env: a key is sent only when named)",
            reply.summary()
        )
    })
}

/// Checks the endpoint answers at all and learns the model: `--model`, else the first
/// id of `GET /models`.
async fn resolve_model(session: &mut Session) -> Result<(), String> {
    let listing = session.send(Probe::list_models()).await;
    if let Some(model) = session.settings().model.clone() {
        let fact = Fact::declared(ModelSource::Declared, "--model");
        session.learn(|facts| facts.model_source = Some(fact));
        return match listing {
            Err(ProbeError::Transport(e)) => Err(format!(
                "failed to reach {}: {e}",
                session.transport().target().display()
            )),
            _ => {
                session.set_model(model);
                Ok(())
            }
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
            let fact = session.detected(ModelSource::FirstListed, &reply.exchange);
            session.learn(|facts| facts.model_source = Some(fact));
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
