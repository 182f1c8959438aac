//! The contracts the suite judges, one folder each, over the shared engine (session,
//! transport, access, budgets, evidence, reports): the registry of checks and client
//! profiles the audit runner reads. `README.md` beside this file is the checklist for
//! adding a contract.

use crate::clauses::Check;
use crate::contracts::rerank::facts::RerankFacts;
use crate::profiles::{self, Client, ClientProfile, Judged};
use crate::session::facts::ByContract;
use crate::session::{Hooks, Session};
use serde::ser::{Serialize, SerializeMap, Serializer};

pub mod embeddings;
pub mod rerank;

/// Every implemented check, the embeddings contract's first, then the rerank contract's.
pub(crate) fn checks() -> Vec<Check> {
    [embeddings::clauses::checks(), rerank::clauses::checks()]
        .into_iter()
        .flatten()
        .collect()
}

/// What the session asks of the contracts: how each says a request in the dialect the
/// server speaks (rerank's: TEI's, NIM's and Voyage's besides Cohere's; embeddings has
/// one), and embeddings' smallest request to tell a busy server from a dead one.
pub(crate) fn hooks() -> Hooks {
    Hooks {
        dialects: vec![rerank::requests::in_dialect],
        small_request: embeddings::requests::small,
    }
}

/// Each contract's facts under its name, as the report's `facts` shows them beside the
/// shared ones: `facts.rerank`. A contract that learned nothing is left out.
pub(crate) struct FactsByContract<'a>(pub &'a ByContract);

impl Serialize for FactsByContract<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(rerank) = self.0.get::<RerankFacts>().filter(|f| !f.is_empty()) {
            map.serialize_entry("rerank", rerank)?;
        }
        map.end()
    }
}

/// Every client's profile against the session's server, after the clause run.
pub(crate) async fn profile_all(s: &Session, judged: &Judged<'_>) -> Vec<ClientProfile> {
    s.begin_clause(profiles::STAGE);
    let calls = embeddings::profiles::sdk::default_calls(s).await;
    let profiles = vec![
        embeddings::profiles::sdk::profile(Client::OpenAiPython, &calls, judged),
        embeddings::profiles::sdk::profile(Client::OpenAiNode, &calls, judged),
        embeddings::profiles::langchain::profile(s, &calls, judged).await,
    ];
    let profiles = [profiles, rerank::profiles::profile_all(s).await].concat();
    s.take_pending();
    profiles
}

/// A server that serves rerank alone: every embeddings client "not probed" for `why`,
/// and the rerank clients profiled.
pub(crate) async fn profile_rerank_only(s: &Session, why: &str) -> Vec<ClientProfile> {
    s.begin_clause(profiles::STAGE);
    let profiles = [
        profiles::not_probed(why),
        rerank::profiles::profile_all(s).await,
    ]
    .concat();
    s.take_pending();
    profiles
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::Catalogue;
    use std::collections::BTreeSet;

    #[test]
    fn catalogue_and_implementations_name_the_same_clauses() {
        let implemented: BTreeSet<&str> = checks().iter().map(|c| c.id).collect();
        let catalogued: BTreeSet<&str> = Catalogue::shipped()
            .clauses
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        let unimplemented: Vec<_> = catalogued.difference(&implemented).collect();
        let uncatalogued: Vec<_> = implemented.difference(&catalogued).collect();
        assert!(
            unimplemented.is_empty(),
            "clauses without implementation: {unimplemented:?}"
        );
        assert!(
            uncatalogued.is_empty(),
            "implementations without clause: {uncatalogued:?}"
        );
    }

    #[test]
    fn no_clause_is_implemented_twice() {
        let checks = checks();
        let ids: BTreeSet<&str> = checks.iter().map(|c| c.id).collect();
        assert_eq!(ids.len(), checks.len());
    }
}
