//! Vendor profiles: what a hosted API documents about its embeddings endpoint, and
//! where it serves speech-to-text, each fact with its source
//! (`specs/vendors/NAME.toml`, shipped in the binary).
//!
//! A profile changes how a run *addresses* the vendor: the header that carries the
//! key, whether `model` is sent, the vendor's names for `dimensions` and
//! `input_type`, whether `GET /models` exists, and off this machine its documented
//! batch limit. Deviations from the contract the vendor itself documents are shown as
//! `fail (documented)` with their link, like known failures. It never changes what the
//! evidence says: every clause still runs and reports what it saw.
//!
//! ```text
//! embedcheck: vendor profile azure (Azure OpenAI, classic deployment path): key in api-key,
//!   no model field, no models route, at most 2048 inputs, error bodies azure
//! ```

use crate::contracts::VendorParts;
use crate::contracts::embeddings::EmbeddingsSettings;
use crate::expectations::{Expectation, Expectations};
use crate::http::{AccessError, Fields, KeyHeader};
use crate::session::Settings;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

/// The profiles shipped with the suite, by name.
const SHIPPED: [(&str, &str); 14] = [
    ("openai", include_str!("../specs/vendors/openai.toml")),
    ("groq", include_str!("../specs/vendors/groq.toml")),
    ("azure", include_str!("../specs/vendors/azure.toml")),
    ("azure-v1", include_str!("../specs/vendors/azure-v1.toml")),
    (
        "gemini-openai",
        include_str!("../specs/vendors/gemini-openai.toml"),
    ),
    ("mistral", include_str!("../specs/vendors/mistral.toml")),
    ("voyage", include_str!("../specs/vendors/voyage.toml")),
    ("jina", include_str!("../specs/vendors/jina.toml")),
    (
        "cohere-compat",
        include_str!("../specs/vendors/cohere-compat.toml"),
    ),
    ("together", include_str!("../specs/vendors/together.toml")),
    ("fireworks", include_str!("../specs/vendors/fireworks.toml")),
    ("deepinfra", include_str!("../specs/vendors/deepinfra.toml")),
    (
        "openrouter",
        include_str!("../specs/vendors/openrouter.toml"),
    ),
    ("nebius", include_str!("../specs/vendors/nebius.toml")),
];

/// Why `--vendor` cannot be used.
#[derive(Debug, Error)]
pub enum VendorError {
    #[error("unknown vendor {0:?}: expected one of {1}, or a profile file (.toml)")]
    Unknown(String, String),
    #[error("failed to read vendor profile {0}: {1}")]
    Read(String, std::io::Error),
    #[error("invalid vendor profile {0}: {1}")]
    Parse(String, String),
    #[error("vendor profile {0}: {1}")]
    Access(String, AccessError),
}

/// The shape of a vendor's error bodies, as documented.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ErrorShape {
    /// `{"error": {message, type, param, code}}`.
    Openai,
    /// `{"error": {code, message}}`.
    Azure,
    /// `{object, message, type, param, code}` at the top level.
    Flat,
    /// `{"detail": …}`.
    Fastapi,
    /// `{"error": {code: <int>, message, metadata}}`.
    Openrouter,
    /// Jina's own error codes.
    Jina,
    Unconfirmed,
}

/// One vendor's documented facts.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    pub title: String,
    /// The URL to give `--endpoint`, placeholders in braces.
    pub endpoint: String,
    /// `authorization` (Bearer) or the header that carries the bare key.
    pub key_header: String,
    pub send_model: bool,
    pub models_route: bool,
    pub dimensions_field: Option<String>,
    pub input_type_field: Option<String>,
    pub input_type_query: Option<String>,
    pub input_type_document: Option<String>,
    pub encodings: Option<Vec<String>>,
    pub max_inputs: Option<u64>,
    pub max_input_tokens: Option<u64>,
    pub max_request_tokens: Option<u64>,
    pub error_shape: ErrorShape,
    pub rate_limit_headers: Vec<String>,
    pub sources: Vec<String>,
    #[serde(default)]
    pub notes: Vec<String>,
    /// What it documents of the other contracts (its speech route and model), each
    /// contract's own keys.
    #[serde(flatten)]
    pub contracts: VendorParts,
    /// Deviations from the contract the vendor documents, by clause ID.
    #[serde(default)]
    pub documented: BTreeMap<String, Expectation>,
}

impl Profile {
    /// A shipped profile by name, or a profile file by path.
    pub fn named(name_or_path: &str) -> Result<Self, VendorError> {
        if let Some((_, text)) = SHIPPED.iter().find(|(name, _)| *name == name_or_path) {
            return Self::parse(text, name_or_path);
        }
        let path = Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(path)
                .map_err(|e| VendorError::Read(name_or_path.to_owned(), e))?;
            return Self::parse(&text, name_or_path);
        }
        Err(VendorError::Unknown(
            name_or_path.to_owned(),
            Self::names().join(", "),
        ))
    }

    /// The names of the shipped profiles.
    pub fn names() -> Vec<&'static str> {
        SHIPPED.iter().map(|(name, _)| *name).collect()
    }

    fn parse(text: &str, origin: &str) -> Result<Self, VendorError> {
        let profile: Profile = toml::from_str(text)
            .map_err(|e| VendorError::Parse(origin.to_owned(), e.message().to_owned()))?;
        let catalogue = crate::catalogue::Catalogue::shipped();
        if let Some(id) = profile
            .documented
            .keys()
            .find(|id| catalogue.get(id).is_none())
        {
            return Err(VendorError::Parse(
                origin.to_owned(),
                format!("documents unknown clause {id}"),
            ));
        }
        profile
            .key_header()
            .map_err(|e| VendorError::Access(origin.to_owned(), e))?;
        Ok(profile)
    }

    /// The header that carries the key.
    pub fn key_header(&self) -> Result<KeyHeader, AccessError> {
        KeyHeader::parse(&self.key_header)
    }

    /// How request bodies name things for this vendor: its names for `dimensions`
    /// and `input_type`, and its words for the input types `query` and `document`.
    pub fn fields(&self) -> Fields {
        let renamed = [
            ("dimensions", &self.dimensions_field),
            ("input_type", &self.input_type_field),
        ];
        let worded = [
            ("query", &self.input_type_query),
            ("document", &self.input_type_document),
        ];
        Fields {
            send_model: self.send_model,
            names: renamed
                .into_iter()
                .filter_map(|(field, name)| Some((field.to_owned(), name.clone()?)))
                .collect(),
            values: worded
                .into_iter()
                .filter_map(|(value, word)| {
                    Some((("input_type".to_owned(), value.to_owned()), word.clone()?))
                })
                .collect(),
        }
    }

    /// The run's settings for this vendor: off this machine, the large batch never
    /// exceeds the documented batch limit (a larger one is refused for its size and
    /// billed for nothing); the documented per-input limit stands in for a declared
    /// one, so the limit search does not pay to find it; the documented speech model
    /// stands in for `--speech-model`.
    pub fn adjust(&self, settings: &mut Settings, loopback: bool) {
        let embeddings = settings.contracts.get_mut::<EmbeddingsSettings>();
        if let (false, Some(max)) = (loopback, self.max_inputs) {
            embeddings.large_batch = embeddings.large_batch.min(max as usize);
        }
        embeddings.max_input_tokens = embeddings.max_input_tokens.or(self.max_input_tokens);
        self.contracts.adjust(&mut settings.contracts);
    }

    /// The documented deviations, shown as `fail (documented)` with their links.
    pub fn expectations(&self) -> Expectations {
        Expectations::documented(&self.name, &self.documented)
    }

    /// One line for the terminal: how the run addresses the vendor.
    pub fn summary(&self) -> String {
        let mut parts = vec![
            match self.key_header.eq_ignore_ascii_case("authorization") {
                true => "key as Bearer".to_owned(),
                false => format!("key in {}", self.key_header),
            },
        ];
        if !self.send_model {
            parts.push("no model field".into());
        }
        if !self.models_route {
            parts.push("no models route".into());
        }
        if let Some(field) = self
            .dimensions_field
            .as_ref()
            .filter(|f| *f != "dimensions")
        {
            parts.push(format!("dimensions sent as {field}"));
        }
        if let Some(field) = &self.input_type_field {
            parts.push(format!("input type sent as {field}"));
        }
        if let Some(max) = self.max_inputs {
            parts.push(format!("at most {max} inputs"));
        }
        if let Some(encodings) = &self.encodings {
            parts.push(format!("encodings {}", encodings.join("|")));
        }
        parts.push(format!("error bodies {:?}", self.error_shape).to_lowercase());
        parts.extend(self.contracts.summary());
        format!(
            "vendor profile {} ({}): {}; {} documented deviations",
            self.name,
            self.title,
            parts.join(", "),
            self.documented.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::speech::SpeechSettings;

    #[test]
    fn every_shipped_profile_loads_under_its_own_name() {
        for name in Profile::names() {
            let profile = Profile::named(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(profile.name, name);
            assert!(!profile.sources.is_empty(), "{name} cites no source");
            assert!(
                profile.sources.iter().all(|s| s.starts_with("https://")),
                "{name}"
            );
            assert!(
                profile.documented.values().all(|d| d.link.is_some()),
                "{name}: a documented deviation without its link"
            );
            assert_eq!(
                profile.input_type_field.is_some(),
                profile.input_type_query.is_some(),
                "{name}: an input type field needs its query value"
            );
        }
    }

    #[test]
    fn the_manual_gives_a_command_line_for_every_vendor() {
        let hosted = include_str!("../../../docs/manual/src/hosted.md");
        for name in Profile::names() {
            assert!(
                hosted.contains(&format!("`--vendor {name} --endpoint")),
                "the manual's hosted.md has no command line for {name}"
            );
        }
    }

    /// A profile's keys are its own and each contract's: any other is refused.
    #[test]
    fn a_profile_refuses_a_key_no_one_knows() {
        let (_, groq) = SHIPPED.iter().find(|(name, _)| *name == "groq").unwrap();
        assert!(Profile::parse(groq, "groq").is_ok());
        let misspelt = groq.replace("speech_model", "speech_modle");
        let error = Profile::parse(&misspelt, "groq").unwrap_err().to_string();
        assert!(error.contains("speech_modle"), "{error}");
    }

    #[test]
    fn an_unknown_vendor_lists_the_known_ones() {
        let err = Profile::named("acme").unwrap_err().to_string();
        assert!(err.contains("azure") && err.contains("voyage"), "{err}");
    }

    fn embeddings(settings: &Settings) -> &EmbeddingsSettings {
        settings.contracts.get().expect("adjusted")
    }

    #[test]
    fn azure_is_addressed_through_its_deployment() {
        let azure = Profile::named("azure").unwrap();
        assert!(!azure.fields().send_model);
        assert_eq!(
            azure.key_header().unwrap(),
            KeyHeader::parse("api-key").unwrap()
        );
        let mut settings = Settings::default();
        azure.adjust(&mut settings, false);
        assert_eq!(
            (
                embeddings(&settings).large_batch,
                embeddings(&settings).max_input_tokens
            ),
            (2048, Some(8192))
        );
        let voyage = Profile::named("voyage").unwrap();
        let mut on_loopback = Settings::default();
        voyage.adjust(&mut on_loopback, true);
        assert_eq!(embeddings(&on_loopback).large_batch, 2048);
        let mut remote = Settings::default();
        voyage.adjust(&mut remote, false);
        assert_eq!(embeddings(&remote).large_batch, 1000);
        assert_eq!(voyage.fields().name("dimensions"), "output_dimension");
    }

    /// A vendor's models route lists chat models first: its profile names the speech
    /// model, which `--speech-model` overrides.
    #[test]
    fn a_profile_names_the_speech_model_unless_the_user_does() {
        let groq = Profile::named("groq").unwrap();
        let speech = |settings: &Settings| {
            settings
                .contracts
                .get::<SpeechSettings>()
                .and_then(|s| s.model.clone())
        };
        let mut settings = Settings::default();
        groq.adjust(&mut settings, false);
        assert_eq!(speech(&settings).as_deref(), Some("whisper-large-v3"));
        let mut named = Settings::default();
        named.contracts.get_mut::<SpeechSettings>().model = Some("whisper-large-v3-turbo".into());
        groq.adjust(&mut named, false);
        assert_eq!(speech(&named).as_deref(), Some("whisper-large-v3-turbo"));
        assert!(groq.summary().contains("speech model whisper-large-v3"));
    }

    /// Each other contract's URL a profile gives (its speech route) is one
    /// `--endpoint` reads as that contract's route.
    #[test]
    fn every_contracts_endpoint_is_its_route() {
        let mut checked = 0;
        for name in Profile::names() {
            let profile = Profile::named(name).unwrap();
            for (url, route) in profile.contracts.endpoints() {
                let url = url.replace(['{', '}'], "");
                let target =
                    crate::contracts::target(&url).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    target.url(&route).as_str(),
                    url.as_str(),
                    "{name}: the clauses would not reach the documented route"
                );
                checked += 1;
            }
        }
        assert!(checked >= 6, "{checked}");
    }

    #[test]
    fn documented_deviations_become_documented_expectations() {
        let gemini = Profile::named("gemini-openai").unwrap();
        let matched = gemini
            .expectations()
            .matched("ENC-002", crate::verdict::Outcome::Fail)
            .expect("Gemini documents refusing base64");
        assert!(matched.as_expected);
        assert_eq!(
            matched.expectation.documented_by.as_deref(),
            Some("gemini-openai")
        );
        assert!(
            gemini.summary().contains("1 documented deviations"),
            "{}",
            gemini.summary()
        );
    }
}
