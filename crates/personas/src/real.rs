//! Personas of real servers, as far as `docs/contract-notes.md` (§1 matrix, §2 notes)
//! and the migration study document them.
//!
//! Each is the reference engine configured like the server (model, size, limits,
//! over-length policy) plus the quirks the sources show. Behaviour the sources do not
//! cover stays the reference server's, so a verdict that differs between two personas
//! always traces back to a cited difference.

use crate::persona::{API_KEY, Persona};
use crate::quirks::{Quirk, RerankQuirk, SpeechQuirk, Trigger};
use embedcheck_core::contracts::rerank::RerankDialect;
use reference_server::{Config, OverlengthPolicy};

/// vLLM 0.32's rerank fields typed `int` that refuse `null`.
const VLLM_INTEGERS: &[&str] = &["top_n", "max_tokens_per_doc"];

/// How long the LiteLLM personas' backend cools down after a failure: 2 s, half-way
/// between the ends of the suite's first two waits for a 429 without Retry-After (1 s,
/// then 2 s more), so every run gets the same two 429s whatever the machine's pace.
pub const COOLDOWN_MILLIS: u64 = 2000;

/// The study's model: 1024 dimensions, no `is_matryoshka` in its config.json
/// (QwenLM/Qwen3-Embedding#85), served with `--max-model-len 1024`.
const QWEN3: &str = "Qwen/Qwen3-Embedding-0.6B";

/// vLLM's refusal of `dimensions` for a model not marked Matryoshka, raised even when
/// the value equals the native size (`PoolingParams._set_default_parameters`).
const VLLM_NO_MATRYOSHKA: &str = "Model 'Qwen/Qwen3-Embedding-0.6B' does not support Matryoshka embeddings; dimensions must be unset";

/// Every real-server persona, in a stable order.
pub fn real_servers() -> Vec<Persona> {
    vec![
        openai(),
        old_fastapi(),
        dynamo_vllm(),
        vllm(),
        tei(),
        infinity(),
        llama_cpp(),
        ollama(),
        litellm(),
    ]
}

/// Personas of real rerank servers serving a cross-encoder, as measured in the lab with
/// the tiny cross-encoders (`lab/rerank/README.md`), in a stable order. Their model
/// does not embed, so the suite audits them on rerank alone.
pub fn rerank_servers() -> Vec<Persona> {
    vec![
        vllm_reranker(),
        infinity_reranker(),
        litellm_reranker(),
        litserve_reranker(),
        tei_reranker(),
    ]
}

/// NVIDIA NIM's text reranking, written from its API documentation (NeMo Retriever
/// text reranking: `POST /v1/ranking` with `{model, query: {text}, passages: [{text}]}`
/// answered `{"rankings": [{index, logit}]}`, raw logits), not measured: no NIM runs in
/// the lab. No embeddings route for a model that only ranks.
pub fn nim_reranker() -> Persona {
    in_dialect(
        rerank_only("nim_reranker", 404, "Not Found"),
        RerankDialect::Nim,
    )
}

/// Voyage's rerank API, written from its SDK's types (`RerankRequest`: `top_k`,
/// `truncation`, `return_documents`; answered under `data[]`, the document a plain
/// string) and its Python client (refusals read as `{detail}`), not measured: Voyage is
/// hosted only. At `/v1/rerank`, as Voyage's base URL gives it; no embeddings model
/// behind it here.
pub fn voyage_reranker() -> Persona {
    in_dialect(
        rerank_only("voyage_reranker", 404, "Not Found"),
        RerankDialect::Voyage,
    )
}

/// TEI 1.9 serving a cross-encoder: rerank only at `/rerank`, in TEI's dialect
/// (`{query, texts}` answered with a bare array of `{index, score}`); every
/// embeddings request answered `424 {"code":424,"message":"Backend error: Model is not
/// an embedding model","type":"Backend"}` (`router/src/http/server.rs` in
/// huggingface/text-embeddings-inference, measured in the lab); no `GET /v1/models`
/// (404, empty), the served model named at `GET /info`.
pub fn tei_reranker() -> Persona {
    let mut persona = rerank_only(
        "tei_reranker",
        424,
        "Backend error: Model is not an embedding model",
    );
    persona
        .quirks
        .extend([Quirk::ModelsListingEmpty404, Quirk::TeiInfo]);
    in_dialect(persona, RerankDialect::Tei)
}

/// A server of the lab's cross-encoder that answers every embeddings request `status`
/// with `message`.
fn rerank_only(name: &'static str, status: u16, message: &'static str) -> Persona {
    Persona {
        name,
        config: cross_encoder(OverlengthPolicy::Reject),
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            embeddings_refused(status, message),
        ],
    }
}

/// `persona` speaking `dialect`'s rerank dialect, as [`tei_reranker`], [`nim_reranker`]
/// and [`voyage_reranker`] do: the dialect's request read first (so the persona's quirks
/// see the engine's), its answer written last (after theirs). TEI's at `/rerank` only,
/// NIM's at `/v1/ranking` only, Voyage's at `/v1/rerank` only; Cohere's is the engine's.
pub fn in_dialect(mut persona: Persona, dialect: RerankDialect) -> Persona {
    use RerankQuirk::{
        BareArray, DataArray, NimDialect, RankingsOfLogits, ServedAt, TeiDialect, VoyageDialect,
    };
    let (first, last) = match dialect {
        RerankDialect::Cohere => return persona,
        RerankDialect::Tei => (
            vec![
                ServedAt(&["/rerank"]),
                TeiDialect {
                    auto_truncate: true,
                },
            ],
            BareArray,
        ),
        RerankDialect::Nim => (vec![NimDialect], RankingsOfLogits),
        RerankDialect::Voyage => (vec![ServedAt(&["/v1/rerank"]), VoyageDialect], DataArray),
    };
    let mut quirks: Vec<Quirk> = first.into_iter().map(Quirk::Rerank).collect();
    quirks.append(&mut persona.quirks);
    quirks.push(Quirk::Rerank(last));
    persona.quirks = quirks;
    persona
}

/// Every embeddings request answered `status` with `message`: a server whose model only
/// scores.
fn embeddings_refused(status: u16, message: &'static str) -> Quirk {
    Quirk::ErrorWhen {
        trigger: Trigger::EmbedPost,
        status,
        message,
    }
}

/// The lab's tiny cross-encoder: 512 positions, [CLS] q [SEP] d [SEP].
fn cross_encoder(overlength: OverlengthPolicy) -> Config {
    Config {
        model_id: "embedcheck/tiny-rerank-bert".to_owned(),
        max_input_tokens: 512,
        overlength,
        ..Config::default()
    }
}

/// vLLM 0.32 serving a cross-encoder (`--runner pooling`): `/rerank`, `/v1/rerank` and
/// `/v2/rerank`, sigmoid scores, every document echoed as `{text, multi_modal}`,
/// `top_n: null` refused, `top_k` ignored, `top_n: 0` read as all, a pair over 512
/// tokens refused with 400 for the whole request; no embeddings route for a model that
/// only scores.
pub fn vllm_reranker() -> Persona {
    Persona {
        name: "vllm_reranker",
        config: cross_encoder(OverlengthPolicy::Reject),
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            embeddings_refused(404, "Not Found"),
            Quirk::Rerank(RerankQuirk::AlwaysEchoDocuments),
            Quirk::Rerank(RerankQuirk::NullRefused(VLLM_INTEGERS)),
            Quirk::Rerank(RerankQuirk::IgnoreUnknownFields),
            Quirk::Rerank(RerankQuirk::TopNZeroAll),
            Quirk::Rerank(RerankQuirk::StringDocumentsOnly(400)),
        ],
    }
}

/// Infinity 0.0.78 serving a cross-encoder with `--url-prefix /v1`: `/v1/rerank` only,
/// sigmoid scores, `document: null` unless asked and then a bare string, `top_k`
/// ignored, long pairs truncated silently and longest first (its cross-encoder
/// tokenizes `truncation="longest_first"`, so a long query is cut too), any model name
/// served; embeddings refused 400 for a model that cannot embed.
pub fn infinity_reranker() -> Persona {
    Persona {
        name: "infinity_reranker",
        config: cross_encoder(OverlengthPolicy::Truncate),
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            embeddings_refused(
                400,
                "ModelNotDeployedError: model=`embedcheck/tiny-rerank-bert` does not support `embed`",
            ),
            Quirk::Rerank(RerankQuirk::ServedAt(&["/v1/rerank"])),
            Quirk::Rerank(RerankQuirk::NullDocument),
            Quirk::Rerank(RerankQuirk::DocumentAsString),
            Quirk::Rerank(RerankQuirk::IgnoreUnknownFields),
            Quirk::Rerank(RerankQuirk::StringDocumentsOnly(422)),
            Quirk::Rerank(RerankQuirk::QueryCutLongestFirst),
            Quirk::Rerank(RerankQuirk::AnyModel),
        ],
    }
}

/// LiteLLM 1.106.2's proxy in front of [`vllm_reranker`] (`hosted_vllm`, one
/// deployment), as measured in the lab: vLLM's rerank answers passed on (documents
/// echoed, `top_k` ignored, `top_n: 0` read as all), while `null` fields are dropped
/// before vLLM sees them; documents that are not strings answered 500
/// `APIConnectionError`; the embeddings request, which vLLM answers 404, cools the
/// deployment down, and every `POST` is answered 429 without Retry-After until it is
/// over (5 s in LiteLLM; [`COOLDOWN_MILLIS`] here, to keep the test short).
pub fn litellm_reranker() -> Persona {
    Persona {
        name: "litellm_reranker",
        config: cross_encoder(OverlengthPolicy::Reject),
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            embeddings_refused(
                404,
                "litellm.NotFoundError: Hosted_vllmException - Not Found",
            ),
            Quirk::Cooldown {
                millis: COOLDOWN_MILLIS,
            },
            Quirk::Rerank(RerankQuirk::StringDocumentsOnly(400)),
            Quirk::Rerank(RerankQuirk::NonStringDocumentsAs500),
            Quirk::Rerank(RerankQuirk::AlwaysEchoDocuments),
            Quirk::Rerank(RerankQuirk::IgnoreUnknownFields),
            Quirk::Rerank(RerankQuirk::TopNZeroAll),
        ],
    }
}

/// The lab's home-made LitServe rerank server (sentence-transformers' `CrossEncoder`
/// behind LitServe 0.2.19): `/v1/rerank` and `/rerank`, no models listing and no
/// embeddings route, `documents: []` answered 500 (`CrossEncoder.predict([])`
/// raises), a long pair cut longest first (the `CrossEncoder`'s tokenizer) and the
/// request's model name never read. Measured in the lab; audited with `--rerank-model`,
/// as nothing lists the model.
pub fn litserve_reranker() -> Persona {
    Persona {
        name: "litserve_reranker",
        config: cross_encoder(OverlengthPolicy::Truncate),
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::NoModelsRoute,
            embeddings_refused(404, "Not Found"),
            Quirk::Rerank(RerankQuirk::ServedAt(&["/v1/rerank", "/rerank"])),
            Quirk::Rerank(RerankQuirk::EmptyListAs500),
            Quirk::Rerank(RerankQuirk::NegativeTopNSlices),
            Quirk::Rerank(RerankQuirk::IgnoreUnknownFields),
            Quirk::Rerank(RerankQuirk::StringDocumentsOnly(422)),
            Quirk::Rerank(RerankQuirk::QueryCutLongestFirst),
            Quirk::Rerank(RerankQuirk::AnyModel),
        ],
    }
}

/// The bundled reference server as it is: every clause passes or skips on it.
pub fn reference() -> Persona {
    Persona {
        name: "reference",
        config: Config::default(),
        quirks: Vec::new(),
    }
}

/// OpenAI's API (contract-notes §2.1): the reference behaviour with OpenAI's sizes, a
/// key required, over-length refused (400 "maximum context length is 8192 tokens").
/// `input_type` is refused like any argument outside the schema
/// (`additionalProperties: false`; "Unrecognized request argument supplied"). Token ids
/// are read in cl100k_base, the vocabulary LangChain's default tokenises with (for the
/// ids of the client profiles' probe texts; see [`Quirk::Cl100kTokenIds`]).
///
/// No rerank route (OpenAI has no rerank API).
pub fn openai() -> Persona {
    Persona {
        name: "openai",
        config: Config {
            model_id: "text-embedding-3-small".to_owned(),
            native_dimensions: 1536,
            max_input_tokens: 8192,
            overlength: OverlengthPolicy::Reject,
            api_key: Some(API_KEY.to_owned()),
            ..Config::default()
        },
        quirks: vec![
            Quirk::ErrorWhen {
                trigger: Trigger::Field("input_type"),
                status: 400,
                message: "Unrecognized request argument supplied: input_type",
            },
            Quirk::Cl100kTokenIds,
            Quirk::Rerank(RerankQuirk::NotServed),
        ],
    }
}

/// The study's old FastAPI server (migration-study.md): `transformers` behind one
/// lock; Matryoshka `dimensions` honoured, input truncated at 1024 tokens, the query
/// instruction prepended for `input_type: "query"` or an `instruction` field, and
/// `encoding_format` ignored (always floats). Its errors are FastAPI's own, not
/// OpenAI-shaped: the default 422 `{"detail": [...]}` for bodies its pydantic model
/// refuses (inference: a home-made FastAPI app without a custom handler; the study
/// shows no error body).
pub fn old_fastapi() -> Persona {
    Persona {
        name: "old_fastapi",
        config: qwen3(OverlengthPolicy::Truncate, true),
        // Quirks act in order: fields the app never declared are gone before its
        // pydantic model validates what is left.
        quirks: vec![
            Quirk::HonourInstructionField,
            Quirk::IgnoreFields(&["encoding_format"]),
            Quirk::IgnoreUnknownFields {
                keep: &["input_type"],
            },
            Quirk::FastApiValidation,
        ],
    }
}

/// A small published embeddings server on Python's `http.server` with HTTP/1.1
/// keep-alive: its handler answers a POST to a route it does not serve (rerank among
/// them) 404 without reading the body, which the next request on the connection is
/// then parsed from: `400 Bad request syntax`, an HTML page (see
/// [`Quirk::LeavesRefusedBodyUnread`]). It embeds; it does not rerank.
pub fn python_http_server() -> Persona {
    Persona {
        name: "python_http_server",
        config: Config::default(),
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::LeavesRefusedBodyUnread,
            Quirk::Rerank(RerankQuirk::NotServed),
        ],
    }
}

/// NVIDIA Dynamo 1.6.2 with a vLLM embedding worker, as in the study
/// (migration-study.md; contract-notes §2.3): unknown fields (`input_type`) ignored,
/// `null` optionals read as absent (serde); `dimensions` and over-length refused by
/// the worker and so answered 500, as is anything else the worker refuses (an empty
/// string: inference from the same mechanism); `input: []` answered 200 with no data;
/// errors written flat; vectors off the old server's in the fourth decimal (vLLM's
/// numerics, not `transformers`': cosine 0.9998, the study's median).
///
/// No rerank route: Dynamo's vLLM backend has no rerank handler (the study).
pub fn dynamo_vllm() -> Persona {
    Persona {
        name: "dynamo_vllm",
        config: qwen3(OverlengthPolicy::Reject, false),
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::EmptyArrayEmbedded,
            Quirk::NullIsAbsent,
            Quirk::IgnoreUnknownFields { keep: &[] },
            // The frontend's axum `Json` rejection names the values but not the field,
            // as the lab's Dynamo 1.6.1 answered "bogus" (breaks ENC-005).
            Quirk::ErrorWhen {
                trigger: Trigger::UnsupportedEncodingFormat,
                status: 400,
                message: "Failed to deserialize the JSON body into the target type: unknown variant, expected `float` or `base64`",
            },
            vllm_refuses_dimensions(),
            Quirk::InStreamErrorsAs500,
            Quirk::FlatErrors,
            Quirk::DriftedVectors { cosine: 0.9998 },
            Quirk::Rerank(RerankQuirk::NotServed),
        ],
    }
}

/// vLLM's OpenAI server on its own (newest layout, contract-notes §2.2), with the
/// study's model and flags: extras ignored, `dimensions: null` read as absent
/// (`int | None`), any other `dimensions` refused for a model not marked Matryoshka, over-length refused with 400, `id`/`created`/
/// `completion_tokens` added, and the status as an integer `error.code`.
///
/// Its `/rerank` on an embedding model scores the cosine of the two embeddings, echoes
/// every document, refuses `top_n: null`, ignores `top_k` and reads `top_n: 0` as all
/// (vLLM 0.32, measured in the lab).
pub fn vllm() -> Persona {
    Persona {
        name: "vllm",
        config: qwen3(OverlengthPolicy::Reject, false),
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::NullIsAbsent,
            Quirk::IgnoreUnknownFields { keep: &[] },
            vllm_refuses_dimensions(),
            Quirk::ExtraResponseFields {
                id_prefix: "embd-",
                completion_tokens: true,
            },
            Quirk::ErrorCodeIsStatus,
            Quirk::Rerank(RerankQuirk::StringDocumentsOnly(400)),
            Quirk::Rerank(RerankQuirk::Cosine),
            Quirk::Rerank(RerankQuirk::AlwaysEchoDocuments),
            Quirk::Rerank(RerankQuirk::NullRefused(VLLM_INTEGERS)),
            Quirk::Rerank(RerankQuirk::IgnoreUnknownFields),
            Quirk::Rerank(RerankQuirk::TopNZeroAll),
        ],
    }
}

/// Hugging Face text-embeddings-inference 1.9.3 (contract-notes §2.4): any model name
/// served, extras ignored, `null` optionals read as absent (serde `Option`),
/// `--auto-truncate` on, at most 32 inputs per request
/// (`--max-client-batch-size`), flat error bodies, and axum's plain-text rejections
/// for bodies that do not parse.
///
/// Rerank only at `/rerank`, refused 424 for an embedding model (TEI's router).
pub fn tei() -> Persona {
    Persona {
        name: "tei",
        config: Config {
            model_id: "BAAI/bge-base-en-v1.5".to_owned(),
            native_dimensions: 768,
            max_batch: 32,
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::NullIsAbsent,
            Quirk::AxumRejections,
            Quirk::AnyModel,
            Quirk::IgnoreUnknownFields { keep: &[] },
            Quirk::TeiErrors,
            Quirk::ModelsListingEmpty404,
            Quirk::TeiInfo,
            Quirk::CrashOn(Trigger::TokenIdAtLeast(50_000)),
            // An embedding model: `/rerank` parses TEI's body first (422 to the Cohere
            // one), then finds no reranker loaded.
            Quirk::Rerank(RerankQuirk::ServedAt(&["/rerank"])),
            Quirk::Rerank(RerankQuirk::TeiDialect {
                auto_truncate: true,
            }),
            Quirk::Rerank(RerankQuirk::CannotRerank {
                status: 424,
                message: "model is not a re-ranker model",
            }),
        ],
    }
}

/// Infinity (contract-notes §2.5) with one engine: any model name served, extras
/// ignored, input silently truncated, `dimensions` sliced without re-normalising,
/// FastAPI's 422 `{"detail"}` for bodies pydantic
/// refuses (token ids and empty arrays included), `id`/`created` added, and integer
/// `error.code` for its own errors.
///
/// Rerank only under its `--url-prefix` (`/v1/rerank`), refused 400 for an embedding model
/// (Infinity 0.0.78, measured in the lab).
pub fn infinity() -> Persona {
    Persona {
        name: "infinity",
        config: Config {
            model_id: "michaelfeil/bge-small-en-v1.5".to_owned(),
            native_dimensions: 384,
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::FastApiValidation,
            Quirk::AnyModel,
            Quirk::IgnoreUnknownFields { keep: &[] },
            Quirk::SliceDimensions {
                suffix: false,
                renormalise: false,
            },
            Quirk::ExtraResponseFields {
                id_prefix: "infinity-",
                completion_tokens: false,
            },
            Quirk::ErrorCodeIsStatus,
            Quirk::UsageInCharacters,
            Quirk::Rerank(RerankQuirk::ServedAt(&["/v1/rerank"])),
            Quirk::Rerank(RerankQuirk::CannotRerank {
                status: 400,
                message: "ModelNotDeployedError: model=`michaelfeil/bge-small-en-v1.5` does not support `rerank`",
            }),
        ],
    }
}

/// llama.cpp's `llama-server --embeddings` (contract-notes §2.6): malformed JSON
/// answered 500 (the parse exception is not `std::invalid_argument`), any model name
/// served, `dimensions` and extras ignored, input over the 512-token ubatch answered
/// 500, errors as `{"error": {"code": <int>, "message", "type"}}`, Hangul read as
/// leading consonants only (its WordPiece tokenizer, measured in the lab), and decomposed
/// text read without the model's Unicode normaliser (the lab, with a BPE model).
///
/// Without `--reranking` every rerank route answers 501 (measured in the lab).
pub fn llama_cpp() -> Persona {
    Persona {
        name: "llama_cpp",
        config: Config {
            model_id: "nomic-embed-text-v1.5.Q8_0.gguf".to_owned(),
            native_dimensions: 768,
            overlength: OverlengthPolicy::Reject,
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::ErrorWhen {
                trigger: Trigger::MalformedJson,
                status: 500,
                message: "[json.exception.parse_error.101] parse error: syntax error while parsing value - unexpected end of input",
            },
            Quirk::AnyModel,
            Quirk::IgnoreUnknownFields { keep: &[] },
            Quirk::IgnoreFields(&["dimensions"]),
            Quirk::OverlengthAs500,
            Quirk::ErrorCodeIsStatus,
            Quirk::NoErrorParam,
            Quirk::HangulLeadingConsonants,
            Quirk::UnnormalisedUnicode,
            Quirk::Rerank(RerankQuirk::CannotRerank {
                status: 501,
                message: "This server does not support reranking. Start it with `--reranking`",
            }),
        ],
    }
}

/// Ollama 0.33's `/v1/embeddings` (contract-notes §2.7): token ids refused with 400
/// "invalid input type", `""` embedded, extras and `null` fields ignored (Go's
/// `encoding/json`), `dimensions` outside `1..native` silently ignored, input
/// truncated to the context.
pub fn ollama() -> Persona {
    Persona {
        name: "ollama",
        config: ollama_config("nomic-embed-text"),
        quirks: ollama_quirks(),
    }
}

/// LiteLLM's proxy in front of Ollama (contract-notes §2.8, BerriAI/litellm#42426):
/// Ollama's behaviour, except that `encoding_format` (which the OpenAI SDKs always
/// send) raises `UnsupportedParamsError`, which reached the client as 500; and its
/// `/rerank` and `/audio/transcriptions` answer 500 for a provider it cannot rerank or
/// transcribe with.
pub fn litellm() -> Persona {
    let refuse_encoding = Quirk::ErrorWhen {
        trigger: Trigger::Field("encoding_format"),
        status: 500,
        message: "litellm.UnsupportedParamsError: ollama does not support parameters: ['encoding_format']. To drop these, set `litellm.drop_params=True`",
    };
    // Its rerank route for a provider without a rerank transformation raises
    // `ValueError("Unsupported provider: …")`, mapped to `APIConnectionError` (500):
    // litellm/rerank_api/main.py.
    let cannot_rerank = Quirk::Rerank(RerankQuirk::CannotRerank {
        status: 500,
        message: "litellm.APIConnectionError: Unsupported provider: ollama",
    });
    Persona {
        name: "litellm",
        config: ollama_config("ollama/nomic-embed-text"),
        quirks: [
            vec![
                refuse_encoding,
                cannot_rerank,
                Quirk::Speech(SpeechQuirk::CannotTranscribe),
            ],
            ollama_quirks(),
        ]
        .concat(),
    }
}

/// A small CPU server of an asymmetric query/passage model with its own HTTP front
/// end, seen outside the lab: a bare input or `input_type: "query"` is embedded as a
/// query, `"passage"` or `"document"` as a passage (NIM documents the same default);
/// `instruction`, `task`, `prompt_name` and other unknown fields are ignored;
/// over-length input is truncated. Not in [`real_servers`]: no public source documents
/// it, so it proves the suite on a shape the lab does not have.
pub fn asymmetric_cpu() -> Persona {
    Persona {
        name: "asymmetric_cpu",
        config: Config {
            model_id: "asymmetric-small".to_owned(),
            native_dimensions: 384,
            max_input_tokens: 512,
            overlength: OverlengthPolicy::Truncate,
            query_instruction: "query: ".to_owned(),
            ..Config::default()
        },
        quirks: vec![
            Quirk::Speech(SpeechQuirk::NotServed),
            Quirk::QueryByDefault,
            Quirk::IgnoreUnknownFields {
                keep: &["input_type"],
            },
        ],
    }
}

/// [`asymmetric_cpu`] as it serves: one request at a time behind one lock, with the
/// compute of a small model on 2 CPU cores (a batch of 2048 short inputs takes about
/// 45 s, past the suite's default 30-s timeout).
pub fn serial_cpu() -> Persona {
    let mut persona = asymmetric_cpu();
    persona.name = "serial_cpu";
    persona.quirks.push(Quirk::Serial {
        per_request_ms: 2,
        per_input_ms: 18,
        per_token_us: 300,
    });
    persona
}

fn qwen3(overlength: OverlengthPolicy, matryoshka: bool) -> Config {
    Config {
        model_id: QWEN3.to_owned(),
        native_dimensions: 1024,
        max_input_tokens: 1024,
        matryoshka,
        overlength,
        ..Config::default()
    }
}

fn vllm_refuses_dimensions() -> Quirk {
    Quirk::ErrorWhen {
        trigger: Trigger::Field("dimensions"),
        status: 400,
        message: VLLM_NO_MATRYOSHKA,
    }
}

fn ollama_config(model_id: &str) -> Config {
    Config {
        model_id: model_id.to_owned(),
        native_dimensions: 768,
        max_input_tokens: 2048,
        ..Config::default()
    }
}

fn ollama_quirks() -> Vec<Quirk> {
    vec![
        Quirk::Speech(SpeechQuirk::NotServed),
        Quirk::ErrorWhen {
            trigger: Trigger::TokenIds,
            status: 400,
            message: "invalid input type",
        },
        Quirk::EmbedEmptyStrings,
        Quirk::NullIsAbsent,
        Quirk::IgnoreUnknownFields { keep: &[] },
        Quirk::IgnoreDimensionsBelowOne,
        Quirk::IgnoreDimensionsAboveNative,
        // No rerank route (ollama/ollama#3368).
        Quirk::Rerank(RerankQuirk::NotServed),
    ]
}
