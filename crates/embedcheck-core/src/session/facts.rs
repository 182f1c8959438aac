//! What an audit learns about a server, typed, each fact with how it was learned.
//!
//! A fact is written once, by the clause that establishes it (the limit search of the
//! over-length family writes the input limit), and read by everyone else: the other
//! clauses of the family, the migration's consumer contract, the reports. Nothing
//! re-derives a fact from strings, so one report cannot give two answers to one
//! question. `report.json` shows the facts as they are (`facts`) and, for readers of
//! schema 1.0, rendered as one line each (`observations`).

use crate::http::Exchange;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// How a fact became known.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum Learned {
    /// The user declared it with a command-line option.
    Declared { option: &'static str },
    /// One request showed it.
    Detected {
        clause: Option<&'static str>,
        request: String,
    },
    /// A search over several requests found it.
    Searched {
        clause: Option<&'static str>,
        requests: u32,
    },
}

/// One fact and how it was learned.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fact<T> {
    pub value: T,
    pub learned: Learned,
}

impl<T> Fact<T> {
    pub(crate) fn declared(value: T, option: &'static str) -> Self {
        Fact {
            value,
            learned: Learned::Declared { option },
        }
    }

    /// A fact a clause detected, for tests of what reads facts.
    #[cfg(test)]
    pub(crate) fn detected_for_test(value: T) -> Option<Self> {
        Some(Fact {
            value,
            learned: Learned::Detected {
                clause: Some("X-001"),
                request: "POST /v1/embeddings {}".to_owned(),
            },
        })
    }
}

/// Where the model name came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelSource {
    /// `--model`.
    Declared,
    /// The first id of `GET /models`.
    FirstListed,
    /// None: the vendor's URL names the deployment and requests carry no `model`.
    NotSent,
    /// A contract's own model option (`--rerank-model`, `--speech-model`), where
    /// `GET /models` named none (a rerank server without a models listing, whisper.cpp's
    /// server): the first contract's in the registry's order that names one.
    ContractOption(&'static str),
    /// The `model_id` of `GET /info`, where `GET /models` named none and no
    /// `--rerank-model` was given: Hugging Face TEI serves no models listing, and
    /// documents `/info` (`router/src/http/server.rs`, `get_model_info`).
    InfoPage,
}

impl ModelSource {
    /// The name reports give it: `declared`, `first_listed`, `not_sent`, `info_page`, or
    /// a contract's option without its dashes (`rerank_model` for `--rerank-model`).
    fn name(self) -> String {
        match self {
            ModelSource::Declared => "declared".to_owned(),
            ModelSource::FirstListed => "first_listed".to_owned(),
            ModelSource::NotSent => "not_sent".to_owned(),
            ModelSource::InfoPage => "info_page".to_owned(),
            ModelSource::ContractOption(flag) => flag.trim_start_matches('-').replace('-', "_"),
        }
    }
}

impl Serialize for ModelSource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

/// What the server did with unknown top-level fields it did not choke on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", content = "status", rename_all = "snake_case")]
pub enum UnknownField {
    Ignored,
    RefusedNaming(u16),
    RefusedSilently(u16),
}

impl fmt::Display for UnknownField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownField::Ignored => f.write_str("ignored (200)"),
            UnknownField::RefusedNaming(status) => {
                write!(f, "rejected with {status} naming the field")
            }
            UnknownField::RefusedSilently(status) => {
                write!(f, "rejected with {status} without naming the field")
            }
        }
    }
}

/// What `usage.prompt_tokens` counts, judged on a text whose token count is known
/// within a margin for any subword tokenizer (many repetitions of one common word).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "unit", rename_all = "snake_case")]
pub enum UsageUnit {
    /// Tokens: `reported` for `words` one-token words.
    Tokens { reported: u64, words: u64 },
    /// Characters (or bytes, the same for this ASCII text): `reported` for `chars`.
    Characters { reported: u64, chars: u64 },
    /// Neither: `reported` for `words` words of `chars` characters.
    Other {
        reported: u64,
        words: u64,
        chars: u64,
    },
    /// The answer carried no integer `usage.prompt_tokens`.
    Absent,
}

impl UsageUnit {
    /// Whether counts can be read as tokens (limits, budgets, tokenizer remarks).
    pub(crate) fn counts_tokens(&self) -> bool {
        matches!(self, UsageUnit::Tokens { .. })
    }
}

impl fmt::Display for UsageUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageUnit::Tokens { reported, words } => {
                write!(f, "tokens ({reported} for {words} one-token words)")
            }
            UsageUnit::Characters { reported, chars } => write!(
                f,
                "characters, not tokens ({reported} for a text of {chars} characters)"
            ),
            UsageUnit::Other {
                reported,
                words,
                chars,
            } => write!(
                f,
                "neither tokens nor characters ({reported} for {words} words, {chars} characters)"
            ),
            UsageUnit::Absent => f.write_str("absent (no usage.prompt_tokens)"),
        }
    }
}

/// Everything one audit learned about its server.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Facts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_source: Option<Fact<ModelSource>>,
    /// Whether a request without a key is answered (only probed with a key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_required: Option<Fact<bool>>,
    /// Whether a model name the server does not serve is embedded anyway.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignores_model_name: Option<Fact<bool>>,
    /// The request after which the server stopped answering.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_down_after: Option<Fact<String>>,
    /// The first connection the server desynchronised by leaving a refused request's
    /// body unread (ERR-014): every later request went on a new connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desynchronised: Option<Fact<super::reuse::Desync>>,
    /// What `usage.prompt_tokens` counts (USE-005).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_unit: Option<Fact<UsageUnit>>,
    /// Each contract's own facts (embeddings' dimension and limits, rerank's routes,
    /// …), kept without knowing their types: the registry of contracts shows them in
    /// the report.
    #[serde(skip)]
    pub contracts: super::ByContract,
    /// The contracts the server does not offer, each with why (its clauses skip): what
    /// a comparison must not spend requests on.
    #[serde(skip)]
    pub not_offered: Vec<(crate::catalogue::ContractId, String)>,
}

impl Facts {
    /// Why the server does not offer `contract`, where it does not.
    pub fn not_offered(&self, contract: crate::catalogue::ContractId) -> Option<&str> {
        self.not_offered
            .iter()
            .find(|(c, _)| *c == contract)
            .map(|(_, why)| why.as_str())
    }

    /// Whether usage counts were found to count tokens (unknown counts as not).
    pub(crate) fn usage_counts_tokens(&self) -> bool {
        self.usage_unit
            .as_ref()
            .is_some_and(|f| f.value.counts_tokens())
    }

    /// Each shared fact as one line, under the names schema 1.0's `observations`
    /// used; the registry of contracts adds each contract's (`contracts::observations`).
    pub(crate) fn shared_observations(&self) -> BTreeMap<String, String> {
        let mut lines = BTreeMap::new();
        let mut put = |name: &str, line: Option<String>| {
            if let Some(line) = line {
                lines.insert(name.to_owned(), line);
            }
        };
        put(
            "model_source",
            self.model_source.as_ref().map(|f| match f.value {
                ModelSource::Declared => "--model".to_owned(),
                ModelSource::FirstListed => "first id of GET /models".to_owned(),
                ModelSource::NotSent => {
                    "none sent: the vendor's URL names the deployment".to_owned()
                }
                ModelSource::ContractOption(flag) => format!("{flag} (GET /models named none)"),
                ModelSource::InfoPage => {
                    "model_id of GET /info (GET /models named none)".to_owned()
                }
            }),
        );
        put(
            "auth",
            self.auth_required
                .as_ref()
                .filter(|f| !f.value)
                .map(|_| "not required (answered 200 without a key)".to_owned()),
        );
        put(
            "unknown_model",
            self.ignores_model_name
                .as_ref()
                .filter(|f| f.value)
                .map(|_| "accepted (the server ignores the model name)".to_owned()),
        );
        put(
            "server_down_after",
            self.server_down_after.as_ref().map(|f| f.value.clone()),
        );
        put(
            "desynchronised",
            self.desynchronised.as_ref().map(|f| {
                format!(
                    "after {} (body left unread), every request went on a new connection",
                    describe_request(&f.value.unread)
                )
            }),
        );
        put(
            "usage_counts",
            self.usage_unit.as_ref().map(|f| f.value.to_string()),
        );
        put(
            "token_budget",
            self.usage_unit
                .as_ref()
                .filter(|f| !f.value.counts_tokens())
                .map(|_| "counted with the suite's own estimate (about 4 characters a token): usage does not count tokens".to_owned()),
        );
        lines
    }
}

/// Which request it was, in one line: its method, path and body cut to 120 characters.
pub(crate) fn describe_request(exchange: &Exchange) -> String {
    let body = exchange.request_body.as_deref().unwrap_or_default();
    format!(
        "{} {} {}",
        exchange.method,
        exchange.path,
        crate::http::excerpt::cut(body, 120)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A contract's model option is named in reports as schema 1.11 named it.
    #[test]
    fn a_contracts_model_option_keeps_its_report_name() {
        let name = |source| serde_json::to_value(source).unwrap();
        assert_eq!(
            name(ModelSource::ContractOption("--rerank-model")),
            "rerank_model"
        );
        assert_eq!(
            name(ModelSource::ContractOption("--speech-model")),
            "speech_model"
        );
        assert_eq!(name(ModelSource::FirstListed), "first_listed");
    }

    fn detected<T>(value: T) -> Option<Fact<T>> {
        Fact::detected_for_test(value)
    }

    #[test]
    fn only_a_server_without_auth_gets_an_auth_line() {
        let required = Facts {
            auth_required: detected(true),
            ..Facts::default()
        };
        assert!(required.shared_observations().is_empty());
    }
}
