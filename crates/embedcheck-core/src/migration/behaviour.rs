//! Same request, different answer: every probe both servers were sent, side by side,
//! and every clause's verdict for both.
//!
//! Both audits run with the same seed, so they send the same requests; rows are
//! matched from the two sessions' logs by method, resource and body (the model name
//! replaced by a placeholder, since each server has its own), in order of sending.
//! A row differs when status, body shape, item count, token count, vector length
//! or encoding differ; error messages and timings always differ and are not
//! compared.
//!
//! ```text
//! | request                 | baseline                | candidate            |
//! | `dimensions: 128`       | 200 · 128 floats · 9 tok | 500 flat error       |
//! ```

use crate::audit::ServerAudit;
use crate::catalogue::Level;
use crate::contracts::{self, ContractShape, embeddings};
use crate::http::{Anchor, Encoding, Reply, Validity, excerpt};
use crate::session::{Logged, Session};
use crate::vectors::decode_base64;
use crate::verdict::Outcome;
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::fmt;

/// The side-by-side view of both servers.
#[derive(Clone, Debug, Serialize)]
pub struct BehaviourDiff {
    /// Every request sent to either server, in the baseline's order.
    pub probes: Vec<ProbeRow>,
    /// How many of `probes` were sent to both servers and answered differently.
    pub differing: usize,
    pub verdicts: Vec<VerdictRow>,
    /// How many clauses ended differently.
    pub verdicts_changed: usize,
}

/// One request and both answers; a side is absent when that server was not sent it.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeRow {
    pub request: String,
    /// Why the request is a client mistake, when it is one on purpose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_mistake: Option<String>,
    pub baseline: Option<Answer>,
    pub candidate: Option<Answer>,
    /// Sent to both, answered differently.
    pub differs: bool,
}

/// What one server answered, reduced to the facts a client depends on.
#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    /// HTTP status; absent when no answer arrived.
    pub status: Option<u16>,
    pub shape: Shape,
    /// Items in `data`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<usize>,
    /// `usage.prompt_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Length of the first vector.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<Encoding>,
    /// The error message or transport error, cut short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The shape of a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A `data` array of embeddings.
    Embeddings,
    /// Another contract's answer, as that contract tells it (a rerank answer:
    /// `results[]`, or TEI's bare array).
    Contract(ContractShape),
    /// `{"error": {"message": …}}`, as OpenAI writes errors.
    OpenaiError,
    /// `{"message": …}` or `{"error": "…"}` (vLLM, Dynamo, TEI).
    FlatError,
    /// `{"detail": …}` (FastAPI).
    DetailError,
    OtherJson,
    NotJson,
    Empty,
    NoAnswer,
}

impl Serialize for Shape {
    /// Its name in report.json (`openai_error`, a contract's own: `rerank`).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(match self {
            Shape::Embeddings => "embeddings",
            Shape::Contract(shape) => shape.name,
            Shape::OpenaiError => "openai_error",
            Shape::FlatError => "flat_error",
            Shape::DetailError => "detail_error",
            Shape::OtherJson => "other_json",
            Shape::NotJson => "not_json",
            Shape::Empty => "empty",
            Shape::NoAnswer => "no_answer",
        })
    }
}

/// One clause's outcome on both servers.
#[derive(Clone, Debug, Serialize)]
pub struct VerdictRow {
    pub id: String,
    pub level: Level,
    pub baseline: Outcome,
    pub candidate: Outcome,
    pub baseline_reason: String,
    pub candidate_reason: String,
    pub changed: bool,
}

impl Answer {
    /// The answer to one logged exchange.
    pub(crate) fn of(logged: &Logged) -> Answer {
        match &logged.reply {
            Some(reply) => Answer::of_reply(reply),
            None => Answer {
                status: None,
                shape: Shape::NoAnswer,
                items: None,
                tokens: None,
                dimensions: None,
                encoding: None,
                message: logged.exchange.transport_error.clone(),
            },
        }
    }

    /// The answer a reply carries.
    pub(crate) fn of_reply(reply: &Reply) -> Answer {
        let first = reply
            .json
            .as_ref()
            .and_then(embeddings::reply::first_embedding);
        let (encoding, dimensions) = match first {
            Some(Value::Array(values)) => (Some(Encoding::Float), Some(values.len())),
            Some(Value::String(text)) => (
                Some(Encoding::Base64),
                decode_base64(text).ok().map(|v| v.len()),
            ),
            _ => (None, None),
        };
        let (shape, items) = match shape(reply) {
            (shape @ Shape::Contract(_), items) => (shape, items),
            (shape, _) => (shape, reply.data().ok().map(<[Value]>::len)),
        };
        Answer {
            status: Some(reply.status),
            shape,
            items,
            tokens: reply.prompt_tokens(),
            dimensions,
            encoding,
            message: (!reply.is_success())
                .then(|| reply.error_message())
                .flatten()
                .map(|m| excerpt::cut(&m, 100)),
        }
    }

    /// Equal in everything a client depends on (not messages).
    fn same_as(&self, other: &Answer) -> bool {
        (
            self.status,
            self.shape,
            self.items,
            self.tokens,
            self.dimensions,
            self.encoding,
        ) == (
            other.status,
            other.shape,
            other.items,
            other.tokens,
            other.dimensions,
            other.encoding,
        )
    }

    pub(crate) fn is_server_error(&self) -> bool {
        self.status.is_some_and(|s| s >= 500)
    }
}

/// `200 · 1024 floats · 12 tokens`, `500 flat error "Internal server error"`.
impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(status) = self.status else {
            return write!(f, "no answer ({})", self.message.as_deref().unwrap_or("?"));
        };
        write!(f, "{status}")?;
        match (self.shape, self.encoding, self.dimensions) {
            (Shape::Embeddings, Some(Encoding::Float), Some(d)) => write!(f, " · {d} floats")?,
            (Shape::Embeddings, Some(Encoding::Base64), Some(d)) => {
                write!(f, " · base64 ({d} values)")?
            }
            (Shape::Embeddings, _, _) => write!(f, " · list")?,
            (Shape::Contract(shape), _, _) => write!(
                f,
                " · {} {}",
                self.items.unwrap_or_default(),
                shape.items_word
            )?,
            (shape, _, _) => write!(f, " · {}", shape.label())?,
        }
        let counted = matches!(self.shape, Shape::Contract(_));
        if let Some(items) = self.items.filter(|&n| n > 1 && !counted) {
            write!(f, " × {items}")?;
        }
        if let Some(tokens) = self.tokens {
            write!(f, " · {tokens} tokens")?;
        }
        if let Some(message) = &self.message {
            write!(f, " \"{}\"", excerpt::cut(message, 60))?;
        }
        Ok(())
    }
}

impl Shape {
    pub fn label(self) -> &'static str {
        match self {
            Shape::Embeddings => "embeddings",
            Shape::OpenaiError => "OpenAI-shaped error",
            Shape::FlatError => "flat error",
            Shape::DetailError => "FastAPI detail error",
            Shape::Contract(shape) => shape.label,
            Shape::OtherJson => "other JSON",
            Shape::NotJson => "non-JSON body",
            Shape::Empty => "empty body",
            Shape::NoAnswer => "no answer",
        }
    }

    pub(crate) fn is_error(self) -> bool {
        matches!(
            self,
            Shape::OpenaiError | Shape::FlatError | Shape::DetailError
        )
    }
}

/// The shape of a reply's body, with the items a contract's answer carries.
fn shape(reply: &Reply) -> (Shape, Option<usize>) {
    let Some(json) = reply.json.as_ref() else {
        let shape = if reply.body.is_empty() {
            Shape::Empty
        } else {
            Shape::NotJson
        };
        return (shape, None);
    };
    if embeddings::reply::is_list(json) {
        return (Shape::Embeddings, None);
    }
    if let Some((shape, items)) = contracts::answer_shape(reply) {
        return (Shape::Contract(shape), items);
    }
    let shape = if json.pointer("/error/message").is_some() {
        Shape::OpenaiError
    } else if json.get("message").is_some() || json.get("error").is_some_and(Value::is_string) {
        Shape::FlatError
    } else if json.get("detail").is_some() {
        Shape::DetailError
    } else {
        Shape::OtherJson
    };
    (shape, None)
}

/// Builds the side-by-side view from both sessions' logs and both audits.
pub(crate) fn diff(
    baseline: &Session,
    candidate: &Session,
    baseline_audit: &ServerAudit,
    candidate_audit: &ServerAudit,
) -> BehaviourDiff {
    let probes = probe_rows(
        &baseline.log(),
        baseline.model(),
        &candidate.log(),
        candidate.model(),
    );
    let verdicts = verdict_rows(baseline_audit, candidate_audit);
    BehaviourDiff {
        differing: probes.iter().filter(|r| r.differs).count(),
        verdicts_changed: verdicts.iter().filter(|r| r.changed).count(),
        probes,
        verdicts,
    }
}

fn probe_rows(b_log: &[Logged], b_model: &str, c_log: &[Logged], c_model: &str) -> Vec<ProbeRow> {
    let mut pending: HashMap<String, VecDeque<&Logged>> = HashMap::new();
    for logged in c_log {
        pending
            .entry(key(logged, c_model))
            .or_default()
            .push_back(logged);
    }
    let mut rows: Vec<ProbeRow> = b_log
        .iter()
        .map(|b| {
            let c = pending
                .get_mut(&key(b, b_model))
                .and_then(VecDeque::pop_front);
            row(b, b_model, Some(b), c)
        })
        .collect();
    // What only the candidate was sent (adaptive probes), in its own order.
    let mut leftover: Vec<&Logged> = pending.into_values().flatten().collect();
    leftover.sort_by_key(|l| c_log.iter().position(|x| std::ptr::eq(x, *l)));
    rows.extend(leftover.into_iter().map(|c| row(c, c_model, None, Some(c))));
    rows
}

fn row(shown: &Logged, model: &str, b: Option<&Logged>, c: Option<&Logged>) -> ProbeRow {
    let (baseline, candidate) = (b.map(Answer::of), c.map(Answer::of));
    // A request only one server was sent (the query batches are built differently
    // for each) is shown, but has nothing to differ from.
    let differs = match (&baseline, &candidate) {
        (Some(x), Some(y)) => !x.same_as(y),
        _ => false,
    };
    ProbeRow {
        request: describe(shown, model),
        client_mistake: match &shown.validity {
            Validity::Invalid(why) => Some(why.clone()),
            Validity::Valid | Validity::Either(_) => None,
        },
        baseline,
        candidate,
        differs,
    }
}

/// Identity of a request across servers: method, resource and body with the
/// server's own model name replaced.
fn key(logged: &Logged, model: &str) -> String {
    let exchange = &logged.exchange;
    // The resource: a route from the server's root with its version (`/v1/rerank`,
    // `/rerank` and `/v2/rerank` are different routes), one under the base URL by its
    // last segment wherever the base path puts it (`embeddings`).
    let resource = match logged.resource.route() {
        Some(route) if route.anchor == Anchor::Root => route.path.to_owned(),
        _ => exchange
            .path
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned(),
    };
    let body = exchange.request_body.as_deref().unwrap_or_default();
    let body = if model.is_empty() {
        body.to_owned()
    } else {
        body.replace(model, "<model>")
    };
    format!("{} {resource} {body}", exchange.method)
}

/// A short description of a request: its input and every field but the model.
pub(crate) fn describe(logged: &Logged, model: &str) -> String {
    let exchange = &logged.exchange;
    let Some(body) = &exchange.request_body else {
        return format!("{} {}", exchange.method, exchange.path);
    };
    // A form's excerpt is never JSON: told by how it begins.
    if let Some(parts) = body.strip_prefix(FORM_EXCERPT) {
        return format!("form at {}: {}", exchange.path, describe_form(parts, model));
    }
    match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(fields)) => contracts::describe_request(&exchange.path, &fields, model),
        Ok(other) => format!("JSON body {}", excerpt::cut(&other.to_string(), 40)),
        Err(_) => format!("raw body {}", excerpt::cut(body, 40)),
    }
}

/// How a form's excerpt begins (`http::form::Form::excerpt`).
const FORM_EXCERPT: &str = "multipart/form-data; ";

/// A form's parts as its excerpt shows them, a file by name and size, the run's model
/// left out: `speech.wav (96044 bytes); response_format="text"`.
fn describe_form(parts: &str, model: &str) -> String {
    let mut shown: Vec<String> = parts
        .split("; ")
        .filter(|part| *part != format!("model={model:?}"))
        .map(|part| match part.split_once("=<") {
            Some((_, file)) => {
                let name = file.split(':').next().unwrap_or_default();
                let size = file
                    .split(", ")
                    .find(|f| f.ends_with(" bytes"))
                    .unwrap_or_default();
                format!("{name} ({size})")
            }
            None => part.to_owned(),
        })
        .collect();
    if !parts.contains("=<") {
        shown.insert(0, "no file".to_owned());
    }
    excerpt::cut(&shown.join("; "), 80)
}

fn verdict_rows(b: &ServerAudit, c: &ServerAudit) -> Vec<VerdictRow> {
    c.results
        .iter()
        .filter_map(|cr| {
            let br = b.results.iter().find(|r| r.id == cr.id)?;
            Some(VerdictRow {
                id: cr.id.clone(),
                level: cr.level,
                baseline: br.outcome,
                candidate: cr.outcome,
                baseline_reason: br.reason.clone(),
                candidate_reason: cr.reason.clone(),
                changed: br.outcome != cr.outcome,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A speech request is named by its file and its fields, not its boundary.
    #[test]
    fn a_form_is_described_by_its_file_and_fields() {
        let parts = "file=<speech.wav: audio/wav, 96044 bytes, sha256 6c2321fb649e…>; model=\"m\"; response_format=\"text\"";
        assert_eq!(
            describe_form(parts, "m"),
            "speech.wav (96044 bytes); response_format=\"text\""
        );
    }
    use serde_json::json;

    fn logged(body: Value, status: u16, answer: Value) -> Logged {
        let mut reply = crate::http::Reply::json_for_test(status, answer);
        reply.exchange.request_body = Some(excerpt::of_json(&body));
        reply.exchange.millis = 1;
        Logged {
            validity: Validity::Valid,
            resource: crate::http::probe::Resource::Contract(crate::contracts::embeddings::ROUTE),
            exchange: reply.exchange.clone(),
            reply: Some(std::sync::Arc::new(reply)),
            clause: None,
            request_body: None,
            deadline: None,
        }
    }

    fn ok(dims: usize, tokens: u64) -> Value {
        json!({"data": [{"embedding": vec![0.5; dims], "index": 0}], "usage": {"prompt_tokens": tokens}})
    }

    #[test]
    fn requests_match_across_model_names() {
        let b = [logged(
            json!({"model": "old", "input": "hi", "dimensions": 8}),
            200,
            ok(8, 1),
        )];
        let c = [logged(
            json!({"model": "new", "input": "hi", "dimensions": 8}),
            500,
            json!({"message": "Internal server error"}),
        )];
        let rows = probe_rows(&b, "old", &c, "new");
        assert_eq!(rows.len(), 1);
        assert!(rows[0].differs);
        assert_eq!(rows[0].request, "\"hi\", dimensions: 8");
        assert_eq!(rows[0].candidate.as_ref().unwrap().shape, Shape::FlatError);
        assert_eq!(
            rows[0].baseline.as_ref().unwrap().to_string(),
            "200 · 8 floats · 1 tokens"
        );
    }

    #[test]
    fn equal_answers_do_not_differ_and_unmatched_requests_are_kept() {
        let b = [logged(
            json!({"model": "m", "input": ["a", "b"]}),
            200,
            ok(4, 2),
        )];
        let c = [
            logged(json!({"model": "m", "input": ["a", "b"]}), 200, ok(4, 2)),
            logged(json!({"model": "m", "input": "extra"}), 200, ok(4, 1)),
        ];
        let rows = probe_rows(&b, "m", &c, "m");
        assert_eq!(rows.len(), 2);
        assert!(!rows[0].differs);
        assert!(rows[1].baseline.is_none() && !rows[1].differs);
    }
}
