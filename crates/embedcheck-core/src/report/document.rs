//! The document behind every report format: N server audits, the comparisons between
//! pairs of them, and the run's verdict.
//!
//! One server is N = 1; a migration is N = 2 (baseline, candidate) with one
//! comparison; a vendor matrix is N > 2. Every view renders this one document, so a
//! matrix is a view and not a second model.

use crate::audit::{RunSummary, ServerAudit};
use crate::catalogue::{ContractId, ContractVersion};
use crate::migration::Migration;
use crate::migration::replay::Replay;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The document behind every report format.
#[derive(Clone, Debug)]
pub struct Report {
    pub tool: Tool,
    pub strict: bool,
    pub seed: u64,
    /// Every audited server, in the order the run named them (a migration: the
    /// baseline, then the candidate).
    pub servers: Vec<ServerAudit>,
    /// Comparisons between pairs of `servers`.
    pub comparisons: Vec<Comparison>,
    /// The run's verdict, from the gates of every server's results.
    pub summary: RunSummary,
    /// What the behaviour snapshots (`--snapshot`) found, when they were recorded.
    pub behaviour_snapshots: Option<String>,
    /// The subject server against a recorded baseline (`--baseline DIR`).
    pub replay: Option<Replay>,
    /// The contract version of this build, and the one the run is scored against.
    pub contract: ContractScore,
}

/// The contracts a run ran and the versions it is scored against (`--contract`): the
/// embeddings contract's at the top (as schema 1.6 had it), every other contract's
/// beside it under its name (`rerank`, schema 1.8).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContractScore {
    /// The embeddings contract of this build: every clause of it ran.
    pub version: ContractVersion,
    /// The pinned version: only its clauses count, when earlier than `version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scored: Option<ContractVersion>,
    /// Every other contract of this build, and its pin; none in documents written
    /// before schema 1.8 (the published matrix of embeddings servers).
    #[serde(flatten)]
    pub others: BTreeMap<ContractId, VersionScore>,
}

/// One contract's version and the one it is scored against.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VersionScore {
    pub version: ContractVersion,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scored: Option<ContractVersion>,
}

impl VersionScore {
    /// `1.2`, or `1.2, scored as 1.0`.
    fn words(&self) -> String {
        match self.scored {
            Some(pinned) => format!("{}, scored as {pinned}", self.version),
            None => self.version.to_string(),
        }
    }
}

impl ContractScore {
    /// This build's contracts, nothing pinned.
    pub fn this_build() -> Self {
        let catalogue = crate::catalogue::Catalogue::shipped();
        let score = |contract| VersionScore {
            version: catalogue.contract_of(contract).version,
            scored: None,
        };
        ContractScore {
            version: score(ContractId::first()).version,
            scored: None,
            others: ContractId::all()
                .into_iter()
                .filter(|c| *c != ContractId::first())
                .map(|c| (c, score(c)))
                .collect(),
        }
    }

    /// This build's contracts, scored at `pins` (`--contract`).
    pub fn pinned(pins: &[crate::catalogue::ContractPin]) -> Self {
        let mut score = ContractScore::this_build();
        for pin in pins {
            match score.others.get_mut(&pin.contract) {
                Some(other) => other.scored = Some(pin.version),
                None => score.scored = Some(pin.version),
            }
        }
        score
    }

    /// The version of `contract` these servers were measured on.
    pub fn version_of(&self, contract: ContractId) -> ContractVersion {
        self.others
            .get(&contract)
            .map_or(self.version, |score| score.version)
    }

    /// `contract 1.2 (rerank 1.0)`, or `contract 1.2, scored as 1.0 (rerank 1.0)`, for
    /// every view's header.
    pub fn line(&self) -> String {
        format!("contract {}", self.versions())
    }

    /// `1.2 (rerank 1.0)`, or `1.2, scored as 1.0 (rerank 1.0)`.
    pub fn versions(&self) -> String {
        let embeddings = VersionScore {
            version: self.version,
            scored: self.scored,
        };
        if self.others.is_empty() {
            return embeddings.words();
        }
        let others: Vec<String> = self
            .others
            .iter()
            .map(|(contract, score)| format!("{contract} {}", score.words()))
            .collect();
        format!("{} ({})", embeddings.words(), others.join(", "))
    }
}

/// Two of a report's servers compared: `servers[baseline]` → `servers[candidate]`.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub baseline: usize,
    pub candidate: usize,
    pub migration: Migration,
}

/// A migration as views read it: both audits and their comparison.
#[derive(Clone, Copy, Debug)]
pub struct MigrationView<'a> {
    pub baseline: &'a ServerAudit,
    pub candidate: &'a ServerAudit,
    pub migration: &'a Migration,
}

impl Report {
    /// A report of `servers` (their gates already set) and their comparisons; the
    /// run summary is derived here, so it always agrees with the results. With
    /// comparisons, their candidates gate the run; otherwise every server does.
    pub fn new(
        tool: Tool,
        strict: bool,
        seed: u64,
        servers: Vec<ServerAudit>,
        comparisons: Vec<Comparison>,
        interrupted: bool,
    ) -> Self {
        let all: Vec<&ServerAudit> = servers.iter().collect();
        let gating: Vec<&ServerAudit> = if comparisons.is_empty() {
            all.clone()
        } else {
            comparisons.iter().map(|c| &servers[c.candidate]).collect()
        };
        let summary = RunSummary::of(&all, &gating, interrupted);
        Report {
            tool,
            strict,
            seed,
            servers,
            comparisons,
            summary,
            behaviour_snapshots: None,
            replay: None,
            contract: ContractScore::this_build(),
        }
    }

    /// `audit` alone, as its own single-server report of this run (a matrix column,
    /// a server's own folder).
    pub fn single(&self, audit: &ServerAudit) -> Report {
        Report::new(
            self.tool.clone(),
            self.strict,
            self.seed,
            vec![audit.clone()],
            Vec::new(),
            false,
        )
    }

    /// The server a single-server view is about: a migration's candidate, else the
    /// first server.
    pub fn subject(&self) -> &ServerAudit {
        let index = self.comparisons.first().map_or(0, |c| c.candidate);
        &self.servers[index]
    }

    /// The first comparison, as a migration view.
    pub fn migration(&self) -> Option<MigrationView<'_>> {
        let comparison = self.comparisons.first()?;
        Some(MigrationView {
            baseline: &self.servers[comparison.baseline],
            candidate: &self.servers[comparison.candidate],
            migration: &comparison.migration,
        })
    }
}

impl MigrationView<'_> {
    /// Requests of the whole migration run: both audits', the comparison's and the
    /// load's.
    pub fn requests_sent(&self) -> u64 {
        let m = self.migration;
        self.baseline.requests_sent
            + self.candidate.requests_sent
            + m.requests.baseline
            + m.requests.candidate
            + m.latency.as_ref().map_or(0, |l| l.requests_sent)
    }
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
