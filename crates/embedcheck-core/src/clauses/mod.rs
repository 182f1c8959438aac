//! The shared check engine: a check, its stage, the `check!` macro and `judging`'s
//! helpers. Each contract's clause implementations, one module per family, are in its
//! folder: `contracts/embeddings/clauses/`, `contracts/rerank/clauses/`.
//!
//! Each check is an async function from the session to a verdict, registered in its
//! family's `checks()` under the clause ID it implements, and every contract's in the
//! registry (`contracts/mod.rs`). The catalogues (`specs/<contract>/clauses.json`) hold
//! the wording; a self-test proves both lists name the same clauses. `README.md` beside this file is the checklist for adding a clause.

use crate::session::{ProbeError, Session};
use crate::verdict::Verdict;
use futures::future::BoxFuture;

pub(crate) mod judging;

/// What a check returns: a verdict, or why no answer could be had.
pub(crate) type CheckResult = Result<Verdict, ProbeError>;

/// When a check runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// Sends its own probes.
    Probe,
    /// Needs what other clauses learned (the input limit, the noise); runs after every
    /// probe stage check.
    Aggregate,
    /// Judges every answer the run received, so it runs last, after every clause that
    /// sends requests of its own.
    Log,
}

/// One clause implementation.
pub(crate) struct Check {
    pub id: &'static str,
    pub stage: Stage,
    pub run: for<'a> fn(&'a Session) -> BoxFuture<'a, CheckResult>,
}

/// Registers an async check function under a clause ID.
macro_rules! check {
    ($id:literal, $f:path) => {
        $crate::clauses::Check {
            id: $id,
            stage: $crate::clauses::Stage::Probe,
            run: |s| Box::pin($f(s)),
        }
    };
    ($id:literal, $f:path, aggregate) => {
        $crate::clauses::Check {
            id: $id,
            stage: $crate::clauses::Stage::Aggregate,
            run: |s| Box::pin($f(s)),
        }
    };
    ($id:literal, $f:path, log) => {
        $crate::clauses::Check {
            id: $id,
            stage: $crate::clauses::Stage::Log,
            run: |s| Box::pin($f(s)),
        }
    };
}
pub(crate) use check;
