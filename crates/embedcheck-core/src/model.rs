//! The one result model every report is rendered from.
//!
//! A run produces records, never pre-formatted text: each clause result keeps its
//! outcome, its one-line reason and the exchanges that prove it, so the terminal table,
//! `report.json`, `report.md` and `junit.xml` are views of the same data. A `Report`
//! holds one audited server at the top level and leaves room for a second one (a
//! migration baseline) beside it.

use crate::catalogue::{Clause, Family, Level};
use crate::expectations::Matched;
use serde::Serialize;
use std::collections::BTreeMap;

/// The version of `specs/schemas/report.schema.json` this build writes.
pub const REPORT_SCHEMA_VERSION: &str = "1.0";

/// How a clause ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The server keeps the clause.
    Pass,
    /// The server breaks the clause; the evidence shows how.
    Fail,
    /// The clause does not apply to this server (precondition not met), with why.
    Skip,
    /// No verdict could be reached: network trouble, budget spent, interrupted.
    Inconclusive,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Skip => "skip",
            Outcome::Inconclusive => "inconclusive",
        }
    }
}

/// One request the suite sent and what came back, as shown in evidence.
///
/// Bodies are excerpts: long strings and arrays are cut and vectors are summarised,
/// so evidence stays readable and small. The API key never appears here.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exchange {
    pub method: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    /// HTTP status, absent when no answer arrived.
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    pub millis: u64,
    /// What went wrong on the wire, when no complete answer arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_error: Option<String>,
    /// A shell command that sends the same request, with the key as `$KEY`.
    #[serde(skip)]
    pub curl: String,
}

/// The verdict of one clause check, before it is joined with its catalogue entry.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub outcome: Outcome,
    pub reason: String,
    pub evidence: Vec<Exchange>,
}

impl Verdict {
    fn new(outcome: Outcome, reason: impl Into<String>) -> Self {
        Verdict {
            outcome,
            reason: reason.into(),
            evidence: Vec::new(),
        }
    }

    pub fn pass(reason: impl Into<String>) -> Self {
        Self::new(Outcome::Pass, reason)
    }

    pub fn fail(reason: impl Into<String>) -> Self {
        Self::new(Outcome::Fail, reason)
    }

    pub fn skip(reason: impl Into<String>) -> Self {
        Self::new(Outcome::Skip, reason)
    }

    pub fn inconclusive(reason: impl Into<String>) -> Self {
        Self::new(Outcome::Inconclusive, reason)
    }

    /// Attaches one exchange as evidence (once, even if attached twice).
    pub fn with(mut self, exchange: &Exchange) -> Self {
        if !self.evidence.contains(exchange) {
            self.evidence.push(exchange.clone());
        }
        self
    }

    pub fn with_all<'a>(self, exchanges: impl IntoIterator<Item = &'a Exchange>) -> Self {
        exchanges.into_iter().fold(self, Verdict::with)
    }
}

/// A clause's verdict joined with its catalogue entry: one row of every report.
#[derive(Clone, Debug, Serialize)]
pub struct ClauseResult {
    pub id: String,
    pub family: Family,
    pub level: Level,
    pub title: String,
    pub statement: String,
    pub outcome: Outcome,
    pub reason: String,
    pub evidence: Vec<Exchange>,
    /// Reproduces the first exchange of a failing clause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curl: Option<String>,
    /// The known-failures file's entry for this clause, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectation: Option<Matched>,
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
            outcome: verdict.outcome,
            reason: verdict.reason,
            evidence: verdict.evidence,
            curl,
            expectation: None,
        }
    }

    /// Whether this result fails the run: a MUST failure always, any failure with
    /// `--strict`; never a failure the known-failures file expects.
    pub fn fails_run(&self, strict: bool) -> bool {
        self.outcome == Outcome::Fail
            && (strict || self.level == Level::Must)
            && !self.is_known_failure()
    }

    /// A failure the known-failures file expects.
    pub fn is_known_failure(&self) -> bool {
        self.outcome == Outcome::Fail && self.expectation.as_ref().is_some_and(|e| e.as_expected)
    }

    /// An expected failure (or skip) that no longer happens: the file needs updating.
    pub fn is_unexpected(&self) -> bool {
        self.expectation.as_ref().is_some_and(|e| !e.as_expected)
    }
}

/// Everything learned about one server in one run.
#[derive(Clone, Debug, Serialize)]
pub struct ServerAudit {
    pub label: String,
    /// The audited URL with any credentials removed.
    pub endpoint: String,
    pub model: Option<String>,
    pub results: Vec<ClauseResult>,
    pub requests_sent: u64,
    pub tokens_used: u64,
    pub wall_seconds: f64,
    /// Facts the suite found out while probing (native dimension, policies…), with how.
    pub observations: BTreeMap<String, String>,
    /// Why the run stopped early, if it did (unreachable server, interrupted…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
}

impl ServerAudit {
    pub fn count(&self, outcome: Outcome) -> usize {
        self.results.iter().filter(|r| r.outcome == outcome).count()
    }

    pub fn fails_run(&self, strict: bool) -> bool {
        self.results.iter().any(|r| r.fails_run(strict))
    }
}

/// The document behind every report format.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema_version: &'static str,
    pub tool: Tool,
    pub strict: bool,
    pub seed: u64,
    #[serde(flatten)]
    pub audit: ServerAudit,
    /// The comparison with a baseline server (`--baseline`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migration: Option<crate::migration::Migration>,
}

/// Which build wrote a report.
#[derive(Clone, Debug, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

impl Tool {
    pub fn this() -> Self {
        Tool {
            name: "embedcheck",
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}
