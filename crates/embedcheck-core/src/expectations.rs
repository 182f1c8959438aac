//! Known failures: a checked-in, human-edited file per server label that says which
//! clauses are expected to fail, and why.
//!
//! A team gates CI on "no new failures" while known ones are tracked elsewhere; an
//! expected failure that starts passing is reported too, so the file is kept honest.
//! The file lives at `expectations/<label>.toml` (or `--expectations FILE`):
//!
//! ```toml
//! [ERR-008]
//! expect = "fail"
//! reason = "Dynamo answers flat {message, type, code} error bodies"
//! link = "https://github.com/ai-dynamo/dynamo/pull/4984"
//! ```

use crate::catalogue::Catalogue;
use crate::model::{ClauseResult, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What a team expects of one clause on one server.
#[derive(Clone, Debug, Deserialize, PartialEq, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub expect: ExpectedOutcome,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// The outcomes a file may expect (a pass needs no entry).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedOutcome {
    Fail,
    Skip,
    Inconclusive,
}

impl From<ExpectedOutcome> for Outcome {
    fn from(expected: ExpectedOutcome) -> Self {
        match expected {
            ExpectedOutcome::Fail => Outcome::Fail,
            ExpectedOutcome::Skip => Outcome::Skip,
            ExpectedOutcome::Inconclusive => Outcome::Inconclusive,
        }
    }
}

/// How a result compares with its expectation, as reports show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Matched {
    #[serde(flatten)]
    pub expectation: Expectation,
    /// Whether the outcome is the expected one.
    pub as_expected: bool,
}

/// Why an expectations file cannot be used.
#[derive(Debug, Error)]
pub enum ExpectationsError {
    #[error("failed to read expectations file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid expectations file {}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("expectations file {} names unknown clause {id}", path.display())]
    UnknownClause { path: PathBuf, id: String },
}

/// The parsed file: clause ID → expectation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Expectations {
    by_clause: BTreeMap<String, Expectation>,
}

impl Expectations {
    /// Loads `explicit` if given, else `expectations/<label>.toml` if it exists, else
    /// no expectations.
    pub fn load(explicit: Option<&Path>, label: &str) -> Result<Self, ExpectationsError> {
        let default = PathBuf::from("expectations").join(format!("{label}.toml"));
        match explicit {
            Some(path) => Self::read(path),
            None if default.is_file() => Self::read(&default),
            None => Ok(Self::default()),
        }
    }

    fn read(path: &Path) -> Result<Self, ExpectationsError> {
        let text = std::fs::read_to_string(path).map_err(|source| ExpectationsError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses file text; every key must be a catalogued clause ID.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ExpectationsError> {
        let by_clause: BTreeMap<String, Expectation> =
            toml::from_str(text).map_err(|e| ExpectationsError::Parse {
                path: path.to_owned(),
                message: e.message().to_owned(),
            })?;
        let catalogue = Catalogue::shipped();
        if let Some(id) = by_clause.keys().find(|id| catalogue.get(id).is_none()) {
            return Err(ExpectationsError::UnknownClause {
                path: path.to_owned(),
                id: id.clone(),
            });
        }
        Ok(Expectations { by_clause })
    }

    pub fn is_empty(&self) -> bool {
        self.by_clause.is_empty()
    }

    /// Attaches each result's expectation, if any.
    pub fn apply(&self, results: &mut [ClauseResult]) {
        for result in results {
            result.expectation = self.by_clause.get(&result.id).map(|e| Matched {
                as_expected: Outcome::from(e.expect) == result.outcome,
                expectation: e.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use crate::model::Verdict;

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

    #[test]
    fn known_failures_do_not_fail_the_run_and_fixed_ones_are_flagged() {
        let expectations = Expectations::parse(FILE, Path::new("x.toml")).unwrap();
        let mut results = vec![
            result("ERR-008", Verdict::fail("flat")),
            result("RESP-003", Verdict::pass("ok now")),
            result("RESP-001", Verdict::fail("new failure")),
        ];
        expectations.apply(&mut results);
        assert!(results[0].expectation.as_ref().unwrap().as_expected);
        assert!(
            !results[0].fails_run(true),
            "a known failure never fails the run"
        );
        assert!(
            !results[1].expectation.as_ref().unwrap().as_expected,
            "an expected failure now passes"
        );
        assert!(results[2].expectation.is_none() && results[2].fails_run(false));
    }

    #[test]
    fn unknown_clause_ids_are_refused() {
        let err = Expectations::parse(
            "[NOPE-001]\nexpect = \"fail\"\nreason = \"x\"\n",
            Path::new("e.toml"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown clause NOPE-001"), "{err}");
    }

    #[test]
    fn typos_in_fields_are_refused() {
        let err = Expectations::parse(
            "[ERR-008]\nexpcet = \"fail\"\nreason = \"x\"\n",
            Path::new("e.toml"),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("invalid expectations file"),
            "{err}"
        );
    }
}
