//! What the user declares about a reranker, which the session keeps among each
//! contract's settings.

use crate::contracts::contract::ServerOptionError;
use crate::contracts::rerank::reference::RerankReference;
use crate::reference::ReferenceError;
use crate::session::Session;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The rerank contract's settings.
#[derive(Clone, Debug, Default)]
pub struct RerankSettings {
    /// The model to rerank with (`--rerank-model`), else the run's.
    pub model: Option<String>,
    /// The reranker's own scores the `rerank-scores` family compares with
    /// (`--rerank-reference`).
    pub reference: Option<Arc<RerankReference>>,
    /// The reranker scores its documents together (`--listwise`, as jina-reranker-v3
    /// does): scores that move with position or neighbours are its design, observed by
    /// RRQ-001, RRQ-002 and RRQ-004, never failed.
    pub listwise: bool,
}

/// The run's rerank settings (the defaults where the user declared none).
pub(crate) fn of(s: &Session) -> RerankSettings {
    s.settings()
        .contracts
        .get::<RerankSettings>()
        .cloned()
        .unwrap_or_default()
}

/// The rerank contract's command-line options, read by the one parser of the command
/// line (each also from its `EMBEDCHECK_*` variable).
#[derive(Clone, Debug, clap::Args)]
pub struct RerankOptions {
    /// Model to rerank with (default: --model, else the first id from GET /v1/models).
    #[arg(long, env = "EMBEDCHECK_RERANK_MODEL", value_name = "ID")]
    pub rerank_model: Option<String>,

    /// The reranker's own scores (JSON Lines: a header, then {"query", "documents",
    /// "scores", "raw"} per case, as lab/rerank_reference.py writes them from the model's
    /// own library): the rerank-scores family holds the server's scores against them.
    #[arg(long, env = "EMBEDCHECK_RERANK_REFERENCE", value_name = "FILE")]
    pub rerank_reference: Option<PathBuf>,

    /// The reranker is listwise: it scores each document among the others by design
    /// (jina-reranker-v3), so scores that move with position or neighbours are observed,
    /// not failed.
    #[arg(long, env = "EMBEDCHECK_LISTWISE")]
    pub listwise: bool,
}

impl RerankOptions {
    /// The settings these options declare; fails on an unreadable reference file.
    pub fn settings(&self) -> Result<RerankSettings, ReferenceError> {
        Ok(RerankSettings {
            model: self.rerank_model.clone(),
            listwise: self.listwise,
            reference: self.rerank_reference.as_deref().map(load).transpose()?,
        })
    }
}

/// A rerank reference file, read once and shared by every session that uses it.
fn load(path: &Path) -> Result<Arc<RerankReference>, ReferenceError> {
    Ok(Arc::new(RerankReference::load(path)?))
}

/// One matrix server's own rerank values (its `[[server]]` entry), over the run's.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct RerankServer {
    /// The model it reranks with (`--rerank-model`), when it differs from the run's.
    rerank_model: Option<String>,
    /// Its reranker's own scores (`--rerank-reference`), when they differ from the run's.
    rerank_reference: Option<PathBuf>,
    /// Its reranker is listwise (`--listwise`).
    #[serde(default)]
    listwise: bool,
}

impl RerankServer {
    /// `settings` with this server's values over them.
    pub fn over(&self, settings: &mut RerankSettings) -> Result<(), ServerOptionError> {
        if let Some(path) = &self.rerank_reference {
            settings.reference = Some(load(path)?);
        }
        settings.model = self.rerank_model.clone().or(settings.model.take());
        settings.listwise |= self.listwise;
        Ok(())
    }
}
