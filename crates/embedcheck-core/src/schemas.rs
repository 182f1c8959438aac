//! The JSON Schemas of `specs/schemas/` that judge a server's bodies, applied by a
//! small validator of the keywords they use.
//!
//! Keeping the shapes as schema files rather than Rust structs means the contract a
//! server is judged by is data a server author can read and reuse in their own tests.
//! The audit applies two of them (the success body and the OpenAI error body); a full
//! JSON Schema implementation would cost more build time than the rest of the engine
//! for that, so this module knows exactly the keywords those files use and refuses to
//! load a schema with any other (a later edit cannot be silently ignored). A self-test
//! holds its verdicts against a complete implementation on valid and broken bodies.

use serde_json::{Map, Value};
use std::sync::OnceLock;

const RESPONSE: &str = include_str!("../specs/schemas/embedding-response.schema.json");
const ERROR: &str = include_str!("../specs/schemas/error.schema.json");
const REPORT: &str = include_str!("../specs/schemas/report.schema.json");

/// Keywords that only describe; they never change a verdict.
const ANNOTATIONS: [&str; 4] = ["$schema", "$id", "title", "description"];

/// Keywords the validator applies.
const APPLIED: [&str; 11] = [
    "type",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "minLength",
    "minItems",
    "oneOf",
];

/// The schemas the audit applies, loaded once.
pub struct Schemas {
    response: Value,
    error: Value,
}

impl Schemas {
    /// The shared schemas. The files are part of the build and a self-test loads them,
    /// so loading cannot fail at run time.
    pub fn get() -> &'static Schemas {
        static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
        SCHEMAS.get_or_init(|| Schemas {
            response: load(RESPONSE),
            error: load(ERROR),
        })
    }

    /// Violations of the success-response schema, one line each (empty when valid).
    pub(crate) fn response_problems(&self, body: &Value) -> Vec<String> {
        problems(&self.response, body)
    }

    /// Violations of the OpenAI error-body schema.
    pub(crate) fn error_problems(&self, body: &Value) -> Vec<String> {
        problems(&self.error, body)
    }

    /// The report schema text, published next to every `report.json`.
    pub fn report_schema_text() -> &'static str {
        REPORT
    }
}

/// Parses a shipped schema and checks that every keyword in it is one this module
/// applies or an annotation.
fn load(text: &str) -> Value {
    let schema: Value = serde_json::from_str(text).expect("shipped schema is JSON");
    if let Some(keyword) = unsupported_keyword(&schema) {
        panic!("shipped schema uses {keyword:?}, which the validator does not apply");
    }
    schema
}

fn unsupported_keyword(schema: &Value) -> Option<String> {
    let object = schema.as_object()?;
    for (keyword, value) in object {
        if !APPLIED.contains(&keyword.as_str()) && !ANNOTATIONS.contains(&keyword.as_str()) {
            return Some(keyword.clone());
        }
        let nested: Vec<&Value> = match keyword.as_str() {
            "properties" => value
                .as_object()
                .map_or(Vec::new(), |p| p.values().collect()),
            "items" | "additionalProperties" => vec![value],
            "oneOf" => value.as_array().map_or(Vec::new(), |v| v.iter().collect()),
            _ => Vec::new(),
        };
        if let Some(found) = nested.into_iter().find_map(unsupported_keyword) {
            return Some(found);
        }
    }
    None
}

/// Every violation, as `/json/pointer: message`.
fn problems(schema: &Value, instance: &Value) -> Vec<String> {
    let mut found = Vec::new();
    check(schema, instance, "", &mut found);
    found
        .into_iter()
        .map(|(path, message)| problem_line(&path, message))
        .collect()
}

/// `/json/pointer: message`, the root shown as `/`: one wording for this validator and
/// the complete implementation its self-test compares it with.
fn problem_line(path: &str, message: impl std::fmt::Display) -> String {
    let at = if path.is_empty() { "/" } else { path };
    format!("{at}: {message}")
}

type Found = Vec<(String, String)>;

fn check(schema: &Value, instance: &Value, path: &str, found: &mut Found) {
    let Some(schema) = schema.as_object() else {
        return;
    };
    if let Some(expected) = schema.get("const")
        && expected != instance
    {
        found.push((path.to_owned(), format!("{expected} was expected")));
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(instance)
    {
        let list = Value::Array(allowed.clone());
        found.push((path.to_owned(), format!("{instance} is not one of {list}")));
    }
    if let Some(types) = schema.get("type")
        && !has_type(types, instance)
    {
        found.push((
            path.to_owned(),
            format!("{instance} {}", type_mismatch(types)),
        ));
        return;
    }
    check_number(schema, instance, path, found);
    check_string(schema, instance, path, found);
    if let Value::Array(items) = instance {
        check_array(schema, items, path, found);
    }
    if let Value::Object(fields) = instance {
        check_object(schema, fields, path, found);
    }
    if let Some(Value::Array(choices)) = schema.get("oneOf") {
        let matching = choices
            .iter()
            .filter(|choice| problems(choice, instance).is_empty())
            .count();
        if matching != 1 {
            let why = if matching == 0 {
                "is not valid under any of the schemas listed in the 'oneOf' keyword"
            } else {
                "is valid under more than one of the schemas listed in the 'oneOf' keyword"
            };
            found.push((path.to_owned(), format!("{instance} {why}")));
        }
    }
}

fn has_type(types: &Value, instance: &Value) -> bool {
    let one = |name: &str| match name {
        "object" => instance.is_object(),
        "array" => instance.is_array(),
        "string" => instance.is_string(),
        "boolean" => instance.is_boolean(),
        "null" => instance.is_null(),
        "number" => instance.is_number(),
        "integer" => is_integer(instance),
        _ => false,
    };
    match types {
        Value::String(name) => one(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(one),
        _ => true,
    }
}

/// `is not of type "integer"`, or `is not of types "null", "string"` for a list (sorted,
/// in the wording of the complete implementation the self-test holds this one to).
fn type_mismatch(types: &Value) -> String {
    match types {
        Value::Array(names) => {
            let mut names: Vec<String> = names.iter().map(Value::to_string).collect();
            names.sort();
            format!("is not of types {}", names.join(", "))
        }
        one => format!("is not of type {one}"),
    }
}

/// An integer in JSON Schema's sense: a number with no fractional part (`1.0` is one).
fn is_integer(instance: &Value) -> bool {
    match instance {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

fn check_number(schema: &Map<String, Value>, instance: &Value, path: &str, found: &mut Found) {
    let (Some(minimum), Some(value)) = (
        schema.get("minimum").and_then(Value::as_f64),
        instance.as_f64(),
    ) else {
        return;
    };
    if value < minimum {
        let shown = &schema["minimum"];
        found.push((
            path.to_owned(),
            format!("{instance} is less than the minimum of {shown}"),
        ));
    }
}

fn check_string(schema: &Map<String, Value>, instance: &Value, path: &str, found: &mut Found) {
    let (Some(min), Some(text)) = (
        schema.get("minLength").and_then(Value::as_u64),
        instance.as_str(),
    ) else {
        return;
    };
    if (text.chars().count() as u64) < min {
        let unit = if min == 1 { "character" } else { "characters" };
        found.push((
            path.to_owned(),
            format!("{instance} is shorter than {min} {unit}"),
        ));
    }
}

fn check_array(schema: &Map<String, Value>, items: &[Value], path: &str, found: &mut Found) {
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && (items.len() as u64) < min
    {
        found.push((
            path.to_owned(),
            format!("{} has less than {min} items", Value::Array(items.to_vec())),
        ));
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            check(item_schema, item, &format!("{path}/{i}"), found);
        }
    }
}

fn check_object(
    schema: &Map<String, Value>,
    fields: &Map<String, Value>,
    path: &str,
    found: &mut Found,
) {
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !fields.contains_key(name) {
                found.push((
                    path.to_owned(),
                    format!("\"{name}\" is a required property"),
                ));
            }
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, value) in fields {
        let at = format!("{path}/{}", escape(name));
        match (
            properties.and_then(|p| p.get(name)),
            schema.get("additionalProperties"),
        ) {
            (Some(property), _) => check(property, value, &at, found),
            (None, Some(Value::Bool(false))) => found.push((
                path.to_owned(),
                format!("Additional properties are not allowed ('{name}' was unexpected)"),
            )),
            (None, Some(extra @ Value::Object(_))) => check(extra, value, &at, found),
            (None, _) => {}
        }
    }
}

/// A JSON Pointer token: `~` and `/` escaped.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A complete JSON Schema implementation, for self-tests only: the report and
/// catalogue schemas (which use more keywords) and the cross-check of this module.
#[cfg(test)]
pub(crate) mod full {
    use serde_json::Value;

    pub(crate) const CATALOGUE: &str = include_str!("../specs/schemas/catalogue.schema.json");
    pub(crate) const REQUEST: &str = include_str!("../specs/schemas/embedding-request.schema.json");

    /// Every violation of `schema_text`, as `/json/pointer: message`.
    pub(crate) fn problems(schema_text: &str, instance: &Value) -> Vec<String> {
        let schema: Value = serde_json::from_str(schema_text).expect("shipped schema is JSON");
        let (mut schemas, mut compiler) = (boon::Schemas::new(), boon::Compiler::new());
        let location = "urn:embedcheck:schema-under-test";
        compiler
            .add_resource(location, schema)
            .expect("shipped schema is a resource");
        let index = compiler
            .compile(location, &mut schemas)
            .expect("shipped schema compiles");
        let mut found = Vec::new();
        if let Err(error) = schemas.validate(instance, index) {
            leaves(&error, &mut found);
        }
        found
    }

    /// The validator nests its errors under the schema and `$ref`s that applied them;
    /// a keyword's own error (an `anyOf` included) is the one a reader acts on.
    fn leaves(error: &boon::ValidationError, found: &mut Vec<String>) {
        use boon::ErrorKind::{Group, Reference, Schema};
        match error.kind {
            Group | Schema { .. } | Reference { .. } => {
                error.causes.iter().for_each(|cause| leaves(cause, found));
            }
            _ => found.push(super::problem_line(
                &error.instance_location.to_string(),
                &error.kind,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Bodies real servers sent or could send, valid and broken in every way the two
    /// applied schemas can tell.
    fn bodies() -> Vec<Value> {
        vec![
            json!({"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1]}], "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
            json!({"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": "AAAA"}], "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}, "id": "x"}),
            json!({"object": "list", "data": [], "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
            json!({"object": "lists", "data": [{"index": -1, "embedding": 7}], "model": "", "usage": {"prompt_tokens": 1.5}}),
            json!({"object": "list", "data": {"0": []}, "model": 3, "usage": null}),
            json!({"data": [{"object": "embedding", "index": 1.0, "embedding": [1, "x"]}]}),
            json!([1, 2]),
            json!({"error": {"message": "bad", "type": "invalid_request_error", "param": null, "code": null}}),
            json!({"error": {"message": "", "type": 4, "param": 1, "code": "c"}}),
            json!({"message": "bad", "type": "Bad Request", "code": 400}),
            json!({"detail": [{"loc": ["body", "input"]}]}),
            json!({"error": "flat string"}),
        ]
    }

    #[test]
    fn verdicts_agree_with_a_complete_implementation() {
        for (schema, text) in [
            (&Schemas::get().response, RESPONSE),
            (&Schemas::get().error, ERROR),
        ] {
            for body in bodies() {
                let ours = problems(schema, &body);
                let theirs = full::problems(text, &body);
                assert_eq!(
                    ours.is_empty(),
                    theirs.is_empty(),
                    "{body}: {ours:?} vs {theirs:?}"
                );
                let paths = |p: &[String]| {
                    let mut at: Vec<String> = p
                        .iter()
                        .map(|l| l.split(": ").next().unwrap_or("").to_owned())
                        .collect();
                    at.sort();
                    at.dedup();
                    at
                };
                assert_eq!(
                    paths(&ours),
                    paths(&theirs),
                    "{body}: {ours:?} vs {theirs:?}"
                );
            }
        }
    }

    #[test]
    fn request_schema_rejects_unknown_fields() {
        let body = json!({"model": "m", "input": "x", "input_type": "query"});
        assert!(!full::problems(full::REQUEST, &body).is_empty());
    }

    #[test]
    fn every_applied_schema_loads() {
        let _ = Schemas::get();
    }

    #[test]
    fn a_keyword_the_validator_does_not_apply_is_refused() {
        let schema = json!({"type": "object", "properties": {"id": {"pattern": "^x"}}});
        assert_eq!(unsupported_keyword(&schema).as_deref(), Some("pattern"));
    }

    #[test]
    fn openai_example_response_is_valid() {
        let body = json!({
            "object": "list",
            "data": [{"object": "embedding", "index": 0, "embedding": [0.1, -0.2]}],
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 5, "total_tokens": 5}
        });
        assert!(Schemas::get().response_problems(&body).is_empty());
    }

    #[test]
    fn response_without_model_names_the_field_as_before() {
        let body =
            json!({"object": "list", "data": [], "usage": {"prompt_tokens": 1, "total_tokens": 1}});
        assert_eq!(
            Schemas::get().response_problems(&body),
            ["/: \"model\" is a required property"]
        );
    }

    #[test]
    fn problems_name_the_instance_path() {
        let body = json!({
            "object": "list",
            "data": [{"object": "embedding", "index": -1, "embedding": 7}],
            "model": "m",
            "usage": {"prompt_tokens": 1.5, "total_tokens": 1}
        });
        let problems = Schemas::get().response_problems(&body);
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("/data/0/index: -1 is less than"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("/data/0/embedding: 7 is not valid"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("/usage/prompt_tokens: 1.5 is not of type"))
        );
    }

    #[test]
    fn flat_error_body_is_not_openai_shaped() {
        let dynamo_style = json!({"message": "bad", "type": "Bad Request", "code": 400});
        assert!(!Schemas::get().error_problems(&dynamo_style).is_empty());
        let openai = json!({"error": {"message": "bad", "type": "invalid_request_error", "param": null, "code": null}});
        assert!(Schemas::get().error_problems(&openai).is_empty());
    }
}
