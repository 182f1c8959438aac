//! The migration's consumer contract as the contracts see it: what an existing client
//! of the baseline relies on, one expectation per topic, each judged by replaying the
//! old client's request to the candidate. The migration judges embeddings' topics and
//! the server errors; each other contract judges its own (`Consumer`), with these
//! types and helpers, so the migration names none of them.

use crate::http::{Encoding, Exchange, Probe, Reply};
use crate::session::{Facts, Session};
use futures::future::BoxFuture;
use serde::Serialize;
use std::sync::Arc;

/// What an expectation is about (`matryoshka`, `rerank`), as report.json spells it:
/// the migration names embeddings' topics and each contract its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Topic(&'static str);

impl Topic {
    /// The topic spelled `name`.
    pub(crate) const fn named(name: &'static str) -> Topic {
        Topic(name)
    }

    /// The topic as report.json spells it.
    pub fn name(self) -> &'static str {
        self.0
    }
}

/// How the candidate measures up to one expectation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    Kept,
    Broken,
    /// The baseline offers nothing here a client could rely on.
    NotRelied,
}

impl Judgement {
    /// The judgement as the reports word it.
    pub fn word(self) -> &'static str {
        match self {
            Judgement::Kept => "kept",
            Judgement::Broken => "broken",
            Judgement::NotRelied => "nothing to rely on",
        }
    }
}

/// One expectation of the existing client and the candidate's verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Expectation {
    pub topic: Topic,
    /// What a client of the baseline relies on; absent with `not_relied`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relies_on: Option<String>,
    pub baseline: String,
    pub candidate: String,
    pub judgement: Judgement,
    /// The deciding exchanges, baseline first.
    pub evidence: Vec<Exchange>,
    /// Numbers remediation needs, kept as data.
    #[serde(skip)]
    pub(crate) findings: Findings,
}

/// Numbers behind an expectation, for the remediation derived from it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Findings {
    /// The native size the `dimensions` probes were built from.
    pub native: Option<usize>,
    /// The reduced size the baseline honoured, when it did.
    pub reduced: Option<usize>,
    /// The candidate refused `dimensions` even at the native size.
    pub refuses_native: bool,
    /// The baseline truncated over-length input to this many tokens.
    pub truncates_at: Option<u64>,
    /// The candidate's encoding when asked for base64.
    pub candidate_encoding: Option<Encoding>,
    /// Requests the candidate answered 5xx and the baseline did not.
    pub server_errors: Vec<(String, u16)>,
    /// What the client changes, where the contract that judged the topic words it
    /// (rerank's, speech's); the migration words embeddings' from the numbers above.
    pub action: Option<String>,
}

/// One server of the pair: its session (for replays) and what its audit learned.
#[derive(Clone, Copy)]
pub(crate) struct Server<'a> {
    pub session: &'a Session,
    pub facts: &'a Facts,
}

/// The two servers a contract's topics are judged on, and how the migration words an
/// answer (`200 · 5 results`, `404 flat error "Not Found"`).
#[derive(Clone, Copy)]
pub(crate) struct Pair<'a> {
    pub baseline: Server<'a>,
    pub candidate: Server<'a>,
    pub answer: fn(Option<&Arc<Reply>>) -> String,
}

/// A contract's part of the consumer contract: its topics, and their judgement.
pub(crate) trait Consumer: Sync {
    /// Its topics, in the order reports show them.
    fn topics(&self) -> &'static [Topic];

    /// Each of its topics judged on the pair, in `topics`' order.
    fn judge<'a>(&'a self, pair: Pair<'a>) -> BoxFuture<'a, Vec<Expectation>>;
}

/// Sends one of the old client's requests; `None` when no answer could be had.
pub(crate) async fn replay(s: &Session, probe: Probe) -> Option<Arc<Reply>> {
    s.send(probe).await.ok()
}

/// The exchanges of the replies had, in order.
pub(crate) fn evidence(replies: &[Option<&Arc<Reply>>]) -> Vec<Exchange> {
    replies
        .iter()
        .flatten()
        .map(|r| r.exchange.clone())
        .collect()
}

/// An expectation judged: kept, broken, or nothing relied on where the baseline
/// offers nothing a client could rely on.
pub(crate) fn expectation(
    topic: Topic,
    relies_on: Option<String>,
    baseline: String,
    candidate: String,
    kept: bool,
) -> Expectation {
    let judgement = match (&relies_on, kept) {
        (None, _) => Judgement::NotRelied,
        (Some(_), true) => Judgement::Kept,
        (Some(_), false) => Judgement::Broken,
    };
    Expectation {
        topic,
        relies_on,
        baseline,
        candidate,
        judgement,
        evidence: Vec::new(),
        findings: Findings::default(),
    }
}
