//! The speech-to-text contract (`specs/speech/clauses.json`): `POST
//! /v1/audio/transcriptions` as OpenAI's API reference and SDKs describe it, judged with
//! audio the suite makes itself.

pub mod audio;
pub(crate) mod clauses;
pub(crate) mod profiles;
pub mod reference;
pub(crate) mod reply;
pub(crate) mod requests;
pub mod settings;

pub use settings::SpeechSettings;
