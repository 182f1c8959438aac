//! The JSON Schemas of `specs/schemas/`, compiled once and applied with `jsonschema`.
//!
//! Keeping the shapes as schema files rather than Rust structs means the contract a
//! server is judged by is data a server author can read and reuse in their own tests.

use jsonschema::Validator;
use serde_json::Value;
use std::sync::OnceLock;

const RESPONSE: &str = include_str!("../../../specs/schemas/embedding-response.schema.json");
const REQUEST: &str = include_str!("../../../specs/schemas/embedding-request.schema.json");
const ERROR: &str = include_str!("../../../specs/schemas/error.schema.json");
const CATALOGUE: &str = include_str!("../../../specs/schemas/catalogue.schema.json");
const REPORT: &str = include_str!("../../../specs/schemas/report.schema.json");

/// Compiled validators for every schema the suite applies.
pub struct Schemas {
    response: Validator,
    request: Validator,
    error: Validator,
    catalogue: Validator,
    report: Validator,
}

impl Schemas {
    /// The shared compiled schemas. The schema files are part of the build and their
    /// validity is a self-test, so compiling them cannot fail at run time.
    pub fn get() -> &'static Schemas {
        static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
        SCHEMAS.get_or_init(|| Schemas {
            response: compile(RESPONSE),
            request: compile(REQUEST),
            error: compile(ERROR),
            catalogue: compile(CATALOGUE),
            report: compile(REPORT),
        })
    }

    /// Violations of the success-response schema, one line each (empty when valid).
    pub fn response_problems(&self, body: &Value) -> Vec<String> {
        problems(&self.response, body)
    }

    /// Violations of the OpenAI request schema; used to keep "valid" probes honest.
    pub fn request_problems(&self, body: &Value) -> Vec<String> {
        problems(&self.request, body)
    }

    /// Violations of the OpenAI error-body schema.
    pub fn error_problems(&self, body: &Value) -> Vec<String> {
        problems(&self.error, body)
    }

    pub fn catalogue_problems(&self, catalogue: &Value) -> Vec<String> {
        problems(&self.catalogue, catalogue)
    }

    pub fn report_problems(&self, report: &Value) -> Vec<String> {
        problems(&self.report, report)
    }

    /// The report schema text, published next to every `report.json`.
    pub fn report_schema_text() -> &'static str {
        REPORT
    }
}

fn compile(text: &str) -> Validator {
    let schema: Value = serde_json::from_str(text).expect("shipped schema is JSON");
    jsonschema::validator_for(&schema).expect("shipped schema compiles")
}

fn problems(validator: &Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            format!("{at}: {e}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_shipped_schema_compiles() {
        let _ = Schemas::get();
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
    fn response_without_usage_names_the_field() {
        let body = json!({"object": "list", "data": [], "model": "m"});
        let problems = Schemas::get().response_problems(&body);
        assert!(problems.iter().any(|p| p.contains("usage")), "{problems:?}");
    }

    #[test]
    fn flat_error_body_is_not_openai_shaped() {
        let dynamo_style = json!({"message": "bad", "type": "Bad Request", "code": 400});
        assert!(!Schemas::get().error_problems(&dynamo_style).is_empty());
        let openai = json!({"error": {"message": "bad", "type": "invalid_request_error", "param": null, "code": null}});
        assert!(Schemas::get().error_problems(&openai).is_empty());
    }

    #[test]
    fn request_schema_rejects_unknown_fields() {
        let body = json!({"model": "m", "input": "x", "input_type": "query"});
        assert!(!Schemas::get().request_problems(&body).is_empty());
    }
}
