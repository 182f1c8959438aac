//! Personas of hosted embedding APIs, as their documentation (and the issues that
//! quote their answers) describes them: where the endpoint lives, which header
//! carries the key, which fields carry the size and the task, and how errors look.
//!
//! They exist so that the suite's tests can show it reaches and judges such an
//! endpoint; none plays a server whose verdict is published, so none is in
//! [`real_servers`](crate::real_servers). Each serves its documented URL only
//! ([`PersonaServer::endpoint_url`](crate::PersonaServer::endpoint_url)) and expects
//! [`API_KEY`] in its documented header. Behaviour the sources do not cover stays the
//! reference server's, as for the real servers.

use crate::persona::{API_KEY, Persona};
use crate::quirks::{Quirk, SpeechQuirk, Trigger};
use reference_server::Config;

/// The Azure OpenAI deployment the persona serves (its name is the model's, as the
/// Azure portal suggests by default).
pub const AZURE_DEPLOYMENT: &str = "text-embedding-3-small";

/// The `api-version` the Azure persona's endpoint carries (a GA version).
pub const AZURE_API_VERSION: &str = "2024-10-21";

/// Voyage's prompt for `input_type: "query"` (docs.voyageai.com/reference/embeddings-api).
pub const VOYAGE_QUERY_PROMPT: &str = "Represent the query for retrieving supporting documents: ";

/// Voyage's prompt for `input_type: "document"` (same page).
pub const VOYAGE_DOCUMENT_PROMPT: &str = "Represent the document for retrieval: ";

/// Jina's tasks (api.jina.ai/openapi.json).
pub const JINA_TASKS: &[&str] = &[
    "retrieval.query",
    "retrieval.passage",
    "text-matching",
    "classification",
    "separation",
];

/// Every vendor persona, in a stable order.
pub fn vendors() -> Vec<Persona> {
    vec![
        azure(),
        gemini_openai(),
        mistral(),
        voyage(),
        cohere_compat(),
        jina(),
    ]
}

/// Azure OpenAI, classic deployment path:
/// `POST /openai/deployments/{deployment}/embeddings?api-version=…` with the key in
/// `api-key`, a body that may omit `model`, 2048 inputs and 8192 tokens per input
/// (<https://learn.microsoft.com/en-us/azure/cognitive-services/openai/how-to/embeddings>).
/// Without `api-version` it answers 404 `{"error": {"code": "404", "message":
/// "Resource not found"}}` and to a wrong or missing key 401 "Access denied due to
/// invalid subscription key…" (<https://github.com/langchain-ai/langchain/issues/14018>,
/// <https://github.com/assafelovic/gpt-researcher/issues/980>): errors carry `code` and
/// `message`, no `type` or `param`. There is no models route. The deployment decides
/// the model, so a `model` in the body is not read (inference from the path; the
/// documentation's requests omit it). Over-length input is refused, as OpenAI's is.
/// Other deployment names answer 404 like any unknown path (real Azure says
/// `DeploymentNotFound`: not modelled).
pub fn azure() -> Persona {
    Persona {
        name: "azure",
        // Azure serves OpenAI's own models: the openai persona's engine.
        config: crate::real::openai().config,
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::ServedAt("/openai/deployments/text-embedding-3-small"),
            Quirk::RequireQuery {
                name: "api-version",
                value: AZURE_API_VERSION,
            },
            Quirk::NoModelsRoute,
            Quirk::KeyInHeader("api-key"),
            Quirk::ModelOptional,
            Quirk::AnyModel,
            Quirk::AzureErrors,
        ],
    }
}

/// Google Gemini's OpenAI-compatible API: `POST /v1beta/openai/embeddings` with the
/// Gemini key as a bearer token (<https://github.com/RooCodeInc/Roo-Code/issues/7761>
/// logs the request, <https://github.com/TuGraph-family/chat2graph/issues/203> a curl
/// call), model `gemini-embedding-001` (3072 values; 2048 tokens per input on Vertex's
/// model page). `encoding_format: "base64"` is refused with 400 (Roo-Code#7761; the
/// message here is a paraphrase). Whether `dimensions` is honoured is disputed, so it
/// stays the reference's; error bodies are unconfirmed and stay OpenAI's.
pub fn gemini_openai() -> Persona {
    Persona {
        name: "gemini_openai",
        config: Config {
            model_id: "gemini-embedding-001".to_owned(),
            native_dimensions: 3072,
            max_input_tokens: 2048,
            api_key: Some(API_KEY.to_owned()),
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::ServedAt("/v1beta/openai"),
            Quirk::ErrorWhen {
                trigger: Trigger::FieldNotOneOf {
                    name: "encoding_format",
                    allowed: &["float"],
                },
                status: 400,
                message: "Invalid value for encoding_format: only float is supported",
            },
        ],
    }
}

/// Mistral's `POST /v1/embeddings` with a bearer key
/// (<https://docs.mistral.ai/api/endpoint/embeddings>), model `codestral-embed`, whose
/// size is asked with `output_dimension` (default 1536), not `dimensions`. The schema
/// forbids extras: `dimensions`, `user` or any unknown field is 422 "Extra inputs are
/// not permitted", the pydantic detail inside a flat error
/// (<https://github.com/Gage-Technologies/mistral-go/pull/2>,
/// <https://github.com/nomtek/mistralai_client_dart/issues/44>); other errors are flat
/// `{"object": "error", "message", "type", "param", "code", "raw_status_code"}`
/// (<https://github.com/Mintplex-Labs/anything-llm/issues/5794>). `encoding_format` is
/// accepted but vectors come back as floats, `base64` included: what the Node SDK's
/// default met in anything-llm#5794, where it decoded a float array as 256 zeros
/// (inference from that report). Not modelled:
/// `output_dtype` (refused as an extra here), sizes above 1536, and Mistral's numeric
/// error codes.
pub fn mistral() -> Persona {
    Persona {
        name: "mistral",
        config: Config {
            model_id: "codestral-embed".to_owned(),
            native_dimensions: 1536,
            api_key: Some(API_KEY.to_owned()),
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::ServedAt("/v1"),
            Quirk::ForbidExtraFields(&["model", "input", "output_dimension", "encoding_format"]),
            Quirk::IgnoreFields(&["encoding_format"]),
            Quirk::RenamedField {
                from: "output_dimension",
                to: "dimensions",
            },
            Quirk::MistralErrors,
        ],
    }
}

/// Voyage AI's `POST /v1/embeddings` with a bearer key
/// (<https://docs.voyageai.com/reference/embeddings-api>), model `voyage-3.5` (1024
/// values): at most 1000 inputs; the size asked with `output_dimension`; `input_type`
/// null, `query` or `document`, which prepend "Represent the query for retrieving
/// supporting documents: " or "Represent the document for retrieval: ";
/// `encoding_format` null or `base64` only, so `"float"` is refused with 400 "Value
/// 'float' supplied for argument 'encoding_format' is not valid"
/// (<https://github.com/vectorize-io/hindsight/issues/925>,
/// <https://github.com/vectorize-io/hindsight/pull/928>). Errors are FastAPI's
/// `{"detail": "…"}` (hindsight#925). `dimensions` is refused with 400
/// (<https://github.com/fredrikburmester/streamystats/issues/420>; the message here is
/// a paraphrase, the issue shows none). Not modelled: the
/// per-request token caps, `output_dtype`, `truncation` (refused as unknown), and
/// Voyage's short list of sizes (any size up to 1024 is served).
pub fn voyage() -> Persona {
    Persona {
        name: "voyage",
        config: Config {
            model_id: "voyage-3.5".to_owned(),
            native_dimensions: 1024,
            max_batch: 1000,
            query_instruction: VOYAGE_QUERY_PROMPT.to_owned(),
            api_key: Some(API_KEY.to_owned()),
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::ServedAt("/v1"),
            Quirk::ErrorWhen {
                trigger: Trigger::Field("dimensions"),
                status: 400,
                message: "Unrecognized argument 'dimensions'; use 'output_dimension'",
            },
            Quirk::ErrorWhen {
                trigger: Trigger::FieldNotOneOf {
                    name: "encoding_format",
                    allowed: &["base64"],
                },
                status: 400,
                message: "Value 'float' supplied for argument 'encoding_format' is not valid -- accepted values are 'base64'",
            },
            Quirk::ErrorWhen {
                trigger: Trigger::FieldNotOneOf {
                    name: "input_type",
                    allowed: &["query", "document"],
                },
                status: 400,
                message: "input_type must be null, 'query' or 'document'",
            },
            Quirk::NullIsAbsent,
            Quirk::PrefixWhen {
                field: "input_type",
                value: "document",
                prefix: VOYAGE_DOCUMENT_PROMPT,
            },
            Quirk::RenamedField {
                from: "output_dimension",
                to: "dimensions",
            },
            Quirk::DetailErrors,
        ],
    }
}

/// Cohere's compatibility API: `POST /compatibility/v1/embeddings` with the Cohere key
/// as a bearer token, `encoding_format` float or base64
/// (<https://docs.cohere.com/v2/docs/compatibility-api>; the base URL is from memory,
/// not from the stored page), model `embed-v4.0` (1536 values). Everything else
/// (sizes, `input_type`, limits, errors) is unconfirmed and stays the reference's.
pub fn cohere_compat() -> Persona {
    Persona {
        name: "cohere_compat",
        config: Config {
            model_id: "embed-v4.0".to_owned(),
            native_dimensions: 1536,
            api_key: Some(API_KEY.to_owned()),
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::ServedAt("/compatibility/v1"),
        ],
    }
}

/// Jina AI's `POST /v1/embeddings` with a bearer key (<https://api.jina.ai/openapi.json>),
/// model `jina-embeddings-v3` (1024 values, `dimensions` honoured): `task` is one of
/// retrieval.query, retrieval.passage, text-matching, classification, separation
/// (`retrieval.query` embeds as the engine's query side, every other task as a
/// passage: the adapters are not modelled); `embedding_type` names the encoding;
/// `normalized`, `late_chunking` and `truncate` are accepted and have no effect here.
/// Validation fails with 422: an unknown field is `extra_forbidden`, a task outside
/// the list `literal_error`, both in Jina's `{"detail": "[RID: …] Validation errors
/// in N fields", "errors": [...]}` (<https://github.com/infiniflow/ragflow/issues/11614>).
/// `encoding_format` is accepted as OpenAI's (unconfirmed). Not modelled: 400 for an
/// unknown model (`INPUT_MODEL_NOT_FOUND`; the engine's 404 stays), 403 for balance.
pub fn jina() -> Persona {
    Persona {
        name: "jina",
        config: Config {
            model_id: "jina-embeddings-v3".to_owned(),
            native_dimensions: 1024,
            api_key: Some(API_KEY.to_owned()),
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::ServedAt("/v1"),
            Quirk::ForbidExtraFields(&[
                "model",
                "input",
                "task",
                "dimensions",
                "embedding_type",
                "encoding_format",
                "normalized",
                "late_chunking",
                "truncate",
            ]),
            Quirk::LiteralField {
                field: "task",
                allowed: JINA_TASKS,
            },
            Quirk::FieldAsInputType {
                field: "task",
                query_value: "retrieval.query",
            },
            Quirk::RenamedField {
                from: "embedding_type",
                to: "encoding_format",
            },
            Quirk::IgnoreFields(&["normalized", "late_chunking", "truncate"]),
            Quirk::JinaErrors,
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_vendor_documents_its_own_endpoint() {
        let endpoints: Vec<(&str, String)> =
            vendors().iter().map(|p| (p.name, p.endpoint())).collect();
        let expected = [
            (
                "azure",
                "/openai/deployments/text-embedding-3-small/embeddings?api-version=2024-10-21",
            ),
            ("gemini_openai", "/v1beta/openai/embeddings"),
            ("mistral", "/v1/embeddings"),
            ("voyage", "/v1/embeddings"),
            ("cohere_compat", "/compatibility/v1/embeddings"),
            ("jina", "/v1/embeddings"),
        ];
        let expected: Vec<(&str, String)> = expected
            .iter()
            .map(|(n, e)| (*n, (*e).to_owned()))
            .collect();
        assert_eq!(endpoints, expected);
    }

    #[test]
    fn the_azure_deployment_is_the_served_path() {
        assert!(azure().quirks.contains(&Quirk::ServedAt(
            "/openai/deployments/text-embedding-3-small"
        )));
        assert_eq!(AZURE_DEPLOYMENT, "text-embedding-3-small");
    }

    #[test]
    fn no_vendor_is_a_real_server() {
        let real: Vec<&str> = crate::real_servers().iter().map(|p| p.name).collect();
        for vendor in vendors() {
            assert!(!real.contains(&vendor.name), "{}", vendor.name);
        }
    }
}
