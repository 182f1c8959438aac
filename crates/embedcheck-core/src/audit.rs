//! Runs the selected clauses against one session and joins verdicts with the catalogue.

use crate::catalogue::Clause;
use crate::clauses::{self, Check, Stage};
use crate::model::{ClauseResult, Verdict};
use crate::session::{ProbeError, Session};

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
    session.take_pending();
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
