//! The embeddings contract (`specs/embeddings/clauses.json`): `POST /v1/embeddings` as OpenAI's
//! API reference and SDKs describe it.

pub(crate) mod clauses;
pub mod facts;
pub mod profiles;
pub mod reference;
pub(crate) mod reply;
pub(crate) mod requests;
pub mod settings;

pub use requests::ROUTE;
pub use settings::EmbeddingsSettings;

use crate::catalogue::ContractId;
use crate::clauses::Check;
use crate::contracts::consumer::Consumer;
use crate::contracts::contract::{AnswerShape, Contract, MatrixRow, Presence};
use crate::http::{Credentials, Probe, Route};
use crate::profiles::{Client, ClientProfile, Judged};
use crate::session::facts::Facts;
use crate::session::{Dialect, Session};
use crate::verdict::Verdict;
use facts::EmbeddingsFacts;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// What the embeddings side has learned of the session's server so far (nothing before
/// its first clause).
pub(crate) fn learned(s: &Session) -> EmbeddingsFacts {
    EmbeddingsFacts::of(&s.facts())
}

/// Writes what an embeddings clause learned, for the other clauses and the report.
pub(crate) fn learn(s: &Session, write: impl FnOnce(&mut EmbeddingsFacts)) {
    s.learn(|facts| write(facts.contracts.get_mut()));
}

/// The embeddings contract, as the registry lists it.
pub(crate) struct Embeddings;

/// The one value of it.
pub(crate) const EMBEDDINGS: Embeddings = Embeddings;

/// The contract's name in its catalogue (`specs/embeddings/clauses.json`).
pub const ID: ContractId = ContractId::of_catalogue("embeddings");

impl Contract for Embeddings {
    fn id(&self) -> ContractId {
        ID
    }

    /// The one-sentence request, as IN-001 and AUTH-001 send it.
    fn plain_request(&self, s: &Session, credentials: Credentials) -> Option<Probe> {
        Some(match credentials {
            Credentials::Run => requests::small_probe(s),
            Credentials::Withheld => requests::single_without_credentials(s),
            Credentials::Wrong => requests::single_with_wrong_credentials(s),
        })
    }

    fn presence<'a>(&'a self, s: &'a Session, _: Option<&'static str>) -> BoxFuture<'a, Presence> {
        Box::pin(requests::presence(s))
    }

    /// No: its route is the base URL's, the one a user gives.
    fn finds_its_route(&self) -> bool {
        false
    }

    fn checks(&self) -> Vec<Check> {
        clauses::checks()
    }

    fn clients(&self) -> &'static [Client] {
        &Client::EMBEDDINGS
    }

    fn pasteable_routes(&self) -> &'static [Route] {
        &[requests::ROUTE]
    }

    /// One word.
    fn small_request(&self) -> Option<fn(&Session) -> Probe> {
        Some(requests::small)
    }

    fn dialect(&self) -> Option<Dialect> {
        None
    }

    /// None: `--model` names the embeddings model.
    fn model_option(&self) -> Option<&'static str> {
        None
    }

    fn named_model(&self, _: &Session) -> Option<String> {
        None
    }

    fn observations(&self, facts: &Facts, put: &mut dyn FnMut(&str, Option<String>)) {
        if let Some(embeddings) = facts.contracts.get::<EmbeddingsFacts>() {
            embeddings.observations(put);
        }
    }

    fn as_judged(&self, _: &Session, verdict: Verdict) -> Verdict {
        verdict
    }

    fn describe_request(
        &self,
        path: &str,
        fields: &Map<String, Value>,
        model: &str,
    ) -> Option<String> {
        path.trim_end_matches('/')
            .ends_with(requests::ROUTE.path)
            .then(|| requests::describe(fields, model))
    }

    /// Nothing where the server does not offer embeddings (a speech-only server's table
    /// lists no embeddings clients, where "unknown" would suggest a question unasked).
    fn profile<'a>(
        &'a self,
        s: &'a Session,
        judged: &'a Judged<'a>,
        not_offered: Option<&'a str>,
    ) -> BoxFuture<'a, Vec<ClientProfile>> {
        Box::pin(async move {
            if not_offered.is_some() {
                return Vec::new();
            }
            let calls = profiles::sdk::default_calls(s).await;
            vec![
                profiles::sdk::profile(Client::OPENAI_PYTHON, &calls, judged),
                profiles::sdk::profile(Client::OPENAI_NODE, &calls, judged),
                profiles::langchain::profile(s, &calls, judged).await,
            ]
        })
    }

    /// The first contract's clients stand for the run's when it could not start.
    fn not_probed(&self, why: &str) -> Vec<ClientProfile> {
        profiles::not_probed(why)
    }

    /// None: the matrix's clause rows and agreement show it.
    fn matrix_row(&self) -> Option<MatrixRow> {
        None
    }

    /// None: embeddings' topics are the migration's own (`migration/contract.rs`).
    fn consumer(&self) -> Option<&'static dyn Consumer> {
        None
    }

    /// None: embeddings' answers are the migration's own (`migration/behaviour.rs`).
    fn answer_shape(&self) -> Option<AnswerShape> {
        None
    }
}
