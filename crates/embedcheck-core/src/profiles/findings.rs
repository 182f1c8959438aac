//! What a profile found, as data, and the one sentence each finding reads as.

use super::decode::Wrong;
use super::{Client, SDK_RETRIES};
use crate::http::Encoding;
use crate::session::facts::OverlengthPolicy;

/// Which of a client's default calls a finding is about.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Call {
    /// `create(model=…, input=<one sentence>)`.
    One,
    /// `create(model=…, input=<four documents>)`.
    Batch,
    /// LangChain's `embed_query(text)`: the text's cl100k token ids.
    TokenIds {
        text: &'static str,
        ids: &'static [u32],
    },
    /// The same text as a string, through the SDK's default request.
    Text { text: &'static str },
    /// LangChain's `input: ""` call for an empty text.
    EmptyText,
}

impl Call {
    fn describe(self) -> String {
        match self {
            Call::One => "one sentence".to_owned(),
            Call::Batch => "a batch of 4 documents".to_owned(),
            Call::TokenIds { text, ids } => format!("{text:?} as cl100k token ids {ids:?}"),
            Call::Text { text } => format!("{text:?} as a string"),
            Call::EmptyText => "an empty text (input \"\")".to_owned(),
        }
    }
}

/// How much a finding weighs: the order of a profile's reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The client fails with its defaults: an error or wrong vectors.
    Breaks,
    /// A deciding request got no answer: no verdict.
    Unknown,
    /// Works, but a user should know.
    Warning,
    /// How the client gets its vectors.
    Note,
}

/// One thing a profile found.
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// The call was answered and the client decodes the vectors of its inputs.
    Decoded {
        call: Call,
        /// How the embeddings came (base64 strings, or float arrays for base64).
        encoding: Option<Encoding>,
        /// The lowest cosine to the float answer of the same inputs.
        cosine: f64,
        /// Attempts it took: more than 1 when a retry recovered.
        attempts: u32,
    },
    /// The call was answered `status`: the client raises after `attempts` attempts.
    Raises {
        call: Call,
        status: u16,
        message: Option<String>,
        attempts: u32,
    },
    /// Answered 2xx, but the client's decoder raises `error`.
    DecodeError { call: Call, error: String },
    /// The client returns values that are not the vectors of its inputs.
    WrongVectors { call: Call, wrong: Wrong },
    /// LangChain's token ids were answered `status`: it raises.
    TokenIdsRefused {
        text: &'static str,
        ids: &'static [u32],
        status: u16,
        message: Option<String>,
        attempts: u32,
        /// The same text as a string was refused too: the refusal is not about ids.
        text_refused_too: bool,
    },
    /// Token ids come back with a vector unlike the same text's: the server reads them in
    /// its own vocabulary, not cl100k (langchain-ai/langchain#30574).
    ForeignVocabulary {
        text: &'static str,
        ids: &'static [u32],
        cosine: f64,
    },
    /// Token ids come back with the vector of the same text.
    SameVocabulary {
        text: &'static str,
        ids: &'static [u32],
        cosine: f64,
    },
    /// A probe whose ids are beyond most embedding models' vocabularies, not sent
    /// without `--aggressive` (Hugging Face TEI 1.9.3 aborts on such ids).
    ProbeHeld {
        text: &'static str,
        ids: &'static [u32],
    },
    /// This many invalid requests of the audit got a status the SDKs retry (the
    /// failure of `clause`: ERR-011, or ERR-009 for 5xx).
    RetryHazard {
        clause: &'static str,
        requests: usize,
    },
    /// LangChain's `input: ""` call for an empty text is refused.
    EmptyTextRefused {
        status: u16,
        message: Option<String>,
        attempts: u32,
    },
    /// The server refuses batches above `limit`; LangChain sends up to 1000 inputs.
    BatchLimit { limit: usize },
    /// How the server treats over-length input, which no profiled client cuts to the
    /// server's limit.
    Overlength {
        policy: OverlengthPolicy,
        tokens: Option<u64>,
    },
    /// A clause failed that matters to this client for `why`.
    ClauseFailed {
        id: String,
        reason: String,
        why: &'static str,
    },
    /// What the Python SDK underneath LangChain makes of its answers (a decoding that
    /// raises or gives wrong vectors breaks LangChain too).
    ThroughSdk { finding: Box<Finding> },
    /// A deciding call got no answer.
    NotProbed { call: Call, why: String },
    /// The rerank client's request to `path` was answered `status`: it raises.
    RerankRaises {
        path: &'static str,
        status: u16,
        message: Option<String>,
    },
    /// Answered 200, but the rerank client raises or returns another ranking than the
    /// server's scores give, for `why`.
    RerankWrong { path: &'static str, why: String },
    /// The rerank client reads the server's ranking, `results` documents of it.
    RerankRead { path: &'static str, results: usize },
    /// The client filters on a threshold set on Cohere's [0, 1] scale, and the server's
    /// scores are on another.
    RerankThreshold {
        scale: crate::session::facts::ScoreScale,
    },
    /// The rerank client's request got no answer.
    RerankNotProbed { path: &'static str, why: String },
    /// The ids could be compared with no string answer: the text was refused.
    NotCompared { text: &'static str, why: String },
    /// One of a client's calls, worded by its contract's folder (`transcribe speech.wav
    /// with response_format "srt"`), and what the client made of the answer.
    Called { call: String, made: Made },
}

/// What a client made of the answer to one call ([`Finding::Called`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Made {
    /// It returns what the call asks for: `what`.
    Read { what: String },
    /// Answered `status`: it raises, after `attempts` attempts.
    Raises {
        status: u16,
        message: Option<String>,
        attempts: u32,
    },
    /// Answered 2xx, but it returns the wrong thing or raises: `why`.
    Misread { why: String },
    /// A call its users make with an option, or a refusal's wording: works with the
    /// defaults, but a user should know `why`.
    Warn { why: String },
    /// The call got no answer: `why`.
    NoAnswer { why: String },
}

/// LangChain's own remedies for token ids the server reads in another vocabulary.
pub(crate) const LANGCHAIN_FIX: &str = "fix: OpenAIEmbeddings(check_embedding_ctx_length=False) sends the text, or tiktoken_enabled=False splits with the model's own tokenizer and sends text";

impl Finding {
    pub fn severity(&self) -> Severity {
        match self {
            Finding::ThroughSdk { finding } => finding.severity(),
            Finding::Raises { .. }
            | Finding::RerankRaises { .. }
            | Finding::RerankWrong { .. }
            | Finding::DecodeError { .. }
            | Finding::WrongVectors { .. }
            | Finding::TokenIdsRefused { .. }
            | Finding::ForeignVocabulary { .. } => Severity::Breaks,
            Finding::NotProbed { .. }
            | Finding::NotCompared { .. }
            | Finding::RerankNotProbed { .. } => Severity::Unknown,
            Finding::RerankThreshold { .. } => Severity::Warning,
            Finding::Called { made, .. } => match made {
                Made::Raises { .. } | Made::Misread { .. } => Severity::Breaks,
                Made::NoAnswer { .. } => Severity::Unknown,
                Made::Warn { .. } => Severity::Warning,
                Made::Read { .. } => Severity::Note,
            },
            Finding::RerankRead { .. } => Severity::Note,
            Finding::Decoded { attempts, .. } if *attempts > 1 => Severity::Warning,
            Finding::RetryHazard { .. }
            | Finding::EmptyTextRefused { .. }
            | Finding::BatchLimit { .. }
            | Finding::ClauseFailed { .. } => Severity::Warning,
            Finding::Overlength { policy, .. } => match policy {
                OverlengthPolicy::Reject(_) => Severity::Note,
                OverlengthPolicy::Truncate | OverlengthPolicy::Neither(_) => Severity::Warning,
            },
            Finding::Decoded { .. }
            | Finding::SameVocabulary { .. }
            | Finding::ProbeHeld { .. } => Severity::Note,
        }
    }

    /// The finding as one sentence about `client`.
    pub fn describe(&self, client: Client) -> String {
        let release = format!("{} {}", client.name(), client.version());
        let retried = |attempts: u32| match attempts {
            1 => String::new(),
            n => format!(" after {n} attempts ({} retries)", n - 1),
        };
        let answered = |status: u16, message: &Option<String>| match message {
            Some(m) => {
                let flat = m.split_whitespace().collect::<Vec<_>>().join(" ");
                format!("{status} \"{}\"", crate::http::excerpt::cut(&flat, 120))
            }
            None => status.to_string(),
        };
        match self {
            Finding::Decoded {
                call,
                encoding,
                cosine,
                attempts,
            } => {
                let how = match encoding {
                    Some(Encoding::Float) => format!(
                        "float arrays for the base64 request, which {release} passes through:"
                    ),
                    _ => "base64 float32 strings, decoded to".to_owned(),
                };
                let recovered = match attempts {
                    1 => String::new(),
                    n => format!("; only after {n} attempts, the retries recovering from errors"),
                };
                format!(
                    "{}: {how} the float vectors (cosine {cosine:.6}){recovered}",
                    call.describe()
                )
            }
            Finding::Raises {
                call,
                status,
                message,
                attempts,
            } => format!(
                "{}: answered {}; {release} raises{}",
                call.describe(),
                answered(*status, message),
                retried(*attempts)
            ),
            Finding::DecodeError { call, error } => format!(
                "{}: answered 200, but {release}'s base64 decoding raises {error}",
                call.describe()
            ),
            Finding::WrongVectors { call, wrong } => format!(
                "{}: {release} returns wrong vectors: {wrong}",
                call.describe()
            ),
            Finding::TokenIdsRefused {
                text,
                ids,
                status,
                message,
                attempts,
                text_refused_too,
            } => {
                let sent = format!(
                    "{text:?} as cl100k ids {ids:?}, as LangChain sends it by default, was answered {}",
                    answered(*status, message)
                );
                let raises = format!("{release} raises{}", retried(*attempts));
                if *text_refused_too {
                    format!(
                        "{sent}, and so was the same text as a string through the SDK: {raises}, whatever the input form"
                    )
                } else {
                    format!("token ids are refused: {sent}; {raises}; {LANGCHAIN_FIX}")
                }
            }
            Finding::ForeignVocabulary { text, ids, cosine } => format!(
                "token ids are read in another vocabulary than OpenAI's: {text:?} as cl100k ids {ids:?}, as LangChain sends it by default, got a vector with cosine {cosine:.4} to the same text's, so every document gets an unrelated vector without an error (langchain-ai/langchain#30574); {LANGCHAIN_FIX}"
            ),
            Finding::SameVocabulary { text, ids, cosine } => format!(
                "token ids are read in OpenAI's vocabulary: {text:?} as cl100k ids {ids:?} got the same text's vector (cosine {cosine:.6})"
            ),
            Finding::ProbeHeld { text, ids } => format!(
                "{text:?} as cl100k ids {ids:?}, beyond most embedding models' vocabularies, was not sent (only with --aggressive: some servers abort on such ids)"
            ),
            Finding::RetryHazard { clause, requests } => format!(
                "{requests} invalid requests of the audit got a status {release} retries ({clause}): it retries each twice, so such a client mistake reaches the server {} times",
                SDK_RETRIES + 1
            ),
            Finding::EmptyTextRefused {
                status,
                message,
                attempts,
            } => format!(
                "embed_documents raises on an empty text: LangChain embeds it as input \"\", answered {}{}; drop empty texts before embedding",
                answered(*status, message),
                retried(*attempts)
            ),
            Finding::BatchLimit { limit } => format!(
                "embed_documents of more than {limit} texts raises: LangChain sends up to 1000 inputs a request and the server refuses more than {limit}; set chunk_size={limit}"
            ),
            Finding::Overlength { policy, tokens } => {
                let limit = tokens.map_or("the limit".to_owned(), |t| format!("{t} tokens"));
                let cut = match client {
                    Client::LangChainOpenAi => "LangChain splits only at 8191 cl100k tokens",
                    _ => "the SDK sends inputs as given",
                };
                match policy {
                    OverlengthPolicy::Reject(status) => {
                        format!("inputs over {limit} are refused with {status} ({cut})")
                    }
                    OverlengthPolicy::Truncate => format!(
                        "inputs over {limit} are silently truncated: text past the limit does not reach the vector ({cut})"
                    ),
                    OverlengthPolicy::Neither(status) => format!(
                        "inputs over {limit} are answered {status} ({cut}){}",
                        if *status >= 500 {
                            format!("; {release} sends each {} times", SDK_RETRIES + 1)
                        } else {
                            String::new()
                        }
                    ),
                }
            }
            Finding::ClauseFailed { id, reason, why } => {
                format!(
                    "{id} failed ({}): {why}",
                    crate::http::excerpt::cut(reason, 160)
                )
            }
            Finding::ThroughSdk { finding } => format!(
                "through the Python SDK it calls: {}",
                finding.describe(Client::OpenAiPython)
            ),
            Finding::NotProbed { call, why } => {
                format!("{}: no verdict, {why}", call.describe())
            }
            Finding::NotCompared { text, why } => {
                format!("{text:?} as token ids could not be compared with the text: {why}")
            }
            Finding::RerankRaises {
                path,
                status,
                message,
            } => format!(
                "rerank of 5 documents: POST {path} answered {}; {release} {} (its documented base URL gives this path)",
                answered(*status, message),
                match client {
                    Client::OpenWebUi =>
                        "catches the error and returns the documents unreranked, without an error",
                    _ => "raises",
                }
            ),
            Finding::RerankWrong { path, why } => {
                format!("rerank of 5 documents at {path}: answered 200, but {release} {why}")
            }
            Finding::RerankRead { path, results } => format!(
                "rerank of 5 documents at {path}: {release} reads the server's ranking ({results} results)"
            ),
            Finding::RerankThreshold { scale } => format!(
                "its relevance threshold is set on Cohere's [0, 1] scale, and the server's scores are {scale}: a threshold keeps all documents or none"
            ),
            Finding::RerankNotProbed { path, why } => {
                format!("rerank of 5 documents at {path}: no verdict, {why}")
            }
            Finding::Called { call, made } => match made {
                Made::Read { what } => format!("{call}: {release} returns {what}"),
                Made::Raises {
                    status,
                    message,
                    attempts,
                } => format!(
                    "{call}: answered {}; {release} raises{}",
                    answered(*status, message),
                    retried(*attempts)
                ),
                Made::Misread { why } => format!("{call}: answered 2xx, but {release} {why}"),
                Made::Warn { why } => format!("{call}: {why}"),
                Made::NoAnswer { why } => format!("{call}: no verdict, {why}"),
            },
        }
    }
}
