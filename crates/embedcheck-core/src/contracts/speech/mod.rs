//! The speech-to-text contract (`specs/speech/clauses.json`): `POST
//! /v1/audio/transcriptions` as OpenAI's API reference and SDKs describe it, judged with
//! audio the suite makes itself.

pub mod audio;
pub mod class;
mod classify;
pub(crate) mod clauses;
mod consumer;
pub mod facts;
pub(crate) mod profiles;
pub mod reference;
pub(crate) mod reply;
pub(crate) mod requests;
pub mod settings;

pub use settings::SpeechSettings;

use crate::catalogue::ContractId;
use crate::clauses::Check;
use crate::contracts::consumer::Consumer;
use crate::contracts::contract::{AnswerShape, Contract, MatrixRow, Presence};
use crate::http::{Credentials, Probe, Route};
use crate::profiles::{Client, ClientProfile, Judged};
use crate::session::facts::Facts;
use crate::session::{Dialect, Session};
use crate::verdict::Verdict;
use facts::SpeechFacts;
use futures::future::BoxFuture;
use serde_json::{Map, Value};

/// What the speech side has learned of the session's server so far.
pub(crate) fn learned(s: &Session) -> SpeechFacts {
    SpeechFacts::of(&s.facts())
}

/// Writes what a speech clause learned, for the other clauses and the report.
pub(crate) fn learn(s: &Session, write: impl FnOnce(&mut SpeechFacts)) {
    s.learn(|facts| write(facts.contracts.get_mut()));
}

/// The speech-to-text contract, as the registry lists it.
pub(crate) struct Speech;

/// The one value of it.
pub(crate) const SPEECH: Speech = Speech;

/// The contract's name in its catalogue (`specs/speech/clauses.json`).
pub const ID: ContractId = ContractId::of_catalogue("speech");

impl Contract for Speech {
    fn id(&self) -> ContractId {
        ID
    }

    /// The minimal transcription request.
    fn plain_request(&self, s: &Session, credentials: Credentials) -> Option<Probe> {
        let minimal = requests::minimal(s);
        Some(match credentials {
            Credentials::Run => minimal,
            Credentials::Withheld => minimal.unauthenticated(),
            Credentials::Wrong => minimal.with_wrong_credentials(),
        })
    }

    fn presence<'a>(
        &'a self,
        s: &'a Session,
        model_served: Option<&'static str>,
    ) -> BoxFuture<'a, Presence> {
        Box::pin(async move {
            let presence = requests::presence(s, model_served).await;
            if let Presence::Answered { .. } = presence {
                // The report names the class whatever the clauses run; a stop here
                // (a budget) is the clauses' to report.
                let _ = classify::of(s).await;
            }
            presence
        })
    }

    /// No: its route is its own, asked whatever else the server serves.
    fn finds_its_route(&self) -> bool {
        false
    }

    fn checks(&self) -> Vec<Check> {
        clauses::checks()
    }

    fn clients(&self) -> &'static [Client] {
        &Client::SPEECH
    }

    fn pasteable_routes(&self) -> &'static [Route] {
        &[requests::ROUTE, requests::TRANSLATIONS]
    }

    /// None: its smallest request uploads a clip.
    fn small_request(&self) -> Option<fn(&Session) -> Probe> {
        None
    }

    fn dialect(&self) -> Option<Dialect> {
        None
    }

    fn model_option(&self) -> Option<&'static str> {
        Some("--speech-model")
    }

    fn named_model(&self, s: &Session) -> Option<String> {
        settings::of(s).model
    }

    fn observations(&self, facts: &Facts, put: &mut dyn FnMut(&str, Option<String>)) {
        if let Some(speech) = facts.contracts.get::<SpeechFacts>() {
            speech.observations(put);
        }
    }

    fn as_judged(&self, _: &Session, verdict: Verdict) -> Verdict {
        verdict
    }

    /// None: speech's requests are forms, described by the shared form reader.
    fn describe_request(&self, _: &str, _: &Map<String, Value>, _: &str) -> Option<String> {
        None
    }

    fn profile<'a>(
        &'a self,
        s: &'a Session,
        judged: &'a Judged<'a>,
        not_offered: Option<&'a str>,
    ) -> BoxFuture<'a, Vec<ClientProfile>> {
        Box::pin(async move {
            match not_offered {
                Some(_) => Vec::new(),
                None => profiles::profile_all(s, judged).await,
            }
        })
    }

    /// None: whether the server transcribes is unknown before the audit starts.
    fn not_probed(&self, _: &str) -> Vec<ClientProfile> {
        Vec::new()
    }

    /// None: the matrix's clause rows and agreement show it.
    fn matrix_row(&self) -> Option<MatrixRow> {
        None
    }

    fn consumer(&self) -> Option<&'static dyn Consumer> {
        Some(&consumer::SpeechConsumer)
    }

    /// None: a transcript is shown as the JSON or text it is.
    fn answer_shape(&self) -> Option<AnswerShape> {
        None
    }
}
