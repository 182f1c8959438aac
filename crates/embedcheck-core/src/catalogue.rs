//! The clause catalogue: the contract as data, loaded from `specs/clauses.json`.
//!
//! The catalogue is the single source of wording. Code names a clause by its ID and
//! finds its level, family and normative sentence here, so a report never paraphrases
//! the contract and an ID is never reused with another meaning.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The catalogue as shipped with this build.
const CATALOGUE_JSON: &str = include_str!("../specs/clauses.json");

/// RFC 2119 requirement level of a clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "MAY")]
    May,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        })
    }
}

/// The clause families; one module under `clauses/` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    ResponseShape,
    Input,
    Dimensions,
    UnknownFields,
    OverLength,
    Encoding,
    Errors,
    Usage,
    Consistency,
    Auth,
    Reference,
}

impl Family {
    /// The name used in reports, filters and `specs/clauses.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::ResponseShape => "response-shape",
            Family::Input => "input",
            Family::Dimensions => "dimensions",
            Family::UnknownFields => "unknown-fields",
            Family::OverLength => "over-length",
            Family::Encoding => "encoding",
            Family::Errors => "errors",
            Family::Usage => "usage",
            Family::Consistency => "consistency",
            Family::Auth => "auth",
            Family::Reference => "reference",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One normative clause of the contract.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Clause {
    pub id: String,
    pub family: Family,
    pub level: Level,
    pub title: String,
    pub statement: String,
    pub rationale: String,
    pub sources: Vec<String>,
}

/// The whole catalogue, in the order clauses are run and reported.
#[derive(Clone, Debug, Deserialize)]
pub struct Catalogue {
    pub catalogue_version: u32,
    /// Source keys used by clauses, each with a description of what was read.
    pub sources: BTreeMap<String, String>,
    pub clauses: Vec<Clause>,
}

impl Catalogue {
    /// The catalogue compiled into this build.
    ///
    /// Panics only if the shipped JSON is broken, which the self-tests rule out.
    pub fn shipped() -> &'static Catalogue {
        static SHIPPED: std::sync::OnceLock<Catalogue> = std::sync::OnceLock::new();
        SHIPPED.get_or_init(|| {
            serde_json::from_str(CATALOGUE_JSON).expect("specs/clauses.json is valid")
        })
    }

    pub fn get(&self, id: &str) -> Option<&Clause> {
        self.clauses.iter().find(|c| c.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn shipped_catalogue_validates_against_its_schema() {
        let value: serde_json::Value = serde_json::from_str(CATALOGUE_JSON).unwrap();
        let problems = crate::schemas::full::problems(crate::schemas::full::CATALOGUE, &value);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn clause_ids_are_unique() {
        let mut seen = HashSet::new();
        for clause in &Catalogue::shipped().clauses {
            assert!(seen.insert(&clause.id), "duplicate clause id {}", clause.id);
        }
    }

    #[test]
    fn every_cited_source_is_described() {
        let catalogue = Catalogue::shipped();
        for clause in &catalogue.clauses {
            for source in &clause.sources {
                assert!(
                    catalogue.sources.contains_key(source),
                    "{} cites unknown source {source}",
                    clause.id
                );
            }
        }
    }
}
