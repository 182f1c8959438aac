//! The contracts the suite judges, one folder each, over the shared engine (session,
//! transport, access, budgets, evidence, reports): the registry of checks and client
//! profiles the audit runner reads. `README.md` beside this file is the checklist for
//! adding a contract.

use crate::catalogue::{Clause, ContractId};
use crate::clauses::Check;
use crate::contracts::embeddings::facts::EmbeddingsFacts;
use crate::contracts::rerank::facts::RerankFacts;
use crate::http::{Target, TargetError};
use crate::profiles::{self, Client, ClientProfile, Judged};
use crate::session::ByContract;
use crate::session::facts::{Facts, ModelSource};
use crate::session::{Hooks, Session};
use crate::verdict::Verdict;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub mod embeddings;
mod offer;
pub mod rerank;
pub mod speech;

pub(crate) use offer::{Offered, offered};

/// Every implemented check, the embeddings contract's first, then the rerank contract's.
pub(crate) fn checks() -> Vec<Check> {
    [
        embeddings::clauses::checks(),
        rerank::clauses::checks(),
        speech::clauses::checks(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The endpoint the user gave (`--endpoint`): a base URL, or the full URL of the
/// embeddings route (which reports show as the endpoint) or of a speech route.
pub fn target(raw: &str) -> Result<Target, TargetError> {
    Target::parse(
        raw,
        &[
            embeddings::ROUTE,
            speech::requests::ROUTE,
            speech::requests::TRANSLATIONS,
        ],
    )
}

/// The model the user named for one contract (`--rerank-model`, `--speech-model`),
/// which names the run's where `--model` is not given and the server lists none.
pub(crate) fn named_model(s: &Session) -> Option<(String, ModelSource)> {
    let rerank = rerank::settings::of(s)
        .model
        .map(|m| (m, ModelSource::RerankModel));
    rerank.or_else(|| {
        speech::settings::of(s)
            .model
            .map(|m| (m, ModelSource::SpeechModel))
    })
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

/// Each contract's facts as the report's `facts` shows them after the shared ones:
/// embeddings' at the top level, where schema 1.0 put them, then each later contract's
/// under its name (`facts.rerank`). A contract that learned nothing is left out.
#[derive(Serialize)]
pub(crate) struct FactsByContract<'a> {
    #[serde(flatten)]
    embeddings: Option<&'a EmbeddingsFacts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rerank: Option<&'a RerankFacts>,
}

impl<'a> FactsByContract<'a> {
    pub(crate) fn of(store: &'a ByContract) -> Self {
        FactsByContract {
            embeddings: store.get(),
            rerank: store.get::<RerankFacts>().filter(|f| !f.is_empty()),
        }
    }
}

/// Every fact of an audit as one line, under the names of the report's
/// `observations`: the shared facts', then each contract's.
pub fn observations(facts: &Facts) -> BTreeMap<String, String> {
    let mut lines = facts.shared_observations();
    let mut put = |name: &str, line: Option<String>| {
        if let Some(line) = line {
            lines.insert(name.to_owned(), line);
        }
    };
    if let Some(embeddings) = facts.contracts.get::<EmbeddingsFacts>() {
        embeddings.observations(&mut put);
    }
    if let Some(rerank) = facts.contracts.get::<RerankFacts>() {
        rerank.observations(&mut put);
    }
    lines
}

/// A clause's verdict as its contract words it: a rerank failure on a server of
/// another dialect than Cohere's says which requests it was judged on.
pub(crate) fn as_judged(s: &Session, clause: &Clause, verdict: Verdict) -> Verdict {
    match clause.contract() {
        ContractId::Rerank => rerank::clauses::in_the_servers_dialect(s, verdict),
        ContractId::Embeddings | ContractId::Speech => verdict,
    }
}

/// A short description of a JSON request to `path`, in the words of the contract
/// whose route it is (`rerank at /rerank: 5 documents, …`, `8 strings, dimensions: 128`).
pub(crate) fn describe_request(path: &str, fields: &Map<String, Value>, model: &str) -> String {
    rerank::requests::describe(path, fields, model)
        .unwrap_or_else(|| embeddings::requests::describe(fields, model))
}

/// The clients a contract profiles, in the order reports show them.
pub fn clients(contract: ContractId) -> &'static [Client] {
    match contract {
        ContractId::Embeddings => &Client::EMBEDDINGS,
        ContractId::Rerank => &Client::RERANK,
        ContractId::Speech => &Client::SPEECH,
    }
}

/// The release of the profiled client named `name`, in any contract: what a level's
/// line shows after a client's name ("openai-python 3.57.0 …").
pub fn release_of(name: &str) -> Option<&'static str> {
    ContractId::ALL
        .into_iter()
        .flat_map(clients)
        .find(|c| c.name() == name)
        .map(|c| c.version())
}

/// The client profiles when the audit could not start, each "not probed" for `why`:
/// nothing is sent, and only the first contract's clients are listed (which other
/// contracts the server offers is unknown).
pub(crate) fn not_probed(why: &str) -> Vec<ClientProfile> {
    embeddings::profiles::not_probed(why)
}

/// The client profiles of the contracts the server offers, after the clause run; a
/// contract the server does not offer has no clients to profile (a speech-only server's
/// table lists no embeddings clients, where "unknown" would suggest a question unasked).
pub(crate) async fn profile(
    s: &Session,
    judged: &Judged<'_>,
    offered: &Offered,
) -> Vec<ClientProfile> {
    s.begin_clause(profiles::STAGE);
    let embeddings = match offered.why_not(ContractId::Embeddings) {
        Some(_) => Vec::new(),
        None => {
            let calls = embeddings::profiles::sdk::default_calls(s).await;
            vec![
                embeddings::profiles::sdk::profile(Client::OPENAI_PYTHON, &calls, judged),
                embeddings::profiles::sdk::profile(Client::OPENAI_NODE, &calls, judged),
                embeddings::profiles::langchain::profile(s, &calls, judged).await,
            ]
        }
    };
    let speech = match offered.why_not(ContractId::Speech) {
        Some(_) => Vec::new(),
        None => speech::profiles::profile_all(s, judged).await,
    };
    let profiles = [embeddings, rerank::profiles::profile_all(s).await, speech].concat();
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
    fn a_pasted_route_of_any_contract_gives_the_same_endpoint() {
        for raw in [
            "http://h:8000/v1",
            "http://h:8000/v1/embeddings",
            "http://h:8000/v1/audio/transcriptions/",
            "http://h:8000/v1/audio/translations",
        ] {
            let target = target(raw).unwrap();
            assert_eq!(target.display(), "http://h:8000/v1/embeddings", "{raw}");
            assert_eq!(
                target.url(&speech::requests::ROUTE).as_str(),
                "http://h:8000/v1/audio/transcriptions"
            );
        }
    }

    /// Each folder names its own clients: no two share a name, and the report
    /// schema's `client` enum lists exactly these.
    #[test]
    fn every_contracts_clients_are_distinct_and_in_the_report_schema() {
        let clients: Vec<Client> = ContractId::ALL
            .into_iter()
            .flat_map(clients)
            .copied()
            .collect();
        let names: BTreeSet<&str> = clients.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), clients.len(), "two clients share a name");
        let schema: serde_json::Value =
            serde_json::from_str(crate::schemas::Schemas::report_schema_text()).unwrap();
        let listed: BTreeSet<&str> =
            schema["$defs"]["client_profile"]["properties"]["client"]["enum"]
                .as_array()
                .expect("the report schema lists the clients")
                .iter()
                .filter_map(|name| name.as_str())
                .collect();
        assert_eq!(names, listed);
    }

    /// A level grounded on a client names one its own contract profiles, so the
    /// personas' tests can hold the claim to that profile's verdict.
    #[test]
    fn every_client_a_level_names_is_profiled_by_its_contract() {
        let unprofiled: Vec<String> = Catalogue::shipped()
            .clauses
            .iter()
            .flat_map(|clause| {
                clause
                    .level_evidence
                    .0
                    .iter()
                    .filter_map(|e| e.client())
                    .filter(|name| !clients(clause.contract()).iter().any(|c| c.name() == *name))
                    .map(move |name| format!("{}: {name}", clause.id))
            })
            .collect();
        assert!(
            unprofiled.is_empty(),
            "clients without a profile: {unprofiled:?}"
        );
        assert_eq!(release_of("openai-python"), Some("3.57.0"));
        assert_eq!(release_of("no-such-client"), None);
    }

    #[test]
    fn no_clause_is_implemented_twice() {
        let checks = checks();
        let ids: BTreeSet<&str> = checks.iter().map(|c| c.id).collect();
        assert_eq!(ids.len(), checks.len());
    }
}
