//! unknown-fields: fields outside the OpenAI schema (UNK-001 … UNK-004).
//!
//! Servers split on unknown fields (OpenAI and NIM refuse them, vLLM, TEI, Ollama and
//! Dynamo ignore them); either is allowed, and the `unknown_fields` observation says
//! which. What is not allowed is the study's trap: an instruction-bearing field such as
//! `input_type` answered 200 with the bare input's vector, so retrieval quality drops
//! with no error anywhere.

use super::judging;
use super::{Check, CheckResult, check, consistency};
use crate::http::{Body, Probe, Reply};
use crate::property::{Case, Property};
use crate::session::facts::{
    FieldHandling, InstructionField, Noise, UnknownField, instruction_line, token_counts,
};
use crate::session::requests::{self, body};
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

/// A query, for the instruction fields: the kind of text they are meant for.
const QUERY: &str = "What is the capital of South Korea?";

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
    Probe::invalid(
        Body::Json(body(s, json!(requests::SENTENCE), &[(name, value)])),
        format!("unknown field {name:?}"),
    )
}

/// Ignored (a usable 200) or refused (4xx); anything else fails UNK-001.
fn treatment(reply: &Reply, name: &str) -> Result<UnknownField, Verdict> {
    if reply.is_success() {
        return judging::vectors_or_verdict(reply, 1).map(|_| UnknownField::Ignored);
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
        s.learn(|facts| facts.unknown_fields = Some(fact));
    }
    Ok(finding.into_verdict(show_field, |cases, _| {
        Verdict::pass(format!(
            "{cases} generated unknown fields: {}",
            described.join(" / ")
        ))
    }))
}

/// UNK-002: "An unknown top-level field is refused with a 4xx whose message names the
/// field, as OpenAI does."
async fn unknown_field_named(s: &Session) -> CheckResult {
    let finding = Property::new(s.settings(), GENERATED_FIELDS)
        .check(&unknown_field(), move |(name, value)| async move {
            let reply = s.send(unknown_field_probe(s, &name, value)).await?;
            let why = if reply.is_success() {
                "ignored (200): the client gets no sign that the field had no effect".to_owned()
            } else {
                match judging::refused_naming(&reply, &name) {
                    Ok(()) => return Ok::<_, ProbeError>(Case::Holds),
                    Err(why) => why,
                }
            };
            Ok(Case::Fails(Verdict::fail(why).with(&reply.exchange)))
        })
        .await?;
    Ok(finding.into_verdict(show_field, |cases, _| {
        Verdict::pass(format!(
            "all {cases} generated unknown fields were refused with a 4xx naming them"
        ))
    }))
}

/// The fields real clients send to ask for query treatment, with the value that asks
/// for it: Cohere, Voyage, NIM and the study's old server (`input_type`), instruction
/// wrappers (`instruction`), Jina (`task`), sentence-transformers and TEI
/// (`prompt_name`).
fn instruction_fields(s: &Session) -> [(&'static str, Value); 4] {
    [
        ("input_type", json!("query")),
        ("instruction", json!(s.settings().query_task)),
        ("task", json!("retrieval.query")),
        ("prompt_name", json!("query")),
    ]
}

fn instruction_probe(s: &Session, field: &str, value: Value) -> Probe {
    Probe::invalid(
        Body::Json(body(s, json!(QUERY), &[(field, value)])),
        format!("vendor field {field} outside the OpenAI schema"),
    )
}

fn bare_query_probe(s: &Session) -> Probe {
    Probe::embed(body(s, json!(QUERY), &[]))
}

/// Judged against the server's own noise: on a nondeterministic server a vector that
/// moves no more than identical requests do is the bare input's.
fn handling(bare: &[f64], bare_reply: &Reply, reply: &Reply, noise: Noise) -> FieldHandling {
    if reply.is_client_error() {
        return FieldHandling::Refused {
            status: reply.status,
        };
    }
    if !reply.is_success() {
        let why = format!("answered {}", reply.summary());
        return FieldHandling::Broken { why };
    }
    let vector = match judging::vectors_or_verdict(reply, 1) {
        Ok(mut v) => v.remove(0),
        Err(verdict) => {
            return FieldHandling::Broken {
                why: verdict.reason,
            };
        }
    };
    let (cosine, bare_tokens, tokens) = (
        cosine(bare, &vector),
        bare_reply.prompt_tokens(),
        reply.prompt_tokens(),
    );
    if noise.same(cosine) && tokens == bare_tokens {
        FieldHandling::Dropped {
            cosine,
            bare_tokens,
            tokens,
        }
    } else {
        FieldHandling::Honoured {
            cosine,
            bare_tokens,
            tokens,
        }
    }
}

/// UNK-003: "A request carrying input_type, instruction, task or prompt_name is honoured
/// (its vector or token count differs from the bare input's) or refused with a 4xx;
/// never answered with the bare input's vector and usage."
async fn instruction_fields_not_dropped(s: &Session) -> CheckResult {
    let bare_reply = s.send(bare_query_probe(s)).await?;
    let bare = match judging::vectors_or_verdict(&bare_reply, 1) {
        Ok(mut v) => v.remove(0),
        Err(verdict) => return Ok(verdict),
    };
    let noise = consistency::noise(s).await?.unwrap_or(Noise::unmeasured());
    let mut fields = Vec::new();
    let mut dropped = Vec::new();
    let mut broken = Vec::new();
    let mut evidence = Vec::new();
    for (field, value) in instruction_fields(s) {
        let reply = s.send(instruction_probe(s, field, value)).await?;
        let handling = handling(&bare, &bare_reply, &reply, noise);
        match &handling {
            FieldHandling::Refused { .. } | FieldHandling::Honoured { .. } => {}
            FieldHandling::Dropped {
                cosine,
                bare_tokens,
                tokens,
            } => {
                let counts = token_counts(*bare_tokens, *tokens);
                dropped.push(format!("{field} (cosine {cosine:.6}; {counts})"));
                evidence.push(reply.exchange.clone());
            }
            FieldHandling::Broken { why } => {
                broken.push(format!("{field}: {why}"));
                evidence.push(reply.exchange.clone());
            }
        }
        fields.push(InstructionField { field, handling });
    }
    let fact = s.searched(fields, instruction_fields(s).len() as u32 + 1);
    let seen = fact.value.iter().map(instruction_line).collect::<Vec<_>>();
    s.learn(|facts| facts.instruction_fields = Some(fact));
    if !dropped.is_empty() {
        let within = if noise.deterministic() {
            String::new()
        } else {
            format!(
                " (judged against this nondeterministic server's own noise: identical requests gave cosine {:.6})",
                noise.cosine
            )
        };
        broken.push(format!(
            "silently dropped, 200 with the bare input's vector and usage: {}{within}; the instruction never reached the model, and retrieval quality drops with no error",
            dropped.join("; ")
        ));
    }
    Ok(if broken.is_empty() {
        Verdict::pass(seen.join("; ")).with(&bare_reply.exchange)
    } else {
        Verdict::fail(broken.join("; "))
            .with_all(&evidence)
            .with(&bare_reply.exchange)
    })
}

/// UNK-004: "With --query-instruction, input_type \"query\" gives a vector with cosine
/// similarity of at least 0.999 to the template-filled string sent without input_type."
async fn query_instruction_applied(s: &Session) -> CheckResult {
    let Some(template) = &s.settings().query_instruction else {
        return Ok(Verdict::skip(
            "no --query-instruction given: no instruction is declared to compare with",
        ));
    };
    let filled = template.fill(&s.settings().query_task, QUERY);
    let expected_reply = s.send(Probe::embed(body(s, json!(filled), &[]))).await?;
    let expected = match judging::vectors_or_verdict(&expected_reply, 1) {
        Ok(mut v) => v.remove(0),
        Err(verdict) => return Ok(verdict),
    };
    let reply = s
        .send(instruction_probe(s, "input_type", json!("query")))
        .await?;
    if !reply.is_success() {
        return Ok(Verdict::fail(format!(
            "input_type \"query\" answered {}: the server does not apply the query instruction; prepend it on the client",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    let got = match judging::vectors_or_verdict(&reply, 1) {
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
            "cosine {similarity:.6} to the template-filled string ({tokens})"
        ))
    } else {
        Verdict::fail(format!(
            "input_type \"query\" gave cosine {similarity:.6} to the template-filled string sent bare ({tokens}): the server prepends another instruction, or none"
        ))
    };
    Ok(verdict.with(&reply.exchange).with(&expected_reply.exchange))
}
