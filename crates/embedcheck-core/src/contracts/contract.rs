//! What the shared layers ask of a contract, as one trait: each folder exports one value
//! of it, and the registry (`ALL`) is their list. Every method is required, so a
//! contract that forgets a part does not compile, where a shared function naming the
//! contracts would fall back to embeddings' answer without a word.

use crate::catalogue::ContractId;
use crate::clauses::Check;
use crate::contracts::consumer::Consumer;
use crate::http::{Credentials, Probe, Reply, Route};
use crate::profiles::{Client, ClientProfile, Judged};
use crate::reference::ReferenceError;
use crate::session::facts::Facts;
use crate::session::{Dialect, Session};
use crate::verdict::Verdict;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// One contract, as the engine loops over it.
pub(crate) trait Contract: Sync {
    /// Which contract this is, as the catalogue names it.
    fn id(&self) -> ContractId;

    /// Its plain request, which any server offering it answers, with `credentials`:
    /// what the audit asks before any clause whether it reaches the server with the
    /// run's access (and, with a wrong key and none, whether a 4xx is a rejected key
    /// in disguise). None where the contract finds its route for itself (rerank).
    fn plain_request(&self, s: &Session, credentials: Credentials) -> Option<Probe>;

    /// Whether the server offers it, from its own requests' answers, before any
    /// clause runs. `model_served` says, where a contract before it answered a request
    /// naming the run's model with a result, how (`the model the embeddings route
    /// embeds with`): a server error to the same model here then says the model
    /// serves the other contract, not that this one is broken.
    fn presence<'a>(
        &'a self,
        s: &'a Session,
        model_served: Option<&'static str>,
    ) -> BoxFuture<'a, Presence>;

    /// Whether its clauses find where the server serves it (rerank's route search),
    /// making it another way to read the server of the contract before it: it is
    /// then asked up front only where that one's plain request is not answered.
    fn finds_its_route(&self) -> bool;

    /// Its clause checks, in the catalogue's order.
    fn checks(&self) -> Vec<Check>;

    /// The clients it profiles, in the order reports show them.
    fn clients(&self) -> &'static [Client];

    /// Its routes a user may paste whole as `--endpoint` (the report still shows the
    /// first contract's route as the endpoint).
    fn pasteable_routes(&self) -> &'static [Route];

    /// Its smallest request, the least work a server of it can be sent, which the
    /// session sends after requests timed out until the server answers one; None
    /// where it has none smaller than the models listing.
    fn small_request(&self) -> Option<fn(&Session) -> Probe>;

    /// How a request is said in the server's dialect, where the contract has several.
    fn dialect(&self) -> Option<Dialect>;

    /// Its own model option (`--rerank-model`), if it has one.
    fn model_option(&self) -> Option<&'static str>;

    /// The model the user named with that option, which names the run's where
    /// `--model` is not given and the server lists none.
    fn named_model(&self, s: &Session) -> Option<String>;

    /// Its facts as lines under the report's `observations`.
    fn observations(&self, facts: &Facts, put: &mut dyn FnMut(&str, Option<String>));

    /// A verdict of one of its clauses as the contract words it.
    fn as_judged(&self, s: &Session, verdict: Verdict) -> Verdict;

    /// A JSON request to `path` in a few words, if `path` is one of its routes: the
    /// migration audit's side-by-side view.
    fn describe_request(
        &self,
        path: &str,
        fields: &Map<String, Value>,
        model: &str,
    ) -> Option<String>;

    /// Its clients' profiles after the clause run; `not_offered` says why the server
    /// does not offer the contract, where it does not.
    fn profile<'a>(
        &'a self,
        s: &'a Session,
        judged: &'a Judged<'a>,
        not_offered: Option<&'a str>,
    ) -> BoxFuture<'a, Vec<ClientProfile>>;

    /// Its clients' profiles, each "not probed" for `why`, when the audit could not
    /// start.
    fn not_probed(&self, why: &str) -> Vec<ClientProfile>;

    /// The row it adds to a matrix under the clients, where it adds one: its name
    /// and, from each server's `report.json`, that server's cell (None where the
    /// report shows nothing of it; the row is left out where no server's does).
    fn matrix_row(&self) -> Option<MatrixRow>;

    /// Its part of the migration's consumer contract (what a client of the baseline
    /// relies on), where the migration does not judge it itself: embeddings' topics
    /// are the migration's own, read with the vectors it compares.
    fn consumer(&self) -> Option<&'static dyn Consumer>;

    /// How the migration's side-by-side view tells its answers from any other body,
    /// where the migration does not itself: embeddings' (a vector's length and
    /// encoding) are the migration's own.
    fn answer_shape(&self) -> Option<AnswerShape>;
}

/// A contract's answer, as the migration's side-by-side view tells it.
#[derive(Clone, Copy)]
pub(crate) struct AnswerShape {
    /// Its shape's name in report.json (`rerank`) and in words (`rerank results`),
    /// and the word its items are counted in (`5 results`).
    pub shape: ContractShape,
    /// Whether a JSON body is its answer.
    pub is: fn(&Value) -> bool,
    /// How many items the answer carries.
    pub items: fn(&Reply) -> Option<usize>,
}

/// A contract's answer shape, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContractShape {
    pub name: &'static str,
    pub label: &'static str,
    pub items_word: &'static str,
}

/// What a contract's own requests found of the server, before any clause.
pub(crate) enum Presence {
    /// Its plain request was answered, or no answer could say (a budget, a stall,
    /// Ctrl-C: the clause run says so clause by clause). `served_the_model`: how it
    /// served the run's model, where it answered a request naming it with a result.
    Answered {
        served_the_model: Option<&'static str>,
    },
    /// Its route answers, but refuses whatever it is sent: not offered where another
    /// way to read the server answers, else audited on its refusals.
    RefusesAll(String),
    /// Its route is absent, or the server cannot serve it for the model named: not
    /// offered.
    Absent(String),
}

/// A contract's row of the matrix: its name, and a server's cell from its report.
pub(crate) struct MatrixRow {
    pub name: &'static str,
    pub cell: fn(report: &Value) -> Option<String>,
    /// The cell of a server whose report shows nothing of the contract.
    pub absent: &'static str,
}

/// Why a matrix server's own value cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ServerOptionError {
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// A value that is none of the field's words or forms.
    #[error("{field}: {why}")]
    Value { field: &'static str, why: String },
}
