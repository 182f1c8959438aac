//! Which of OpenAI's transcription contracts the audited model keeps. OpenAI's models do
//! not share one (openapi.yaml, `AudioResponseFormat` and `CreateTranscriptionRequest`):
//! whisper-1 answers five formats and ignores `stream`; the gpt-4o-transcribe family
//! answers json and text only (its 400 says "Use 'json' or 'text' instead") and
//! streams; gpt-4o-transcribe-diarize answers json, text and `diarized_json`. A server
//! refusing a format its class does not have keeps its documented contract, so every
//! clause is judged by the class's contract, and the report says which class and why.

use crate::http::Reply;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A family of OpenAI transcription models sharing one contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum ModelClass {
    /// whisper-1, and the open Whisper models servers copy it with.
    #[serde(rename = "whisper-1")]
    #[value(name = "whisper-1")]
    Whisper,
    /// gpt-4o-transcribe, gpt-4o-mini-transcribe and their dated snapshots.
    #[serde(rename = "gpt-4o-transcribe")]
    #[value(name = "gpt-4o-transcribe")]
    Gpt4oTranscribe,
    /// gpt-4o-transcribe-diarize.
    #[serde(rename = "gpt-4o-transcribe-diarize")]
    #[value(name = "gpt-4o-transcribe-diarize")]
    Diarize,
}

impl ModelClass {
    /// The class's name: the OpenAI model that defines its contract.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ModelClass::Whisper => "whisper-1",
            ModelClass::Gpt4oTranscribe => "gpt-4o-transcribe",
            ModelClass::Diarize => "gpt-4o-transcribe-diarize",
        }
    }

    /// The `response_format`s the class's contract has (OpenAI's API reference; its
    /// 400 for gpt-4o-transcribe names json and text).
    pub(crate) fn formats(self) -> &'static [&'static str] {
        match self {
            ModelClass::Whisper => &["json", "text", "srt", "verbose_json", "vtt"],
            ModelClass::Gpt4oTranscribe => &["json", "text"],
            ModelClass::Diarize => &["json", "text", "diarized_json"],
        }
    }

    /// Whether the class's contract returns token logprobs for `include[]=logprobs`:
    /// "only with the models gpt-4o-transcribe, gpt-4o-mini-transcribe and
    /// gpt-4o-mini-transcribe-2025-12-15" (CreateTranscriptionRequest.include).
    pub(crate) fn has_logprobs(self) -> bool {
        self == ModelClass::Gpt4oTranscribe
    }

    /// Whether the class's contract streams `stream: true` as server-sent events:
    /// "Streaming is not supported for the whisper-1 model and will be ignored"
    /// (CreateTranscriptionRequest.stream); the gpt-4o-transcribe models stream.
    pub(crate) fn streams(self) -> bool {
        self != ModelClass::Whisper
    }

    /// Whether `format` is in the class's contract.
    pub(crate) fn offers(self, format: &str) -> bool {
        self.formats().contains(&format)
    }

    /// The class a model's name belongs to, where it names one: OpenAI's own ids (a
    /// gateway's `openai/` or `azure/` prefix aside), or an open Whisper model
    /// (`Systran/faster-whisper-small`, `openai/whisper-large-v3`), which servers copy
    /// whisper-1's contract with.
    pub(crate) fn of_model(model: &str) -> Option<ModelClass> {
        let model = model.to_lowercase();
        let name = model.rsplit('/').next().unwrap_or_default();
        if name.starts_with("gpt-") && name.contains("transcribe") {
            return Some(match name.contains("diarize") {
                true => ModelClass::Diarize,
                false => ModelClass::Gpt4oTranscribe,
            });
        }
        name.contains("whisper").then_some(ModelClass::Whisper)
    }
}

impl fmt::Display for ModelClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What showed the class.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClassBasis {
    /// `--speech-model-class`.
    Declared,
    /// The model's name is one of the class's.
    ModelName { model: String },
    /// The server refused verbose_json in OpenAI's words for a gpt-4o-transcribe model.
    Refusal { status: u16, said: String },
    /// Nothing showed another class: judged by whisper-1's contract, the one the
    /// servers copied first.
    Unshown,
}

/// The class the audit judges by, and what showed it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Classified {
    pub class: ModelClass,
    pub basis: ClassBasis,
}

impl Classified {
    /// The class as the report's line gives it: `gpt-4o-transcribe (the model's name,
    /// gpt-4o-mini-transcribe; formats json, text)`.
    pub(crate) fn line(&self) -> String {
        format!(
            "{} ({}; formats {})",
            self.class,
            self.basis_words(),
            self.class.formats().join(", ")
        )
    }

    /// A clause's reason for a refusal of `format`, where the class does not have it.
    pub(crate) fn not_in_contract(&self, format: &str) -> Option<String> {
        (!self.class.offers(format)).then(|| {
            format!(
                "{format} is not in the {} contract, which has {} (OpenAI's API reference); the class by {}",
                self.class,
                self.class.formats().join(", "),
                self.basis_words()
            )
        })
    }

    /// What showed the class, in a few words.
    pub(crate) fn basis_words(&self) -> String {
        match &self.basis {
            ClassBasis::Declared => "--speech-model-class".to_owned(),
            ClassBasis::ModelName { model } => format!("the model's name, {model}"),
            ClassBasis::Refusal { status, said } => {
                format!("verbose_json refused {status} in OpenAI's words: {said}")
            }
            ClassBasis::Unshown => {
                "default: nothing showed another; --speech-model-class names one".to_owned()
            }
        }
    }
}

/// Whether a refusal is OpenAI's for a format a gpt-4o-transcribe model does not have:
/// "response_format 'verbose_json' is not compatible with model 'gpt-4o-transcribe'.
/// Use 'json' or 'text' instead." (`invalid_request_error`, `unsupported_value`).
pub(crate) fn refused_as_gpt4o(reply: &Reply) -> bool {
    let said = reply.error_text();
    reply.is_client_error()
        && (said.contains("is not compatible with model") || said.contains("use 'json' or 'text'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenAI's ids, with or without a gateway's prefix, and the open Whisper models
    /// name their class; any other name names none.
    #[test]
    fn a_models_name_names_its_class() {
        for (model, class) in [
            ("whisper-1", Some(ModelClass::Whisper)),
            ("Systran/faster-whisper-small", Some(ModelClass::Whisper)),
            ("openai/whisper-large-v3", Some(ModelClass::Whisper)),
            ("gpt-4o-transcribe", Some(ModelClass::Gpt4oTranscribe)),
            (
                "openai/gpt-4o-mini-transcribe",
                Some(ModelClass::Gpt4oTranscribe),
            ),
            (
                "gpt-4o-mini-transcribe-2025-12-15",
                Some(ModelClass::Gpt4oTranscribe),
            ),
            ("gpt-transcribe", Some(ModelClass::Gpt4oTranscribe)),
            ("azure/gpt-4o-transcribe-diarize", Some(ModelClass::Diarize)),
            ("embedcheck-reference", None),
            ("parakeet-tdt-0.6b", None),
        ] {
            assert_eq!(ModelClass::of_model(model), class, "{model}");
        }
    }

    /// OpenAI's own refusal shows the class; a refusal in other words does not.
    #[test]
    fn only_openais_words_show_the_gpt_4o_class() {
        let refusal = |message: &str| {
            Reply::json_for_test(
                400,
                serde_json::json!({"error": {"message": message, "type": "invalid_request_error", "param": "response_format", "code": "unsupported_value"}}),
            )
        };
        assert!(refused_as_gpt4o(&refusal(
            "response_format 'verbose_json' is not compatible with model 'gpt-4o-transcribe'. Use 'json' or 'text' instead."
        )));
        assert!(!refused_as_gpt4o(&refusal("Unsupported response_format")));
    }

    #[test]
    fn a_class_says_what_it_offers() {
        assert!(ModelClass::Whisper.offers("srt"));
        assert!(!ModelClass::Gpt4oTranscribe.offers("verbose_json"));
        assert!(ModelClass::Diarize.offers("diarized_json"));
        let classified = Classified {
            class: ModelClass::Gpt4oTranscribe,
            basis: ClassBasis::ModelName {
                model: "gpt-4o-mini-transcribe".into(),
            },
        };
        assert_eq!(
            classified.line(),
            "gpt-4o-transcribe (the model's name, gpt-4o-mini-transcribe; formats json, text)"
        );
        assert!(classified.not_in_contract("json").is_none());
    }
}
