//! What one audit learned: each clause's verdict joined with its catalogue entry, the
//! facts learned on the way, and what each result means for the run.
//!
//! Whether a result fails the run is decided here, once ([`ServerAudit::judge`]), as a
//! [`Gate`] on each result and a [`RunSummary`] over every audited server; every view
//! (terminal, Markdown, JUnit, JSON, the libtest harness) reads them and none decides
//! it again.

use crate::catalogue::{Clause, Family, Level, LevelGrounds};
use crate::expectations::{Expectations, Matched};
use crate::http::Exchange;
use crate::profiles::ClientProfile;
use crate::session::Facts;
use crate::verdict::{Outcome, Verdict};
use serde::Serialize;

/// What one result means for the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// Nothing to act on: a pass, skip or inconclusive the file did not expect otherwise.
    #[default]
    Clear,
    /// A failure that fails the run: a MUST clause, or any clause with `--strict`.
    FailsRun,
    /// A SHOULD or MAY failure without `--strict`.
    Tolerated,
    /// A failure the known-failures file expects.
    KnownFailure,
    /// The known-failures file expected another outcome (a known failure now passes):
    /// the file needs updating, and until it is, the run fails.
    NotAsExpected,
    /// Another outcome than expected, tolerated: `--allow-fixed`, or a vendor's
    /// documented deviation the vendor no longer shows.
    NotAsExpectedAllowed,
    /// A clause added or changed after the pinned contract (`--contract`): reported,
    /// never failing the run.
    NotScored,
    /// A MUST clause left without a verdict (no answer in time, a budget): the run is
    /// not a conformant one, whatever else passed.
    Unjudged,
}

/// A clause's verdict joined with its catalogue entry: one row of every report.
#[derive(Clone, Debug, Serialize)]
pub struct ClauseResult {
    pub id: String,
    pub family: Family,
    pub level: Level,
    pub title: String,
    pub statement: String,
    /// Why the clause has its level: the requirements and clients the catalogue names.
    pub level_evidence: LevelGrounds,
    /// The level and its deciding evidence on one line ("MUST: openai-python 3.57.0
    /// …"), which every view shows beside a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level_line: Option<String>,
    pub outcome: Outcome,
    pub reason: String,
    pub evidence: Vec<Exchange>,
    /// Reproduces the first exchange of a failing clause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curl: Option<String>,
    /// The known-failures file's entry for this clause, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectation: Option<Matched>,
    /// Why the clause is not scored under the pinned contract (`--contract`): it ran
    /// and is reported, but cannot fail the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_scored: Option<String>,
    /// What this result means for the run, set by [`ServerAudit::judge`].
    pub gate: Gate,
}

impl ClauseResult {
    pub fn new(clause: &Clause, verdict: Verdict) -> Self {
        let curl = (verdict.outcome == Outcome::Fail)
            .then(|| verdict.evidence.first().map(|e| e.curl.clone()))
            .flatten();
        ClauseResult {
            id: clause.id.clone(),
            family: clause.family,
            level: clause.level,
            title: clause.title.clone(),
            statement: clause.statement.clone(),
            level_evidence: clause.level_evidence.clone(),
            level_line: clause
                .level_evidence
                .line(clause.level, crate::contracts::release_of),
            outcome: verdict.outcome,
            reason: verdict.reason,
            evidence: verdict.evidence,
            curl,
            expectation: None,
            not_scored: None,
            gate: Gate::Clear,
        }
    }

    /// The gate of this result: a known failure first (the file's word is final),
    /// then a failure by level and `strict`, then an expectation that no longer holds.
    fn gate(&self, strict: bool) -> Gate {
        if self.not_scored.is_some() {
            return Gate::NotScored;
        }
        let matched = self
            .expectation
            .as_ref()
            .map(|m| (m.as_expected, m.mismatch_allowed));
        match (self.outcome, matched) {
            (Outcome::Fail, Some((true, _))) => Gate::KnownFailure,
            (Outcome::Fail, _) if strict || self.level == Level::Must => Gate::FailsRun,
            (_, Some((false, false))) => Gate::NotAsExpected,
            (_, Some((false, true))) => Gate::NotAsExpectedAllowed,
            (Outcome::Fail, _) => Gate::Tolerated,
            (Outcome::Inconclusive, None) if self.level == Level::Must => Gate::Unjudged,
            _ => Gate::Clear,
        }
    }
}

/// Everything learned about one server in one run.
#[derive(Clone, Debug)]
pub struct ServerAudit {
    pub label: String,
    /// The audited URL with any credentials removed.
    pub endpoint: String,
    pub model: Option<String>,
    pub results: Vec<ClauseResult>,
    /// Requests and tokens of the clause run alone; a comparison counts its own.
    pub requests_sent: u64,
    pub tokens_used: u64,
    pub wall_seconds: f64,
    /// What the clauses learned about the server, each fact with how.
    pub facts: Facts,
    /// Whether each profiled client works against the server with its defaults.
    pub clients: Vec<ClientProfile>,
    /// Why the run stopped early, if it did (unreachable server, interrupted…).
    pub aborted: Option<String>,
}

impl ServerAudit {
    pub(crate) fn count(&self, outcome: Outcome) -> usize {
        self.results.iter().filter(|r| r.outcome == outcome).count()
    }

    /// Results whose gate is `gate`.
    pub fn gated(&self, gate: Gate) -> usize {
        self.results.iter().filter(|r| r.gate == gate).count()
    }

    /// Why the run cannot read as conformant although nothing failed, when MUST
    /// clauses were left without a verdict: every view says it in these words.
    pub fn unjudged_line(&self) -> Option<String> {
        let ids: Vec<&str> = self
            .results
            .iter()
            .filter(|r| r.gate == Gate::Unjudged)
            .map(|r| r.id.as_str())
            .collect();
        (!ids.is_empty()).then(|| {
            format!(
                "{} MUST clause{} left without a verdict ({}): not conformant until {} judged (the reasons say why: a deadline, a budget) or listed as expected inconclusive",
                ids.len(),
                if ids.len() == 1 { "" } else { "s" },
                ids.join(", "),
                if ids.len() == 1 { "it is" } else { "they are" },
            )
        })
    }

    /// Attaches each result's known-failures entry, then sets every gate: the one
    /// place where "does this fail the run" is decided.
    pub fn judge(&mut self, expectations: &Expectations, strict: bool) {
        for result in &mut self.results {
            result.expectation = expectations.matched(&result.id, result.outcome);
            result.not_scored = expectations.not_scored(&result.id);
            result.gate = result.gate(strict);
        }
    }
}

/// How a run ended, over every audited server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Conclusion {
    /// Every server was audited and no result fails the run.
    Conformant,
    /// At least one result fails the run.
    ClauseFailed,
    /// Nothing failed, but MUST clauses were left without a verdict: not conformant.
    Incomplete,
    /// A server could not be audited; the report is partial.
    NotAudited,
    /// Ctrl-C; the report is partial.
    Interrupted,
}

/// The run's verdict, decided once from the gates of every server's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    pub conclusion: Conclusion,
    /// Results that fail the run, over every server.
    pub fails_run: usize,
    pub tolerated: usize,
    pub known_failures: usize,
    pub not_as_expected: usize,
    /// MUST clauses left without a verdict, over every gating server.
    pub unjudged: usize,
    /// Labels of the servers whose audit stopped early.
    pub not_audited: Vec<String>,
}

impl RunSummary {
    /// Summarises audits whose gates are set ([`ServerAudit::judge`]). Every audit
    /// counts for "not audited"; only those in `gating` decide whether a clause
    /// failure fails the run (a migration's candidate, not the baseline it leaves).
    pub(crate) fn of(audits: &[&ServerAudit], gating: &[&ServerAudit], interrupted: bool) -> Self {
        let total = |gate| gating.iter().map(|a| a.gated(gate)).sum::<usize>();
        let not_audited: Vec<String> = audits
            .iter()
            .filter(|a| a.aborted.is_some())
            .map(|a| a.label.clone())
            .collect();
        let fails_run = total(Gate::FailsRun);
        let not_as_expected = total(Gate::NotAsExpected);
        let unjudged = total(Gate::Unjudged);
        let conclusion = if interrupted {
            Conclusion::Interrupted
        } else if !not_audited.is_empty() {
            Conclusion::NotAudited
        } else if fails_run + not_as_expected > 0 {
            Conclusion::ClauseFailed
        } else if unjudged > 0 {
            Conclusion::Incomplete
        } else {
            Conclusion::Conformant
        };
        RunSummary {
            conclusion,
            fails_run,
            tolerated: total(Gate::Tolerated),
            known_failures: total(Gate::KnownFailure),
            not_as_expected,
            unjudged,
            not_audited,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{Catalogue, ContractPin};
    use std::path::Path;

    const FILE: &str = r#"
[ERR-008]
expect = "fail"
reason = "flat error bodies"
link = "https://example.invalid/issue/1"

[RESP-003]
expect = "fail"
reason = "fixed upstream in a later release"
"#;

    fn result(id: &str, verdict: Verdict) -> ClauseResult {
        ClauseResult::new(Catalogue::shipped().get(id).unwrap(), verdict)
    }

    fn audit(results: Vec<ClauseResult>) -> ServerAudit {
        ServerAudit {
            label: "s".to_owned(),
            endpoint: String::new(),
            model: None,
            results,
            requests_sent: 0,
            tokens_used: 0,
            wall_seconds: 0.0,
            facts: Facts::default(),
            clients: Vec::new(),
            aborted: None,
        }
    }

    /// A result carries its clause's level evidence, and the line names a client with
    /// the release its profile follows.
    #[test]
    fn a_result_says_why_its_level_naming_the_clients_release() {
        let spe = result("SPS-009", Verdict::fail("the MP3 clip refused"));
        assert!(!spe.level_evidence.is_empty());
        assert!(
            spe.level_line
                .as_deref()
                .unwrap()
                .starts_with("MUST: OpenAI API reference"),
            "{:?}",
            spe.level_line
        );
        let resp = result("RESP-002", Verdict::fail("3 items for 4 inputs"));
        assert_eq!(
            resp.level_line.as_deref(),
            Some(
                "MUST: openai-python 3.57.0 returns 3 vectors for a batch of 4 inputs, without an error"
            )
        );
    }

    #[test]
    fn known_failures_do_not_fail_the_run_and_fixed_ones_are_flagged() {
        let expectations = Expectations::parse(FILE, Path::new("x.toml")).unwrap();
        let mut audit = audit(vec![
            result("ERR-008", Verdict::fail("flat")),
            result("RESP-003", Verdict::pass("ok now")),
            result("RESP-001", Verdict::fail("new failure")),
        ]);
        audit.judge(&expectations, true);
        let gates: Vec<Gate> = audit.results.iter().map(|r| r.gate).collect();
        assert_eq!(
            gates,
            [Gate::KnownFailure, Gate::NotAsExpected, Gate::FailsRun]
        );
        let summary = RunSummary::of(&[&audit], &[&audit], false);
        assert_eq!(summary.conclusion, Conclusion::ClauseFailed);
        assert_eq!((summary.fails_run, summary.known_failures), (1, 1));
    }

    /// A baseline cannot rot: a known failure that passes fails the run until the file
    /// is updated, unless `--allow-fixed`.
    #[test]
    fn a_fixed_known_failure_fails_the_run_unless_allowed() {
        let fixed = || audit(vec![result("RESP-003", Verdict::pass("ok now"))]);
        let expectations = Expectations::parse(FILE, Path::new("x.toml")).unwrap();
        let mut strict_file = fixed();
        strict_file.judge(&expectations, false);
        let summary = RunSummary::of(&[&strict_file], &[&strict_file], false);
        assert_eq!(summary.conclusion, Conclusion::ClauseFailed);
        assert_eq!(summary.not_as_expected, 1);
        let mut allowed = fixed();
        allowed.judge(&expectations.allowing_fixed(true), false);
        assert_eq!(allowed.results[0].gate, Gate::NotAsExpectedAllowed);
        let summary = RunSummary::of(&[&allowed], &[&allowed], false);
        assert_eq!(summary.conclusion, Conclusion::Conformant);
    }

    /// A server pinned to contract 1.0 stays green when the suite adds a clause it
    /// fails: the clause runs and is reported, not scored.
    #[test]
    fn a_clause_after_the_pinned_contract_runs_and_is_not_scored() {
        let mut pinned = audit(vec![
            result("REF-002", Verdict::fail("cosine 0.4")),
            result("RESP-001", Verdict::fail("no data")),
        ]);
        let v1_0: ContractPin = "1.0".parse().unwrap();
        pinned.judge(&Expectations::default().pinned_to(&[v1_0]), false);
        assert_eq!(pinned.results[0].gate, Gate::NotScored);
        assert_eq!(pinned.results[0].outcome, Outcome::Fail);
        assert_eq!(pinned.results[1].gate, Gate::FailsRun);
        let only_new = audit(vec![result("REF-002", Verdict::fail("cosine 0.4"))]);
        let mut only_new_pinned = only_new.clone();
        only_new_pinned.judge(&Expectations::default().pinned_to(&[v1_0]), false);
        let summary = RunSummary::of(&[&only_new_pinned], &[&only_new_pinned], false);
        assert_eq!(summary.conclusion, Conclusion::Conformant);
    }

    #[test]
    fn should_failures_fail_the_run_only_with_strict() {
        let should = Catalogue::shipped()
            .clauses
            .iter()
            .find(|c| c.level == Level::Should)
            .unwrap();
        let mut lenient = audit(vec![ClauseResult::new(should, Verdict::fail("x"))]);
        let mut strict = lenient.clone();
        lenient.judge(&Expectations::default(), false);
        strict.judge(&Expectations::default(), true);
        assert_eq!(lenient.results[0].gate, Gate::Tolerated);
        assert_eq!(strict.results[0].gate, Gate::FailsRun);
        let summary = RunSummary::of(&[&lenient], &[&lenient], false);
        assert_eq!(summary.conclusion, Conclusion::Conformant);
    }

    /// A slow server's large batch got no answer in time: nothing failed, but a MUST
    /// clause has no verdict, so the run is not conformant (exit 3, not 0).
    #[test]
    fn a_must_clause_without_a_verdict_is_not_conformant() {
        let mut audit = audit(vec![
            result("RESP-001", Verdict::pass("ok")),
            result(
                "IN-008",
                Verdict::inconclusive("no answer within its deadline"),
            ),
        ]);
        audit.judge(&Expectations::default(), false);
        assert_eq!(audit.results[1].gate, Gate::Unjudged);
        let summary = RunSummary::of(&[&audit], &[&audit], false);
        assert_eq!(summary.conclusion, Conclusion::Incomplete);
        assert_eq!(summary.unjudged, 1);
        let expected: Expectations = Expectations::parse(
            "[IN-008]\nexpect = \"inconclusive\"\nreason = \"too slow for a 2048 batch\"\n",
            Path::new("x.toml"),
        )
        .unwrap();
        audit.judge(&expected, false);
        assert_eq!(audit.results[1].gate, Gate::Clear);
        let summary = RunSummary::of(&[&audit], &[&audit], false);
        assert_eq!(summary.conclusion, Conclusion::Conformant);
    }

    #[test]
    fn an_unaudited_server_outranks_failures_and_ctrl_c_outranks_all() {
        let mut failed = audit(vec![result("RESP-001", Verdict::fail("x"))]);
        failed.judge(&Expectations::default(), false);
        let mut down = audit(Vec::new());
        down.aborted = Some("failed to reach".to_owned());
        let both = [&failed, &down];
        assert_eq!(
            RunSummary::of(&both, &both, false).conclusion,
            Conclusion::NotAudited
        );
        assert_eq!(
            RunSummary::of(&both, &both, true).conclusion,
            Conclusion::Interrupted
        );
        assert_eq!(RunSummary::of(&both, &both, false).not_audited, ["s"]);
        let candidate_only = RunSummary::of(&both, &[&down], false);
        assert_eq!(
            candidate_only.fails_run, 0,
            "the baseline's failures do not gate"
        );
    }
}
