//! Speech's part of the migration's consumer contract: a speech client of the baseline
//! sends the clip and reads JSON `text`, and may ask for the formats the baseline
//! answers.

use super::{reply, requests};
use crate::contracts::consumer::{
    Consumer, Expectation, Pair, Topic, evidence, expectation, replay,
};
use crate::http::Reply;
use futures::future::BoxFuture;
use std::sync::Arc;

/// The topic, as report.json spells it.
const TOPIC: Topic = Topic::named("speech");

impl Topic {
    /// Speech's topic of the consumer contract.
    pub const SPEECH: Topic = TOPIC;
}

/// Speech's part of the consumer contract.
pub(crate) struct SpeechConsumer;

impl Consumer for SpeechConsumer {
    fn topics(&self) -> &'static [Topic] {
        &[TOPIC]
    }

    fn judge<'a>(&'a self, pair: Pair<'a>) -> BoxFuture<'a, Vec<Expectation>> {
        Box::pin(async move { vec![speech(pair).await] })
    }
}

/// A speech client of the baseline (Open WebUI, the SDKs' default call) sends the clip
/// with `file` and `model` and reads JSON `text`; its users may ask for the formats the
/// baseline answers. The candidate must transcribe the same clip and answer each of
/// those formats. The two transcripts are compared word by word and the difference
/// reported, not judged: engines decode alike only where they share a decoder.
async fn speech(pair: Pair<'_>) -> Expectation {
    let (b, c) = (pair.baseline, pair.candidate);
    let answer = pair.answer;
    let b_default = replay(b.session, requests::minimal(b.session)).await;
    let c_default = replay(c.session, requests::minimal(c.session)).await;
    let transcript = |r: &Option<Arc<Reply>>| {
        r.as_deref()
            .filter(|r| r.is_success())
            .and_then(requests::json_text)
            .map(str::to_owned)
    };
    let Some(b_text) = transcript(&b_default) else {
        let seen =
            |r: &Option<Arc<Reply>>| format!("{} to the minimal request", answer(r.as_ref()));
        return expectation(TOPIC, None, seen(&b_default), seen(&c_default), true);
    };
    let c_text = transcript(&c_default);
    let mut served = Vec::new();
    let mut misanswered = Vec::new();
    let mut lost = Vec::new();
    let mut evidence_of_lost = None;
    let in_format =
        |format, r: &Option<Arc<Reply>>| r.as_deref().is_some_and(|r| reply::in_format(format, r));
    for format in requests::OTHER_FORMATS {
        let b_reply = replay(b.session, requests::in_format(b.session, format)).await;
        // A format answered with something else (the JSON envelope as srt) is one no
        // client of the baseline relies on.
        if !in_format(format, &b_reply) {
            if b_reply.as_deref().is_some_and(Reply::is_success) {
                misanswered.push(format);
            }
            continue;
        }
        served.push(format);
        if c_text.is_none() {
            // A candidate that does not transcribe is not asked for the formats.
            continue;
        }
        let c_reply = replay(c.session, requests::in_format(c.session, format)).await;
        if !in_format(format, &c_reply) {
            let how = match c_reply.as_deref().is_some_and(Reply::is_success) {
                true => format!("{format} (answered with {})", answer(c_reply.as_ref())),
                false => format!("{format} ({})", answer(c_reply.as_ref())),
            };
            lost.push(how);
            evidence_of_lost.get_or_insert((b_reply, c_reply));
        }
    }
    let relies_on = Some(format!(
        "speech-to-text at {}: the transcript as JSON text{}",
        b.session.transport().target().url(&requests::ROUTE).path(),
        match served.as_slice() {
            [] => String::new(),
            formats => format!(", and response_format {}", formats.join(", ")),
        }
    ));
    let baseline = format!(
        "transcribes the clip ({} words){}{}",
        b_text.split_whitespace().count(),
        match served.as_slice() {
            [] => "; no other format".to_owned(),
            formats => format!("; answers {}", formats.join(", ")),
        },
        match misanswered.as_slice() {
            [] => String::new(),
            formats => format!(
                "; answers {} with a body not in that format",
                formats.join(", ")
            ),
        }
    );
    let candidate = match &c_text {
        None => format!("{} to the minimal request", answer(c_default.as_ref())),
        Some(text) => {
            let refused = if lost.is_empty() {
                String::new()
            } else {
                format!("; refuses {}", lost.join(", "))
            };
            format!(
                "transcribes the clip ({} words; {}){refused}",
                text.split_whitespace().count(),
                word_agreement(&b_text, text)
            )
        }
    };
    let kept = c_text.is_some() && lost.is_empty();
    let mut e = expectation(TOPIC, relies_on, baseline, candidate, kept);
    e.findings.action = Some(action(&match (&c_default, &c_text) {
        (Some(reply), None) if reply.is_absent() => SpeechLoss::NotOffered,
        (_, None) => SpeechLoss::NoTranscript,
        (_, Some(_)) => SpeechLoss::Formats(served_lost(&lost)),
    }));
    let (b_lost, c_lost) = evidence_of_lost.unwrap_or((None, None));
    e.evidence = evidence(&[
        b_default.as_ref(),
        c_default.as_ref(),
        b_lost.as_ref(),
        c_lost.as_ref(),
    ]);
    e
}

/// The formats the candidate refused, by name.
fn served_lost(lost: &[String]) -> Vec<String> {
    lost.iter()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// `the same words as the baseline's`, or the word error rate against it: the word
/// edits (substitutions, insertions, deletions) over the baseline's word count.
fn word_agreement(baseline: &str, candidate: &str) -> String {
    let (x, y): (Vec<&str>, Vec<&str>) = (
        baseline.split_whitespace().collect(),
        candidate.split_whitespace().collect(),
    );
    if x == y {
        return "the same words as the baseline's".to_owned();
    }
    let mut row: Vec<usize> = (0..=y.len()).collect();
    for (i, a) in x.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, b) in y.iter().enumerate() {
            let substitute = diagonal + usize::from(a != b);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    let edits = row[y.len()];
    format!(
        "{edits} word edits from the baseline's transcript, a word error rate of {:.2}",
        edits as f64 / x.len().max(1) as f64
    )
}

/// What the candidate lacks of the baseline's speech-to-text.
enum SpeechLoss {
    /// Its route is absent (404, 405, 501).
    NotOffered,
    /// It answers, but not with a JSON transcript.
    NoTranscript,
    /// It transcribes, and refuses these formats the baseline answers (none: kept).
    Formats(Vec<String>),
}

/// What a speech client changes: where it transcribes, or the formats it asks for.
fn action(loss: &SpeechLoss) -> String {
    match loss {
        SpeechLoss::NotOffered => "keep speech-to-text on the baseline (or another server): the candidate does not answer POST /v1/audio/transcriptions".to_owned(),
        SpeechLoss::Formats(lost) if !lost.is_empty() => format!(
            "ask for json or verbose_json and build {} from its text and segments in the client, or keep those formats on the baseline: the candidate refuses them",
            lost.join(", ")
        ),
        _ => "hold the candidate's transcription answer against the baseline's before switching: the minimal request does not get a JSON transcript".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcripts_are_compared_word_by_word() {
        let old = "the cat sat on the mat";
        assert_eq!(word_agreement(old, old), "the same words as the baseline's");
        assert_eq!(
            word_agreement(old, "the cat sat on a mat today"),
            "2 word edits from the baseline's transcript, a word error rate of 0.33"
        );
        assert!(word_agreement(old, "").contains("6 word edits"));
    }
}
