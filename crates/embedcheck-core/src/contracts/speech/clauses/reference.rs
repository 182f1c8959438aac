//! The `speech-reference` family: the server's transcript held against the model's
//! own library (`--speech-reference`).

use crate::clauses::{Check, CheckResult, check};
use crate::contracts::speech::reference::{Agreement, SpeechCase, SpeechReference, agreement};
use crate::contracts::speech::requests::{self, json_text};
use crate::contracts::speech::settings;
use crate::session::Session;
use crate::verdict::Verdict;

pub(crate) fn checks() -> Vec<Check> {
    vec![check!("SPR-001", the_models_own_transcript)]
}

/// SPR-001: "With a speech reference file, the transcript of the clip asked for in
/// English at temperature 0 is the model's own: the library's text, the start of it,
/// or a long run of it; a server whose two identical requests answer different text
/// is not judged."
async fn the_models_own_transcript(s: &Session) -> CheckResult {
    let Some(reference) = settings::of(s).reference else {
        return Ok(Verdict::skip(
            "no --speech-reference file: nothing to hold the transcript against (lab/speech_reference.py makes one with the model's own library)",
        ));
    };
    let clip = requests::clip();
    let cases = reference.cases_of(clip.upload.digest());
    if cases.is_empty() {
        return Ok(Verdict::skip(format!(
            "the speech reference file {} holds no transcript of the suite's clip {} (sha256 {}): make it again from this version's clip",
            reference.origin,
            clip.file_name,
            &clip.upload.digest()[..12]
        )));
    }
    let first = s.send(requests::known_answer(s)).await?;
    let Some(text) = json_text(&first) else {
        return Ok(Verdict::skip(format!(
            "the clip asked for in English at temperature 0 was answered {}, not JSON text (SPS-001 judges the answer): no transcript to hold against the model's",
            first.summary()
        ))
        .with(&first.exchange));
    };
    let (case, agreed) = best(&cases, text);
    let (run, run_needed) = match agreed {
        Agreement::Unrelated { run, run_needed } => (run, run_needed),
        held => {
            return Ok(Verdict::pass(agreeing(&reference, case, held)).with(&first.exchange));
        }
    };
    // Another model, or sampling: a fresh request tells them apart.
    let again = s.send(requests::known_answer(s).fresh()).await?;
    let exchanges = [&first.exchange, &again.exchange];
    let Some(second) = json_text(&again) else {
        return Ok(Verdict::skip(format!(
            "the transcript shares at most {run} characters in a run with the model's own, but the same request again was answered {}: a verdict needs the answer repeated",
            again.summary()
        ))
        .with_all(exchanges));
    };
    if !matches!(agreement(second, text), Agreement::Exact { .. }) {
        return Ok(Verdict::skip(format!(
            "two identical requests at temperature 0 were transcribed differently ({} and {} characters): the server falls back to sampling, as OpenAI documents temperature 0 may; no known answer holds a transcript that is not repeated",
            text.chars().count(),
            second.chars().count()
        ))
        .with_all(exchanges));
    }
    Ok(Verdict::fail(format!(
        "the transcript of the clip in English at temperature 0 shares a run of at most {run} characters with {}'s own ({}, greedy {}), where the same model's shares at least {run_needed}, twice alike: another model answers to {:?}, or the server's audio front end or decoding is broken",
        reference.header.model,
        reference.made_by(),
        case.decoding(),
        requests::model(s)
    ))
    .with_all(exchanges))
}

/// The case `text` agrees with best, and how.
fn best<'a>(cases: &[&'a SpeechCase], text: &str) -> (&'a SpeechCase, Agreement) {
    let mut scored = cases
        .iter()
        .map(|case| (*case, agreement(text, &case.text)));
    let first = scored.next().expect("at least one case");
    scored.fold(first, |(case, agreed), (other, also)| {
        match agreed.better(also) == agreed {
            true => (case, agreed),
            false => (other, also),
        }
    })
}

/// How far the transcript is the model's, as a reason says it.
fn agreeing(reference: &SpeechReference, case: &SpeechCase, agreed: Agreement) -> String {
    let whose = format!(
        "{}'s own ({}, greedy {})",
        reference.header.model,
        reference.made_by(),
        case.decoding()
    );
    match agreed {
        Agreement::Exact { chars } => {
            format!("the transcript is {whose}, to the character ({chars} characters)")
        }
        Agreement::Prefix { chars, of } => format!(
            "the transcript is the first {chars} of the {of} characters of {whose}: the server ends sooner, as decoders in openai-whisper's style end a window at half the decoder's context"
        ),
        Agreement::Shared { run, from } => {
            let parts = match from {
                0 => format!("differs from {whose} from its first character"),
                n => format!("agrees with {whose} for {n} characters, then differs"),
            };
            format!(
                "the transcript {parts}, but shares a {run}-character run with it: the same model decoded by other rules (beam search, as faster-whisper's five beams; a window decoded again at a higher temperature, as whisper.cpp's fallback; timestamp rules), which only this looser agreement holds"
            )
        }
        Agreement::Unrelated { run, .. } => {
            format!("the transcript shares at most {run} characters in a run with {whose}")
        }
    }
}
