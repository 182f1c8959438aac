//! The contracts the suite judges, one folder each, over the shared engine (session,
//! transport, access, budgets, evidence, reports): the registry of checks and client
//! profiles the audit runner reads. `README.md` beside this file is the checklist for
//! adding a contract.

use crate::catalogue::{Clause, ContractId};
use crate::clauses::Check;
use crate::contracts::embeddings::facts::EmbeddingsFacts;
use crate::contracts::rerank::facts::RerankFacts;
use crate::contracts::speech::facts::SpeechFacts;
use crate::http::{Reply, Target, TargetError};
use crate::profiles::{self, Client, ClientProfile, Judged};
use crate::session::ByContract;
use crate::session::facts::Facts;
use crate::session::{Hooks, Session};
use crate::verdict::Verdict;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub(crate) mod consumer;
pub(crate) mod contract;
pub mod embeddings;
mod offer;
mod options;
pub mod rerank;
pub mod speech;

pub(crate) use contract::Contract;
pub use contract::ContractShape;
pub use contract::ServerOptionError;
pub(crate) use offer::Offered;
pub use options::{ContractOptions, ServerOptions, VendorParts};

/// Every contract, in the order the audit runs them and reports show them: the one
/// list that names them.
pub(crate) const ALL: [&dyn Contract; 3] =
    [&embeddings::EMBEDDINGS, &rerank::RERANK, &speech::SPEECH];

/// Which contracts the server offers, from their own requests' answers, before any
/// clause runs; an error where it offers none.
pub(crate) async fn offered(s: &Session) -> Result<Offered, String> {
    offer::offered(s, &ALL).await
}

/// The contract a clause, a route or a report names.
fn of(id: ContractId) -> &'static dyn Contract {
    ALL.into_iter()
        .find(|c| c.id() == id)
        .expect("every contract is registered")
}

/// Every implemented check, contract by contract in the registry's order.
pub(crate) fn checks() -> Vec<Check> {
    ALL.into_iter().flat_map(|c| c.checks()).collect()
}

/// The endpoint the user gave (`--endpoint`): a base URL, or the full URL of a route a
/// contract lets users paste (embeddings', which reports show as the endpoint, or a
/// speech route).
pub fn target(raw: &str) -> Result<Target, TargetError> {
    let routes: Vec<_> = ALL
        .into_iter()
        .flat_map(|c| c.pasteable_routes())
        .copied()
        .collect();
    Target::parse(raw, &routes)
}

/// The model the user named for one contract (`--rerank-model`, `--speech-model`),
/// which names the run's where `--model` is not given and the server lists none: the
/// first contract's that names one.
pub(crate) fn named_model(s: &Session) -> Option<(String, &'static str)> {
    ALL.into_iter()
        .find_map(|c| Some((c.named_model(s)?, c.model_option()?)))
}

/// Every contract's own model option, for the error that asks for one.
pub(crate) fn model_options() -> Vec<&'static str> {
    ALL.into_iter().filter_map(|c| c.model_option()).collect()
}

/// What the session asks of the contracts: how each says a request in the dialect the
/// server speaks (rerank's: TEI's, NIM's and Voyage's besides Cohere's), and the
/// smallest request to tell a busy server from a dead one (the first contract's that
/// has one: embeddings' one word; else the models listing).
pub(crate) fn hooks() -> Hooks {
    let mut hooks = Hooks {
        dialects: ALL.into_iter().filter_map(|c| c.dialect()).collect(),
        ..Hooks::default()
    };
    if let Some(small) = ALL.into_iter().find_map(|c| c.small_request()) {
        hooks.small_request = small;
    }
    hooks
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
    #[serde(skip_serializing_if = "Option::is_none")]
    speech: Option<&'a SpeechFacts>,
}

impl<'a> FactsByContract<'a> {
    pub(crate) fn of(store: &'a ByContract) -> Self {
        FactsByContract {
            embeddings: store.get(),
            rerank: store.get::<RerankFacts>().filter(|f| !f.is_empty()),
            speech: store.get::<SpeechFacts>().filter(|f| !f.is_empty()),
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
    for contract in ALL {
        contract.observations(facts, &mut put);
    }
    lines
}

/// A clause's verdict as its contract words it: a rerank failure on a server of
/// another dialect than Cohere's says which requests it was judged on.
pub(crate) fn as_judged(s: &Session, clause: &Clause, verdict: Verdict) -> Verdict {
    of(clause.contract()).as_judged(s, verdict)
}

/// A short description of a JSON request to `path`, in the words of the contract
/// whose route it is (`rerank at /rerank: 5 documents, …`, `8 strings, dimensions: 128`),
/// else its fields' names.
pub(crate) fn describe_request(path: &str, fields: &Map<String, Value>, model: &str) -> String {
    ALL.into_iter()
        .find_map(|c| c.describe_request(path, fields, model))
        .unwrap_or_else(|| {
            let names: Vec<&str> = fields.keys().map(String::as_str).collect();
            format!("JSON at {path}: {}", names.join(", "))
        })
}

/// The clients a contract profiles, in the order reports show them.
pub fn clients(contract: ContractId) -> &'static [Client] {
    of(contract).clients()
}

/// The release of the profiled client named `name`, in any contract: what a level's
/// line shows after a client's name ("openai-python 3.57.0 …").
pub fn release_of(name: &str) -> Option<&'static str> {
    ALL.into_iter()
        .flat_map(|c| c.clients())
        .find(|c| c.name() == name)
        .map(|c| c.version())
}

/// The client profiles when the audit could not start, each "not probed" for `why`:
/// nothing is sent.
pub(crate) fn not_probed(why: &str) -> Vec<ClientProfile> {
    ALL.into_iter().flat_map(|c| c.not_probed(why)).collect()
}

/// The client profiles of the contracts the server offers, after the clause run, each
/// contract's in the registry's order.
pub(crate) async fn profile(
    s: &Session,
    judged: &Judged<'_>,
    offered: &Offered,
) -> Vec<ClientProfile> {
    s.begin_clause(profiles::STAGE);
    let mut all = Vec::new();
    for contract in ALL {
        all.extend(
            contract
                .profile(s, judged, offered.why_not(contract.id()))
                .await,
        );
    }
    s.take_pending();
    all
}

/// The rows the contracts add to a matrix under the clients, each a name and a cell
/// per server (from its `report.json`), where any server's report shows the contract.
pub(crate) fn matrix_rows(reports: &[&Value]) -> Vec<(&'static str, Vec<String>)> {
    ALL.into_iter()
        .filter_map(|c| c.matrix_row())
        .filter_map(|row| {
            let cells: Vec<Option<String>> = reports.iter().map(|r| (row.cell)(r)).collect();
            cells.iter().any(Option::is_some).then(|| {
                let cells = cells
                    .into_iter()
                    .map(|c| c.unwrap_or_else(|| row.absent.to_owned()))
                    .collect();
                (row.name, cells)
            })
        })
        .collect()
}

/// The contracts that add a row to a matrix, by name (`rerank`): the matrix page's
/// heading over those rows and the corpus's.
pub(crate) fn with_matrix_rows() -> Vec<&'static str> {
    ALL.into_iter()
        .filter(|c| c.matrix_row().is_some())
        .map(|c| c.id().as_str())
        .collect()
}

/// Every contract's topics of the migration's consumer contract, in the registry's
/// order (embeddings' are the migration's own).
pub(crate) fn consumer_topics() -> Vec<consumer::Topic> {
    ALL.into_iter()
        .filter_map(|c| c.consumer())
        .flat_map(|c| c.topics().iter().copied())
        .collect()
}

/// Every contract's topics of the consumer contract judged on the pair, in the
/// registry's order.
pub(crate) async fn judge_consumer(pair: consumer::Pair<'_>) -> Vec<consumer::Expectation> {
    let mut all = Vec::new();
    for part in ALL.into_iter().filter_map(|c| c.consumer()) {
        all.extend(part.judge(pair).await);
    }
    all
}

/// The contract answer `reply` carries, if a contract that tells its answers
/// recognises its JSON: its shape and how many items it carries.
pub(crate) fn answer_shape(reply: &Reply) -> Option<(ContractShape, Option<usize>)> {
    let json = reply.json.as_ref()?;
    ALL.into_iter()
        .filter_map(|c| c.answer_shape())
        .find(|a| (a.is)(json))
        .map(|a| (a.shape, (a.items)(reply)))
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

    /// A pasted route of any contract addresses the same server; the endpoint shown is
    /// the route pasted (a speech-only run's header said `/v1/embeddings`), else the
    /// embeddings route.
    #[test]
    fn a_pasted_route_of_any_contract_addresses_the_same_server() {
        for (raw, shown) in [
            ("http://h:8000/v1", "http://h:8000/v1/embeddings"),
            ("http://h:8000/v1/embeddings", "http://h:8000/v1/embeddings"),
            (
                "http://h:8000/v1/audio/transcriptions/",
                "http://h:8000/v1/audio/transcriptions",
            ),
            (
                "http://h:8000/v1/audio/translations",
                "http://h:8000/v1/audio/translations",
            ),
        ] {
            let target = target(raw).unwrap();
            assert_eq!(target.display(), shown, "{raw}");
            assert_eq!(target.label(), "h-8000", "{raw}");
            assert_eq!(
                target.url(&speech::requests::ROUTE).as_str(),
                "http://h:8000/v1/audio/transcriptions"
            );
            assert_eq!(
                target.url(&embeddings::ROUTE).as_str(),
                "http://h:8000/v1/embeddings"
            );
        }
    }

    /// Each folder names its own clients: no two share a name, and the report
    /// schema's `client` enum lists exactly these.
    #[test]
    fn every_contracts_clients_are_distinct_and_in_the_report_schema() {
        let clients: Vec<Client> = ContractId::all()
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
