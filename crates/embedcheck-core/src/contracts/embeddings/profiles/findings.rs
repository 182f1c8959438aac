//! The embeddings clients' findings, as data, and the sentence each reads as.

use super::decode::Wrong;
use crate::contracts::embeddings::facts::OverlengthPolicy;
use crate::http::Encoding;
use crate::profiles::findings::{answered, release, retried};
use crate::profiles::{Client, ContractFinding, SDK_RETRIES, Severity};

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
}

impl Call {
    fn describe(self) -> String {
        match self {
            Call::One => "one sentence".to_owned(),
            Call::Batch => "a batch of 4 documents".to_owned(),
            Call::TokenIds { text, ids } => format!("{text:?} as cl100k token ids {ids:?}"),
        }
    }
}

/// One thing an embeddings client's profile found.
#[derive(Clone, Debug)]
pub enum EmbeddingsFinding {
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
    /// What the Python SDK underneath LangChain makes of its answers (a decoding that
    /// raises or gives wrong vectors breaks LangChain too).
    ThroughSdk { finding: Box<EmbeddingsFinding> },
    /// A deciding call got no answer.
    NotProbed { call: Call, why: String },
    /// The ids could be compared with no string answer: the text was refused.
    NotCompared { text: &'static str, why: String },
}

/// LangChain's own remedies for token ids the server reads in another vocabulary.
pub(crate) const LANGCHAIN_FIX: &str = "fix: OpenAIEmbeddings(check_embedding_ctx_length=False) sends the text, or tiktoken_enabled=False splits with the model's own tokenizer and sends text";

impl ContractFinding for EmbeddingsFinding {
    fn severity(&self) -> Severity {
        match self {
            EmbeddingsFinding::ThroughSdk { finding } => finding.severity(),
            EmbeddingsFinding::Raises { .. }
            | EmbeddingsFinding::DecodeError { .. }
            | EmbeddingsFinding::WrongVectors { .. }
            | EmbeddingsFinding::TokenIdsRefused { .. }
            | EmbeddingsFinding::ForeignVocabulary { .. } => Severity::Breaks,
            EmbeddingsFinding::NotProbed { .. } | EmbeddingsFinding::NotCompared { .. } => {
                Severity::Unknown
            }
            EmbeddingsFinding::Decoded { attempts, .. } if *attempts > 1 => Severity::Warning,
            EmbeddingsFinding::RetryHazard { .. }
            | EmbeddingsFinding::EmptyTextRefused { .. }
            | EmbeddingsFinding::BatchLimit { .. } => Severity::Warning,
            EmbeddingsFinding::Overlength { policy, .. } => match policy {
                OverlengthPolicy::Reject(_) => Severity::Note,
                OverlengthPolicy::Truncate | OverlengthPolicy::Neither(_) => Severity::Warning,
            },
            EmbeddingsFinding::Decoded { .. }
            | EmbeddingsFinding::SameVocabulary { .. }
            | EmbeddingsFinding::ProbeHeld { .. } => Severity::Note,
        }
    }

    fn describe(&self, client: Client) -> String {
        let release = release(client);
        match self {
            EmbeddingsFinding::Decoded {
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
            EmbeddingsFinding::Raises {
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
            EmbeddingsFinding::DecodeError { call, error } => format!(
                "{}: answered 200, but {release}'s base64 decoding raises {error}",
                call.describe()
            ),
            EmbeddingsFinding::WrongVectors { call, wrong } => format!(
                "{}: {release} returns wrong vectors: {wrong}",
                call.describe()
            ),
            EmbeddingsFinding::TokenIdsRefused {
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
            EmbeddingsFinding::ForeignVocabulary { text, ids, cosine } => format!(
                "token ids are read in another vocabulary than OpenAI's: {text:?} as cl100k ids {ids:?}, as LangChain sends it by default, got a vector with cosine {cosine:.4} to the same text's, so every document gets an unrelated vector without an error (langchain-ai/langchain#30574); {LANGCHAIN_FIX}"
            ),
            EmbeddingsFinding::SameVocabulary { text, ids, cosine } => format!(
                "token ids are read in OpenAI's vocabulary: {text:?} as cl100k ids {ids:?} got the same text's vector (cosine {cosine:.6})"
            ),
            EmbeddingsFinding::ProbeHeld { text, ids } => format!(
                "{text:?} as cl100k ids {ids:?}, beyond most embedding models' vocabularies, was not sent (only with --aggressive: some servers abort on such ids)"
            ),
            EmbeddingsFinding::RetryHazard { clause, requests } => format!(
                "{requests} invalid requests of the audit got a status {release} retries ({clause}): it retries each twice, so such a client mistake reaches the server {} times",
                SDK_RETRIES + 1
            ),
            EmbeddingsFinding::EmptyTextRefused {
                status,
                message,
                attempts,
            } => format!(
                "embed_documents raises on an empty text: LangChain embeds it as input \"\", answered {}{}; drop empty texts before embedding",
                answered(*status, message),
                retried(*attempts)
            ),
            EmbeddingsFinding::BatchLimit { limit } => format!(
                "embed_documents of more than {limit} texts raises: LangChain sends up to 1000 inputs a request and the server refuses more than {limit}; set chunk_size={limit}"
            ),
            EmbeddingsFinding::Overlength { policy, tokens } => {
                let limit = tokens.map_or("the limit".to_owned(), |t| format!("{t} tokens"));
                let cut = match client {
                    Client::LANGCHAIN_OPENAI => "LangChain splits only at 8191 cl100k tokens",
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
            EmbeddingsFinding::ThroughSdk { finding } => format!(
                "through the Python SDK it calls: {}",
                finding.describe(Client::OPENAI_PYTHON)
            ),
            EmbeddingsFinding::NotProbed { call, why } => {
                format!("{}: no verdict, {why}", call.describe())
            }
            EmbeddingsFinding::NotCompared { text, why } => {
                format!("{text:?} as token ids could not be compared with the text: {why}")
            }
        }
    }
}
