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

/// A version of the contract, `MAJOR.MINOR`, ordered numerically (1.10 after 1.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContractVersion {
    pub major: u32,
    pub minor: u32,
}

impl std::str::FromStr for ContractVersion {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || format!("expected a contract version like 1.2, got {text:?}");
        let (major, minor) = text.trim().split_once('.').ok_or_else(invalid)?;
        Ok(ContractVersion {
            major: major.parse().map_err(|_| invalid())?,
            minor: minor.parse().map_err(|_| invalid())?,
        })
    }
}

impl fmt::Display for ContractVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for ContractVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ContractVersion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The contract's versions: the current one, and what each changed.
#[derive(Clone, Debug, Deserialize)]
pub struct Contract {
    pub version: ContractVersion,
    pub versions: Vec<VersionNote>,
}

/// What one contract version added or changed.
#[derive(Clone, Debug, Deserialize)]
pub struct VersionNote {
    pub version: ContractVersion,
    pub summary: String,
}

/// A change to a clause that alters verdicts, and the version that made it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Change {
    pub version: ContractVersion,
    pub change: String,
}

/// One normative clause of the contract.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Clause {
    pub id: String,
    pub family: Family,
    pub level: Level,
    /// The contract version that added the clause.
    pub since: ContractVersion,
    /// Verdict-changing changes since it was added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<Change>,
    pub title: String,
    pub statement: String,
    pub rationale: String,
    pub sources: Vec<String>,
}

/// The whole catalogue, in the order clauses are run and reported.
#[derive(Clone, Debug, Deserialize)]
pub struct Catalogue {
    pub catalogue_version: u32,
    pub contract: Contract,
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

    /// `version` if this catalogue knows it, else why not.
    pub fn known_version(&self, version: &str) -> Result<ContractVersion, String> {
        let parsed: ContractVersion = version.parse()?;
        if self.contract.versions.iter().any(|v| v.version == parsed) {
            return Ok(parsed);
        }
        let known: Vec<String> = self
            .contract
            .versions
            .iter()
            .map(|v| v.version.to_string())
            .collect();
        Err(format!(
            "unknown contract version {parsed}: this build knows {}",
            known.join(", ")
        ))
    }
}

impl Clause {
    /// Why this clause is not scored under contract `pinned`: added, or changed in a
    /// way that alters verdicts, after it. `None` when it is scored.
    pub fn not_scored_under(&self, pinned: ContractVersion) -> Option<String> {
        if self.since > pinned {
            return Some(format!("added in contract {}", self.since));
        }
        self.changed
            .iter()
            .find(|c| c.version > pinned)
            .map(|c| format!("changed in contract {}: {}", c.version, c.change))
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
    fn versions_are_ordered_numerically_and_every_clause_has_a_known_one() {
        let v = |t: &str| t.parse::<ContractVersion>().unwrap();
        assert!(v("1.10") > v("1.9") && v("2.0") > v("1.10"));
        assert!("1".parse::<ContractVersion>().is_err());
        let catalogue = Catalogue::shipped();
        let known: Vec<ContractVersion> = catalogue
            .contract
            .versions
            .iter()
            .map(|n| n.version)
            .collect();
        assert_eq!(known.last(), Some(&catalogue.contract.version));
        for clause in &catalogue.clauses {
            assert!(known.contains(&clause.since), "{}", clause.id);
            assert!(
                clause
                    .changed
                    .iter()
                    .all(|c| known.contains(&c.version) && c.version > clause.since)
            );
        }
    }

    #[test]
    fn a_clause_newer_than_the_pin_is_not_scored() {
        let catalogue = Catalogue::shipped();
        let pin = catalogue.known_version("1.0").unwrap();
        assert!(
            catalogue
                .get("REF-002")
                .unwrap()
                .not_scored_under(pin)
                .unwrap()
                .contains("added in contract 1.1")
        );
        assert!(
            catalogue
                .get("ERR-011")
                .unwrap()
                .not_scored_under(pin)
                .unwrap()
                .contains("changed in contract 1.2")
        );
        assert_eq!(
            catalogue.get("RESP-001").unwrap().not_scored_under(pin),
            None
        );
        let current = catalogue.contract.version;
        assert!(
            catalogue
                .clauses
                .iter()
                .all(|c| c.not_scored_under(current).is_none())
        );
        assert!(
            catalogue
                .known_version("0.9")
                .unwrap_err()
                .contains("1.0, 1.1, 1.2")
        );
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
