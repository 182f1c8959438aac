//! The OpenAI SDKs' profiles (openai-python 3.57.0, openai-node 7.55.0).
//!
//! Both send `encoding_format: "base64"` when the caller names none (openai-python's
//! `prepare_embedding_request`, openai-node's `createEmbedding`), forward `dimensions`
//! and `user` as given, and retry 408, 409, 429 and 5xx twice unless `x-should-retry`
//! says otherwise. Their default requests for one sentence and for a batch are the
//! base64 probes of ENC-003, so the session's cache answers them; each answer is
//! decoded as the client decodes it and compared with the float answer of the same
//! inputs (IN-001 and IN-002's probes), at the server's own noise.

use super::decode::{self, Decoded, Decoder, Wrong};
use super::{Call, EmbeddingsFinding};
use crate::contracts::embeddings::facts::EmbeddingsFacts;
use crate::contracts::embeddings::facts::Noise;
use crate::contracts::embeddings::reply::encoding;
use crate::contracts::embeddings::requests::{self, BATCH, SENTENCE};
use crate::http::{Exchange, Probe, Reply};
use crate::profiles::{
    Client, ClientProfile, Finding, Judged, SDK_RETRIES, add_evidence, no_answer,
};
use crate::session::{ProbeError, Session};
use crate::vectors::cosine;
use serde_json::json;
use std::sync::Arc;

/// A request as an SDK sends it: once, then again while the answer is one the SDK
/// retries, up to its retries.
pub(super) struct Sent {
    pub reply: Arc<Reply>,
    pub attempts: u32,
    pub exchanges: Vec<Exchange>,
}

/// Sends `probe` as the SDKs do by default. Retries bypass the cache: the client sends
/// the request again, and a server may answer it differently.
pub(super) async fn send_as_sdk(s: &Session, probe: Probe) -> Result<Sent, ProbeError> {
    let mut reply = s.send(probe.clone()).await?;
    let mut sent = Sent {
        exchanges: vec![reply.exchange.clone()],
        reply: reply.clone(),
        attempts: 1,
    };
    while sent.attempts <= SDK_RETRIES && !reply.is_success() && reply.is_retried_by_sdks() {
        reply = s.send(probe.clone().fresh()).await?;
        sent.attempts += 1;
        sent.exchanges.push(reply.exchange.clone());
        sent.reply = reply.clone();
    }
    Ok(sent)
}

/// One default call of the SDKs and the float answer to compare it with.
pub(crate) struct CallResult {
    call: Call,
    inputs: usize,
    sent: Result<Sent, ProbeError>,
    floats: Result<Arc<Reply>, ProbeError>,
}

/// The SDKs' default calls, shared by both SDKs' profiles (the same requests) and
/// LangChain's (which goes through the Python SDK).
pub(crate) struct DefaultCalls {
    calls: [CallResult; 2],
}

/// Sends the SDKs' default calls for one sentence and for the batch.
pub(crate) async fn default_calls(s: &Session) -> DefaultCalls {
    let one = CallResult {
        call: Call::One,
        inputs: 1,
        sent: send_as_sdk(s, requests::base64(s, json!(SENTENCE))).await,
        floats: requests::single(s).await,
    };
    let batch = CallResult {
        call: Call::Batch,
        inputs: BATCH.len(),
        sent: send_as_sdk(s, requests::base64(s, json!(BATCH))).await,
        floats: requests::batch(s).await,
    };
    DefaultCalls {
        calls: [one, batch],
    }
}

impl DefaultCalls {
    /// What `decoder` makes of each default call, and the exchanges that show it.
    pub(super) fn judged(
        &self,
        decoder: Decoder,
        noise: Noise,
    ) -> Vec<(EmbeddingsFinding, Vec<Exchange>)> {
        self.calls
            .iter()
            .map(|call| {
                let mut exchanges = match &call.sent {
                    Ok(sent) => sent.exchanges.clone(),
                    Err(_) => Vec::new(),
                };
                if let Ok(floats) = &call.floats {
                    exchanges.push(floats.exchange.clone());
                }
                (judge(decoder, call, noise), exchanges)
            })
            .collect()
    }
}

/// The finding of one default call for `decoder`.
fn judge(decoder: Decoder, call: &CallResult, noise: Noise) -> EmbeddingsFinding {
    let sent = match &call.sent {
        Ok(sent) => sent,
        Err(error) => {
            return EmbeddingsFinding::NotProbed {
                call: call.call,
                why: no_answer(error),
            };
        }
    };
    let reply = &sent.reply;
    if !reply.is_success() {
        return EmbeddingsFinding::Raises {
            call: call.call,
            status: reply.status,
            message: reply.error_message(),
            attempts: sent.attempts,
        };
    }
    let vectors = match decode::decode(decoder, reply) {
        Decoded::Vectors(vectors) => vectors,
        Decoded::Raises(error) => {
            return EmbeddingsFinding::DecodeError {
                call: call.call,
                error,
            };
        }
        Decoded::NotVectors(wrong) => {
            return EmbeddingsFinding::WrongVectors {
                call: call.call,
                wrong,
            };
        }
    };
    if vectors.len() != call.inputs {
        return EmbeddingsFinding::WrongVectors {
            call: call.call,
            wrong: Wrong::Count {
                got: vectors.len(),
                inputs: call.inputs,
            },
        };
    }
    let floats = match float_answer(call) {
        Ok(floats) => floats,
        Err(why) => {
            return EmbeddingsFinding::NotProbed {
                call: call.call,
                why: format!("the float request of the same inputs {why}: nothing to compare with"),
            };
        }
    };
    match compare(&vectors, &floats, call.inputs, noise) {
        Ok(lowest) => EmbeddingsFinding::Decoded {
            call: call.call,
            encoding: reply.data().ok().and_then(|d| d.first()).and_then(encoding),
            cosine: lowest,
            attempts: sent.attempts,
        },
        Err(wrong) => EmbeddingsFinding::WrongVectors {
            call: call.call,
            wrong,
        },
    }
}

/// The float vectors of the call's inputs (in either encoding: a server that answers
/// base64 by default still has vectors to compare with).
fn float_answer(call: &CallResult) -> Result<Vec<Vec<f64>>, String> {
    let floats = match &call.floats {
        Ok(floats) if floats.is_success() => floats.embeddings()?.vectors,
        Ok(floats) => return Err(format!("answered {}", floats.summary())),
        Err(error) => return Err(no_answer(error)),
    };
    if floats.len() != call.inputs {
        return Err(format!(
            "has {} vectors for {} inputs",
            floats.len(),
            call.inputs
        ));
    }
    Ok(floats)
}

/// The lowest cosine of the client's vectors to the float answer, or why they are not
/// the vectors of the inputs.
pub(super) fn compare(
    got: &[Vec<f64>],
    floats: &[Vec<f64>],
    inputs: usize,
    noise: Noise,
) -> Result<f64, Wrong> {
    if got.len() != inputs {
        return Err(Wrong::Count {
            got: got.len(),
            inputs,
        });
    }
    let mut lowest = 1.0f64;
    for (index, (g, f)) in got.iter().zip(floats).enumerate() {
        if g.len() != f.len() {
            return Err(Wrong::Length {
                index,
                got: g.len(),
                want: f.len(),
            });
        }
        let c = cosine(g, f);
        if !noise.same(c) {
            return Err(Wrong::Cosine { index, cosine: c });
        }
        lowest = lowest.min(c);
    }
    Ok(lowest)
}

/// Warnings every profiled client shares: the retry hazard and over-length input.
///
/// The retry hazard is ERR-011's (client mistakes answered with a status the SDKs
/// retry, by their own rule, `x-should-retry` included), or ERR-009's (5xx for client
/// mistakes) when ERR-011 did not run.
pub(super) fn shared_warnings(judged: &Judged<'_>) -> (Vec<Finding>, Vec<Exchange>) {
    let mut findings = Vec::new();
    let mut evidence = Vec::new();
    let clause = if judged.ran("ERR-011") {
        "ERR-011"
    } else {
        "ERR-009"
    };
    if let Some(hazard) = judged.failed(clause) {
        let retries = EmbeddingsFinding::RetryHazard {
            clause,
            requests: hazard.evidence.len(),
        };
        findings.push(retries.into());
        evidence.extend(hazard.evidence.iter().take(2).cloned());
    }
    if let Some(finding) = overlength(&EmbeddingsFacts::of(judged.facts)) {
        findings.push(finding.into());
    }
    (findings, evidence)
}

fn overlength(facts: &EmbeddingsFacts) -> Option<EmbeddingsFinding> {
    let policy = facts.overlength_policy.as_ref()?.value;
    Some(EmbeddingsFinding::Overlength {
        policy,
        tokens: facts.known_limit().map(|(tokens, _)| tokens),
    })
}

/// Clauses whose failure an SDK caller meets when passing an option, which the SDKs
/// forward as given.
const FORWARDED: [(&str, &str); 3] = [
    ("IN-007", "create(user=…) sends `user` as given"),
    (
        "DIM-001",
        "create(dimensions=…) sends `dimensions` as given",
    ),
    (
        "DIM-002",
        "create(dimensions=…) sends `dimensions` as given",
    ),
];

/// The profile of one OpenAI SDK.
pub(crate) fn profile(client: Client, calls: &DefaultCalls, judged: &Judged<'_>) -> ClientProfile {
    // Only the OpenAI SDKs are profiled here: Node's decoder, else Python's.
    let decoder = match client {
        Client::OPENAI_NODE => Decoder::Node,
        _ => Decoder::Python,
    };
    let mut findings = Vec::new();
    let mut evidence = Vec::new();
    for (finding, exchanges) in calls.judged(decoder, EmbeddingsFacts::of(judged.facts).noise()) {
        findings.push(finding.into());
        evidence.extend(exchanges);
    }
    let (shared, exchanges) = shared_warnings(judged);
    findings.extend(shared);
    add_evidence(&mut evidence, &exchanges);
    for (id, why) in FORWARDED {
        if let Some(failed) = judged.failed(id) {
            findings.push(Finding::ClauseFailed {
                id: id.to_owned(),
                reason: failed.reason.to_owned(),
                why,
            });
        }
    }
    ClientProfile::of(client, findings, evidence)
}
