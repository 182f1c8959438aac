//! What a server says of itself, kept beside a recorded baseline: the `Server` header of
//! its embeddings answers and the fields that name an engine, model or build on the
//! pages engines describe themselves on (vLLM's `/version`, TEI's `/info`, llama.cpp's
//! `/props`). A replay reports every field that changed and judges none: a fingerprint
//! misses real changes (one version string over other weights or pooling) and fires on
//! renames, so the vectors decide.

use crate::contracts::embeddings::requests;
use crate::http::probe::Resource;
use crate::http::{IdentityPage, Probe};
use crate::session::Session;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Field name → value, e.g. `GET /info model_sha` → `a1b2…`, `Server` → `uvicorn`.
pub type Fingerprint = BTreeMap<String, String>;

/// The key of the `Server` header in a [`Fingerprint`].
const SERVER_HEADER: &str = "Server";

/// Parts of a field's name that mark it as naming an engine, model or build; other
/// fields (sampling defaults, slot counts, uptimes) are left out.
const IDENTIFYING: [&str; 11] = [
    "version",
    "model",
    "sha",
    "dtype",
    "build",
    "pooling",
    "n_ctx",
    "max_input",
    "commit",
    "revision",
    "quantiz",
];

/// At most this many fields a page, and characters a value.
const FIELDS_PER_PAGE: usize = 16;
const VALUE_CHARS: usize = 120;

/// One field whose value differs between the recording and now (`None`: absent).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FingerprintChange {
    pub field: String,
    pub recorded: Option<String>,
    pub now: Option<String>,
}

/// The fingerprint of the server of `s`: the `Server` header of its first successful
/// embeddings answer in the log, and each identity page it serves (one GET each).
pub(crate) async fn of(s: &Session) -> Fingerprint {
    let mut fingerprint = Fingerprint::new();
    let server = s.log().into_iter().find_map(|logged| {
        let reply = logged.reply.filter(|r| r.is_success())?;
        (logged.resource == Resource::Contract(requests::ROUTE)).then_some(reply.server.clone())?
    });
    if let Some(server) = server {
        fingerprint.insert(SERVER_HEADER.to_owned(), cut(&server));
    }
    for page in IdentityPage::ALL {
        let Ok(reply) = s.send(Probe::identity(page)).await else {
            continue;
        };
        if reply.is_success() {
            fingerprint.extend(page_fields(page, reply.json.as_ref(), &reply.body));
        }
    }
    fingerprint
}

/// The identifying fields of one page's answer: a JSON object's scalars (nested objects
/// one level down, as `parent.field`), else the text's first line.
fn page_fields(page: IdentityPage, json: Option<&Value>, body: &[u8]) -> Fingerprint {
    let label = |name: &str| format!("GET {} {name}", page.path());
    let Some(Value::Object(fields)) = json else {
        let text = String::from_utf8_lossy(body);
        let first = text.lines().next().unwrap_or("").trim();
        return match first {
            "" => Fingerprint::new(),
            line => [(format!("GET {}", page.path()), cut(line))].into(),
        };
    };
    let mut found = Vec::new();
    for (name, value) in fields {
        match value {
            Value::Object(inner) => found.extend(
                inner
                    .iter()
                    .map(|(field, v)| (format!("{name}.{field}"), v)),
            ),
            other => found.push((name.clone(), other)),
        }
    }
    found
        .into_iter()
        .filter(|(name, _)| identifying(name))
        .filter_map(|(name, value)| scalar(value).map(|v| (label(&name), cut(&v))))
        .take(FIELDS_PER_PAGE)
        .collect()
}

/// Whether the last part of a field's name marks it as naming an engine, model or build.
fn identifying(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name).to_lowercase();
    IDENTIFYING.iter().any(|part| last.contains(part))
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(VALUE_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Every field whose value differs between `recorded` and `now`, in name order.
pub(crate) fn changes(recorded: &Fingerprint, now: &Fingerprint) -> Vec<FingerprintChange> {
    let fields: std::collections::BTreeSet<&String> = recorded.keys().chain(now.keys()).collect();
    fields
        .into_iter()
        .filter(|field| recorded.get(*field) != now.get(*field))
        .map(|field| FingerprintChange {
            field: field.clone(),
            recorded: recorded.get(field).cloned(),
            now: now.get(field).cloned(),
        })
        .collect()
}

impl FingerprintChange {
    /// `GET /version version: 0.31.0 when recorded, 0.32.0 now`.
    pub fn sentence(&self) -> String {
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "absent".to_owned());
        format!(
            "{}: {} when recorded, {} now",
            self.field,
            shown(&self.recorded),
            shown(&self.now)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifying_fields_are_kept_and_others_left_out() {
        // TEI's /info and llama.cpp's /props, abridged.
        let info = json!({"model_id": "BAAI/bge-small-en-v1.5", "model_sha": "5c38ec7",
            "model_dtype": "float16", "max_concurrent_requests": 512, "version": "1.9.3",
            "max_input_length": 512});
        let fields = page_fields(IdentityPage::Info, Some(&info), b"");
        assert_eq!(
            fields.keys().collect::<Vec<_>>(),
            [
                "GET /info max_input_length",
                "GET /info model_dtype",
                "GET /info model_id",
                "GET /info model_sha",
                "GET /info version"
            ]
        );
        let props = json!({"default_generation_settings": {"n_ctx": 512, "temperature": 0.8},
            "total_slots": 1, "build_info": "b6000-abc", "model_path": "minilm.gguf"});
        let fields = page_fields(IdentityPage::Props, Some(&props), b"");
        assert_eq!(
            fields["GET /props default_generation_settings.n_ctx"],
            "512"
        );
        assert_eq!(fields["GET /props build_info"], "b6000-abc");
        assert_eq!(fields.len(), 3, "{fields:?}");
    }

    #[test]
    fn a_text_page_keeps_its_first_line_cut_short() {
        let long = "v".repeat(300);
        let fields = page_fields(IdentityPage::Version, None, long.as_bytes());
        assert_eq!(fields["GET /version"].chars().count(), VALUE_CHARS + 1);
        assert!(page_fields(IdentityPage::Version, None, b"").is_empty());
    }

    #[test]
    fn changes_name_each_differing_field_and_absent_ones() {
        let then: Fingerprint = [
            ("Server".to_owned(), "uvicorn".to_owned()),
            ("GET /version version".to_owned(), "0.31.0".to_owned()),
        ]
        .into();
        let now: Fingerprint = [("Server".to_owned(), "uvicorn".to_owned())].into();
        let found = changes(&then, &now);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].sentence(),
            "GET /version version: 0.31.0 when recorded, absent now"
        );
        assert!(changes(&then, &then).is_empty());
    }
}
