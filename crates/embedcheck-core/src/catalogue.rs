//! The clause catalogue: the contracts as data, one file each,
//! `specs/<contract>/clauses.json` (`specs/embeddings/clauses.json`,
//! `specs/rerank/clauses.json`, …), shipped by the build script in their folders' order.
//!
//! The catalogue is the single source of wording. Code names a clause by its ID and
//! finds its level, family, contract and normative sentence here, so a report never
//! paraphrases the contract and an ID is never reused with another meaning. IDs are
//! unique across contracts, so one filter, one known-failures file and one report hold
//! both.

mod level;
pub mod reference;

pub use level::{LevelEvidence, LevelGrounds};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

// Every shipped catalogue's text (`SHIPPED`), one per `specs/<contract>/clauses.json`,
// in the folders' order: the list is the build script's, so no code names a contract.
include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// An endpoint contract (`embeddings`, `rerank`, `speech`), by the name its catalogue
/// file gives it: the contracts are data, and each folder of `contracts/` names the
/// one it implements (`rerank::ID`). Ordered as the catalogues are shipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContractId(&'static str);

impl ContractId {
    /// The contract named `name` in its catalogue, for the folder that implements it
    /// (a test holds every folder's name to a shipped catalogue).
    pub(crate) const fn of_catalogue(name: &'static str) -> Self {
        ContractId(name)
    }

    /// A clause's contract before its catalogue's name is set.
    fn unread() -> Self {
        ContractId("")
    }

    /// Every contract this build ships a catalogue of, in their order.
    pub fn all() -> Vec<ContractId> {
        Catalogue::shipped()
            .contracts
            .iter()
            .map(|c| c.name)
            .collect()
    }

    /// The first shipped contract, which a pin without a name (`--contract 1.2`) and
    /// a plain version mean: embeddings, the suite's first.
    pub fn first() -> ContractId {
        Catalogue::shipped().contracts[0].name
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for ContractId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ContractId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for ContractId {
    /// A catalogue's name for its contract, kept for the run (`intern`).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(ContractId(intern(&String::deserialize(deserializer)?)))
    }
}

impl std::str::FromStr for ContractId {
    type Err = String;

    /// A shipped contract's name; any other is refused with the names this build knows.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let all = ContractId::all();
        all.iter()
            .copied()
            .find(|c| c.as_str() == text)
            .ok_or_else(|| {
                let known: Vec<&str> = all.iter().map(|c| c.as_str()).collect();
                format!(
                    "unknown contract {text:?}: this build knows {}",
                    known.join(" and ")
                )
            })
    }
}

/// A name read from a catalogue, kept for the whole run: each distinct name is stored
/// once, so names can be copied as `&'static str` (the shipped catalogues hold a few
/// dozen).
fn intern(name: &str) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = names.iter().find(|n| **n == name) {
        return known;
    }
    let kept: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(kept);
    kept
}

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

/// A clause family (`dimensions`, `rerank-shape`), by the name its catalogue gives it:
/// one module under a contract's `clauses/` each. Its clauses are its catalogue's
/// contract's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Family(&'static str);

impl Family {
    /// The name used in reports, filters and the catalogues.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The family of that name, for tests that build results by hand.
    #[cfg(test)]
    pub(crate) fn named(name: &'static str) -> Family {
        Family(name)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Family {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Family {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Family(intern(&String::deserialize(deserializer)?)))
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

/// A pin given on the command line: `1.2` pins the embeddings contract, `rerank=1.0`
/// the named one. Only versions this build knows are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContractPin {
    pub contract: ContractId,
    pub version: ContractVersion,
}

impl std::str::FromStr for ContractPin {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (contract, version) = match text.split_once('=') {
            Some((name, version)) => (name.trim().parse()?, version),
            None => (ContractId::first(), text),
        };
        let version = Catalogue::shipped().known_version_of(contract, version)?;
        Ok(ContractPin { contract, version })
    }
}

/// A contract's versions: the current one, and what each changed.
#[derive(Clone, Debug, Deserialize)]
pub struct Contract {
    /// Which contract.
    pub name: ContractId,
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
    /// Its catalogue's contract, set as the catalogue is read.
    #[serde(skip, default = "ContractId::unread")]
    contract: ContractId,
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
    /// Why the clause has its level: the requirements and the clients that ground it.
    #[serde(default, skip_serializing_if = "LevelGrounds::is_empty")]
    pub level_evidence: LevelGrounds,
}

/// One contract's catalogue file.
#[derive(Clone, Debug, Deserialize)]
struct CatalogueFile {
    catalogue_version: u32,
    contract: Contract,
    sources: BTreeMap<String, String>,
    clauses: Vec<Clause>,
}

impl CatalogueFile {
    /// A shipped catalogue, each clause marked with the file's contract.
    ///
    /// Panics only if the shipped JSON is broken, which the self-tests rule out.
    fn read(json: &str) -> CatalogueFile {
        let mut file: CatalogueFile = serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("a shipped catalogue is invalid: {e}"));
        for clause in &mut file.clauses {
            clause.contract = file.contract.name;
        }
        file
    }
}

/// Every contract's clauses, in the order the catalogues are shipped.
#[derive(Clone, Debug)]
pub struct Catalogue {
    pub catalogue_version: u32,
    /// Each contract's versions, in the catalogues' order (a plain `--contract 1.2`
    /// pins the first, embeddings).
    pub contracts: Vec<Contract>,
    /// Source keys used by clauses, each with a description of what was read.
    pub sources: BTreeMap<String, String>,
    pub clauses: Vec<Clause>,
}

impl Catalogue {
    /// The catalogue compiled into this build.
    ///
    /// Panics only if the shipped JSON is broken, which the self-tests rule out.
    pub fn shipped() -> &'static Catalogue {
        static CATALOGUE: std::sync::OnceLock<Catalogue> = std::sync::OnceLock::new();
        CATALOGUE.get_or_init(|| {
            let mut catalogue = Catalogue {
                catalogue_version: 0,
                contracts: Vec::new(),
                sources: BTreeMap::new(),
                clauses: Vec::new(),
            };
            for json in SHIPPED {
                let file = CatalogueFile::read(json);
                catalogue.catalogue_version = file.catalogue_version;
                catalogue.contracts.push(file.contract);
                catalogue.sources.extend(file.sources);
                catalogue.clauses.extend(file.clauses);
            }
            catalogue
        })
    }

    pub fn get(&self, id: &str) -> Option<&Clause> {
        self.clauses.iter().find(|c| c.id == id)
    }

    /// The versions of `contract`.
    pub fn contract_of(&self, contract: ContractId) -> &Contract {
        self.contracts
            .iter()
            .find(|c| c.name == contract)
            .expect("every contract of this build has a catalogue")
    }

    /// `version` if this catalogue knows it for `contract`, else why not.
    pub fn known_version_of(
        &self,
        contract: ContractId,
        version: &str,
    ) -> Result<ContractVersion, String> {
        let parsed: ContractVersion = version.parse()?;
        let versions = &self.contract_of(contract).versions;
        if versions.iter().any(|v| v.version == parsed) {
            return Ok(parsed);
        }
        let known: Vec<String> = versions.iter().map(|v| v.version.to_string()).collect();
        Err(format!(
            "unknown {contract} contract version {parsed}: this build knows {}",
            known.join(", ")
        ))
    }
}

impl Clause {
    /// The contract the clause belongs to.
    pub fn contract(&self) -> ContractId {
        self.contract
    }

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
    fn shipped_catalogues_validate_against_their_schema() {
        for text in SHIPPED {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let problems = crate::schemas::full::problems(crate::schemas::full::CATALOGUE, &value);
            assert!(problems.is_empty(), "{problems:#?}");
        }
    }

    /// Each file names its own contract, in the folders' order, and holds its own
    /// families only, so a family names one contract's clauses.
    #[test]
    fn each_contract_file_holds_its_own_families() {
        let names: Vec<&str> = ContractId::all().iter().map(|c| c.as_str()).collect();
        assert_eq!(names, ["embeddings", "rerank", "speech"]);
        let mut families: BTreeMap<Family, ContractId> = BTreeMap::new();
        for text in SHIPPED {
            let file = CatalogueFile::read(text);
            for clause in &file.clauses {
                assert_eq!(clause.contract(), file.contract.name);
                let owner = *families.entry(clause.family).or_insert(clause.contract());
                assert_eq!(owner, clause.contract(), "{}", clause.family);
            }
        }
    }

    #[test]
    fn versions_are_ordered_numerically_and_every_clause_has_a_known_one() {
        let v = |t: &str| t.parse::<ContractVersion>().unwrap();
        assert!(v("1.10") > v("1.9") && v("2.0") > v("1.10"));
        assert!("1".parse::<ContractVersion>().is_err());
        let catalogue = Catalogue::shipped();
        for clause in &catalogue.clauses {
            let contract = catalogue.contract_of(clause.contract());
            let known: Vec<ContractVersion> = contract.versions.iter().map(|n| n.version).collect();
            assert_eq!(known.last(), Some(&contract.version));
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
        let pin = "1.0".parse::<ContractPin>().unwrap().version;
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
        assert!(catalogue.clauses.iter().all(|c| {
            let current = catalogue.contract_of(c.contract()).version;
            c.not_scored_under(current).is_none()
        }));
        assert!(
            "0.9"
                .parse::<ContractPin>()
                .unwrap_err()
                .contains("1.0, 1.1, 1.2")
        );
    }

    #[test]
    fn a_pin_names_its_contract_or_means_embeddings() {
        let rerank: ContractPin = "rerank=1.0".parse().unwrap();
        assert_eq!(rerank.contract.as_str(), "rerank");
        let embeddings: ContractPin = "1.2".parse().unwrap();
        assert_eq!(embeddings.contract.as_str(), "embeddings");
        assert!(
            "rerank=1.9"
                .parse::<ContractPin>()
                .unwrap_err()
                .contains("unknown rerank contract version 1.9")
        );
        assert!(
            "chat=1.0"
                .parse::<ContractPin>()
                .unwrap_err()
                .contains("unknown contract")
        );
    }

    /// A MUST rests on a documented requirement or a profiled client that breaks,
    /// every other level on at least one reason, each source a described one.
    #[test]
    fn every_level_rests_on_its_evidence() {
        let catalogue = Catalogue::shipped();
        let mut wrong = Vec::new();
        for clause in &catalogue.clauses {
            if let Some(why) = clause.level_evidence.falls_short_of(clause.level) {
                wrong.push(format!("{} {}: {why}", clause.id, clause.level));
            }
            for source in clause
                .level_evidence
                .0
                .iter()
                .filter_map(LevelEvidence::source)
            {
                if !catalogue.sources.contains_key(source) {
                    wrong.push(format!(
                        "{}: its level cites unknown source {source}",
                        clause.id
                    ));
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
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
