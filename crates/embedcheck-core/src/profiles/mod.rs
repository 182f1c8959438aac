//! Client profiles: will a client, with its default settings, work against this server?
//! This module holds what every contract's profiles share (the clients, a profile, the
//! findings every contract words alike); each contract's profiles, and its own typed
//! findings, are in its folder
//! (`contracts/embeddings/profiles/`, `contracts/rerank/profiles.rs`,
//! `contracts/speech/profiles.rs`), and the registry
//! (`contracts/mod.rs`) runs them.
//!
//! Each profile models one client release from its source: the request it sends by
//! default, how it decodes the answer, what it retries. Its verdict comes from that
//! request replayed through the audit's session (so budgets and the cache apply; most
//! replays are answered by the clauses' own probes) and decoded as the client decodes
//! it, and from what the clause run already found (ERR-009's retry hazard, RESP-003's
//! order, the facts). Every deciding exchange is kept as evidence.
//!
//! | client | default request | decides `works` |
//! |---|---|---|
//! | openai-python 3.57.0 | `encoding_format: "base64"`, text as given | the default request fails or decodes to wrong vectors |
//! | openai-node 7.55.0 | the same | the same, with Node's decoder |
//! | langchain-openai 1.7.4 | cl100k token ids (`[[int]]`) plus the SDK's base64 | the ids are refused, or read in another vocabulary |
//!
//! `works` is false only for what breaks the client with its defaults (an error, wrong
//! vectors); everything else (retry storms on client mistakes, an empty text refused, a
//! batch limit under LangChain's 1000) is a warning among the reasons. It is `null` when
//! the deciding requests got no answer (budget spent, server down, interrupted).
//!
//! ```text
//! client openai-python 3.57.0    works   one sentence: base64 float32 strings, decoded to the float vectors …
//! client langchain-openai 1.7.4  breaks  "hello world" as cl100k ids [15339, 1917] is read in another vocabulary …
//! ```

pub(crate) mod findings;

pub use findings::{ContractFinding, Finding, Made, Severity};

use crate::http::Exchange;
use crate::session::ProbeError;
use crate::session::facts::Facts;
use crate::verdict::Outcome;
use serde::Serialize;

/// The exchanges of the profiles are attributed to this name in the session's log (and
/// so in behaviour snapshots), as clauses' exchanges are to their IDs.
pub(crate) const STAGE: &str = "clients";

/// A client whose default behaviour is profiled: its package's name and the release
/// whose source the profile follows. Each contract's folder names its own clients, as
/// constants of this type (`Client::OPENAI_PYTHON` in `contracts/embeddings/profiles/`),
/// and lists them in the order reports show them (`Client::EMBEDDINGS`); the report
/// schema's `client` enum names every one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    name: &'static str,
    version: &'static str,
}

impl Client {
    pub(crate) const fn new(name: &'static str, version: &'static str) -> Self {
        Client { name, version }
    }

    pub fn name(self) -> &'static str {
        self.name
    }

    /// The release whose source the profile follows (a commit where no release names
    /// the code read).
    pub fn version(self) -> &'static str {
        self.version
    }
}

/// A client is written as its name (`"openai-python"`), as the report schema lists it.
impl Serialize for Client {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name)
    }
}

/// Whether one client works against the server with its defaults, and why.
#[derive(Clone, Debug, Serialize)]
pub struct ClientProfile {
    pub client: Client,
    pub version: &'static str,
    /// `None` when the deciding requests got no answer.
    pub works: Option<bool>,
    /// The findings as sentences, what breaks the client first.
    pub because: Vec<String>,
    /// The deciding exchanges, each attempt of a retried request on its own.
    pub evidence: Vec<Exchange>,
    /// The findings behind `works` and `because`, as data.
    #[serde(skip)]
    pub findings: Vec<Finding>,
}

impl ClientProfile {
    /// The profile of `client` from its findings: breaks if any finding breaks it,
    /// unknown if any could not be had, else works. `evidence` is kept as given: a
    /// retried request's attempts may be byte-identical, and each is shown.
    pub(crate) fn of(client: Client, mut findings: Vec<Finding>, evidence: Vec<Exchange>) -> Self {
        findings.sort_by_key(Finding::severity);
        let severities: Vec<Severity> = findings.iter().map(Finding::severity).collect();
        let works = if severities.contains(&Severity::Breaks) {
            Some(false)
        } else if severities.contains(&Severity::Unknown) {
            None
        } else {
            Some(true)
        };
        ClientProfile {
            client,
            version: client.version(),
            works,
            because: findings.iter().map(|f| f.describe(client)).collect(),
            evidence,
            findings,
        }
    }

    /// Warnings: findings that do not break the client but a user should know.
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity() == Severity::Warning)
            .count()
    }
}

/// One clause's result as the profiles read it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClauseOutcome<'a> {
    pub id: &'a str,
    pub outcome: Outcome,
    pub reason: &'a str,
    pub evidence: &'a [Exchange],
}

/// What the clause run found, for the profiles: each clause's outcome and the facts.
pub(crate) struct Judged<'a> {
    pub clauses: Vec<ClauseOutcome<'a>>,
    pub facts: &'a Facts,
}

impl Judged<'_> {
    /// Whether the clause ran (was selected).
    pub(crate) fn ran(&self, id: &str) -> bool {
        self.clauses.iter().any(|c| c.id == id)
    }

    /// The clause's result when it ran and failed.
    pub(crate) fn failed(&self, id: &str) -> Option<&ClauseOutcome<'_>> {
        self.clauses
            .iter()
            .find(|c| c.id == id && c.outcome == Outcome::Fail)
    }
}

/// Adds the clause run's `exchanges` to a profile's `evidence`, leaving out those
/// already there (one exchange can be evidence of two findings).
pub(crate) fn add_evidence<'a>(
    evidence: &mut Vec<Exchange>,
    exchanges: impl IntoIterator<Item = &'a Exchange>,
) {
    for exchange in exchanges {
        if !evidence.contains(exchange) {
            evidence.push(exchange.clone());
        }
    }
}

/// Retries the SDKs make by default (`DEFAULT_MAX_RETRIES`, `maxRetries`).
pub(crate) const SDK_RETRIES: u32 = 2;

/// Why a deciding request got no answer, as a finding's text.
pub(crate) fn no_answer(error: &ProbeError) -> String {
    match error {
        ProbeError::Interrupted => "interrupted (Ctrl-C)".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_breaking_finding_breaks_the_client_and_comes_first() {
        let findings = vec![
            Finding::ClauseFailed {
                id: "RESP-003".to_owned(),
                reason: "data out of order".to_owned(),
                why: "a client that reads in order",
            },
            Finding::Called {
                call: "one sentence".to_owned(),
                made: Made::Raises {
                    status: 500,
                    message: None,
                    attempts: 3,
                },
            },
        ];
        let profile = ClientProfile::of(Client::new("a-client", "1.0"), findings, Vec::new());
        assert_eq!(profile.works, Some(false));
        assert!(profile.because[0].contains("500"), "{:?}", profile.because);
        assert_eq!(profile.warnings(), 1);
    }
}
