//! LangChain's `OpenAIEmbeddings` profile (langchain-openai 1.7.4 on openai-python
//! 3.57.0), with every default: `check_embedding_ctx_length=True` and
//! `tiktoken_enabled=True`.
//!
//! `embed_documents` then tokenises each text with tiktoken (cl100k_base for any model
//! name tiktoken does not know, which is every non-OpenAI model) and sends the token ids
//! (`input: [[int], …]`, up to `chunk_size=1000` inputs a request) through the SDK, which
//! adds `encoding_format: "base64"`; it reads `data` in order, and embeds a text with no
//! tokens separately as `input: ""` (`_get_len_safe_embeddings` in
//! `langchain_openai/embeddings/base.py`). A server reading token ids in its own
//! vocabulary gives every document an unrelated vector without any error: against vLLM
//! 0.32 serving all-MiniLM-L6-v2, "hello world" as cl100k ids [15339, 1917] got a vector
//! with cosine 0.13 to the text's (langchain-ai/langchain#30574).
//!
//! So the profile sends the cl100k ids of short probe texts, exactly as `embed_query`
//! does, and compares each vector with the same text sent as a string by the SDK, at the
//! server's own noise.

use super::decode::{self, Decoded, Decoder, Wrong};
use super::sdk::{self, DefaultCalls, send_as_sdk};
use super::{Call, EmbeddingsFinding};
use crate::contracts::embeddings::facts::{BatchLimit, EmbeddingsFacts, Noise};
use crate::contracts::embeddings::requests;
use crate::http::{Body, Exchange};
use crate::profiles::{Client, ClientProfile, Finding, Judged, add_evidence, no_answer};
use crate::session::Session;
use crate::vectors::cosine;
use serde_json::json;

/// A probe text and its cl100k_base token ids (computed once with tiktoken 0.14.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cl100kProbe {
    pub text: &'static str,
    pub ids: &'static [u32],
    /// Every id is below 30522 (BERT's vocabulary, the smallest of common embedding
    /// models'), so no server is sent an id outside its vocabulary by default.
    pub safe: bool,
}

/// The vocabulary probes: ids a server with another vocabulary accepts (and reads as
/// other words), and, with `--aggressive`, ids beyond most vocabularies (refused by
/// vLLM with 400 "Token id 95711 is out of vocabulary"; TEI 1.9.3 aborts on such ids).
pub const CL100K_PROBES: [Cl100kProbe; 2] = [
    Cl100kProbe {
        text: "hello world",
        ids: &[15339, 1917],
        safe: true,
    },
    Cl100kProbe {
        text: "embedding servers",
        ids: &[95711, 16692],
        safe: false,
    },
];

/// LangChain's `chunk_size`: inputs per request.
const CHUNK_SIZE: usize = 1000;

/// Clauses whose failure breaks what LangChain does with `data`.
const READS_DATA: [(&str, &str); 2] = [
    (
        "RESP-002",
        "LangChain pairs `data` items with its inputs by position",
    ),
    (
        "RESP-003",
        "LangChain takes `data` in the order it comes, ignoring `index`",
    ),
];

/// LangChain's profile: its token-id requests and empty-text call, sent through the
/// session, what the Python SDK underneath makes of the default answers, and the
/// clause run's findings that matter to it.
pub(crate) async fn profile(
    s: &Session,
    calls: &DefaultCalls,
    judged: &Judged<'_>,
) -> ClientProfile {
    let embeddings = EmbeddingsFacts::of(judged.facts);
    let noise = embeddings.noise();
    let mut findings = Vec::new();
    let mut evidence = Vec::new();
    // Its answers are decoded by openai-python: a decoding that raises or gives wrong
    // vectors breaks LangChain too (its own token-id probes compare two answers decoded
    // the same way, so they cannot see it).
    for (finding, exchanges) in calls.judged(Decoder::Python, noise) {
        if matches!(
            finding,
            EmbeddingsFinding::DecodeError { .. } | EmbeddingsFinding::WrongVectors { .. }
        ) {
            let through = EmbeddingsFinding::ThroughSdk {
                finding: Box::new(finding),
            };
            findings.push(through.into());
            evidence.extend(exchanges);
        }
    }
    for probe in CL100K_PROBES {
        if !probe.safe && !s.settings().aggressive {
            let held = EmbeddingsFinding::ProbeHeld {
                text: probe.text,
                ids: probe.ids,
            };
            findings.push(held.into());
            continue;
        }
        let (finding, exchanges) = vocabulary(s, probe, noise).await;
        findings.push(finding.into());
        evidence.extend(exchanges);
    }
    if let Some((finding, exchanges)) = empty_text(s).await {
        findings.push(finding.into());
        evidence.extend(exchanges);
    }
    if let Some(BatchLimit::Named { limit, .. }) = embeddings.max_batch.as_ref().map(|f| f.value)
        && limit < CHUNK_SIZE
    {
        findings.push(EmbeddingsFinding::BatchLimit { limit }.into());
    }
    for (id, why) in READS_DATA {
        if let Some(failed) = judged.failed(id) {
            findings.push(Finding::ClauseFailed {
                id: id.to_owned(),
                reason: failed.reason.to_owned(),
                why,
            });
            add_evidence(&mut evidence, failed.evidence.iter().take(1));
        }
    }
    let (shared, exchanges) = sdk::shared_warnings(judged);
    findings.extend(shared);
    add_evidence(&mut evidence, &exchanges);
    ClientProfile::of(Client::LANGCHAIN_OPENAI, findings, evidence)
}

/// `embed_query(text)` against the same text as a string.
async fn vocabulary(
    s: &Session,
    probe: Cl100kProbe,
    noise: Noise,
) -> (EmbeddingsFinding, Vec<Exchange>) {
    let call = Call::TokenIds {
        text: probe.text,
        ids: probe.ids,
    };
    let ids = match send_as_sdk(s, requests::base64(s, json!([probe.ids]))).await {
        Ok(sent) => sent,
        Err(error) => {
            let why = no_answer(&error);
            return (EmbeddingsFinding::NotProbed { call, why }, Vec::new());
        }
    };
    let mut exchanges = ids.exchanges.clone();
    let reply = &ids.reply;
    if !reply.is_success() {
        // Whether the refusal is about token ids: the same text as a string, through
        // the same SDK, may be refused too (an `encoding_format` the server refuses).
        let text = send_as_sdk(s, requests::base64(s, json!(probe.text))).await;
        let text_refused_too = text.as_ref().is_ok_and(|t| !t.reply.is_success());
        if let (Ok(text), true) = (text, text_refused_too) {
            exchanges.extend(text.exchanges);
        }
        let finding = EmbeddingsFinding::TokenIdsRefused {
            text: probe.text,
            ids: probe.ids,
            status: reply.status,
            message: reply.error_message(),
            attempts: ids.attempts,
            text_refused_too,
        };
        return (finding, exchanges);
    }
    let got = match first_vector(decode::decode(Decoder::Python, reply), call) {
        Ok(vector) => vector,
        Err(finding) => return (finding, exchanges),
    };
    let text = match send_as_sdk(s, requests::base64(s, json!(probe.text))).await {
        Ok(sent) => sent,
        Err(error) => {
            let why = no_answer(&error);
            return (EmbeddingsFinding::NotProbed { call, why }, exchanges);
        }
    };
    exchanges.extend(text.exchanges.iter().cloned());
    let not_compared = |why: String| EmbeddingsFinding::NotCompared {
        text: probe.text,
        why,
    };
    if !text.reply.is_success() {
        let why = format!("the text was answered {}", text.reply.summary());
        return (not_compared(why), exchanges);
    }
    let want = match first_vector(decode::decode(Decoder::Python, &text.reply), call) {
        Ok(vector) => vector,
        Err(_) => {
            return (
                not_compared("the text's answer does not decode".into()),
                exchanges,
            );
        }
    };
    let c = cosine(&got, &want);
    let finding = if got.len() == want.len() && noise.same(c) {
        EmbeddingsFinding::SameVocabulary {
            text: probe.text,
            ids: probe.ids,
            cosine: c,
        }
    } else {
        EmbeddingsFinding::ForeignVocabulary {
            text: probe.text,
            ids: probe.ids,
            cosine: c,
        }
    };
    (finding, exchanges)
}

/// The first vector of a decoded answer, or the finding for `call` of why there is
/// none.
fn first_vector(decoded: Decoded, call: Call) -> Result<Vec<f64>, EmbeddingsFinding> {
    match decoded {
        Decoded::Vectors(vectors) => {
            vectors
                .into_iter()
                .next()
                .ok_or(EmbeddingsFinding::WrongVectors {
                    call,
                    wrong: Wrong::Count { got: 0, inputs: 1 },
                })
        }
        Decoded::Raises(error) => Err(EmbeddingsFinding::DecodeError { call, error }),
        Decoded::NotVectors(wrong) => Err(EmbeddingsFinding::WrongVectors { call, wrong }),
    }
}

/// LangChain's `input: ""` call for a text with no tokens: a warning when refused.
async fn empty_text(s: &Session) -> Option<(EmbeddingsFinding, Vec<Exchange>)> {
    let request = crate::contracts::embeddings::requests::body(
        s,
        json!(""),
        &[("encoding_format", json!("base64"))],
    );
    let probe = requests::invalid(Body::Json(request), "input is an empty string");
    let sent = send_as_sdk(s, probe).await.ok()?;
    (!sent.reply.is_success()).then(|| {
        let finding = EmbeddingsFinding::EmptyTextRefused {
            status: sent.reply.status,
            message: sent.reply.error_message(),
            attempts: sent.attempts,
        };
        (finding, sent.exchanges)
    })
}
