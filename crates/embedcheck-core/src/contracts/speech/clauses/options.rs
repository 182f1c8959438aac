//! The `speech-options` family: the request options OpenAI documents beyond the
//! format, each honoured as documented or refused, never accepted and ignored.
//!
//! A new clause here: its entry in `specs/speech/clauses.json` (statement, level,
//! `level_evidence`), its request in `requests.rs`, its reading of the answer in
//! `reply.rs`, its check below (refusals through `verdicts::refused_or_failed`, which
//! knows the model class), a persona breaking it as a real server does (`personas`'
//! `SpeechQuirk`, its source in the comment) in the breakers' table, and the reference
//! server keeping it.

use super::verdicts::{counted, refused_or_answered, refused_or_failed, shown};
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::speech::classify;
use crate::contracts::speech::reference::{Agreement, agreement};
use crate::contracts::speech::reply::{self, TimedWord};
use crate::contracts::speech::requests::{self, ListName, json_text};
use crate::session::Session;
use crate::verdict::Verdict;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("SPO-001", word_timestamps),
        check!("SPO-002", word_timestamps_by_the_fields_own_name),
        check!("SPO-003", logprobs),
    ]
}

/// SPO-001: "verbose_json with timestamp_granularities[]=word and =segment, as the
/// OpenAI SDKs send the list, is answered 200 with words … or refused with a 4xx".
async fn word_timestamps(s: &Session) -> CheckResult {
    timestamps(s, ListName::Bracketed).await
}

/// SPO-002: the same asked with the field's own name, `timestamp_granularities`, as the
/// OpenAPI file names it and a form built by hand sends it.
async fn word_timestamps_by_the_fields_own_name(s: &Session) -> CheckResult {
    timestamps(s, ListName::Bare).await
}

async fn timestamps(s: &Session, list: ListName) -> CheckResult {
    let field = list.of("timestamp_granularities");
    let reply = s.send(requests::with_timestamps(s, list)).await?;
    if let Some(verdict) = refused_or_failed(s, &reply, "verbose_json").await? {
        return Ok(verdict);
    }
    let Some(text) = json_text(&reply).map(str::to_owned) else {
        return Ok(Verdict::skip(format!(
            "verbose_json with {field} was answered 200 without a string text: {} (SPS-003 judges verbose_json)",
            shown(&reply.body)
        ))
        .with(&reply.exchange));
    };
    let answer = reply.json.as_ref().expect("a JSON text is JSON");
    let verdict = match reply::timed_words(answer, requests::clip().seconds) {
        Err(why) => Verdict::fail(format!(
            "verbose_json with {field}=word was answered 200, but {why}: the user asked for word timestamps and gets none, without an error ({}); serve them, or refuse the option with a 4xx",
            seen_on(list)
        )),
        Ok(words) => held_to_text(&words, &text, &field),
    };
    Ok(verdict.with(&reply.exchange))
}

/// Where servers were seen answering without words when the list is named `list`.
fn seen_on(list: ListName) -> &'static str {
    match list {
        ListName::Bracketed => {
            "openai-python's TranscriptionVerbose.words is None; speaches answers words null, speaches#639; vLLM serves none, PR vllm#47664"
        }
        ListName::Bare => {
            "speaches reads the list only as timestamp_granularities[], the SDKs' spelling, and answers words null, speaches#379"
        }
    }
}

/// The verdict on `words` read beside the answer's `text`: the words of the same
/// decoding, none missing.
fn held_to_text(words: &[TimedWord], text: &str, field: &str) -> Verdict {
    let joined: Vec<&str> = words.iter().map(|w| w.word.trim()).collect();
    let joined = letters(&joined.join(" "));
    let text_letters = letters(text);
    if text_letters.is_empty() {
        return match joined.is_empty() {
            true => Verdict::skip(format!(
                "verbose_json with {field}=word was answered with an empty text and no words: nothing to place"
            )),
            false => Verdict::fail(format!(
                "{} with an empty text beside them: the words are not the transcript's",
                counted(words.len(), "word")
            )),
        };
    }
    if joined.is_empty() {
        return Verdict::fail(format!(
            "verbose_json with {field}=word was answered with no words beside a {}-character text: the user asked for word timestamps and gets none, without an error",
            text.chars().count()
        ));
    }
    match agreement(&joined, &text_letters) {
        Agreement::Unrelated { run, run_needed } => Verdict::fail(format!(
            "the {} joined share at most {run} letters in a run with the answer's text ({run_needed} needed): the words are not the transcript's",
            counted(words.len(), "word")
        )),
        _ => Verdict::pass(format!(
            "{} timed in order inside the {} s clip, from {} s to {} s, carrying the answer's text",
            counted(words.len(), "word"),
            requests::clip().seconds,
            words.first().map_or(0.0, |w| w.start),
            words.last().map_or(0.0, |w| w.end)
        )),
    }
}

/// SPO-003: "json with include[]=logprobs, as the SDKs send it, is answered 200 with
/// logprobs … where the model's class returns them; refused with a 4xx, or answered
/// without them where it does not; never answered without them by a gpt-4o-transcribe
/// class model."
async fn logprobs(s: &Session) -> CheckResult {
    let reply = s.send(requests::with_logprobs(s)).await?;
    if let Some(verdict) = refused_or_answered(
        &reply,
        "include[]=logprobs",
        "does not return logprobs",
        "return them, or refuse the option with a 4xx",
    ) {
        return Ok(verdict);
    }
    let Some(text) = json_text(&reply).map(str::to_owned) else {
        return Ok(Verdict::skip(format!(
            "json with include[]=logprobs was answered 200 without JSON text: {} (SPS-001 judges json)",
            shown(&reply.body)
        ))
        .with(&reply.exchange));
    };
    let answer = reply.json.as_ref().expect("a JSON text is JSON");
    let classified = classify::of(s).await?;
    let verdict = match reply::logprobs(answer) {
        Err(why) => Verdict::fail(format!(
            "json with include[]=logprobs was answered 200, but {why}: OpenAI's Transcription.logprobs are the transcript's tokens, each with its log probability"
        )),
        Ok(None) if classified.class.has_logprobs() => Verdict::fail(format!(
            "json with include[]=logprobs was answered 200 without logprobs, where the {} contract returns them (the class by {}): the caller's confidence scores are None, without an error (LiteLLM drops them on the way, litellm PR #36009; stdapi.ai answered them always null, stdapi.ai#83); return them, or refuse the option with a 4xx",
            classified.class,
            classified.basis_words()
        )),
        Ok(None) => Verdict::pass(format!(
            "include[]=logprobs answered without logprobs: the {} contract has none (OpenAI returns them for gpt-4o-transcribe and gpt-4o-mini-transcribe only), and the option is ignored",
            classified.class
        )),
        Ok(Some(tokens)) => held_logprobs(&tokens, &text),
    };
    Ok(verdict.with(&reply.exchange))
}

/// The verdict on token logprobs read beside the answer's `text`: the tokens of the
/// same transcript, none missing.
fn held_logprobs(tokens: &[reply::TokenLogprob], text: &str) -> Verdict {
    let joined: String = tokens.iter().map(|t| t.token.as_str()).collect();
    let (joined, text_letters) = (letters(&joined), letters(text));
    if !text_letters.is_empty() && joined.is_empty() {
        return Verdict::fail(format!(
            "json with include[]=logprobs was answered with {} beside a {}-character text: the transcript's tokens have no log probabilities",
            counted(tokens.len(), "token"),
            text.chars().count()
        ));
    }
    if let Agreement::Unrelated { run, run_needed } = agreement(&joined, &text_letters) {
        return Verdict::fail(format!(
            "the {} of logprobs joined share at most {run} letters in a run with the answer's text ({run_needed} needed): they are not the transcript's tokens",
            counted(tokens.len(), "token")
        ));
    }
    let lowest = tokens.iter().map(|t| t.logprob).fold(0.0, f64::min);
    Verdict::pass(format!(
        "{}, each with its log probability (the lowest {lowest}), carrying the answer's text",
        counted(tokens.len(), "token")
    ))
}

/// A text's letters and digits alone, lower-cased: OpenAI's words drop the punctuation
/// the text has, and a server may join words with or without spaces.
fn letters(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Outcome;

    fn word(word: &str, start: f64) -> TimedWord {
        TimedWord {
            word: word.to_owned(),
            start,
            end: start + 0.5,
        }
    }

    /// OpenAI's words carry no punctuation and a server's may lead with a space: only
    /// the letters are held to the text's.
    #[test]
    fn words_are_held_to_the_texts_letters() {
        let words = [word(" Hello", 0.0), word("world", 0.5)];
        let verdict = held_to_text(&words, "Hello, world.", "timestamp_granularities[]");
        assert_eq!(verdict.outcome, Outcome::Pass, "{}", verdict.reason);
        let other = [word("granite", 0.0), word("meadow", 0.5)];
        let verdict = held_to_text(&other, "Hello, world, how are you today?", "x");
        assert_eq!(verdict.outcome, Outcome::Fail, "{}", verdict.reason);
        assert_eq!(held_to_text(&[], "Hello", "x").outcome, Outcome::Fail);
        assert_eq!(held_to_text(&[], "", "x").outcome, Outcome::Skip);
    }
}
