//! Token-id input read in another server's vocabulary.

use crate::wire::Incoming;
use serde_json::Value;

/// cl100k_base ids and the text each decodes to (tiktoken 0.14.0): the ids of the
/// client profiles' probe texts, "hello world" and "embedding servers".
pub(crate) const CL100K: [(u64, &str); 4] = [
    (15339, "hello"),
    (1917, " world"),
    (95711, "embedding"),
    (16692, " servers"),
];

/// The text `ids` decode to, when every id is in [`CL100K`].
fn decode(ids: &[Value]) -> Option<String> {
    let pieces = ids.iter().map(|id| {
        let id = id.as_u64()?;
        CL100K
            .iter()
            .find(|(known, _)| *known == id)
            .map(|(_, text)| *text)
    });
    pieces.collect::<Option<Vec<&str>>>().map(|p| p.concat())
}

/// Replaces each token array of the input (`[int]` or `[[int], …]`) that decodes in
/// [`CL100K`] by its text; arrays with any other id stay token ids.
pub(in crate::quirks) fn cl100k_token_ids(request: &mut Incoming) {
    request.edit_fields(|fields| {
        let Some(Value::Array(items)) = fields.get_mut("input") else {
            return;
        };
        if items.iter().all(Value::is_number) {
            if let Some(text) = decode(items) {
                fields.insert("input".to_owned(), Value::String(text));
            }
            return;
        }
        for item in items.iter_mut() {
            if let Value::Array(ids) = item
                && let Some(text) = decode(ids)
            {
                *item = Value::String(text);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn post(input: Value) -> Incoming {
        Incoming::embed_post(&json!({"input": input}))
    }

    fn input(request: &Incoming) -> Value {
        request.json().unwrap()["input"].clone()
    }

    #[test]
    fn known_ids_become_their_text_and_others_stay_ids() {
        let mut request = post(json!([[15339, 1917], [101, 102]]));
        cl100k_token_ids(&mut request);
        assert_eq!(input(&request), json!(["hello world", [101, 102]]));
        let mut flat = post(json!([95711, 16692]));
        cl100k_token_ids(&mut flat);
        assert_eq!(input(&flat), json!("embedding servers"));
    }

    #[test]
    fn text_input_is_left_alone() {
        let mut request = post(json!(["hello world"]));
        cl100k_token_ids(&mut request);
        assert_eq!(input(&request), json!(["hello world"]));
    }
}
