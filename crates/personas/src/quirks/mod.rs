//! Deviations from the reference server, as data.
//!
//! A persona is the reference engine plus a list of [`Quirk`]s. Each quirk is one
//! documented behaviour of a real server (its doc comment names the source: a file
//! or issue from `docs/contract-notes.md`, or the migration study) or one deliberate
//! break of a clause. Quirks act at two points:
//! - before the engine: rewrite the request, or answer it outright;
//! - after the engine (or the quirk that answered): rewrite the answer.
//!
//! Both passes run in list order, so `[ErrorWhen{..}, FlatErrors]` answers an error
//! and then writes it flat, as one server would.
//!
//! The quirks' code follows the contracts: `embeddings/` and `rerank/`, with what both
//! use (`access`, `trigger`) here.

mod access;
mod embeddings;
mod rerank;
mod speech;
mod trigger;

pub(crate) use embeddings::success;
use embeddings::{errors, fields, request, vocabulary};

pub use rerank::RerankQuirk;
pub use speech::SpeechQuirk;
pub use trigger::Trigger;

use crate::wire::{Answer, Incoming};
use reference_server::Config;

/// One way a persona departs from the strictly conforming reference server.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quirk {
    // ---- before the engine: requests -------------------------------------------------
    /// Drops top-level fields outside OpenAI's `CreateEmbeddingRequest` (and `keep`)
    /// instead of refusing them, as request structs that ignore extras do: vLLM
    /// (`extra="allow"`, vllm/entrypoints/openai/engine/protocol.py), TEI and Dynamo
    /// (serde without `deny_unknown_fields`), Infinity (pydantic's default), Ollama (Go
    /// `encoding/json`), llama.cpp (contract-notes §1, column 2). Note that this drops
    /// `input_type`, which the reference server honours.
    IgnoreUnknownFields { keep: &'static [&'static str] },
    /// Treats an optional field sent as `null` as absent, as typed request structs do:
    /// serde's `Option<T>` (TEI, Dynamo), pydantic's `Optional[int] = None` (vLLM's
    /// `dimensions`), Go's `encoding/json`, which leaves a field at its zero value
    /// (Ollama). OpenAI refuses `dimensions: null` (sbintuitions/JMTEB#14).
    NullIsAbsent,
    /// Prepends a request's `instruction` string to every text input, as the study's
    /// old FastAPI server did (migration-study.md, "query instruction").
    HonourInstructionField,
    /// Embeds a request as a query (the engine's query instruction applied) unless its
    /// `input_type` is `"passage"` or `"document"`: the bare input is a query. NVIDIA
    /// NIM documents `query` as `input_type`'s default (contract-notes, NIM gRPC
    /// reference), and a CPU server of an asymmetric query/passage model seen outside
    /// the lab does the same with its own HTTP front end (cosine 0.9503 between the two
    /// sides of one sentence, 10 vs 9 prompt tokens). Token ids are embedded as sent.
    QueryByDefault,
    /// Embeds with the one loaded model whatever `model` says: TEI only logs a warning
    /// (router/src/http/server.rs `openai_embed`), Infinity with one engine
    /// (`EngineArray.__getitem__`), llama.cpp (contract-notes §3, EMB-ERR-04).
    AnyModel,
    /// Drops these fields before the engine sees them, as a server that never reads
    /// them: `encoding_format` on the study's old FastAPI server (floats even for
    /// `base64`; migration-study.md), `dimensions` on llama.cpp's server
    /// (ggml-org/llama.cpp#25210).
    IgnoreFields(&'static [&'static str]),
    /// Drops an integer `dimensions` below 1: Ollama applies `dimensions` only when
    /// `0 < d < len` and silently ignores 0 and negative values (openai/openai.go,
    /// ollama PR #12242).
    IgnoreDimensionsBelowOne,
    /// Drops an integer `dimensions` at or above the native size, answering the full
    /// vector: Ollama, as above; older vLLM slices `d > E` to E values (pooler).
    IgnoreDimensionsAboveNative,
    /// Rounds an integer `dimensions` in `1..native` up to a multiple of this, as a
    /// server serving only a list of Matryoshka sizes and picking the next one up
    /// (breaks DIM-002).
    RoundDimensionsUp(usize),
    /// Serves `dimensions` in `1..native` by slicing the full vector itself: its last d
    /// components when `suffix`, re-normalised when `renormalise`. Infinity's
    /// `matryososka_slice` keeps the first d without re-normalising (contract-notes
    /// §2.5), as does Dynamo's SGLang worker (§2.3).
    SliceDimensions { suffix: bool, renormalise: bool },
    /// Cuts text inputs over the configured limit to whole words within it before the
    /// engine sees them, keeping the start, or the end when `keep_end` (vLLM's
    /// `truncation_side: left`; its older docstring: "keep only the last k tokens").
    /// Keeping the start while configured to refuse is TEI 1.9.0, where
    /// `--auto-truncate false` did not parse (fixed in commit 77ee99d, v1.9.1).
    Truncate { keep_end: bool },
    /// Embeds only the first this many tokens of an input it accepts, silently, while
    /// refusing inputs over its limit: a limit that is not the one the server keeps.
    /// Ollama's bge-m3 declares and accepts 8192 tokens and embeds at most 2048 of them
    /// (ollama/ollama#14259).
    EmbedOnlyFirst(usize),
    /// Removes the over-length items of a batch before embedding the rest, so `data`
    /// has fewer items than the request had inputs (breaks LEN-004).
    DropOverlengthBatchItems,
    /// Answers `encoding_format: "float"` in base64, as a server that only checks
    /// whether the field is present (breaks ENC-001).
    FloatAsBase64,
    /// Answers base64 when the request names no `encoding_format`, as a server that
    /// took the OpenAI Python SDK's default (it asks for base64 unless told otherwise)
    /// for the API's, which is floats (breaks ENC-001).
    Base64WhenUnset,
    /// Serves any `encoding_format` other than `"base64"` as floats instead of refusing
    /// it (runpod-workers/worker-infinity-embedding#30: the field is not validated).
    LenientEncodingFormat,
    /// Embeds an empty string instead of refusing it: Ollama rewrites `""` to `[""]`
    /// and the model still sees its special tokens (middleware/openai.go); a BOS
    /// marker stands in for them.
    EmbedEmptyStrings,
    /// Replaces every non-ASCII character of the inputs with `?`, like a server that
    /// decodes text with an ASCII codec in replace mode: Korean, Japanese and Chinese
    /// inputs collapse to the same string (breaks IN-006).
    NonAsciiAsQuestionMarks,
    /// Reads text as it comes, without the tokenizer's Unicode normaliser, so a
    /// decomposed spelling (combining accents, conjoining Hangul jamo, kana voicing
    /// marks) gets other tokens than the composed one: both llama.cpp servers in the lab
    /// (llama-cpp-python 0.3.36 and llama-server from its vendored llama.cpp) with the
    /// tiny Qwen3-Embedding, whose tokenizer composes (NFC): decomposed Korean 55 tokens
    /// for 16, cosine 0.7101 to the model's vector (breaks REF-003).
    UnnormalisedUnicode,
    /// Keeps only each Hangul syllable's leading consonant, as llama.cpp's WordPiece
    /// tokenizer does after decomposing it (measured in the lab with llama-cpp-python
    /// 0.3.36 and its llama-server on all-MiniLM-L6-v2: 18 pieces for a sentence the
    /// model's tokenizer reads as 45), so "가구" and "고기" become the same input.
    HangulLeadingConsonants,
    /// Answers `status` with an OpenAI-shaped error carrying `message` when `trigger`
    /// fires, before the engine runs; the persona that uses it cites the source.
    ErrorWhen {
        trigger: Trigger,
        status: u16,
        message: &'static str,
    },
    /// Stops answering anything, for good, once `trigger` fires: every later request
    /// hangs. Hugging Face TEI 1.9.3 aborts on a token-id input that decodes to nothing,
    /// e.g. `[[999999]]` (core/src/tokenization.rs decodes ids with the server's
    /// tokenizer). Stateful, so the persona's responder applies it, not `before`.
    CrashOn(Trigger),
    /// Answers `input: []` with 200, `data: []` and model `"embedding"`: Dynamo folds an
    /// empty worker stream into `NvCreateEmbeddingResponse::empty()`
    /// (lib/llm/src/protocols/openai/embeddings/aggregator.rs `test_empty_stream`).
    EmptyArrayEmbedded,
    /// Refuses what axum's `Json` extractor cannot parse with axum's plain-text
    /// rejections: 415 without a JSON content type, 400 for a syntax error, 422 for a
    /// body that does not fit the request struct. TEI installs no custom rejection
    /// (router/src/http/server.rs; huggingface/text-embeddings-inference#50).
    AxumRejections,
    /// Refuses what pydantic cannot parse with FastAPI's default 422
    /// `{"detail": [...]}`; Infinity has no custom handler, so token ids and empty
    /// arrays get it too (fastapi_schemas/pymodels.py; michaelfeil/infinity#36).
    FastApiValidation,

    // ---- after: error answers ------------------------------------------------------
    /// Turns every 400 for a request that got past the frontend's serde parsing into
    /// 500 "Failed to fold embeddings stream": Dynamo maps any in-stream worker error to
    /// `internal_server_error` (lib/llm/src/http/service/openai.rs, `DeltaAggregator`;
    /// migration-study.md: `dimensions` and over-length answered 500; dynamo#11377).
    InStreamErrorsAs500,
    /// Answers an over-length input 500 "input (N tokens) is too large to process":
    /// llama.cpp needs the input in one ubatch and its `ex_wrapper` maps the exception
    /// to 500 (ggml-org/llama.cpp#11105, PR #7389).
    OverlengthAs500,
    /// Writes errors flat, `{"message", "type": <reason phrase>, "code": <status>}`:
    /// Dynamo's `ErrorMessage` (ai-dynamo/dynamo PR #4984).
    FlatErrors,
    /// Writes errors as TEI's flat `{"message", "code", "type"}`: 422 `Validation` for
    /// a bad request (413 before v1.9.0, commit d026d1e), 400 `Empty` for empty input
    /// (router/src/http/server.rs, router/src/lib.rs `ErrorType`).
    TeiErrors,
    /// Puts the HTTP status, an integer, in `error.code` (OpenAI: string or null): vLLM
    /// ≥ 0.10.1 (`ErrorInfo`, vllm PR #22099), Infinity's `OpenAIException`, llama.cpp's
    /// `format_error_response`.
    ErrorCodeIsStatus,
    /// Refuses over-length input with this message and no `code`, so that nothing in the
    /// refusal names the limit: Ollama with `truncate: false` says only "the input
    /// length exceeds the context length", and the limit search has to bisect. A
    /// message with no word about length breaks LEN-002.
    OverlengthRefusalSays(&'static str),
    /// Leaves `param` out of error bodies: llama.cpp's `format_error_response`.
    NoErrorParam,
    /// Answers `to` where the engine answered `from`, body unchanged: Dynamo answered
    /// 503 for a model it did not serve until PR #4984 moved it to 404.
    StatusAs { from: u16, to: u16 },
    /// Sends every error as `text/plain` with the bare message, as framework default
    /// error pages do (contract-notes §3, EMB-ERR-05/06).
    PlainTextErrors,
    /// Sends every error as an HTML page, Python's `http.server` `send_error` page (the
    /// home-made servers built on it; see `python_http.rs`): a client's exception holds
    /// markup, no message (breaks ERR-007).
    HtmlErrors,

    // ---- after: success answers ----------------------------------------------------
    /// Adds `id` (`id_prefix` + request number), `created` and, when set,
    /// `usage.completion_tokens: 0`: vLLM's `EmbeddingResponse` (`embd-`, with
    /// completion tokens) and Infinity (`infinity-`) (contract-notes §2.2.6, §2.5.6).
    ExtraResponseFields {
        id_prefix: &'static str,
        completion_tokens: bool,
    },
    /// Leaves the spec-required `model` out of success bodies (breaks RESP-001).
    DropModelField,
    /// Drops the last item of a batch answer, as an aggregator that loses a chunk
    /// would; clients zip results with inputs by position (contract-notes §2.10).
    DropLastItem,
    /// Numbers `data` from 1, as a one-based loop would (breaks RESP-003).
    IndicesFromOne,
    /// Writes the first value of the first vector as the string `"NaN"`, as a Python
    /// server does when a non-finite float meets an encoder that refuses bare NaN
    /// (breaks RESP-004).
    StringInVector,
    /// Returns each text's per-token vectors concatenated (length = tokens × native)
    /// instead of one pooled vector, as Dynamo's vLLM handler did before ai-dynamo/dynamo
    /// PR #10248; normalised here so that only the dimension clause sees it.
    PerTokenVectors,
    /// Serves success bodies with this `Content-Type` (breaks RESP-006).
    SuccessContentType(&'static str),
    /// Writes usage counts as JSON floats (`9.0`): integral values of the wrong type
    /// (breaks USE-001; the response schema accepts them).
    FloatUsage,
    /// Reports the whole input's tokens in `usage`, also where the engine embedded only
    /// the first `max_input_tokens` of them: raullenchai/Rapid-MLX#1381 truncated at 512
    /// tokens and counted the full input.
    UsageCountsWholeInput,
    /// Reports zero tokens for any input (LM Studio, per cheshire-cat-ai/core#1014).
    ZeroUsage,
    /// Reports characters, not tokens, in `usage`: Infinity's default (its usage is
    /// `len(text)` per input), as the lab's Infinity 0.0.78 showed with 799 "tokens"
    /// for a text of 799 characters (breaks USE-005).
    UsageInCharacters,
    /// Adds this many tokens per request to the usage counts, as a server that counts
    /// special tokens once per request rather than per input (breaks USE-003).
    PaddedUsage(u64),
    /// Counts this many more tokens for every character outside ASCII in an embeddings
    /// request's inputs, as a WordPiece vocabulary without the script splits it:
    /// all-MiniLM-L6-v2 under vLLM 0.32 counted 35 tokens for the 15 characters of
    /// "서울은 대한민국의 수도입니다." (the lab's `vllm` piece). Breaks no clause; the
    /// suite's token estimates must not take Korean's cost for English's.
    UsagePerCharOutsideAscii(u64),
    /// Moves every answer's vectors by noise seeded by the request number and item, as
    /// nondeterministic GPU reductions and batch composition do: each answer lands at
    /// a cosine to the exact vector between `least_cosine` and
    /// `1 - (1 - least_cosine) / 2`, varying per call, so two answers to one text
    /// differ by about twice that. At 0.99975 two answers stay above 0.9995, as bge-m3
    /// in fp16 across batch sizes does (FlagEmbedding#542), which no clause may fail.
    /// With `repeats_only`, a request's first answer stays exact, so only clauses that
    /// repeat a request see the noise: at 0.9975 it breaks CONS-001.
    NoisyAnswers {
        least_cosine: f64,
        repeats_only: bool,
    },
    /// Turns the last item of the first float answer to a batch of at least
    /// `batch_at_least` inputs to this `cosine`, once in the server's life: TEI serving
    /// a decoder model answered data[19] of a 21-input batch at cosine 0.940976 to the
    /// float answer once, which the same batch sent again did not reproduce (measured
    /// in the lab). Breaks no clause: a difference must repeat to be blamed.
    VariesOnce { batch_at_least: usize, cosine: f64 },
    /// Mixes a fixed padding-token vector into every vector of a batch answer, as a
    /// pooling that counts pad tokens does (contract-notes EMB-RSP-07: dynamo#10248,
    /// vllm#6744).
    BatchPaddingLeak,
    /// Lists each model in `GET /models` with `max_model_len: tokens`, as vLLM lists its
    /// context length (`ModelCard.max_model_len`, vllm/entrypoints/openai/protocol.py).
    AdvertiseMaxModelLen(usize),
    /// Answers `null` for every value of each item shorter than the batch's longest
    /// when that one has at least `longest_at_least` tokens: jundot/omlx#3507, where
    /// ModernBERT's padded items came back as NaN, serialised as null, in a 200.
    NullsForPaddedItems { longest_at_least: usize },
    /// Writes base64 embeddings as little-endian float64 (8 bytes a value): the bytes
    /// of a NumPy array of Python floats, which clients decode as float32 garbage
    /// (breaks ENC-002).
    Base64Float64,
    /// Writes base64 embeddings as big-endian float32, the bytes of a NumPy `>f4` array
    /// or of a big-endian host, which clients decode as little-endian garbage (breaks
    /// ENC-002).
    Base64BigEndian,
    /// Writes base64 embeddings laid out right but turned to this `cosine` from the
    /// float answer, every time: base64 computed by another path than floats (breaks
    /// ENC-002 on its values, repeatably).
    Base64Drifted { cosine: f64 },
    /// Turns every vector by the same small angle, so that each has this `cosine` to the
    /// reference engine's: the study's Dynamo + vLLM vectors differed from the old
    /// FastAPI server's (`transformers`) in the fourth decimal, cosine 0.9996 to 0.9999
    /// (migration-study.md, "The vectors matched"). A rotation stands in for the other
    /// kernels because it keeps norms, batch answers and the cosines between the
    /// server's own vectors exactly, so only a comparison with another server sees it.
    DriftedVectors { cosine: f64 },
    /// Names itself as vLLM does: `Server: uvicorn`-like on every answer and a
    /// `GET /version` page answering `{"version": version}`. Breaks nothing; a recorded
    /// baseline keeps it as the server's fingerprint, and a replay reports a change.
    Identifies {
        server: &'static str,
        version: &'static str,
    },
    /// Pools otherwise behind the same model name: each vector leans towards its text's
    /// first token (that token's vector mixed in at 1.5 times the pooled one's length),
    /// so every text lands at its own cosine near 0.55 with the right vector, as vLLM
    /// 0.32 with CLS pooling on a mean-pooling model gave 0.36–0.67 (measured in the lab).
    FirstTokenPooling,
    /// Turns the vector of every batch item at `position` or later to this `cosine`
    /// with the one its text gets alone (the [`Quirk::DriftedVectors`] turn): Ollama
    /// damaged batch items from position 16 on (ollama/ollama#6262), so small batches
    /// looked right and large indexing batches did not. Breaks CONS-006.
    DamagedFromBatchPosition { position: usize, cosine: f64 },
    /// Answers every vector cut to its first `dims` values, re-normalised: a model whose
    /// Sentence-Transformers `Dense` projection is not loaded answers the pooled width
    /// instead of the projected one (vllm-project/vllm#15509: 1024 values for
    /// Conan-embedding-v1's 1792; SGLang and Ollama likewise). Every answer has that one
    /// width, so only a comparison with the model's own vectors sees it.
    SkippedProjection { dims: usize },
    /// Multiplies every vector by `factor`: unnormalised output (Infinity and Dynamo's
    /// SGLang worker slice without renormalising, contract-notes EMB-DIM-04).
    ScaledVectors { factor: f64 },
    /// Answers every item of a batch with the first item's vector: a worker returning
    /// one constant vector, which passed Dynamo's own deploy checks (ai-dynamo/dynamo
    /// PR #14681; breaks RESP-007).
    ConstantVectors,
    /// Counts token-id input by the digits of its ids, as a server that decodes ids to
    /// text and counts characters (breaks USE-004).
    TokenIdsCountedAsDigits,
    /// Turns every vector by a fixed angle (cosine 0.99) once a request body of more
    /// than this many bytes has been seen: a long document that permanently changed
    /// the embeddings of short ones (ROCm/FastFlowLM#647; breaks CONS-004).
    ChangedAfterLongInput { bytes: usize },
    // ---- before the engine, answering with state ------------------------------------
    /// Answers about one in `every` distinct embeddings requests (its first sending
    /// only) with 429 and no Retry-After (breaks ERR-012). Which ones is decided by a
    /// hash of the request, not its arrival order, so concurrent clauses throttle the
    /// same requests on every run.
    ThrottleWithoutRetryAfter { every: u64 },
    /// Serves one request at a time, behind one lock, each taking `per_request_ms`
    /// plus `per_input_ms` an input plus `per_token_us` microseconds a token of
    /// compute; a request waits for the ones before it, and one a client gave up on is
    /// still computed. The CPU server of an asymmetric model seen outside the lab
    /// (a global inference lock, as the study's old FastAPI server had) needed about 53
    /// s for a batch of 2048 short inputs on 2 cores. Stateful, so the persona's
    /// responder applies it, not `before`.
    Serial {
        per_request_ms: u64,
        per_input_ms: u64,
        per_token_us: u64,
    },
    /// Puts its one backend in a cooldown of `millis` after a request the backend
    /// failed, as LiteLLM's router does (`_is_cooldown_required`: a backend 401, 402,
    /// 404, 408, 429 or 5xx other than an `APIConnectionError`; 5 s by default, from
    /// `DEFAULT_COOLDOWN_TIME_SECONDS`): meanwhile every `POST` is answered 429 "No
    /// deployments available for selected model" without Retry-After, while `GET
    /// /models`, which the proxy answers itself, is 200. Measured in the lab with
    /// LiteLLM 1.106.2 in front of vLLM serving a cross-encoder: the embeddings request
    /// (vLLM 404) cooled the rerank deployment down. Stateful, so the persona's
    /// responder applies it.
    Cooldown { millis: u64 },
    // ---- before the engine: requests (client profiles) -----------------------------
    /// Reads token-id input in OpenAI's vocabulary, cl100k_base (the tokenizer of
    /// `text-embedding-3-*`), as OpenAI does: a token array whose every id is in a small
    /// table (the ids of the client profiles' probe texts, such as "hello world" =
    /// [15339, 1917]) is replaced by the text it decodes to, so it gets that text's
    /// vector. Other ids keep the engine's own vocabulary: the full 100k-entry
    /// vocabulary is not bundled.
    Cl100kTokenIds,

    // ---- before the engine: hosted vendors' URLs, keys and fields -------------------
    // (sources: the vendor table of the hosted-vendors notes; each vendor persona in
    // `vendors` cites its documentation)
    /// Serves the embeddings and models resources under this path prefix, at
    /// `{prefix}/embeddings` and `{prefix}/models`, and answers 404 to any other path,
    /// the engine's own `/v1/…` and `/embeddings` included: Azure OpenAI's
    /// `/openai/deployments/{deployment}`, Gemini's `/v1beta/openai`, Cohere's
    /// `/compatibility/v1`; `/v1` for a vendor that serves no alias. Put it first: the
    /// quirks after it see the request at the engine's path.
    ServedAt(&'static str),
    /// Answers 404 to the models listing: Azure OpenAI's deployment paths have no models
    /// route, so a client must not need one.
    NoModelsRoute,
    /// Answers the models listing 404 with an empty body: TEI routes no
    /// `GET /v1/models` (`router/src/http/server.rs` in
    /// huggingface/text-embeddings-inference), and its router's fallback answers
    /// nothing more.
    ModelsListingEmpty404,
    /// Serves `GET /info` as TEI does (`get_model_info` in `router/src/http/server.rs`,
    /// measured on TEI 1.9.3 in the lab): the served `model_id`, its version and limits.
    TeiInfo,
    /// Served on Python's `http.server` with HTTP/1.1 keep-alive by a handler that
    /// answers 404 without reading the request's body: the body is read as the next
    /// request on the connection, answered `400 Bad request syntax` (see
    /// [`crate::python_http`]). A published embeddings server; breaks ERR-014.
    LeavesRefusedBodyUnread,
    /// Served on Python's `http.server`, whose handler raises on requests `trigger`
    /// fires on: the connection is closed without an answer, every other request
    /// answered (see [`crate::python_http`]).
    HandlerRaisesOn(Trigger),
    /// Answers every request `307 Temporary Redirect` to this URL, as a server behind a
    /// front that redirects (FastAPI's trailing-slash redirect, http to https on many
    /// hosts) does to a client at the wrong address.
    RedirectTo(&'static str),
    /// Answers 404 "Resource not found" to a request whose URL lacks query parameter
    /// `name` (or leaves it empty): Azure OpenAI without `api-version`
    /// (langchain-ai/langchain#14018). `value` is the one the persona's documented
    /// endpoint carries; any non-empty value is accepted.
    RequireQuery {
        name: &'static str,
        value: &'static str,
    },
    /// Reads the key from this header and never from `Authorization`: Azure OpenAI's
    /// `api-key: <key>`. A key sent as `Authorization: Bearer` is a missing key.
    KeyInHeader(&'static str),
    /// Embeds a body without `model` with the served model: on Azure OpenAI's
    /// deployment path the deployment names the model, and its documented requests
    /// omit `model`.
    ModelOptional,
    /// Reads request field `from` as the engine's `to`, and names `from` in the
    /// engine's errors about it: `output_dimension` for `dimensions` (Mistral, Voyage),
    /// `embedding_type` for `encoding_format` (Jina).
    RenamedField {
        from: &'static str,
        to: &'static str,
    },
    /// Reads `field` as the engine's `input_type`: `query` when it is `query_value`,
    /// `document` for any other value. Jina's `task` selects an adapter
    /// (`retrieval.query`, `retrieval.passage`, `text-matching`, …); the engine has two
    /// sides only, so every task but the query one embeds as a passage.
    FieldAsInputType {
        field: &'static str,
        query_value: &'static str,
    },
    /// Prepends `prefix` to every text input of a request whose `field` is `value`:
    /// Voyage's document prompt for `input_type: "document"` (its query prompt is the
    /// engine's query instruction).
    PrefixWhen {
        field: &'static str,
        value: &'static str,
        prefix: &'static str,
    },
    /// Refuses a body with a top-level field outside this list with pydantic's 422
    /// `extra_forbidden` "Extra inputs are not permitted", in FastAPI's
    /// `{"detail": [...]}`: Mistral (Gage-Technologies/mistral-go#2) and Jina
    /// (infiniflow/ragflow#11614) validate with `extra="forbid"`. The list is the
    /// vendor's whole schema, OpenAI's fields included only where the vendor has them.
    ForbidExtraFields(&'static [&'static str]),
    /// Refuses a `field` whose value is not one of `allowed` (`null` and absence pass)
    /// with pydantic's 422 `literal_error`, in FastAPI's shape: Jina's `task`.
    LiteralField {
        field: &'static str,
        allowed: &'static [&'static str],
    },

    // ---- rerank routes ----------------------------------------------------------------
    /// A departure of the rerank route (`quirks/rerank/`).
    Rerank(RerankQuirk),
    /// A departure of the speech-to-text route (`quirks/speech/`).
    Speech(SpeechQuirk),

    // ---- after: hosted vendors' error bodies ------------------------------------------
    /// Writes errors as Azure OpenAI's gateway does, `{"error": {"code": "<status>",
    /// "message"}}` with no `type` or `param`, saying "Resource not found" for 404 and
    /// "Access denied due to invalid subscription key…" for 401
    /// (assafelovic/gpt-researcher#980, langchain-ai/langchain#14018).
    AzureErrors,
    /// Writes errors flat, as Mistral does: `{"object": "error", "message", "type",
    /// "param", "code", "raw_status_code"}`, and a validation failure as
    /// `{"object": "error", "message": {"detail": [...]}, "type":
    /// "invalid_request_error", "param": null, "code": null}`
    /// (nomtek/mistralai_client_dart#44). `code` is the engine's; Mistral's numeric
    /// codes ("3051" for a model without `output_dimension`) are not modelled.
    MistralErrors,
    /// Writes errors as Jina does: a validation failure as `{"detail": "[RID: …]
    /// Validation errors in N fields", "errors": [{"field": "body -> MODEL -> name",
    /// "message", "type", "input"}]}` (infiniflow/ragflow#11614); any other error as
    /// `{"detail": "[RID: …] message"}` (inference from the same body).
    JinaErrors,
    /// Writes errors as FastAPI's `HTTPException` does, `{"detail": "message"}`: Voyage
    /// (vectorize-io/hindsight#925).
    DetailErrors,
}

impl Quirk {
    /// Rewrites the request before the engine sees it, or answers it outright.
    pub(crate) fn before(&self, request: &mut Incoming, config: &Config) -> Option<Answer> {
        match *self {
            Quirk::IgnoreUnknownFields { keep } => request::drop_unknown_fields(request, keep),
            Quirk::NullIsAbsent => request::drop_null_optionals(request),
            Quirk::HonourInstructionField => request::prepend_instruction(request),
            Quirk::QueryByDefault => fields::query_by_default(request),
            Quirk::AnyModel => request::serve_any_model(request, &config.model_id),
            Quirk::IgnoreFields(names) => request::drop_fields(request, names),
            Quirk::IgnoreDimensionsBelowOne => {
                request::drop_dimensions_where(request, |d| d < 1);
            }
            Quirk::IgnoreDimensionsAboveNative => {
                let native = config.native_dimensions as i64;
                request::drop_dimensions_where(request, |d| d >= native);
            }
            Quirk::RoundDimensionsUp(multiple) => {
                request::round_dimensions_up(request, multiple, config.native_dimensions);
            }
            Quirk::SliceDimensions { .. } => {
                let native = config.native_dimensions;
                request::drop_dimensions_where(request, |d| (1..native as i64).contains(&d));
            }
            Quirk::Truncate { keep_end } => request::truncate_texts(request, config, keep_end),
            Quirk::EmbedOnlyFirst(kept) => request::embed_only_first(request, config, kept),
            Quirk::DropOverlengthBatchItems => {
                request::drop_overlength_batch_items(request, config);
            }
            Quirk::FloatAsBase64 => request::float_as_base64(request),
            Quirk::Base64WhenUnset => request::base64_when_unset(request),
            Quirk::LenientEncodingFormat => request::drop_unless_base64(request),
            Quirk::EmbedEmptyStrings => request::embed_empty_strings(request),
            Quirk::NonAsciiAsQuestionMarks => request::non_ascii_as_question_marks(request),
            Quirk::HangulLeadingConsonants => request::hangul_leading_consonants(request),
            Quirk::UnnormalisedUnicode => request::unnormalised_unicode(request),
            Quirk::ErrorWhen {
                trigger,
                status,
                message,
            } => {
                return trigger
                    .fires(request)
                    .then(|| Answer::openai_error(status, message));
            }
            Quirk::EmptyArrayEmbedded => return request::empty_stream(request),
            Quirk::ThrottleWithoutRetryAfter { every } => {
                let due = request.is_embed_post()
                    && request.repeat == 0
                    && request.identity() % every == every - 1;
                return due.then(|| Answer::openai_error(429, "Rate limit reached for requests"));
            }
            Quirk::Cl100kTokenIds => vocabulary::cl100k_token_ids(request),
            Quirk::ServedAt(prefix) => return access::serve_at(request, prefix),
            Quirk::NoModelsRoute => return access::no_models_route(request),
            Quirk::Identifies { version, .. } if request.path == "/version" => {
                return Some(Answer::json_body(
                    200,
                    &serde_json::json!({ "version": version }),
                ));
            }
            Quirk::ModelsListingEmpty404 => return access::models_listing_empty_404(request),
            Quirk::TeiInfo => return access::tei_info(request, config),
            Quirk::RedirectTo(url) => return Some(access::redirect(url)),
            Quirk::RequireQuery { name, .. } => return access::require_query(request, name),
            Quirk::KeyInHeader(name) => access::key_in_header(request, name),
            Quirk::ModelOptional => fields::model_optional(request, &config.model_id),
            Quirk::RenamedField { from, to } => fields::rename(request, from, to),
            Quirk::FieldAsInputType { field, query_value } => {
                fields::as_input_type(request, field, query_value);
            }
            Quirk::PrefixWhen {
                field,
                value,
                prefix,
            } => fields::prefix_when(request, field, value, prefix),
            Quirk::ForbidExtraFields(known) => return fields::forbid_extra(request, known),
            Quirk::LiteralField { field, allowed } => {
                return fields::literal(request, field, allowed);
            }
            Quirk::Rerank(quirk) => return quirk.before(request, config),
            Quirk::Speech(quirk) => return quirk.before(request),
            Quirk::AxumRejections => return request::axum_rejection(request),
            Quirk::FastApiValidation => return request::fastapi_rejection(request),
            _ => {}
        }
        None
    }

    /// Rewrites the answer to `request` (as the client sent it).
    pub(crate) fn after(&self, request: &Incoming, answer: &mut Answer, config: &Config) {
        match *self {
            Quirk::InStreamErrorsAs500 => errors::in_stream_as_500(request, answer),
            Quirk::OverlengthAs500 => errors::overlength_as_500(answer, config.max_input_tokens),
            Quirk::FlatErrors => errors::flat(answer),
            Quirk::TeiErrors => errors::tei(request, answer),
            Quirk::OverlengthRefusalSays(message) => errors::overlength_says(answer, message),
            Quirk::ErrorCodeIsStatus => errors::code_is_status(answer),
            Quirk::NoErrorParam => errors::no_param(answer),
            Quirk::PlainTextErrors => errors::plain_text(answer),
            Quirk::HtmlErrors => errors::html(answer),
            Quirk::RenamedField { from, to } => fields::rename_in_error(request, answer, from, to),
            Quirk::AzureErrors => errors::azure(answer),
            Quirk::MistralErrors => errors::mistral(answer),
            Quirk::JinaErrors => errors::jina(request, answer, &config.model_id),
            Quirk::DetailErrors => errors::detail(answer),
            Quirk::StatusAs { from, to } if answer.status == from => answer.status = to,
            Quirk::Identifies { server, .. } => answer.headers.push(("server", server.to_owned())),
            Quirk::Rerank(quirk) => quirk.after(request, answer, config),
            Quirk::Speech(quirk) => quirk.after(request, answer),
            Quirk::AdvertiseMaxModelLen(tokens) => {
                success::advertise_max_model_len(request, answer, tokens)
            }
            Quirk::SuccessContentType(content_type) if success::applies(request, answer) => {
                answer.content_type = content_type.to_owned();
            }
            success_quirk => success::edit(success_quirk, request, answer, config),
        }
    }
}
