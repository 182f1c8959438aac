//! Why a clause has its level, as data beside it in the catalogue: a server author who
//! reads a MUST failure asks "says who?", and the answer is one of these, never prose.
//!
//! A MUST rests on a documented requirement (a required field of an API reference or
//! an SDK's types, an RFC's sentence) or on a client the suite profiles that breaks. A
//! behaviour a contract only describes, or that leaves a client working but degraded,
//! grounds a SHOULD at most. The catalogue's tests hold every MUST to this, and the
//! personas' tests hold every client named here to what its profile reports on the
//! clause's breaker.
//!
//! ```text
//! MUST: OpenAI API reference, CreateEmbeddingResponse.data[].index (integer, required)
//! MUST: openai-node 7.55.0 decodes a float array as base64 and returns a quarter-length vector
//! ```

use super::Level;
use serde::{Deserialize, Serialize};

/// One reason for a clause's level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LevelEvidence {
    /// A documented contract requires it of a server: `source` is a key of the
    /// catalogue's `sources`, `says` the document and the field or sentence.
    Requirement { source: String, says: String },
    /// A profiled client fails with its defaults (raises, or returns wrong data without
    /// an error): `client` is its profile's name, `says` what it does.
    ClientBreaks { client: String, says: String },
    /// A documented contract describes the behaviour but requires nothing of a server.
    Documented { source: String, says: String },
    /// A profiled client works but is degraded (retries a client mistake, loses a
    /// refusal's message).
    ClientWarns { client: String, says: String },
}

impl LevelEvidence {
    /// Whether this alone can make a clause a MUST.
    pub fn binds(&self) -> bool {
        matches!(
            self,
            LevelEvidence::Requirement { .. } | LevelEvidence::ClientBreaks { .. }
        )
    }

    /// The profiled client this names, if it names one.
    pub fn client(&self) -> Option<&str> {
        match self {
            LevelEvidence::ClientBreaks { client, .. }
            | LevelEvidence::ClientWarns { client, .. } => Some(client),
            LevelEvidence::Requirement { .. } | LevelEvidence::Documented { .. } => None,
        }
    }

    /// The catalogue source this cites, if it cites one.
    pub fn source(&self) -> Option<&str> {
        match self {
            LevelEvidence::Requirement { source, .. }
            | LevelEvidence::Documented { source, .. } => Some(source),
            LevelEvidence::ClientBreaks { .. } | LevelEvidence::ClientWarns { .. } => None,
        }
    }

    /// What it says, after the client's name and release where it names a client.
    pub fn says(&self) -> &str {
        match self {
            LevelEvidence::Requirement { says, .. }
            | LevelEvidence::ClientBreaks { says, .. }
            | LevelEvidence::Documented { says, .. }
            | LevelEvidence::ClientWarns { says, .. } => says,
        }
    }
}

/// The evidence a clause's level rests on, and the one line every view shows beside a
/// failure: "MUST: openai-python 3.57.0 retries a 5xx twice with the same body".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LevelGrounds(pub Vec<LevelEvidence>);

impl LevelGrounds {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Why a clause at `level` is not grounded by this evidence, if it is not: a MUST
    /// needs a requirement or a client that breaks; any other level needs a reason.
    pub fn falls_short_of(&self, level: Level) -> Option<String> {
        match level {
            Level::Must if !self.0.iter().any(LevelEvidence::binds) => Some(
                "a MUST needs a documented requirement or a profiled client that breaks".to_owned(),
            ),
            _ if self.0.is_empty() => Some(format!("a {level} needs at least one reason")),
            _ => None,
        }
    }

    /// The evidence the level's line shows: for a MUST the first that binds, else the
    /// first of all.
    pub fn deciding(&self, level: Level) -> Option<&LevelEvidence> {
        let binding = self.0.iter().find(|e| e.binds());
        match level {
            Level::Must => binding.or(self.0.first()),
            Level::Should | Level::May => self.0.first(),
        }
    }

    /// The level and its deciding evidence on one line; `release` gives a client's
    /// release by its name (`3.57.0` for `openai-python`). `None` without evidence.
    pub fn line(
        &self,
        level: Level,
        release: impl Fn(&str) -> Option<&'static str>,
    ) -> Option<String> {
        let evidence = self.deciding(level)?;
        Some(match evidence.client() {
            Some(client) => match release(client) {
                Some(release) => format!("{level}: {client} {release} {}", evidence.says()),
                None => format!("{level}: {client} {}", evidence.says()),
            },
            None => format!("{level}: {}", evidence.says()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requirement() -> LevelEvidence {
        LevelEvidence::Requirement {
            source: "openai-spec".to_owned(),
            says: "OpenAI API reference, Embedding.index (integer, required)".to_owned(),
        }
    }

    fn warns() -> LevelEvidence {
        LevelEvidence::ClientWarns {
            client: "openai-python".to_owned(),
            says: "retries a 5xx twice with the same body".to_owned(),
        }
    }

    #[test]
    fn a_must_needs_a_requirement_or_a_client_that_breaks() {
        let only_warns = LevelGrounds(vec![warns()]);
        assert!(only_warns.falls_short_of(Level::Must).is_some());
        assert_eq!(only_warns.falls_short_of(Level::Should), None);
        assert_eq!(
            LevelGrounds(vec![warns(), requirement()]).falls_short_of(Level::Must),
            None
        );
        assert!(
            LevelGrounds::default()
                .falls_short_of(Level::Should)
                .is_some()
        );
    }

    #[test]
    fn the_line_shows_what_binds_a_must_and_names_the_clients_release() {
        let grounds = LevelGrounds(vec![warns(), requirement()]);
        let release = |name: &str| (name == "openai-python").then_some("3.57.0");
        assert_eq!(
            grounds.line(Level::Must, release).unwrap(),
            "MUST: OpenAI API reference, Embedding.index (integer, required)"
        );
        assert_eq!(
            grounds.line(Level::Should, release).unwrap(),
            "SHOULD: openai-python 3.57.0 retries a 5xx twice with the same body"
        );
        assert_eq!(LevelGrounds::default().line(Level::Must, release), None);
    }

    #[test]
    fn evidence_reads_as_the_catalogue_writes_it() {
        let json = r#"{"kind": "client-breaks", "client": "openai-node", "says": "x"}"#;
        let evidence: LevelEvidence = serde_json::from_str(json).unwrap();
        assert_eq!(evidence.client(), Some("openai-node"));
        assert!(evidence.binds());
        let unknown = r#"{"kind": "hearsay", "says": "x"}"#;
        assert!(serde_json::from_str::<LevelEvidence>(unknown).is_err());
    }
}
