//! What the user declares about a speech-to-text server, which the session keeps among
//! each contract's settings.

use super::class::ModelClass;
use super::reference::SpeechReference;
use crate::contracts::contract::ServerOptionError;
use crate::reference::ReferenceError;
use crate::session::Session;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The speech contract's settings.
#[derive(Clone, Debug, Default)]
pub struct SpeechSettings {
    /// The model to transcribe with (`--speech-model`), else the run's: a server that
    /// serves embeddings and speech (the study's, a LiteLLM proxy) names a model for
    /// each.
    pub model: Option<String>,
    /// The class of OpenAI model whose contract the server keeps
    /// (`--speech-model-class`), where its model's name and answers do not show it.
    pub model_class: Option<ModelClass>,
    /// The model's own transcripts of the suite's clip (`--speech-reference`).
    pub reference: Option<Arc<SpeechReference>>,
}

/// The run's speech settings (the defaults where the user declared none).
pub(crate) fn of(s: &Session) -> SpeechSettings {
    s.settings()
        .contracts
        .get::<SpeechSettings>()
        .cloned()
        .unwrap_or_default()
}

/// The speech contract's command-line options, read by the one parser of the command
/// line (each also from its `EMBEDCHECK_*` variable).
#[derive(Clone, Debug, clap::Args)]
pub struct SpeechOptions {
    /// Model to transcribe with (default: --model, else the first id from GET
    /// /v1/models): a server serving embeddings and speech names one model for each.
    #[arg(long, env = "EMBEDCHECK_SPEECH_MODEL", value_name = "ID")]
    pub speech_model: Option<String>,

    /// The OpenAI transcription model whose contract the server keeps: whisper-1 (json,
    /// text, srt, verbose_json, vtt), gpt-4o-transcribe (json and text) or
    /// gpt-4o-transcribe-diarize (json, text, diarized_json). Default: shown by the
    /// model's name or the server's refusals in OpenAI's words, else whisper-1.
    #[arg(long, env = "EMBEDCHECK_SPEECH_MODEL_CLASS", value_name = "CLASS")]
    pub speech_model_class: Option<ModelClass>,

    /// The speech model's own transcripts of the suite's clip (JSON Lines: a header, then
    /// {"clip", "sha256", "mode", "text", "tokens"} per decoding mode, as
    /// lab/speech_reference.py writes them with a plain greedy loop over transformers):
    /// SPR-001 holds the server's transcript against them.
    #[arg(long, env = "EMBEDCHECK_SPEECH_REFERENCE", value_name = "FILE")]
    pub speech_reference: Option<PathBuf>,
}

impl SpeechOptions {
    /// The settings these options declare; fails on an unreadable reference file.
    pub fn settings(&self) -> Result<SpeechSettings, ReferenceError> {
        Ok(SpeechSettings {
            model: self.speech_model.clone(),
            model_class: self.speech_model_class,
            reference: self.speech_reference.as_deref().map(load).transpose()?,
        })
    }
}

/// A speech reference file, read once and shared by every session that uses it.
fn load(path: &Path) -> Result<Arc<SpeechReference>, ReferenceError> {
    Ok(Arc::new(SpeechReference::load(path)?))
}

/// One matrix server's own speech values (its `[[server]]` entry), over the run's.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct SpeechServer {
    /// The model it transcribes with (`--speech-model`), when it differs from the run's.
    speech_model: Option<String>,
    /// The class of its speech model (`--speech-model-class`), when it differs from the
    /// run's.
    speech_model_class: Option<ModelClass>,
    /// Its speech model's own transcripts (`--speech-reference`), when they differ from
    /// the run's.
    speech_reference: Option<PathBuf>,
}

impl SpeechServer {
    /// `settings` with this server's values over them.
    pub fn over(&self, settings: &mut SpeechSettings) -> Result<(), ServerOptionError> {
        settings.model = self.speech_model.clone().or(settings.model.take());
        settings.model_class = self.speech_model_class.or(settings.model_class);
        if let Some(path) = &self.speech_reference {
            settings.reference = Some(load(path)?);
        }
        Ok(())
    }
}

/// What a vendor profile documents of its speech-to-text (`specs/vendors/`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct SpeechVendor {
    /// The URL of the vendor's speech-to-text route to give `--endpoint`, placeholders
    /// in braces, where it serves one: on Azure a deployment of its own, so speech is
    /// a run of its own there.
    speech_endpoint: Option<String>,
    /// The documented model the speech clauses name unless `--speech-model` does:
    /// a vendor's models route lists chat models first.
    speech_model: Option<String>,
}

impl SpeechVendor {
    /// The documented speech model stands in for `--speech-model`.
    pub(crate) fn adjust(&self, settings: &mut SpeechSettings) {
        if settings.model.is_none() {
            settings.model.clone_from(&self.speech_model);
        }
    }

    /// `speech model whisper-large-v3`, where the vendor documents one.
    pub(crate) fn summary(&self) -> Option<String> {
        self.speech_model
            .as_ref()
            .map(|model| format!("speech model {model}"))
    }

    /// The speech URL to paste, where the vendor serves one.
    pub(crate) fn endpoint(&self) -> Option<&str> {
        self.speech_endpoint.as_deref()
    }
}
