//! Known failures: a checked-in, human-edited file per server label that says which
//! clauses are expected to fail, and why.
//!
//! A team gates CI on "no new failures" while known ones are tracked elsewhere. A
//! baseline must not rot: an expected failure that starts passing fails the run until
//! the file is updated (`--allow-fixed` tolerates it, as a vendor's documented
//! deviations are), and a clause that varies between runs of the same server is
//! `expect = "flaky"`: any outcome is as expected, and its failures do not fail the run.
//! The file lives at `expectations/<label>.toml` (or `--expectations FILE`):
//!
//! ```toml
//! [ERR-008]
//! expect = "fail"
//! reason = "Dynamo answers flat {message, type, code} error bodies"
//! link = "https://github.com/ai-dynamo/dynamo/pull/4984"
//! ```

use crate::catalogue::{Catalogue, ContractId, ContractPin, ContractVersion};
use crate::verdict::Outcome;
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
    /// The vendor whose documentation states this deviation (`--vendor`), when the
    /// entry comes from its profile rather than from the team's own file.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub documented_by: Option<String>,
}

/// The outcomes a file may expect (a pass needs no entry).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedOutcome {
    Fail,
    Skip,
    Inconclusive,
    /// Varies between runs of the same server: any outcome.
    Flaky,
}

impl ExpectedOutcome {
    /// Whether `outcome` is what this entry expects.
    pub fn admits(self, outcome: Outcome) -> bool {
        match self {
            ExpectedOutcome::Fail => outcome == Outcome::Fail,
            ExpectedOutcome::Skip => outcome == Outcome::Skip,
            ExpectedOutcome::Inconclusive => outcome == Outcome::Inconclusive,
            ExpectedOutcome::Flaky => true,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ExpectedOutcome::Fail => "fail",
            ExpectedOutcome::Skip => "skip",
            ExpectedOutcome::Inconclusive => "inconclusive",
            ExpectedOutcome::Flaky => "flaky",
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
    /// Whether an outcome other than the expected one is tolerated: `--allow-fixed`,
    /// or an entry the team did not write (a vendor's documented deviation).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mismatch_allowed: bool,
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
    /// `--allow-fixed`: an expected failure that passes does not fail the run.
    allow_fixed: bool,
    /// `--contract`: per contract, clauses added or changed after this version run but
    /// are not scored, so a server's CI stays green when the suite learns a new clause.
    pins: BTreeMap<ContractId, ContractVersion>,
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
        Ok(Expectations {
            by_clause,
            ..Expectations::default()
        })
    }

    /// A vendor's documented deviations (its profile's `[documented.ID]` tables), each
    /// marked as documented by `vendor`.
    pub fn documented(vendor: &str, entries: &BTreeMap<String, Expectation>) -> Self {
        let by_clause = entries
            .iter()
            .map(|(id, e)| {
                let entry = Expectation {
                    documented_by: Some(vendor.to_owned()),
                    ..e.clone()
                };
                (id.clone(), entry)
            })
            .collect();
        Expectations {
            by_clause,
            ..Expectations::default()
        }
    }

    /// These expectations, scoring each pinned contract's clauses only at its pin
    /// (`--contract 1.2 --contract rerank=1.0`).
    pub fn pinned_to(self, pins: &[ContractPin]) -> Self {
        pins.iter()
            .fold(self, |e, pin| e.pinned(pin.contract, pin.version))
    }

    /// These expectations, scoring only the clauses of `contract` at `version`
    /// (`--contract rerank=1.0`).
    pub fn pinned(mut self, contract: ContractId, version: ContractVersion) -> Self {
        self.pins.insert(contract, version);
        self
    }

    /// Why clause `id` is not scored under its contract's pin, if it is not.
    pub(crate) fn not_scored(&self, id: &str) -> Option<String> {
        let clause = Catalogue::shipped().get(id)?;
        let pinned = self.pins.get(&clause.contract())?;
        clause.not_scored_under(*pinned)
    }

    /// These expectations under `--allow-fixed`.
    pub fn allowing_fixed(mut self, allow: bool) -> Self {
        self.allow_fixed = allow;
        self
    }

    /// These expectations, with `under`'s for clauses these do not name: a team's own
    /// file overrides what a vendor documents.
    pub fn over(mut self, under: Expectations) -> Self {
        for (id, entry) in under.by_clause {
            self.by_clause.entry(id).or_insert(entry);
        }
        self.allow_fixed |= under.allow_fixed;
        for (contract, version) in under.pins {
            self.pins.entry(contract).or_insert(version);
        }
        self
    }

    /// The entry for clause `id`, if any, and whether `outcome` is the expected one.
    pub(crate) fn matched(&self, id: &str, outcome: Outcome) -> Option<Matched> {
        self.by_clause.get(id).map(|e| Matched {
            as_expected: e.expect.admits(outcome),
            mismatch_allowed: self.allow_fixed || e.documented_by.is_some(),
            expectation: e.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_matches_its_expected_outcome_only() {
        let file = "[ERR-008]\nexpect = \"fail\"\nreason = \"flat error bodies\"\n";
        let expectations = Expectations::parse(file, Path::new("x.toml")).unwrap();
        assert!(
            expectations
                .matched("ERR-008", Outcome::Fail)
                .unwrap()
                .as_expected
        );
        assert!(
            !expectations
                .matched("ERR-008", Outcome::Pass)
                .unwrap()
                .as_expected
        );
        assert_eq!(expectations.matched("RESP-001", Outcome::Fail), None);
    }

    #[test]
    fn a_team_file_overrides_what_a_vendor_documents() {
        let path = Path::new("x.toml");
        let team =
            Expectations::parse("[ERR-008]\nexpect = \"skip\"\nreason = \"ours\"\n", path).unwrap();
        let vendor = Expectations::parse(
            "[ERR-008]\nexpect = \"fail\"\nreason = \"theirs\"\n[ENC-002]\nexpect = \"fail\"\nreason = \"no base64\"\n",
            path,
        )
        .unwrap();
        let documented = Expectations::documented("gemini-openai", &vendor.by_clause);
        let both = team.over(documented);
        let err = both.matched("ERR-008", Outcome::Skip).unwrap();
        assert_eq!(
            (
                err.expectation.reason.as_str(),
                err.expectation.documented_by
            ),
            ("ours", None)
        );
        let enc = both.matched("ENC-002", Outcome::Fail).unwrap();
        assert_eq!(
            enc.expectation.documented_by.as_deref(),
            Some("gemini-openai")
        );
    }

    #[test]
    fn a_flaky_clause_admits_any_outcome() {
        let file = "[CONS-003]\nexpect = \"flaky\"\nreason = \"GPU batch noise\"\n";
        let expectations = Expectations::parse(file, Path::new("x.toml")).unwrap();
        for outcome in [Outcome::Pass, Outcome::Fail, Outcome::Skip] {
            assert!(
                expectations
                    .matched("CONS-003", outcome)
                    .unwrap()
                    .as_expected
            );
        }
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
