//! The rerank clients' findings, as data, and the sentence each reads as.

use crate::contracts::rerank::facts::ScoreScale;
use crate::profiles::findings::{answered, release};
use crate::profiles::{Client, ContractFinding, Severity};

/// One thing a rerank client's profile found.
#[derive(Clone, Debug)]
pub enum RerankFinding {
    /// The rerank client's request to `path` was answered `status`: it raises.
    Raises {
        path: &'static str,
        status: u16,
        message: Option<String>,
    },
    /// Answered 200, but the rerank client raises or returns another ranking than the
    /// server's scores give, for `why`.
    Wrong { path: &'static str, why: String },
    /// The rerank client reads the server's ranking, `results` documents of it.
    Read { path: &'static str, results: usize },
    /// The client filters on a threshold set on Cohere's [0, 1] scale, and the server's
    /// scores are on another.
    Threshold { scale: ScoreScale },
    /// The rerank client's request got no answer.
    NotProbed { path: &'static str, why: String },
}

impl ContractFinding for RerankFinding {
    fn severity(&self) -> Severity {
        match self {
            RerankFinding::Raises { .. } | RerankFinding::Wrong { .. } => Severity::Breaks,
            RerankFinding::NotProbed { .. } => Severity::Unknown,
            RerankFinding::Threshold { .. } => Severity::Warning,
            RerankFinding::Read { .. } => Severity::Note,
        }
    }

    fn describe(&self, client: Client) -> String {
        let release = release(client);
        match self {
            RerankFinding::Raises {
                path,
                status,
                message,
            } => format!(
                "rerank of 5 documents: POST {path} answered {}; {release} {} (its documented base URL gives this path)",
                answered(*status, message),
                match client {
                    Client::OPEN_WEBUI =>
                        "catches the error and returns the documents unreranked, without an error",
                    _ => "raises",
                }
            ),
            RerankFinding::Wrong { path, why } => {
                format!("rerank of 5 documents at {path}: answered 200, but {release} {why}")
            }
            RerankFinding::Read { path, results } => format!(
                "rerank of 5 documents at {path}: {release} reads the server's ranking ({results} results)"
            ),
            RerankFinding::Threshold { scale } => format!(
                "its relevance threshold is set on Cohere's [0, 1] scale, and the server's scores are {scale}: a threshold keeps all documents or none"
            ),
            RerankFinding::NotProbed { path, why } => {
                format!("rerank of 5 documents at {path}: no verdict, {why}")
            }
        }
    }
}
