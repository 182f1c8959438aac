//! The rerank contract (`specs/rerank/clauses.json`): `POST /v1/rerank`, `/rerank` and
//! `/v2/rerank` in Cohere's dialect and in the dialects of TEI, NVIDIA NIM and Voyage.

pub(crate) mod clauses;
mod consumer;
pub mod facts;
pub(crate) mod profiles;
pub mod reference;
pub(crate) mod reply;
pub(crate) mod requests;
pub(crate) mod routes;
pub mod settings;

pub use reply::{RerankDialect, RerankShape};
pub use routes::RerankRoute;
pub use settings::RerankSettings;

use crate::catalogue::ContractId;
use crate::clauses::Check;
use crate::contracts::consumer::Consumer;
use crate::contracts::contract::{AnswerShape, Contract, ContractShape, MatrixRow, Presence};
use crate::http::{Credentials, Probe, Route};
use crate::profiles::{Client, ClientProfile, Judged};
use crate::session::facts::Facts;
use crate::session::{Dialect, Session};
use crate::verdict::Verdict;
use facts::RerankFacts;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// What the rerank side has learned of the session's server so far (nothing before its
/// first clause).
pub(crate) fn learned(s: &Session) -> RerankFacts {
    RerankFacts::of(&s.facts())
}

/// Writes what a rerank clause learned, for the other clauses and the report.
pub(crate) fn learn(s: &Session, write: impl FnOnce(&mut RerankFacts)) {
    s.learn(|facts| write(facts.contracts.get_mut()));
}

/// The rerank contract, as the registry lists it.
pub(crate) struct Rerank;

/// The one value of it.
pub(crate) const RERANK: Rerank = Rerank;

/// The contract's name in its catalogue (`specs/rerank/clauses.json`).
pub const ID: ContractId = ContractId::of_catalogue("rerank");

impl Contract for Rerank {
    fn id(&self) -> ContractId {
        ID
    }

    fn plain_request(&self, _: &Session, _: Credentials) -> Option<Probe> {
        None
    }

    fn presence<'a>(&'a self, s: &'a Session, _: Option<&'static str>) -> BoxFuture<'a, Presence> {
        Box::pin(requests::presence(s))
    }

    /// Yes: its routes hang from the server's root or its base, in four dialects,
    /// and a server serving embeddings is asked there by its clauses.
    fn finds_its_route(&self) -> bool {
        true
    }

    fn checks(&self) -> Vec<Check> {
        clauses::checks()
    }

    fn clients(&self) -> &'static [Client] {
        &Client::RERANK
    }

    /// None: rerank's routes are searched for, from the server's root or its base.
    fn pasteable_routes(&self) -> &'static [Route] {
        &[]
    }

    fn small_request(&self) -> Option<fn(&Session) -> Probe> {
        None
    }

    /// TEI's, NIM's and Voyage's besides Cohere's.
    fn dialect(&self) -> Option<Dialect> {
        Some(requests::in_dialect)
    }

    fn model_option(&self) -> Option<&'static str> {
        Some("--rerank-model")
    }

    fn named_model(&self, s: &Session) -> Option<String> {
        settings::of(s).model
    }

    fn observations(&self, facts: &Facts, put: &mut dyn FnMut(&str, Option<String>)) {
        if let Some(rerank) = facts.contracts.get::<RerankFacts>() {
            rerank.observations(put);
        }
    }

    /// A failure on a server of another dialect than Cohere's says which requests it
    /// was judged on.
    fn as_judged(&self, s: &Session, verdict: Verdict) -> Verdict {
        clauses::in_the_servers_dialect(s, verdict)
    }

    fn describe_request(
        &self,
        path: &str,
        fields: &Map<String, Value>,
        model: &str,
    ) -> Option<String> {
        requests::describe(path, fields, model)
    }

    /// Decided by the rerank routes the clauses found, whatever the embeddings side
    /// decided: a server offering neither may still rerank at its root.
    fn profile<'a>(
        &'a self,
        s: &'a Session,
        _: &'a Judged<'a>,
        _: Option<&'a str>,
    ) -> BoxFuture<'a, Vec<ClientProfile>> {
        Box::pin(profiles::profile_all(s))
    }

    /// None: whether the server reranks is unknown before the audit starts.
    fn not_probed(&self, _: &str) -> Vec<ClientProfile> {
        Vec::new()
    }

    /// The dialect each server reranks in, and where: what its clients must speak.
    fn matrix_row(&self) -> Option<MatrixRow> {
        Some(MatrixRow {
            name: "rerank dialect (what its clients must speak)",
            cell: dialect_cell,
            absent: "no rerank",
        })
    }

    fn consumer(&self) -> Option<&'static dyn Consumer> {
        Some(&consumer::RerankConsumer)
    }

    /// `results[]`, or TEI's bare array, counted in results.
    fn answer_shape(&self) -> Option<AnswerShape> {
        Some(AnswerShape {
            shape: ContractShape {
                name: "rerank",
                label: "rerank results",
                items_word: "results",
            },
            is: reply::is_ranking,
            items: |reply| reply.rerank().ok().map(|a| a.items.len()),
        })
    }
}

/// Where and in which dialect a server's report says it reranks: `TEI's at /rerank`.
fn dialect_cell(report: &Value) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Routes {
        used: Option<RerankRoute>,
        #[serde(default = "cohere")]
        dialect: RerankDialect,
    }
    fn cohere() -> RerankDialect {
        RerankDialect::Cohere
    }
    let routes: Routes =
        serde_json::from_value(report.pointer("/facts/rerank/routes/value")?.clone()).ok()?;
    let used = routes.used?;
    Some(format!("{} at {}", routes.dialect.described(), used.path()))
}
