//! unknown-fields: fields outside the OpenAI schema (UNK-001 … UNK-004).
//!
//! Servers split on unknown fields (OpenAI and NIM refuse them, vLLM, TEI, Ollama and
//! Dynamo ignore them); either is allowed, the `unknown_fields` observation says
//! which, and UNK-002 judges only the refusals' messages. What is not allowed is the study's trap: an instruction-bearing field such as
//! `input_type` answered 200 with the bare input's vector, so retrieval quality drops
//! with no error anywhere.

use super::consistency;
use crate::clauses::judging;
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings;
use crate::contracts::embeddings::facts::{
    BareIs, FieldHandling, InstructionField, Noise, Side, ValueAnswer, ValueTried, instruction_line,
};
use crate::contracts::embeddings::requests::{self, QUERY, body};
use crate::contracts::embeddings::settings;
use crate::declared::QueryTemplate;
use crate::http::Exchange;
use crate::http::{Body, Probe, Reply};
use crate::property::{Case, Property};
use crate::session::facts::UnknownField;
use crate::session::{ProbeError, Session};
use crate::vectors::cosine;
use crate::verdict::Verdict;
use proptest::prelude::Strategy;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::RangeInclusive;
use std::sync::Mutex;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("UNK-001", unknown_field_never_5xx),
        check!("UNK-002", unknown_field_named),
        check!("UNK-003", instruction_fields_not_dropped),
        check!("UNK-004", query_instruction_applied),
    ]
}

/// The property label of generated fields, shared by UNK-001 and UNK-002.
const GENERATED_FIELDS: &str = "unknown-fields";

/// Field names some server or client gives a meaning to; a generated name equal to
/// one of them gets a suffix, so every generated field is unknown.
const MEANINGFUL: [&str; 17] = [
    "model",
    "input",
    "user",
    "dimensions",
    "encoding_format",
    "input_type",
    "instruction",
    "task",
    "prompt_name",
    "prompt",
    "truncate",
    "truncation",
    "normalize",
    "output_dimension",
    "embedding_type",
    "modality",
    "options",
];

const NAME_CHARS: &[RangeInclusive<char>] = &['a'..='z', '0'..='9', '_'..='_'];

/// UNK-004's tolerance, as stated in the catalogue.
pub(crate) const TEMPLATE_COSINE: f64 = 0.999;

/// Unknown top-level fields: a name of three to ten characters (short enough to read,
/// long enough that finding it in a message is not chance) and a value of one of the
/// JSON kinds, simplest first, so shrinking reaches a minimal field within its cap.
fn unknown_field() -> impl Strategy<Value = (String, Value), Tree: Send> {
    let name = (
        proptest::char::range('a', 'z'),
        proptest::collection::vec(proptest::char::ranges(Cow::Borrowed(NAME_CHARS)), 2..10),
    )
        .prop_map(|(first, rest)| {
            let name: String = std::iter::once(first).chain(rest).collect();
            if MEANINGFUL.contains(&name.as_str()) {
                format!("{name}_x")
            } else {
                name
            }
        });
    let value = proptest::sample::select(vec![
        json!(true),
        json!(1),
        json!("on"),
        Value::Null,
        json!([1, 2, 3]),
        json!({"nested": {"depth": 2}}),
    ]);
    (name, value)
}

fn show_field((name, value): &(String, Value)) -> String {
    format!("field {name:?}: {value}")
}

fn unknown_field_probe(s: &Session, name: &str, value: Value) -> Probe {
    requests::invalid(
        Body::Json(body(s, json!(requests::SENTENCE), &[(name, value)])),
        format!("unknown field {name:?}"),
    )
}

/// Ignored (a usable 200) or refused (4xx); anything else fails UNK-001.
fn treatment(reply: &Reply, name: &str) -> Result<UnknownField, Verdict> {
    if reply.is_success() {
        return super::vectors_or_verdict(reply, 1).map(|_| UnknownField::Ignored);
    }
    if reply.is_client_error() {
        return Ok(match judging::refused_naming(reply, name) {
            Ok(()) => UnknownField::RefusedNaming(reply.status),
            Err(_) => UnknownField::RefusedSilently(reply.status),
        });
    }
    Err(Verdict::fail(format!(
        "answered {}: neither ignored nor refused with a 4xx",
        reply.summary()
    ))
    .with(&reply.exchange))
}

/// UNK-001: "A request with an unknown top-level field is answered 200 with the field
/// ignored, or refused with a 4xx; never with a 5xx."
async fn unknown_field_never_5xx(s: &Session) -> CheckResult {
    let seen = Mutex::new(BTreeSet::new());
    let seen_by_cases = &seen;
    let finding = Property::new(s.settings(), GENERATED_FIELDS)
        .check(&unknown_field(), move |(name, value)| async move {
            let reply = s.send(unknown_field_probe(s, &name, value)).await?;
            Ok::<_, ProbeError>(match treatment(&reply, &name) {
                Ok(how) => {
                    if let Ok(mut seen) = seen_by_cases.lock() {
                        seen.insert(how);
                    }
                    Case::Holds
                }
                Err(failure) => Case::Fails(failure),
            })
        })
        .await?;
    let seen = seen.into_inner().unwrap_or_default();
    let described: Vec<String> = seen.iter().map(ToString::to_string).collect();
    if !seen.is_empty() {
        let cases = s.settings().cases;
        let fact = s.searched(seen.into_iter().collect(), cases);
        embeddings::learn(s, |facts| facts.unknown_fields = Some(fact));
    }
    Ok(finding.into_verdict(show_field, |cases, _| {
        Verdict::pass(format!(
            "{cases} generated unknown fields: {}",
            described.join(" / ")
        ))
    }))
}

/// UNK-002: "An unknown top-level field that the server refuses is refused with a 4xx
/// whose message names the field, as OpenAI does. Whether unknown fields are refused or
/// ignored is the server's policy: a server that ignores every one is not judged."
async fn unknown_field_named(s: &Session) -> CheckResult {
    let finding = Property::new(s.settings(), GENERATED_FIELDS)
        .check(&unknown_field(), move |(name, value)| async move {
            let reply = s.send(unknown_field_probe(s, &name, value)).await?;
            if !reply.is_client_error() {
                // Ignored, or a 5xx: UNK-001's to judge.
                return Ok::<_, ProbeError>(Case::Inapplicable);
            }
            Ok(match judging::refused_naming(&reply, &name) {
                Ok(()) => Case::Holds,
                Err(why) => Case::Fails(Verdict::fail(why).with(&reply.exchange)),
            })
        })
        .await?;
    Ok(finding.into_verdict(show_field, |cases, refused| {
        if refused == 0 {
            Verdict::skip(format!(
                "none of {cases} generated unknown fields was refused: the server ignores them, a documented policy (vLLM, TEI, Ollama)"
            ))
        } else {
            Verdict::pass(format!(
                "{refused} of {cases} generated unknown fields refused, each with a 4xx naming it"
            ))
        }
    }))
}

/// An instruction-bearing field and the values that ask for each side, in the
/// spellings servers and vendors use: Cohere, Voyage, NIM and the study's old server
/// (`input_type`), instruction wrappers (`instruction`, a query side only), Jina
/// (`task`), sentence-transformers and TEI (`prompt_name`).
struct InstructionProbe {
    field: &'static str,
    query: Vec<Value>,
    document: Vec<Value>,
}

fn instruction_probes(s: &Session) -> Vec<InstructionProbe> {
    let vendor = &s.transport().access().fields;
    // A vendor profile renaming `input_type` maps only "query" and "document" to its
    // own values, and its own field is probed as `input_type`, not again.
    let (query, document) = if vendor.name("input_type") == "input_type"
        && vendor.value("input_type", "query") == "query"
    {
        (
            vec![json!("query"), json!("search_query")],
            vec![
                json!("document"),
                json!("passage"),
                json!("search_document"),
            ],
        )
    } else {
        (vec![json!("query")], vec![json!("document")])
    };
    let probes = [
        InstructionProbe {
            field: "input_type",
            query,
            document,
        },
        InstructionProbe {
            field: "instruction",
            query: vec![json!(settings::of(s).query_task)],
            document: Vec::new(),
        },
        InstructionProbe {
            field: "task",
            query: vec![json!("retrieval.query")],
            document: vec![json!("retrieval.passage")],
        },
        InstructionProbe {
            field: "prompt_name",
            query: vec![json!("query")],
            document: vec![json!("document"), json!("passage")],
        },
    ];
    probes
        .into_iter()
        .filter(|p| p.field == "input_type" || p.field != vendor.name("input_type"))
        .collect()
}

fn bare_query_probe(s: &Session) -> Probe {
    requests::probe(body(s, json!(QUERY), &[]))
}

/// The bare query's answer: what every value is compared with.
struct BareQuery {
    vector: Vec<f64>,
    tokens: Option<u64>,
    noise: Noise,
}

impl BareQuery {
    /// One value's answer, judged against the server's own noise: on a
    /// nondeterministic server a vector that moves no more than identical requests do
    /// is the bare input's. Also the vector, for comparing the two sides.
    fn answer(&self, reply: &Reply) -> (ValueAnswer, Option<Vec<f64>>) {
        if reply.is_client_error() {
            return (
                ValueAnswer::Refused {
                    status: reply.status,
                },
                None,
            );
        }
        if !reply.is_success() {
            let why = format!("answered {}", reply.summary());
            return (ValueAnswer::Broken { why }, None);
        }
        let vector = match super::vectors_or_verdict(reply, 1) {
            Ok(mut v) => v.remove(0),
            Err(verdict) => {
                let why = verdict.reason;
                return (ValueAnswer::Broken { why }, None);
            }
        };
        let (cosine, tokens) = (cosine(&self.vector, &vector), reply.prompt_tokens());
        let answer = if self.noise.same(cosine) && tokens == self.tokens {
            ValueAnswer::Bare { cosine, tokens }
        } else {
            ValueAnswer::Differs { cosine, tokens }
        };
        (answer, Some(vector))
    }
}

/// Sends each side's values until one is not refused, and judges the field over both
/// sides; with every exchange sent.
async fn probe_field(
    s: &Session,
    probe: &InstructionProbe,
    bare: &BareQuery,
) -> Result<(InstructionField, Vec<Exchange>), ProbeError> {
    let mut tried = Vec::new();
    let mut exchanges = Vec::new();
    let mut vectors = [None, None];
    for (i, (side, values)) in [
        (Side::Query, &probe.query),
        (Side::Document, &probe.document),
    ]
    .into_iter()
    .enumerate()
    {
        for value in values {
            let reply = s
                .send(requests::instruction_probe(s, probe.field, value.clone()))
                .await?;
            let (answer, vector) = bare.answer(&reply);
            exchanges.push(reply.exchange.clone());
            let refused = matches!(answer, ValueAnswer::Refused { .. });
            let shown = value.as_str().map_or(value.to_string(), str::to_owned);
            tried.push(ValueTried {
                side,
                value: shown,
                answer,
            });
            if !refused {
                vectors[i] = vector;
                break;
            }
        }
    }
    let sides_apart = match &vectors {
        [Some(q), Some(d)] => !bare.noise.same(cosine(q, d)),
        _ => false,
    };
    let handling = field_handling(&tried, bare.tokens, sides_apart);
    let field = InstructionField {
        field: probe.field,
        tried,
        handling,
    };
    Ok((field, exchanges))
}

/// A field is honoured when some side's vector or usage differs from the bare input's,
/// or the two sides differ from each other; dropped only when every value not refused
/// gave the bare input's vector and usage.
fn field_handling(
    tried: &[ValueTried],
    bare_tokens: Option<u64>,
    sides_apart: bool,
) -> FieldHandling {
    if let Some((value, why)) = tried.iter().find_map(|t| match &t.answer {
        ValueAnswer::Broken { why } => Some((&t.value, why)),
        _ => None,
    }) {
        return FieldHandling::Broken {
            why: format!("{value:?} {why}"),
        };
    }
    let accepted = |side| {
        tried
            .iter()
            .find(|t| t.side == side && !matches!(t.answer, ValueAnswer::Refused { .. }))
            .map(|t| &t.answer)
    };
    let (query, document) = (accepted(Side::Query), accepted(Side::Document));
    let differs = |a: Option<&ValueAnswer>| matches!(a, Some(ValueAnswer::Differs { .. }));
    let numbers = |a: &ValueAnswer| match a {
        ValueAnswer::Bare { cosine, tokens } | ValueAnswer::Differs { cosine, tokens } => {
            (*cosine, *tokens)
        }
        _ => (1.0, None),
    };
    let Some(shown) = query.or(document) else {
        let status = tried.iter().find_map(|t| match t.answer {
            ValueAnswer::Refused { status } => Some(status),
            _ => None,
        });
        return FieldHandling::Refused {
            status: status.unwrap_or_default(),
        };
    };
    if !(differs(query) || differs(document) || sides_apart) {
        let (cosine, tokens) = numbers(shown);
        return FieldHandling::Dropped {
            cosine,
            bare_tokens,
            tokens,
        };
    }
    let (side, answer) = match (query, document) {
        (Some(q), _) if differs(query) => (Side::Query, q),
        (_, Some(d)) => (Side::Document, d),
        (Some(q), None) => (Side::Query, q),
        (None, None) => unreachable!("some side was accepted"),
    };
    let bare_is = match (query, document) {
        (Some(ValueAnswer::Bare { .. }), Some(ValueAnswer::Differs { .. })) => BareIs::Query,
        (Some(ValueAnswer::Differs { .. }), Some(ValueAnswer::Bare { .. })) => BareIs::Document,
        (Some(ValueAnswer::Differs { .. }), Some(ValueAnswer::Differs { .. })) => BareIs::Neither,
        _ => BareIs::Unknown,
    };
    let (cosine, tokens) = numbers(answer);
    FieldHandling::Honoured {
        side,
        cosine,
        bare_tokens,
        tokens,
        bare_is,
    }
}

/// UNK-003: "Each of input_type, instruction, task and prompt_name, probed from the
/// query side and the document side in the spellings servers and vendors use, is
/// honoured (some side's vector or token count differs from the bare input's, or the
/// two sides differ from each other) or refused with a 4xx; never answered with the
/// bare input's vector and usage for every value."
async fn instruction_fields_not_dropped(s: &Session) -> CheckResult {
    let bare_reply = s.send(bare_query_probe(s)).await?;
    let vector = match super::vectors_or_verdict(&bare_reply, 1) {
        Ok(mut v) => v.remove(0),
        Err(verdict) => return Ok(verdict),
    };
    let noise = consistency::noise(s).await?.unwrap_or(Noise::unmeasured());
    let bare = BareQuery {
        vector,
        tokens: bare_reply.prompt_tokens(),
        noise,
    };
    let mut fields = Vec::new();
    let mut failing = Vec::new();
    let mut shown = Vec::new();
    let mut sent = 1;
    for probe in instruction_probes(s) {
        let (field, exchanges) = probe_field(s, &probe, &bare).await?;
        sent += exchanges.len() as u32;
        match field.handling {
            FieldHandling::Dropped { .. } | FieldHandling::Broken { .. } => {
                failing.push(instruction_line(&field));
                evidence_extend(&mut shown, exchanges, usize::MAX);
            }
            _ => evidence_extend(&mut shown, exchanges, 2),
        }
        fields.push(field);
    }
    let lines: Vec<String> = fields.iter().map(instruction_line).collect();
    let dropped = fields
        .iter()
        .any(|f| matches!(f.handling, FieldHandling::Dropped { .. }));
    let fact = s.searched(fields, sent);
    embeddings::learn(s, |facts| facts.instruction_fields = Some(fact));
    if failing.is_empty() {
        return Ok(Verdict::pass(lines.join("; "))
            .with(&bare_reply.exchange)
            .with_all(&shown));
    }
    let mut reason = failing.join("; ");
    if dropped {
        let within = if noise.deterministic() {
            String::new()
        } else {
            format!(
                " (judged against this nondeterministic server's own noise: identical requests gave cosine {:.6})",
                noise.cosine
            )
        };
        reason.push_str(&format!(
            ": silently, 200 with the bare input's vector and usage{within}; a dropped field never reaches the model, and retrieval quality drops with no error"
        ));
    }
    let kept: Vec<&String> = lines.iter().filter(|l| !failing.contains(l)).collect();
    if !kept.is_empty() {
        let kept: Vec<&str> = kept.iter().map(|l| l.as_str()).collect();
        reason.push_str(&format!(". The others: {}", kept.join("; ")));
    }
    Ok(Verdict::fail(reason)
        .with_all(&shown)
        .with(&bare_reply.exchange))
}

/// Keeps at most `most` of a field's exchanges as evidence.
fn evidence_extend(shown: &mut Vec<Exchange>, exchanges: Vec<Exchange>, most: usize) {
    shown.extend(exchanges.into_iter().take(most));
}

/// UNK-004: "With --query-instruction, input_type \"query\" gives a vector with cosine
/// similarity of at least 0.999 to the template-filled string sent without input_type
/// (on a server that embeds bare input as a query, with its document value instead)."
async fn query_instruction_applied(s: &Session) -> CheckResult {
    let declared_settings = settings::of(s);
    let from_reference = declared_settings
        .reference
        .as_ref()
        .and_then(|r| r.header.query_prompt())
        .map(QueryTemplate::prompt_before_text);
    let (template, declared) = match (&declared_settings.query_instruction, from_reference) {
        (Some(template), _) => (template.clone(), "the --query-instruction template"),
        (None, Some(template)) => (template, "the reference file's query prompt"),
        (None, None) => {
            return Ok(Verdict::skip(
                "no --query-instruction given, and no reference file with the model's query prompt: no instruction is declared to compare with",
            ));
        }
    };
    let filled = template.fill(&declared_settings.query_task, QUERY);
    // Sent bare, the filled string would get this server's own query instruction on top.
    let as_given = embeddings::learned(s).document_field();
    let extra: Vec<(&str, Value)> = as_given
        .iter()
        .map(|(field, value)| (*field, json!(value)))
        .collect();
    let sent_as = match &as_given {
        Some((field, value)) => {
            format!("sent with {field} {value:?}, as this server embeds bare input as a query")
        }
        None => "sent bare".to_owned(),
    };
    let expected_probe = match &as_given {
        Some((field, _)) => requests::invalid(
            Body::Json(body(s, json!(filled), &extra)),
            format!("vendor field {field} outside the OpenAI schema"),
        ),
        None => requests::probe(body(s, json!(filled), &[])),
    };
    let expected_reply = s.send(expected_probe).await?;
    let expected = match super::vectors_or_verdict(&expected_reply, 1) {
        Ok(mut v) => v.remove(0),
        Err(verdict) => return Ok(verdict),
    };
    let reply = s
        .send({
            let (field, value) = requests::as_query();
            requests::instruction_probe(s, field, value)
        })
        .await?;
    if !reply.is_success() {
        return Ok(Verdict::fail(format!(
            "input_type \"query\" answered {}: the server does not apply the query instruction; prepend it on the client",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    let got = match super::vectors_or_verdict(&reply, 1) {
        Ok(mut v) => v.remove(0),
        Err(verdict) => return Ok(verdict),
    };
    let similarity = cosine(&expected, &got);
    let tokens = format!(
        "prompt tokens {} with input_type, {} for the filled template",
        reply
            .prompt_tokens()
            .map_or("no".to_owned(), |t| t.to_string()),
        expected_reply
            .prompt_tokens()
            .map_or("no".to_owned(), |t| t.to_string())
    );
    let verdict = if similarity >= TEMPLATE_COSINE {
        Verdict::pass(format!(
            "cosine {similarity:.6} to {declared} filled with the query and {sent_as} ({tokens})"
        ))
    } else {
        Verdict::fail(format!(
            "input_type \"query\" gave cosine {similarity:.6} to {declared} filled with the query and {sent_as} ({tokens}): the server prepends another instruction, or none"
        ))
    };
    Ok(verdict.with(&reply.exchange).with(&expected_reply.exchange))
}
