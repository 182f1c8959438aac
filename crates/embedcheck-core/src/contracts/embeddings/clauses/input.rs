//! input: the request forms a server must accept or refuse cleanly (IN-001 … IN-011).

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::embeddings;
use crate::contracts::embeddings::facts::{BatchLimit, TokenIdForm};
use crate::contracts::embeddings::requests::{self, BATCH, body};
use crate::contracts::embeddings::settings;
use crate::http::{Body, Reply};
use crate::session::Session;
use crate::vectors::{SAME_EMBEDDING, cosine, norm};
use crate::verdict::Verdict;
use serde_json::json;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("IN-001", single_string),
        check!("IN-002", batch_of_strings),
        check!("IN-003", token_ids),
        check!("IN-004", empty_array),
        check!("IN-005", empty_string),
        check!("IN-006", any_script),
        check!("IN-007", user_field),
        check!("IN-008", large_batch),
        check!("IN-009", foreign_token_ids),
        check!("IN-011", large_batch_refusal_names_the_limit),
    ]
}

/// Texts in several scripts, each a distinct sentence so that a server which strips
/// what it cannot read (leaving the same or an empty string) shows up as equal vectors.
pub(crate) const SCRIPTS: [(&str, &str); 6] = [
    ("Korean", "임베딩 서버는 모든 언어를 처리해야 합니다."),
    ("Japanese", "埋め込みサーバーはすべての言語を扱うべきです。"),
    ("Arabic", "يجب أن يتعامل خادم التضمين مع جميع اللغات."),
    ("Chinese", "嵌入服务器应该处理所有语言。"),
    ("emoji", "🚀🔥 vectors for everyone 👩‍💻🇰🇷"),
    (
        "combining marks",
        "e\u{301}te\u{301} cafe\u{301} n\u{303}o\u{308}",
    ),
];

/// A 200 with the right number of finite vectors, or a failure saying what is wrong.
fn embedded(reply: &Reply, inputs: usize) -> Result<Vec<Vec<f64>>, Verdict> {
    if !reply.is_success() {
        return Err(
            Verdict::fail(format!("answered {}, expected 200", reply.summary()))
                .with(&reply.exchange),
        );
    }
    super::vectors_or_verdict(reply, inputs)
}

/// IN-001: "input given as one string is answered 200 with one embedding."
async fn single_string(s: &Session) -> CheckResult {
    let reply = requests::single(s).await?;
    Ok(match embedded(&reply, 1) {
        Ok(v) => {
            Verdict::pass(format!("200 with one {}-value vector", v[0].len())).with(&reply.exchange)
        }
        Err(verdict) => verdict,
    })
}

/// IN-002: "input given as a non-empty array of strings is answered 200 with one
/// embedding per string."
async fn batch_of_strings(s: &Session) -> CheckResult {
    let reply = requests::batch(s).await?;
    Ok(match embedded(&reply, BATCH.len()) {
        Ok(_) => Verdict::pass(format!("200 with {} vectors", BATCH.len())).with(&reply.exchange),
        Err(verdict) => verdict,
    })
}

/// Accepted with the right number of items, or refused with a 4xx; anything else is
/// the failure reason.
fn accepted_or_refused(reply: &Reply, inputs: usize) -> Result<&'static str, Verdict> {
    if reply.is_client_error() {
        return Ok("refused");
    }
    if reply.is_success() {
        return super::vectors_or_verdict(reply, inputs).map(|_| "embedded");
    }
    Err(Verdict::fail(format!(
        "answered {}: neither embedded nor refused with a 4xx",
        reply.summary()
    ))
    .with(&reply.exchange))
}

/// IN-003: "input given as token ids ([int] or [[int]]) is either embedded (200) or
/// refused with a 4xx, never a 5xx."
///
/// The ids ([`requests::token_id_forms`]) exist in every real vocabulary; ids that
/// decode to nothing can take servers down and are only sent with `--aggressive`.
async fn token_ids(s: &Session) -> CheckResult {
    let mut verdict = Verdict::pass("");
    let mut answers = Vec::new();
    let mut accepted = Vec::new();
    for form in requests::token_id_forms() {
        let (input, count) = (form.input, form.inputs);
        let reply = s.send(requests::probe(body(s, input.clone(), &[]))).await?;
        match accepted_or_refused(&reply, count) {
            Ok(how) => {
                answers.push(format!("{input} {how} ({})", reply.status));
                accepted.push(TokenIdForm {
                    input: input.to_string(),
                    embedded: how == "embedded",
                    status: reply.status,
                });
            }
            Err(failure) => return Ok(failure),
        }
        verdict = verdict.with(&reply.exchange);
    }
    let fact = s.searched(accepted, 2);
    embeddings::learn(s, |facts| facts.token_id_input = Some(fact));
    verdict.reason = answers.join("; ");
    Ok(verdict)
}

/// IN-004: "input given as an empty array is refused with a 4xx."
async fn empty_array(s: &Session) -> CheckResult {
    let probe = requests::invalid(
        Body::Json(body(s, json!([]), &[])),
        "input is an empty array",
    );
    let reply = s.send(probe).await?;
    Ok(if reply.is_client_error() {
        Verdict::pass(format!("refused with {}", reply.status)).with(&reply.exchange)
    } else {
        Verdict::fail(format!(
            "answered {}, expected a 4xx for an empty input array",
            reply.summary()
        ))
        .with(&reply.exchange)
    })
}

/// IN-005: "An empty string, alone or inside an array, is refused with a 4xx or
/// embedded as a valid vector; never a 5xx."
async fn empty_string(s: &Session) -> CheckResult {
    let forms = [(json!(""), 1), (json!(["hello", ""]), 2)];
    let mut verdict = Verdict::pass("");
    let mut answers = Vec::new();
    for (input, count) in forms {
        let probe = requests::invalid(
            Body::Json(body(s, input.clone(), &[])),
            "input contains an empty string",
        );
        let reply = s.send(probe).await?;
        match accepted_or_refused(&reply, count) {
            Ok(how) => answers.push(format!("{input} {how} ({})", reply.status)),
            Err(failure) => return Ok(failure),
        }
        verdict = verdict.with(&reply.exchange);
    }
    verdict.reason = answers.join("; ");
    Ok(verdict)
}

/// IN-006: "Text in Korean, Japanese, Arabic, emoji and with combining marks is
/// embedded (200, one finite vector per input)."
async fn any_script(s: &Session) -> CheckResult {
    let texts: Vec<&str> = SCRIPTS.iter().map(|(_, t)| *t).collect();
    let reply = s.send(requests::probe(body(s, json!(texts), &[]))).await?;
    let vectors = match embedded(&reply, texts.len()) {
        Ok(v) => v,
        Err(verdict) => return Ok(verdict),
    };
    if let Some(i) = vectors.iter().position(|v| norm(v) == 0.0) {
        return Ok(
            Verdict::fail(format!("the {} text got a zero vector", SCRIPTS[i].0))
                .with(&reply.exchange),
        );
    }
    if let Some((i, j)) = identical_pair(&vectors) {
        return Ok(Verdict::fail(format!(
            "the {} and {} texts got the same vector: the server does not see their characters",
            SCRIPTS[i].0, SCRIPTS[j].0
        ))
        .with(&reply.exchange));
    }
    Ok(Verdict::pass("every script embedded to a distinct vector").with(&reply.exchange))
}

fn identical_pair(vectors: &[Vec<f64>]) -> Option<(usize, usize)> {
    (0..vectors.len())
        .flat_map(|i| (i + 1..vectors.len()).map(move |j| (i, j)))
        .find(|&(i, j)| cosine(&vectors[i], &vectors[j]) >= SAME_EMBEDDING)
}

/// IN-007: "The OpenAI field user (a string) is accepted."
async fn user_field(s: &Session) -> CheckResult {
    let extra = [("user", json!("embedcheck-user-1"))];
    let reply = s
        .send(requests::probe(body(s, json!(requests::SENTENCE), &extra)))
        .await?;
    Ok(match embedded(&reply, 1) {
        Ok(_) => Verdict::pass("user accepted").with(&reply.exchange),
        Err(verdict) => verdict,
    })
}

/// IN-008: "A batch of up to the configured size (default 2048 inputs) is embedded,
/// or refused with a 4xx; never a 5xx." Whether the refusal names the limit is
/// IN-011's; a limit it names is learned here, for the clauses and profiles that read it.
async fn large_batch(s: &Session) -> CheckResult {
    let size = settings::of(s).large_batch;
    let reply = requests::large_batch(s, size).await?;
    if reply.is_client_error() {
        let message = reply.error_message().unwrap_or_default();
        if let Some(limit) = limit_named(&message, size) {
            let named = BatchLimit::Named {
                limit,
                refused: size,
                status: reply.status,
            };
            let fact = s.detected(named, &reply.exchange);
            embeddings::learn(s, |facts| facts.max_batch = Some(fact));
        }
        return Ok(
            Verdict::pass(format!("refused {size} inputs with {}", reply.summary()))
                .with(&reply.exchange),
        );
    }
    if !reply.is_success() {
        return Ok(
            Verdict::fail(format!("answered {} to a batch of {size}", reply.summary()))
                .with(&reply.exchange),
        );
    }
    Ok(match super::vectors_or_verdict(&reply, size) {
        Ok(_) => {
            let fact = s.detected(BatchLimit::AtLeast { size }, &reply.exchange);
            embeddings::learn(s, |facts| facts.max_batch = Some(fact));
            Verdict::pass(format!("embedded all {size} inputs")).with(&reply.exchange)
        }
        Err(verdict) => verdict,
    })
}

/// IN-011: "A refusal of IN-008's large batch names the limit in its message." A
/// client's author learns the size to split batches to; no profiled client reads it.
async fn large_batch_refusal_names_the_limit(s: &Session) -> CheckResult {
    let size = settings::of(s).large_batch;
    let reply = requests::large_batch(s, size).await?;
    if !reply.is_client_error() {
        return Ok(Verdict::skip(format!(
            "a batch of {size} was answered {}, not refused with a 4xx: no refusal to read (IN-008 judges the answer)",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    let message = reply.error_message().unwrap_or_default();
    Ok(match limit_named(&message, size) {
        Some(limit) => Verdict::pass(format!(
            "refused {size} inputs with {}, naming the limit {limit}",
            reply.status
        )),
        None => Verdict::fail(format!(
            "refused {size} inputs with {} but the message does not name the limit: {message:?}; name it, so a client's author knows what size to split batches to",
            reply.status
        )),
    }
    .with(&reply.exchange))
}

/// The limit a refusal names: a number in the message below the size sent.
fn limit_named(message: &str, sent: usize) -> Option<usize> {
    message
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse::<usize>().ok())
        .find(|&n| n > 0 && n < sent)
}

/// IN-009: "input given as token ids that exist in no vocabulary ([[999999]]) is
/// refused with a 4xx."
///
/// Sent only with `--aggressive`: Hugging Face TEI 1.9.3 aborts on it, and an audit
/// of a production endpoint must not take it down by default.
async fn foreign_token_ids(s: &Session) -> CheckResult {
    if !s.settings().aggressive {
        return Ok(Verdict::skip(
            "may take a server down (TEI 1.9.3 aborts on it); sent only with --aggressive",
        ));
    }
    let probe = requests::invalid(
        Body::Json(body(s, json!([[999_999]]), &[])),
        "token id 999999 exists in no vocabulary",
    );
    let reply = s.send(probe).await?;
    Ok(if reply.is_client_error() {
        Verdict::pass(format!("refused with {}", reply.summary()))
    } else if reply.is_success() {
        Verdict::fail(
            "embedded token id 999999, which exists in no vocabulary: the vector means nothing",
        )
    } else {
        Verdict::fail(format!("answered {}, expected a 4xx", reply.summary()))
    }
    .with(&reply.exchange))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_found_in_messages() {
        assert_eq!(
            limit_named("batch size 2048 > maximum allowed batch size 32", 2048),
            Some(32)
        );
        assert_eq!(
            limit_named("array length must be 1024 or less", 2048),
            Some(1024)
        );
        assert_eq!(limit_named("too many inputs", 2048), None);
    }

    #[test]
    fn script_texts_are_distinct() {
        let texts: std::collections::HashSet<_> = SCRIPTS.iter().map(|(_, t)| t).collect();
        assert_eq!(texts.len(), SCRIPTS.len());
    }
}
