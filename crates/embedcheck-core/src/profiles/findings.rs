//! What a profile found, as data, and the one sentence each finding reads as. What
//! every contract's profiles share is here: a failed clause, a call worded by its
//! contract's folder ([`Finding::Called`]), and the carrier of a contract's own typed
//! findings ([`ContractFinding`], in each folder's profiles).

use super::Client;
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// How much a finding weighs: the order of a profile's reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The client fails with its defaults: an error or wrong vectors.
    Breaks,
    /// A deciding request got no answer: no verdict.
    Unknown,
    /// Works, but a user should know.
    Warning,
    /// How the client gets its vectors.
    Note,
}

/// One thing a profile found.
#[derive(Clone, Debug)]
pub enum Finding {
    /// A finding typed and worded by its contract's folder (the embeddings SDKs'
    /// decoded vectors, a rerank client's reading of the ranking), which the shared
    /// profile orders by severity and shows as a sentence without knowing its type.
    Contract(Arc<dyn ContractFinding>),
    /// A clause failed that matters to this client for `why`.
    ClauseFailed {
        id: String,
        reason: String,
        why: &'static str,
    },
    /// One of a client's calls, worded by its contract's folder (`transcribe speech.wav
    /// with response_format "srt"`), and what the client made of the answer.
    Called { call: String, made: Made },
}

/// A contract's own kind of finding: how much it weighs and the sentence it reads as.
/// Tests read it back typed with [`Finding::contract`].
pub trait ContractFinding: Any + fmt::Debug + Send + Sync {
    fn severity(&self) -> Severity;
    /// The finding as one sentence about `client`.
    fn describe(&self, client: Client) -> String;
}

impl<T: ContractFinding> From<T> for Finding {
    fn from(finding: T) -> Self {
        Finding::Contract(Arc::new(finding))
    }
}

/// What a client made of the answer to one call ([`Finding::Called`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Made {
    /// It returns what the call asks for: `what`.
    Read { what: String },
    /// Answered `status`: it raises, after `attempts` attempts.
    Raises {
        status: u16,
        message: Option<String>,
        attempts: u32,
    },
    /// Answered 2xx, but it returns the wrong thing or raises: `why`.
    Misread { why: String },
    /// A call its users make with an option, or a refusal's wording: works with the
    /// defaults, but a user should know `why`.
    Warn { why: String },
    /// The call got no answer: `why`.
    NoAnswer { why: String },
}

impl Finding {
    /// The contract's own finding of type `T`, if this is one.
    pub fn contract<T: ContractFinding>(&self) -> Option<&T> {
        match self {
            Finding::Contract(finding) => (finding.as_ref() as &dyn Any).downcast_ref(),
            _ => None,
        }
    }

    pub fn severity(&self) -> Severity {
        match self {
            Finding::Contract(finding) => finding.severity(),
            Finding::ClauseFailed { .. } => Severity::Warning,
            Finding::Called { made, .. } => match made {
                Made::Raises { .. } | Made::Misread { .. } => Severity::Breaks,
                Made::NoAnswer { .. } => Severity::Unknown,
                Made::Warn { .. } => Severity::Warning,
                Made::Read { .. } => Severity::Note,
            },
        }
    }

    /// The finding as one sentence about `client`.
    pub fn describe(&self, client: Client) -> String {
        let release = release(client);
        match self {
            Finding::Contract(finding) => finding.describe(client),
            Finding::ClauseFailed { id, reason, why } => {
                format!(
                    "{id} failed ({}): {why}",
                    crate::http::excerpt::cut(reason, 160)
                )
            }
            Finding::Called { call, made } => match made {
                Made::Read { what } => format!("{call}: {release} returns {what}"),
                Made::Raises {
                    status,
                    message,
                    attempts,
                } => format!(
                    "{call}: answered {}; {release} raises{}",
                    answered(*status, message),
                    retried(*attempts)
                ),
                Made::Misread { why } => format!("{call}: answered 2xx, but {release} {why}"),
                Made::Warn { why } => format!("{call}: {why}"),
                Made::NoAnswer { why } => format!("{call}: no verdict, {why}"),
            },
        }
    }
}

/// A client as findings name it: its name and release (`openai-python 3.57.0`).
pub(crate) fn release(client: Client) -> String {
    format!("{} {}", client.name(), client.version())
}

/// `" after 3 attempts (2 retries)"`, or nothing for one attempt.
pub(crate) fn retried(attempts: u32) -> String {
    match attempts {
        1 => String::new(),
        n => format!(" after {n} attempts ({} retries)", n - 1),
    }
}

/// An answer's status and its message on one line, cut to 120 characters.
pub(crate) fn answered(status: u16, message: &Option<String>) -> String {
    match message {
        Some(m) => {
            let flat = m.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("{status} \"{}\"", crate::http::excerpt::cut(&flat, 120))
        }
        None => status.to_string(),
    }
}
