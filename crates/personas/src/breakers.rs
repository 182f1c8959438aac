//! One persona per clause that breaks that clause, ideally that one alone.
//!
//! "A clause that cannot fail is a defect": the persona tests audit every breaker and
//! demand that its clause fails. A new clause needs one line in [`BREAKERS`].

use crate::persona::{API_KEY, Persona};
use crate::quirks::{Quirk, RerankQuirk, SpeechQuirk, Trigger};
use crate::real::{COOLDOWN_MILLIS, in_dialect};
use embedcheck_core::contracts::rerank::RerankDialect;
use reference_server::{Config, OverlengthPolicy};

/// A clause ID and the persona that breaks it.
type Breaker = (&'static str, fn() -> Persona);

/// One line per clause; a comment names the real server that behaves so, where one is
/// documented.
#[rustfmt::skip]
static BREAKERS: &[Breaker] = &[
    ("RESP-001", || quirks(&[Quirk::DropModelField])),
    ("RESP-002", || quirks(&[Quirk::DropLastItem])),
    ("RESP-003", || quirks(&[Quirk::IndicesFromOne])),
    ("RESP-004", || quirks(&[Quirk::StringInVector])),
    // Dynamo's vLLM handler before PR #10248: per-token matrices.
    ("RESP-005", || quirks(&[Quirk::PerTokenVectors])),
    ("RESP-006", || quirks(&[Quirk::SuccessContentType("text/plain; charset=utf-8")])),
    // A constant-vector worker passed Dynamo's deploy checks (ai-dynamo/dynamo PR #14681).
    ("RESP-007", || quirks(&[Quirk::ConstantVectors])),
    ("IN-001", || error_when(Trigger::SingleString, 400, "'input' must be an array of strings")),
    // Azure OpenAI's historic limit: "The max number of inputs is 1" (openai-cookbook#252).
    ("IN-002", || configured(Config { max_batch: 1, ..Config::default() }, &[])),
    // Token ids answered 500: vllm#5906, microsoft/aoai-api-simulator#87.
    ("IN-003", || error_when(Trigger::TokenIds, 500, "Internal Server Error")),
    // Dynamo's empty worker stream (contract-notes §2.3).
    ("IN-004", || quirks(&[Quirk::EmptyArrayEmbedded])),
    // An empty prompt crashed vLLM's engine: vllm#7283.
    ("IN-005", || error_when(Trigger::EmptyString, 500, "Internal Server Error")),
    ("IN-006", || quirks(&[Quirk::NonAsciiAsQuestionMarks])),
    ("IN-007", || error_when(Trigger::Field("user"), 400, "Unrecognized request argument supplied: user")),
    // A server whose large batch runs it out of memory answers 500.
    ("IN-008", || error_when(Trigger::BatchOver(32), 500, "RuntimeError: CUDA out of memory")),
    // A vocabulary large enough that 999999 decodes to something: embedded, meaninglessly.
    ("IN-009", || configured(Config { vocab_size: 1_000_000, ..Config::default() }, &[])),
    // llama.cpp: inputs within the context but over the 512-token physical batch (#11105).
    ("IN-010", || error_when(Trigger::LongItemInBatch(400), 500, "input (510 tokens) is too large to process. increase the physical batch size")),
    // A refusal of a large batch that does not say the limit.
    ("IN-011", || error_when(Trigger::BatchOver(32), 400, "too many inputs in one request")),
    ("USE-001", || quirks(&[Quirk::FloatUsage])),
    // LM Studio reports zero tokens (cheshire-cat-ai/core#1014).
    ("USE-002", || quirks(&[Quirk::ZeroUsage])),
    ("USE-003", || quirks(&[Quirk::PaddedUsage(2)])),
    ("USE-004", || quirks(&[Quirk::TokenIdsCountedAsDigits])),
    ("USE-005", || quirks(&[Quirk::UsageInCharacters])),
    // Two answers to one text further apart than any GPU or fp16 noise measured.
    ("CONS-001", || quirks(&[Quirk::NoisyAnswers { least_cosine: 0.9975, repeats_only: true }])),
    ("CONS-002", || quirks(&[Quirk::BatchPaddingLeak])),
    ("CONS-003", || quirks(&[Quirk::ScaledVectors { factor: 2.0 }])),
    // Padded items answered as nulls (jundot/omlx#3507).
    ("CONS-005", || quirks(&[Quirk::NullsForPaddedItems { longest_at_least: 100 }])),
    // A long document permanently changed short ones' vectors (ROCm/FastFlowLM#647).
    ("CONS-004", || quirks(&[Quirk::ChangedAfterLongInput { bytes: 8_192 }])),
    // Items from batch position 16 on damaged (ollama/ollama#6262).
    ("CONS-006", || quirks(&[Quirk::DamagedFromBatchPosition { position: 16, cosine: 0.95 }])),
    // The study's Dynamo: any `dimensions` answered 500 (a refusal, as newest vLLM's on a
    // model not marked Matryoshka, is a policy and passes).
    ("DIM-001", || error_when(Trigger::Field("dimensions"), 500, "Internal Server Error")),
    ("DIM-002", || quirks(&[Quirk::RoundDimensionsUp(64)])),
    ("DIM-003", || quirks(&[Quirk::SliceDimensions { suffix: true, renormalise: true }])),
    // Infinity and Dynamo's SGLang worker slice without re-normalising.
    ("DIM-004", || quirks(&[Quirk::SliceDimensions { suffix: false, renormalise: false }])),
    // Ollama and llama.cpp answer dimensions above the native size with the native length.
    ("DIM-005", || quirks(&[Quirk::IgnoreDimensionsAboveNative])),
    // Ollama ignores 0 and negative dimensions.
    ("DIM-006", || quirks(&[Quirk::IgnoreDimensionsBelowOne])),
    // A refusal of dimensions that does not name the field.
    ("DIM-007", || error_when(Trigger::DimensionsAbove(256), 400, "the request is invalid")),
    // A Python proxy passing unknown kwargs on: "got an unexpected keyword argument" (litellm#6001).
    ("UNK-001", || error_when(Trigger::UnknownField { known: INSTRUCTION_FIELDS }, 500, "TypeError: create() got an unexpected keyword argument")),
    // A validator's bare 400 that names no field (ignoring them, as vLLM, TEI and Ollama
    // do, is a policy and is skipped).
    ("UNK-002", || error_when(Trigger::UnknownField { known: INSTRUCTION_FIELDS }, 400, "invalid request")),
    // Jina's `task` silently dropped, as the study's Dynamo dropped `input_type`.
    ("UNK-003", || quirks(&[Quirk::IgnoreFields(&["task"])])),
    // E5's "query: " prefix where the client declared Qwen3's instruction.
    ("UNK-004", || configured(Config { query_instruction: "query: ".to_owned(), ..Config::default() }, &[])),
    // llama.cpp: "input (N tokens) is too large to process. increase the physical batch size".
    ("LEN-001", || configured(rejecting(), &[Quirk::OverlengthAs500])),
    ("LEN-002", || quirks(&[Quirk::Truncate { keep_end: true }])),
    // TEI 1.9.0: `--auto-truncate false` ignored, so a server meant to refuse truncates.
    ("LEN-003", || configured(rejecting(), &[Quirk::Truncate { keep_end: false }])),
    ("LEN-004", || quirks(&[Quirk::DropOverlengthBatchItems])),
    // vLLM declared to aggregate, but chunked processing not enabled: it truncates.
    ("LEN-005", || configured(Config { overlength: OverlengthPolicy::Aggregate, ..Config::default() }, &[Quirk::Truncate { keep_end: false }])),
    // Inputs cut at 256 tokens while GET /models advertises 512 (Ollama's bge-m3 embeds
    // 2048 of the 8192 tokens it declares: ollama/ollama#14259).
    ("LEN-006", || configured(Config { max_input_tokens: 256, overlength: OverlengthPolicy::Truncate, ..Config::default() }, &[Quirk::AdvertiseMaxModelLen(512)])),
    ("ENC-001", || quirks(&[Quirk::FloatAsBase64])),
    ("ENC-002", || quirks(&[Quirk::Base64Float64])),
    // The study's old server ignored `encoding_format`: floats even for base64.
    ("ENC-003", || quirks(&[Quirk::IgnoreFields(&["encoding_format"])])),
    ("ENC-004", || quirks(&[Quirk::LenientEncodingFormat])),
    ("ENC-005", || error_when(Trigger::UnsupportedEncodingFormat, 400, "invalid request")),
    // llama.cpp's `ex_wrapper` answers a JSON parse exception 500.
    ("ERR-001", || error_when(Trigger::MalformedJson, 500, "parse error: unexpected end of input")),
    ("ERR-002", || error_when(Trigger::MissingInput, 500, "KeyError: 'input'")),
    ("ERR-003", || error_when(Trigger::IllTypedInput, 500, "TypeError: input must be str or list")),
    ("ERR-004", || error_when(Trigger::NotJsonContentType, 500, "cannot decode body")),
    ("ERR-005", || error_when(Trigger::WrongMethod, 500, "Internal Server Error")),
    // TEI, Infinity and llama.cpp serve any model name.
    ("ERR-006", || quirks(&[Quirk::AnyModel])),
    // A home-made server on Python's http.server: its send_error page for every error.
    ("ERR-007", || quirks(&[Quirk::HtmlErrors])),
    // Dynamo's flat error body.
    ("ERR-008", || quirks(&[Quirk::FlatErrors])),
    // The retry hazard: Dynamo before PR #4984 answered an unknown model with 503.
    ("ERR-009", || quirks(&[Quirk::StatusAs { from: 404, to: 503 }])),
    // TEI 1.9.3 aborts on token ids that decode to nothing.
    ("ERR-010", || quirks(&[Quirk::CrashOn(Trigger::TokenIdAtLeast(999_999))])),
    // A model the server does not serve answered 409 Conflict: retried twice by the SDKs.
    ("ERR-011", || quirks(&[Quirk::StatusAs { from: 404, to: 409 }])),
    ("ERR-012", || quirks(&[Quirk::ThrottleWithoutRetryAfter { every: 40 }])),
    // A Dense projection not loaded (vllm-project/vllm#15509, #39579).
    ("REF-001", || quirks(&[Quirk::SkippedProjection { dims: 192 }])),
    // vLLM 0.32 with CLS pooling on a mean-pooling model: cosine 0.36–0.67 to the
    // model's own vectors (measured in the lab); a rotation gives every text 0.6.
    ("REF-002", || quirks(&[Quirk::DriftedVectors { cosine: 0.6 }])),
    // llama.cpp's servers tokenise decomposed text without the model's NFC normaliser
    // (the lab, with the tiny Qwen3-Embedding: Korean 0.7101).
    ("REF-003", || quirks(&[Quirk::UnnormalisedUnicode])),
    // fp16 NaNs on particular valid texts answered 500 (ollama/ollama#12921).
    ("ERR-013", || error_when(Trigger::TextContains("ostéoporose"), 500, "failed to encode response: json: unsupported value: NaN")),
    // A server on Python's http.server with keep-alive, its unknown routes answered 404
    // before the body is read (`python_http`): the rerank route search trips it.
    ("ERR-014", || quirks(&[Quirk::LeavesRefusedBodyUnread, Quirk::Rerank(RerankQuirk::NotServed)])),
    ("AUTH-001", || configured(keyed(), &[Quirk::ErrorWhen { trigger: Trigger::NoCredentials, status: 500, message: "KeyError: 'authorization'" }])),
    // Rerank. TEI's and SGLang's bare array of {index, score} (rerank-notes §1).
    ("RRS-001", || rerank(&[RerankQuirk::BareArray])),
    ("RRS-002", || rerank(&[RerankQuirk::IndexPastTheEnd])),
    ("RRS-003", || rerank(&[RerankQuirk::ScoresAsStrings])),
    ("RRS-004", || rerank(&[RerankQuirk::InputOrder])),
    ("RRS-005", || rerank(&[RerankQuirk::IgnoreTopN])),
    // Sorted results zipped with the documents in input order.
    ("RRS-006", || rerank(&[RerankQuirk::AlwaysEchoDocuments, RerankQuirk::DocumentsInInputOrder])),
    // vLLM 0.32 refuses `top_n: null` (measured; Dify sends it, langgenius/dify#14140).
    ("RRS-007", || rerank(&[RerankQuirk::NullRefused(&["top_n"])])),
    ("RRS-008", || rerank(&[RerankQuirk::UnknownFieldAs500])),
    // TEI serves `/rerank` alone (huggingface/text-embeddings-inference#683).
    ("RRS-009", || rerank(&[RerankQuirk::ServedAt(&["/rerank"])])),
    // Infinity 0.0.78: `document: null` unless asked (measured in the lab).
    ("RRS-010", || rerank(&[RerankQuirk::NullDocument])),
    // LiteLLM answers documents that are not strings with 500 (measured).
    ("RRS-011", || rerank(&[RerankQuirk::NonStringDocumentsAs500])),
    // Infinity and llama-server answer /v2/rerank 404 (measured).
    ("RRS-012", || rerank(&[RerankQuirk::ServedAt(&["/v1/rerank", "/rerank"])])),
    // llama-server reads no return_documents (measured).
    ("RRS-013", || rerank(&[RerankQuirk::NeverEchoDocuments])),
    // A home-made handler that looks the name up in a dict (`MODELS[request.model]`).
    ("RRS-014", || error_when(Trigger::RerankModel("rerank-english-v3.0"), 500, "KeyError: 'rerank-english-v3.0'")),
    ("RRS-015", || rerank(&[RerankQuirk::UsageAsStrings])),
    ("RRQ-001", || rerank(&[RerankQuirk::PositionDependent])),
    ("RRQ-002", || rerank(&[RerankQuirk::NeighbourDependent])),
    ("RRQ-003", || rerank(&[RerankQuirk::NoiseOnRepeat])),
    // llama-server scored three copies -0.0921, -0.0921, -0.0884 (measured).
    ("RRQ-004", || rerank(&[RerankQuirk::DuplicatesApart])),
    // llama-server and SGLang answer raw logits (measured).
    ("RRQ-005", || rerank(&[RerankQuirk::Logits])),
    ("RRQ-006", || rerank(&[RerankQuirk::MisattributedScores])),
    // llama-server's BERT conversion drops the pooler: scores off the model's (measured).
    ("RRQ-007", || rerank(&[RerankQuirk::DriftedScores(0.03)])),
    // The home-made LitServe server: `CrossEncoder.predict([])` raises (measured).
    ("RRL-001", || rerank(&[RerankQuirk::EmptyListAs500])),
    ("RRL-002", || rerank(&[RerankQuirk::EmptyDocumentAs500])),
    // A handler whose check on top_n raises instead of refusing.
    ("RRL-003", || rerank(&[RerankQuirk::TopNZeroAs500])),
    // llama-server: a pair over the batch answered 500 (measured).
    ("RRL-004", || configured(rejecting(), &[Quirk::Rerank(RerankQuirk::LongAs500)])),
    // SGLang 0.5.23 on CPU failed on 1000 documents, a tensor size mismatch (measured).
    ("RRL-005", || error_when(Trigger::RerankDocumentsAtLeast(1000), 500, "RuntimeError: The size of tensor a (4096) must match the size of tensor b (4109)")),
    // LiteLLM answers documents that are not strings with 500 (measured).
    ("RRL-006", || rerank(&[RerankQuirk::MistakesAs500])),
    // LiteLLM 1.106.2: the embeddings 404 cools its only deployment down, and rerank
    // requests get 429 without Retry-After meanwhile (measured).
    ("RRL-007", || quirks(&[
        Quirk::ErrorWhen { trigger: Trigger::EmbedPost, status: 404, message: "Not Found" },
        Quirk::Cooldown { millis: COOLDOWN_MILLIS },
    ])),
    // A refusal of an input past the limit that says nothing of length.
    ("RRL-008", || configured(rejecting(), &[Quirk::Rerank(RerankQuirk::LongRefusedSaying("Invalid request"))])),
    // Infinity's cross-encoder truncates a pair longest first, cutting a long query.
    ("RRL-009", || rerank(&[RerankQuirk::QueryCutLongestFirst])),
    // TEI 1.9.3 refuses what its parser cannot read with axum's plain text (measured).
    ("RRL-010", || in_tei(&[])),
    // The home-made LitServe server reads top_n -1 as results[:-1] (measured).
    ("RRL-011", || rerank(&[RerankQuirk::NegativeTopNSlices])),
    // A server reading TEI's request but not raw_scores: probabilities either way.
    ("RRD-001", || in_tei(&[RerankQuirk::LogitsAsProbabilities])),
    // llama.cpp's TEI mode reads no truncate and cuts nothing: a long pair refused
    // however it is asked.
    ("RRD-002", || {
        let mut persona = in_tei(&[]);
        persona.quirks[1] = Quirk::Rerank(RerankQuirk::TeiDialect { auto_truncate: false });
        persona.quirks.insert(1, Quirk::Rerank(RerankQuirk::Ignores(&["truncate"])));
        persona
    }),
    // llama.cpp's TEI mode answers errors in its own envelope, not TEI's.
    ("RRD-003", || in_tei(&[RerankQuirk::ErrorsInOpenAiBody])),
    // A transcript answered as plain text where JSON was asked for.
    ("SPS-001", || quirks(&[Quirk::Speech(SpeechQuirk::JsonAsPlainText)])),
    // vLLM 0.32 answers response_format text with the JSON envelope (vllm#49095).
    ("SPS-002", || quirks(&[Quirk::Speech(SpeechQuirk::TextAsJson)])),
    // vLLM 0.32 answers verbose_json with no_speech_prob null.
    ("SPS-003", || quirks(&[Quirk::Speech(SpeechQuirk::NullNoSpeechProb)])),
    // whisper.cpp's server prints negative cue times on a model it takes for
    // distil-whisper.
    ("SPS-004", || quirks(&[Quirk::Speech(SpeechQuirk::NegativeCueTimes)])),
    ("SPS-005", || quirks(&[Quirk::Speech(SpeechQuirk::NegativeCueTimes)])),
    // vLLM 0.32 without PyAV refuses 8 kHz stereo as an unsupported file.
    ("SPS-006", || quirks(&[Quirk::Speech(SpeechQuirk::SixteenKilohertzMonoOnly)])),
    ("SPS-007", || quirks(&[Quirk::Speech(SpeechQuirk::ChatChunkStream)])),
    // vLLM 0.32 answers response_format text with the JSON envelope on translations
    // as on transcriptions (measured in the lab, 2026-12-05).
    ("SPS-008", || quirks(&[Quirk::Speech(SpeechQuirk::TextAsJson)])),
    // audio.cpp reads every upload as WAV and answers an MP3 500 (audio.cpp#44).
    ("SPS-009", || quirks(&[Quirk::Speech(SpeechQuirk::WavOnly)])),
    // vLLM cpu 0.32 with the lab's tiny Whisper: verbose_json with an empty text.
    ("SPS-010", || quirks(&[Quirk::Speech(SpeechQuirk::EmptyVerboseJson)])),
    // Mistral's transcriptions answer a chat completion's usage (genai-prices#591).
    ("SPS-011", || quirks(&[Quirk::Speech(SpeechQuirk::ChatCompletionUsage)])),
    // vLLM's diarized_json: integer ids, no type, no task, a string duration.
    ("SPS-012", || {
        let config = Config {
            model_id: "gpt-4o-transcribe-diarize".to_owned(),
            ..Config::default()
        };
        configured(config, &[Quirk::Speech(SpeechQuirk::DiarizedAsVllm)])
    }),
    // speaches answers words null (speaches#639).
    ("SPO-001", || quirks(&[Quirk::Speech(SpeechQuirk::WordsNull)])),
    // speaches reads the list only by the bracketed alias (speaches#379).
    ("SPO-002", || quirks(&[Quirk::Speech(SpeechQuirk::BareListNameIgnored)])),
    // LiteLLM in front of OpenAI's gpt-4o-transcribe drops logprobs (litellm PR #36009).
    ("SPO-003", || {
        let config = Config {
            model_id: "gpt-4o-transcribe".to_owned(),
            ..Config::default()
        };
        configured(config, &[Quirk::Speech(SpeechQuirk::LogprobsDropped)])
    }),
    // faster-whisper-server answers 500 to a file it cannot decode.
    ("SPE-001", || quirks(&[Quirk::Speech(SpeechQuirk::RefusalsAs500)])),
    // whisper.cpp's server refuses with 400 text/plain "Invalid request", and has no
    // translations route.
    ("SPE-002", || {
        quirks(&[
            Quirk::Speech(SpeechQuirk::PlainTextRefusals),
            Quirk::Speech(SpeechQuirk::NoTranslations),
        ])
    }),
    // faster-whisper-server answers 500 to a 26 MiB upload.
    ("SPE-003", || quirks(&[Quirk::Speech(SpeechQuirk::RefusalsAs500)])),
    // faster-whisper-server 0.0.3 answers language=english (and xx) 500 text/plain
    // (speech-notes.md §3.2).
    ("SPE-004", || quirks(&[Quirk::Speech(SpeechQuirk::RefusalsAs500)])),
    // faster-whisper-server 0.0.3 ignores `model` and transcribes with the model it
    // started with (its form field is model_name).
    ("SPR-001", || quirks(&[Quirk::Speech(SpeechQuirk::AnotherModel)])),
];

/// The persona that breaks `clause_id`, named after it.
pub fn breaker(clause_id: &str) -> Option<Persona> {
    let (id, make) = BREAKERS.iter().find(|(id, _)| *id == clause_id)?;
    Some(Persona { name: id, ..make() })
}

/// The clauses [`breaker`] has a persona for, in table order.
pub fn broken_clauses() -> impl Iterator<Item = &'static str> {
    BREAKERS.iter().map(|(id, _)| *id)
}

fn configured(config: Config, quirks: &[Quirk]) -> Persona {
    Persona {
        name: "breaker",
        config,
        quirks: quirks.to_vec(),
    }
}

/// The vendor fields that ask for query treatment, which the reference server honours
/// (`input_type`) or refuses by name.
const INSTRUCTION_FIELDS: &[&str] = &["input_type", "instruction", "task", "prompt_name"];

/// The reference configuration refusing over-length input.
fn rejecting() -> Config {
    Config {
        overlength: OverlengthPolicy::Reject,
        ..Config::default()
    }
}

/// The reference configuration with a key required.
fn keyed() -> Config {
    Config {
        api_key: Some(API_KEY.to_owned()),
        ..Config::default()
    }
}

fn quirks(quirks: &[Quirk]) -> Persona {
    configured(Config::default(), quirks)
}

fn rerank(rerank_quirks: &[RerankQuirk]) -> Persona {
    let all: Vec<Quirk> = rerank_quirks.iter().copied().map(Quirk::Rerank).collect();
    quirks(&all)
}

/// The reference speaking TEI's rerank dialect, with these rerank quirks between its
/// request and its answer.
fn in_tei(rerank_quirks: &[RerankQuirk]) -> Persona {
    in_dialect(rerank(rerank_quirks), RerankDialect::Tei)
}

fn error_when(trigger: Trigger, status: u16, message: &'static str) -> Persona {
    quirks(&[Quirk::ErrorWhen {
        trigger,
        status,
        message,
    }])
}
