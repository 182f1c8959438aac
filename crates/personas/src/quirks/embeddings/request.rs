//! Quirks that act on the request before the engine sees it.

use super::shape::{self, PYDANTIC_STRINGS, SERDE};
use crate::wire::{Answer, Incoming};
use reference_server::{Config, tokenize};
use serde_json::{Value, json};

/// The fields of OpenAI's `CreateEmbeddingRequest`.
pub(in crate::quirks) const OPENAI_FIELDS: [&str; 5] =
    ["model", "input", "encoding_format", "dimensions", "user"];

/// What an empty input becomes for a server that embeds it: the model still reads its
/// begin-of-sequence token.
const BOS: &str = "<s>";

pub(in crate::quirks) fn drop_unknown_fields(request: &mut Incoming, keep: &[&str]) {
    request.edit_fields(|fields| {
        fields.retain(|name, _| OPENAI_FIELDS.contains(&name.as_str()) || keep.contains(&&**name));
    });
}

/// Drops optional fields sent as `null`; `input` and `model` are required, so a
/// `null` there is still refused.
pub(in crate::quirks) fn drop_null_optionals(request: &mut Incoming) {
    request.edit_fields(|fields| {
        fields.retain(|name, value| !value.is_null() || name == "input" || name == "model");
    });
}

pub(in crate::quirks) fn float_as_base64(request: &mut Incoming) {
    request.edit_fields(|fields| {
        if fields.get("encoding_format") == Some(&json!("float")) {
            fields.insert("encoding_format".to_owned(), json!("base64"));
        }
    });
}

pub(in crate::quirks) fn base64_when_unset(request: &mut Incoming) {
    request.edit_fields(|fields| {
        fields
            .entry("encoding_format")
            .or_insert_with(|| json!("base64"));
    });
}

pub(in crate::quirks) fn drop_unless_base64(request: &mut Incoming) {
    request.edit_fields(|fields| {
        if fields.get("encoding_format") != Some(&json!("base64")) {
            fields.remove("encoding_format");
        }
    });
}

pub(in crate::quirks) fn drop_fields(request: &mut Incoming, names: &[&str]) {
    request.edit_fields(|fields| fields.retain(|name, _| !names.contains(&name.as_str())));
}

pub(in crate::quirks) fn prepend_instruction(request: &mut Incoming) {
    let instruction = request
        .fields()
        .and_then(|mut f| f.remove("instruction"))
        .and_then(|v| v.as_str().map(str::to_owned));
    drop_fields(request, &["instruction"]);
    if let Some(instruction) = instruction {
        request.map_texts(|text| format!("{instruction}{text}"));
    }
}

pub(in crate::quirks) fn serve_any_model(request: &mut Incoming, served: &str) {
    request.edit_fields(|fields| {
        if fields.contains_key("model") {
            fields.insert("model".to_owned(), json!(served));
        }
    });
}

/// Drops an integer `dimensions` for which `drop` holds.
pub(in crate::quirks) fn drop_dimensions_where(request: &mut Incoming, drop: impl Fn(i64) -> bool) {
    request.edit_fields(|fields| {
        if fields
            .get("dimensions")
            .and_then(Value::as_i64)
            .is_some_and(drop)
        {
            fields.remove("dimensions");
        }
    });
}

pub(in crate::quirks) fn round_dimensions_up(
    request: &mut Incoming,
    multiple: usize,
    native: usize,
) {
    request.edit_fields(|fields| {
        let d = fields
            .get("dimensions")
            .and_then(Value::as_u64)
            .map(|d| d as usize);
        if let Some(d) = d.filter(|d| (1..native).contains(d)) {
            fields.insert(
                "dimensions".to_owned(),
                json!(d.next_multiple_of(multiple).min(native)),
            );
        }
    });
}

/// Cuts every text input to at most `max` tokens of whole words, keeping its start or
/// its end; inputs within the limit are left exactly as sent.
pub(in crate::quirks) fn truncate_texts(request: &mut Incoming, config: &Config, keep_end: bool) {
    let (max, vocab) = (config.max_input_tokens, config.vocab_size);
    cut_texts(request, vocab, max, keep_end, usize::MAX);
}

/// Cuts every text input the engine accepts (within its limit) to its first `kept`
/// tokens of whole words; longer inputs are left for the engine to refuse.
pub(in crate::quirks) fn embed_only_first(request: &mut Incoming, config: &Config, kept: usize) {
    let (max, vocab) = (config.max_input_tokens, config.vocab_size);
    cut_texts(request, vocab, kept, false, max);
}

/// Cuts each text of more than `max` tokens (and at most `up_to`) to `max` tokens of
/// whole words, keeping its start or its end.
fn cut_texts(request: &mut Incoming, vocab: u32, max: usize, keep_end: bool, up_to: usize) {
    request.map_texts(|text| {
        let tokens = tokenize(text, vocab).len();
        if tokens <= max || tokens > up_to {
            return text.to_owned();
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        let tokens = |word: &&str| tokenize(word, vocab).len();
        if keep_end {
            let kept = words_within(words.iter().rev().map(tokens), max);
            words[words.len() - kept..].join(" ")
        } else {
            words[..words_within(words.iter().map(tokens), max)].join(" ")
        }
    });
}

/// How many words, taken in order, fit in `max` tokens. Words split on whitespace
/// tokenize independently, so their counts add up to the text's.
fn words_within(tokens_per_word: impl Iterator<Item = usize>, max: usize) -> usize {
    let mut total = 0;
    tokens_per_word
        .take_while(|n| {
            total += n;
            total <= max
        })
        .count()
}

/// Removes the items over `max` tokens from a batch of texts.
pub(in crate::quirks) fn drop_overlength_batch_items(request: &mut Incoming, config: &Config) {
    let (max, vocab) = (config.max_input_tokens, config.vocab_size);
    request.edit_fields(|fields| {
        if let Some(Value::Array(items)) = fields.get_mut("input")
            && items.len() > 1
            && items.iter().all(Value::is_string)
        {
            items.retain(|item| {
                item.as_str()
                    .is_some_and(|t| tokenize(t, vocab).len() <= max)
            });
        }
    });
}

pub(in crate::quirks) fn embed_empty_strings(request: &mut Incoming) {
    request.map_texts(|text| {
        if text.is_empty() {
            BOS.to_owned()
        } else {
            text.to_owned()
        }
    });
}

pub(in crate::quirks) fn non_ascii_as_question_marks(request: &mut Incoming) {
    request.map_texts(|text| {
        text.chars()
            .map(|c| if c.is_ascii() { c } else { '?' })
            .collect()
    });
}

/// Each precomposed Hangul syllable cut to its leading consonant (a conjoining choseong
/// jamo), as llama.cpp's WordPiece keeps of a syllable after decomposing it.
pub(in crate::quirks) fn hangul_leading_consonants(request: &mut Incoming) {
    request.map_texts(|text| text.chars().map(leading_consonant).collect());
}

/// The choseong of a Hangul syllable (U+AC00…U+D7A3: 19 × 21 × 28 syllables); any
/// other character as it is.
fn leading_consonant(c: char) -> char {
    const FIRST: u32 = 0xAC00;
    const PER_LEADING: u32 = 21 * 28;
    match u32::from(c).checked_sub(FIRST) {
        Some(offset) if offset < 19 * PER_LEADING => {
            char::from_u32(0x1100 + offset / PER_LEADING).unwrap_or(c)
        }
        _ => c,
    }
}

/// Keeps a decomposed spelling decomposed through the engine's NFC normaliser: a
/// combining grapheme joiner before each combining mark or medial or final Hangul jamo
/// blocks its composition, so the text gets other tokens than its composed twin, as a
/// tokenizer without the normaliser gives it. A composed text is left as it is.
pub(in crate::quirks) fn unnormalised_unicode(request: &mut Incoming) {
    const JOINER: char = '\u{034F}';
    let composes =
        |c: char| matches!(u32::from(c), 0x0300..=0x036F | 0x1160..=0x11FF | 0x3099..=0x309A);
    request.map_texts(|text| {
        text.chars()
            .flat_map(|c| composes(c).then_some(JOINER).into_iter().chain([c]))
            .collect()
    });
}

/// Dynamo's answer to `input: []`: the aggregator's empty response.
pub(in crate::quirks) fn empty_stream(request: &Incoming) -> Option<Answer> {
    let empty = request.input().is_some_and(|i| i == json!([]));
    empty.then(|| {
        let body = json!({
            "object": "list",
            "model": "embedding",
            "data": [],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        });
        Answer::json_body(200, &body)
    })
}

/// axum's `Json<T>` rejections, with axum's wording.
pub(in crate::quirks) fn axum_rejection(request: &Incoming) -> Option<Answer> {
    if !request.is_embed_post() {
        return None;
    }
    if !request.has_json_content_type() {
        return Some(Answer::plain_text(
            415,
            "Expected request with `Content-Type: application/json`",
        ));
    }
    let body = match serde_json::from_slice::<Value>(&request.body) {
        Ok(body) => body,
        Err(e) => {
            let text = format!("Failed to parse the request body as JSON: {e}");
            return Some(Answer::plain_text(400, &text));
        }
    };
    shape::problem(&body, SERDE).map(|(_, why)| {
        let text = format!("Failed to deserialize the JSON body into the target type: {why}");
        Answer::plain_text(422, &text)
    })
}

/// FastAPI's default `RequestValidationError` answer.
pub(in crate::quirks) fn fastapi_rejection(request: &Incoming) -> Option<Answer> {
    if !request.is_embed_post() {
        return None;
    }
    let (field, why) = match serde_json::from_slice::<Value>(&request.body) {
        Ok(body) => shape::problem(&body, PYDANTIC_STRINGS)?,
        Err(e) => ("body", format!("JSON decode error: {e}")),
    };
    let detail = json!([{"type": "value_error", "loc": ["body", field], "msg": why}]);
    Some(Answer::json_body(422, &json!({ "detail": detail })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(input: Value) -> Incoming {
        Incoming::embed_post(&json!({"model": "m", "input": input}))
    }

    fn three_token_limit() -> Config {
        Config {
            max_input_tokens: 3,
            ..Config::default()
        }
    }

    #[test]
    fn hangul_syllables_keep_their_leading_consonant_only() {
        let mut request = post(json!(["가구", "고기", "서울 ok"]));
        hangul_leading_consonants(&mut request);
        assert_eq!(
            request.input(),
            Some(json!([
                "\u{1100}\u{1100}",
                "\u{1100}\u{1100}",
                "\u{1109}\u{110b} ok"
            ]))
        );
    }

    #[test]
    fn truncation_keeps_whole_words_from_the_chosen_end() {
        for (keep_end, kept) in [(false, "one two six"), (true, "ten red cat")] {
            let mut request = post(json!("one two six ten red cat"));
            truncate_texts(&mut request, &three_token_limit(), keep_end);
            assert_eq!(request.input(), Some(json!(kept)), "keep_end: {keep_end}");
        }
    }

    #[test]
    fn inputs_within_the_limit_are_left_as_sent() {
        let mut request = post(json!(["a  b", "x"]));
        truncate_texts(&mut request, &three_token_limit(), true);
        assert_eq!(request.input(), Some(json!(["a  b", "x"])));
    }

    #[test]
    fn only_batches_lose_their_over_length_items() {
        let mut batch = post(json!(["one two six ten", "cat"]));
        drop_overlength_batch_items(&mut batch, &three_token_limit());
        assert_eq!(batch.input(), Some(json!(["cat"])));
        let mut single = post(json!(["one two six ten"]));
        drop_overlength_batch_items(&mut single, &three_token_limit());
        assert_eq!(single.input(), Some(json!(["one two six ten"])));
    }
}
