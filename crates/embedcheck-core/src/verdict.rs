//! What one clause check concludes: an outcome, a one-line reason a server author can
//! act on, and the exchanges that prove it.

use crate::http::Exchange;
use serde::Serialize;

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

/// The verdict of one clause check, before it is joined with its catalogue entry.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub outcome: Outcome,
    pub reason: String,
    pub evidence: Vec<Exchange>,
    /// Whether the reason itself says which rerank dialect the server was judged in, so
    /// that the runner does not say it again.
    pub(crate) names_its_dialect: bool,
}

impl Verdict {
    fn new(outcome: Outcome, reason: impl Into<String>) -> Self {
        Verdict {
            outcome,
            reason: reason.into(),
            evidence: Vec::new(),
            names_its_dialect: false,
        }
    }

    pub(crate) fn pass(reason: impl Into<String>) -> Self {
        Self::new(Outcome::Pass, reason)
    }

    pub(crate) fn fail(reason: impl Into<String>) -> Self {
        Self::new(Outcome::Fail, reason)
    }

    pub(crate) fn skip(reason: impl Into<String>) -> Self {
        Self::new(Outcome::Skip, reason)
    }

    pub(crate) fn inconclusive(reason: impl Into<String>) -> Self {
        Self::new(Outcome::Inconclusive, reason)
    }

    /// Marks a reason that names the rerank dialect the server was judged in.
    pub(crate) fn naming_its_dialect(self) -> Self {
        Verdict {
            names_its_dialect: true,
            ..self
        }
    }

    /// Attaches one exchange as evidence (once, even if attached twice).
    pub(crate) fn with(mut self, exchange: &Exchange) -> Self {
        if !self.evidence.contains(exchange) {
            self.evidence.push(exchange.clone());
        }
        self
    }

    pub(crate) fn with_all<'a>(self, exchanges: impl IntoIterator<Item = &'a Exchange>) -> Self {
        exchanges.into_iter().fold(self, Verdict::with)
    }
}
