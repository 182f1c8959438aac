//! The `speech-shape` family: what a transcription answer looks like to the clients
//! that read it.

use super::verdicts::{counted, listed, refused_or_answered, refused_or_failed, shown};
use crate::clauses::{Check, CheckResult, check};
use crate::contracts::speech::classify;
use crate::contracts::speech::reference::{Agreement, agreement};
use crate::contracts::speech::reply::{self, Subtitles, Usage};
use crate::contracts::speech::requests::{self, json_text};
use crate::http::Reply;
use crate::session::Session;
use crate::verdict::Verdict;

pub(crate) fn checks() -> Vec<Check> {
    vec![
        check!("SPS-001", minimal_request),
        check!("SPS-002", text_is_bare),
        check!("SPS-003", verbose_json),
        check!("SPS-004", srt),
        check!("SPS-005", vtt),
        check!("SPS-006", other_rates),
        check!("SPS-007", stream),
        check!("SPS-008", translations),
        check!("SPS-009", containers),
        check!("SPS-010", every_format_carries_the_transcript),
        check!("SPS-011", usage),
        check!("SPS-012", diarized_json),
    ]
}

/// SPS-001: "A multipart/form-data request with only file … and model is answered 200
/// with a JSON object whose text is a string."
async fn minimal_request(s: &Session) -> CheckResult {
    let reply = s.send(requests::minimal(s)).await?;
    if !reply.is_success() {
        return Ok(Verdict::fail(format!(
            "the minimal request (file and model, as Open WebUI sends it) was answered {}: file and model are the only required fields",
            reply.summary()
        ))
        .with(&reply.exchange));
    }
    Ok(match json_text(&reply) {
        Some(text) => Verdict::pass(format!(
            "200 with a JSON object whose text is a string of {} characters",
            text.chars().count()
        )),
        None => Verdict::fail(format!(
            "answered 200 with {}: the OpenAI SDKs parse Transcription(text) and Open WebUI reads r.json()['text']",
            not_json_text(&reply)
        )),
    }
    .with(&reply.exchange))
}

/// What a 200 that should be JSON with a string `text` held instead.
fn not_json_text(reply: &Reply) -> String {
    match &reply.json {
        None => format!(
            "a body that is not JSON ({}: {})",
            reply.content_type.as_deref().unwrap_or("no content type"),
            shown(&reply.body)
        ),
        Some(json) => format!(
            "JSON whose text is {}: {}",
            crate::json::kind(json.get("text")),
            shown(&reply.body)
        ),
    }
}

/// SPS-002: "response_format text is answered 200 with the transcript itself as the
/// body …, or refused with a 4xx where the server does not offer the format; never
/// answered with the JSON envelope."
async fn text_is_bare(s: &Session) -> CheckResult {
    let reply = s.send(requests::in_format(s, "text")).await?;
    if let Some(verdict) = refused_or_failed(s, &reply, "text").await? {
        return Ok(verdict);
    }
    if json_text(&reply).is_some() {
        return Ok(Verdict::fail(format!(
            "response_format text was answered with the JSON envelope {}: the OpenAI SDKs return a text answer's body as the transcript, so every user gets that JSON as their text (as on vLLM, vllm#49095)",
            shown(&reply.body)
        ))
        .with(&reply.exchange));
    }
    Ok(Verdict::pass(format!(
        "200 with the bare transcript ({} characters, {})",
        String::from_utf8_lossy(&reply.body).chars().count(),
        reply.content_type.as_deref().unwrap_or("no content type")
    ))
    .with(&reply.exchange))
}

/// SPS-003: "response_format verbose_json is answered 200 with a JSON object whose
/// language and text are strings and duration a number, and whose segments … each
/// have id, seek, start, end, text, tokens, temperature, avg_logprob,
/// compression_ratio and no_speech_prob … none null; or refused with a 4xx …"
async fn verbose_json(s: &Session) -> CheckResult {
    let reply = s.send(requests::in_format(s, "verbose_json")).await?;
    if let Some(verdict) = refused_or_failed(s, &reply, "verbose_json").await? {
        return Ok(verdict);
    }
    let problems = json_problems(&reply, reply::verbose_problems);
    if problems.is_empty() {
        let segments = match segment_count(&reply) {
            0 => "no segments (optional in OpenAI's types)".to_owned(),
            n => format!("{} with every required field", counted(n, "segment")),
        };
        return Ok(Verdict::pass(format!(
            "language, duration and text as documented, and {segments}"
        ))
        .with(&reply.exchange));
    }
    Ok(Verdict::fail(format!(
        "verbose_json answered with {}: OpenAI's TranscriptionVerbose and TranscriptionSegment require each, typed; the typed SDKs (Java, Go, .NET) refuse the answer",
        problems.join("; ")
    ))
    .with(&reply.exchange))
}

/// What `read` finds wrong with a JSON answer, or that it is not JSON.
fn json_problems(reply: &Reply, read: fn(&serde_json::Value) -> Vec<String>) -> Vec<String> {
    match &reply.json {
        Some(json) => read(json),
        None => vec![format!("the body is not JSON: {}", shown(&reply.body))],
    }
}

/// How many `segments` a JSON answer lists (none where it lists none).
fn segment_count(reply: &Reply) -> usize {
    reply
        .json
        .as_ref()
        .and_then(|j| j.get("segments"))
        .and_then(serde_json::Value::as_array)
        .map_or(0, Vec::len)
}

/// SPS-004: "response_format srt is answered 200 with SubRip cues … or refused with a
/// 4xx where the server does not offer the format."
async fn srt(s: &Session) -> CheckResult {
    subtitles(s, Subtitles::Srt).await
}

/// SPS-005: "response_format vtt is answered 200 with a WebVTT file … or refused with
/// a 4xx where the server does not offer the format."
async fn vtt(s: &Session) -> CheckResult {
    subtitles(s, Subtitles::Vtt).await
}

async fn subtitles(s: &Session, format: Subtitles) -> CheckResult {
    let name = format.format();
    let reply = s.send(requests::in_format(s, name)).await?;
    if let Some(verdict) = refused_or_failed(s, &reply, name).await? {
        return Ok(verdict);
    }
    let text = String::from_utf8_lossy(&reply.body);
    Ok(match reply::cues(&text, format) {
        Ok(cues) => Verdict::pass(format!(
            "{}, times running forward from {} ms",
            counted(cues.len(), "cue"),
            cues.first().map_or(0, |c| c.start)
        )),
        Err(why) => Verdict::fail(format!(
            "{name} answered 200, but {why}: the OpenAI SDKs return it verbatim as the caller's subtitles, which players refuse: {}",
            shown(&reply.body)
        )),
    }
    .with(&reply.exchange))
}

/// SPS-006: "The same clip as a WAV file at 8 kHz stereo and at 44.1 kHz mono is
/// answered 200 with a JSON object whose text is a string, as at 16 kHz mono: a valid
/// file is never refused as unsupported."
async fn other_rates(s: &Session) -> CheckResult {
    same_clip(
        s,
        requests::at_other_rates(s),
        "the same clip as a WAV at another rate",
        "OpenAI accepts any WAV, and clients upload what they recorded (a phone call's 8 kHz): resample on the server (vLLM does with PyAV, av, installed: speech-notes §3.1)",
    )
    .await
}

/// SPS-009: "The same clip as MP3, as Opus in Ogg and as FLAC is answered 200 with a
/// JSON object whose text is a string, as the WAV clip is."
async fn containers(s: &Session) -> CheckResult {
    same_clip(
        s,
        requests::in_containers(s),
        "the same clip in a compressed container OpenAI lists",
        "LangChain's OpenAIWhisperParser uploads only MP3 chunks (and skips a chunk it cannot get transcribed, without an error), Open WebUI forwards MP3 and Ogg uploads and compresses a recording over 25 MB to Opus: decode every container OpenAI lists (whisper.cpp's server decodes WAV, MP3 and FLAC, not Ogg; audio.cpp answered an MP3 500, audio.cpp#44)",
    )
    .await
}

/// The verdict on `probes`, the canonical clip in other files: each transcribed as
/// JSON text where the 16 kHz mono WAV is, else what each was answered and `remedy`.
async fn same_clip(
    s: &Session,
    probes: Vec<(&'static str, crate::http::Probe)>,
    other: &str,
    remedy: &str,
) -> CheckResult {
    let minimal = s.send(requests::minimal(s)).await?;
    if !minimal.is_success() || json_text(&minimal).is_none() {
        return Ok(Verdict::skip(format!(
            "the 16 kHz mono WAV clip is not transcribed as JSON text (SPS-001 judges it): {other} is not judged against it"
        )));
    }
    let mut evidence = Vec::new();
    let mut wrong = Vec::new();
    let mut right = Vec::new();
    for (what, probe) in probes {
        let reply = s.send(probe).await?;
        if reply.is_success() && json_text(&reply).is_some() {
            right.push(what);
        } else {
            wrong.push(format!("{what} {}", reply.summary()));
        }
        evidence.push(reply);
    }
    let exchanges = evidence.iter().map(|r| &r.exchange);
    if wrong.is_empty() {
        return Ok(Verdict::pass(format!(
            "the clip as {} transcribed as the 16 kHz mono WAV",
            listed(&right)
        ))
        .with_all(exchanges));
    }
    Ok(Verdict::fail(format!(
        "the 16 kHz mono WAV clip was transcribed, but {other} was answered: {}; {remedy}",
        wrong.join("; ")
    ))
    .with_all(exchanges))
}

/// SPS-007: "The minimal request with stream=true is answered with the JSON transcript
/// as without it …, refused with a 4xx, or answered 200 text/event-stream whose events
/// are … transcript.text.delta events …, then exactly one transcript.text.done, last,
/// whose text is the deltas joined."
async fn stream(s: &Session) -> CheckResult {
    let reply = s.send(requests::streamed(s)).await?;
    if let Some(verdict) = refused_or_answered(
        &reply,
        "stream=true",
        "does not stream",
        "stream, answer as without it (OpenAI ignores stream for whisper-1), or refuse it with a 4xx",
    ) {
        return Ok(verdict);
    }
    let streamed = reply
        .content_type
        .as_deref()
        .is_some_and(|c| c.starts_with("text/event-stream"));
    if !streamed {
        let classified = classify::of(s).await?;
        return Ok(match json_text(&reply) {
            Some(_) if classified.class.streams() => Verdict::fail(format!(
                "stream=true was answered with the JSON transcript, not streamed, where the {} contract streams (OpenAI ignores stream for whisper-1 alone; the class by {}): the OpenAI SDKs iterate a Stream that finds no events in it, so the caller gets no text and no error (LiteLLM's proxy answers so, litellm#21310); stream it as OpenAI's events, or refuse it with a 4xx",
                classified.class,
                classified.basis_words()
            )),
            Some(_) => Verdict::pass(
                "stream=true ignored: answered with the JSON transcript, as OpenAI answers it for whisper-1",
            ),
            None => Verdict::fail(format!(
                "stream=true was answered 200 {} that is neither a stream nor JSON text: {}",
                reply.content_type.as_deref().unwrap_or("without a content type"),
                shown(&reply.body)
            )),
        }
        .with(&reply.exchange));
    }
    let body = String::from_utf8_lossy(&reply.body);
    Ok(
        match reply::stream_events(&body).and_then(|events| {
            reply::streamed_text(&events).map(|text| (events.len(), text))
        }) {
            Ok((events, text)) => Verdict::pass(format!(
                "streamed as OpenAI's events: {events} events, the deltas joined equal to transcript.text.done's text ({} characters)",
                text.chars().count()
            )),
            Err(why) => Verdict::fail(format!(
                "stream=true was answered with server-sent events, but {why}: the OpenAI SDKs read a transcription stream by event.type (transcript.text.delta, transcript.text.done), so the caller gets no text and no error (vLLM 0.32 streams chat-completion chunks: vllm#49116)"
            )),
        }
        .with(&reply.exchange),
    )
}

/// SPS-008: "Where the server offers POST /v1/audio/translations, the translation of
/// the clip with only file and model is answered 200 with a JSON object whose text is
/// a string, and with response_format text the bare text or a 4xx; never the JSON
/// envelope as text, never a 5xx. A route that is absent is not judged."
async fn translations(s: &Session) -> CheckResult {
    let json = s.send(requests::translated(s, None)).await?;
    if json.is_absent() {
        return Ok(Verdict::skip(format!(
            "translations are not offered: the translation request to {} was answered {}",
            s.transport().target().url(&requests::TRANSLATIONS).path(),
            json.summary()
        ))
        .with(&json.exchange));
    }
    if let Some(verdict) = refused_or_answered(
        &json,
        "the translation of the clip (file and model)",
        "does not translate with this model",
        "answer it as OpenAI's Translation, or refuse it with a 4xx",
    ) {
        return Ok(verdict);
    }
    let Some(translated) = json_text(&json) else {
        return Ok(Verdict::fail(format!(
            "the translation was answered 200 with {}: openai-python's audio.translations.create parses Translation(text)",
            not_json_text(&json)
        ))
        .with(&json.exchange));
    };
    let chars = translated.chars().count();
    let text = s.send(requests::translated(s, Some("text"))).await?;
    // The text request leads the evidence where it is the one judged wrong.
    let exchanges = [&json.exchange, &text.exchange];
    let text_first = [&text.exchange, &json.exchange];
    if text.is_success() && json_text(&text).is_some() {
        return Ok(Verdict::fail(format!(
            "translations answer response_format text with the JSON envelope {}: the OpenAI SDKs return a text answer's body as the translation, so every user gets that JSON as their text (vLLM does so on both audio routes, vllm#49095)",
            shown(&text.body)
        ))
        .with_all(text_first));
    }
    let plain = if text.is_success() {
        "response_format text as the bare text".to_owned()
    } else if text.is_client_error() {
        format!("response_format text refused with {}", text.summary())
    } else {
        return Ok(Verdict::fail(format!(
            "the translation was answered as JSON, but with response_format text {}: answer it, or refuse a format not offered with a 4xx",
            text.summary()
        ))
        .with_all(text_first));
    };
    Ok(Verdict::pass(format!(
        "translated as JSON whose text is a string ({chars} characters), and {plain}"
    ))
    .with_all(exchanges))
}

/// SPS-010: "The clip asked for in English at temperature 0 in each other format the
/// server answers in that format carries the transcript its json answer carries … never
/// an empty text beside a non-empty one." A user asking for verbose_json gets the text
/// the json answer has (vLLM 0.32 answered the tiny Whisper's verbose_json with
/// `"text": ""` and no segments beside a 2,473-character json transcript).
async fn every_format_carries_the_transcript(s: &Session) -> CheckResult {
    let json = s.send(requests::known_answer(s)).await?;
    let Some(transcript) = json_text(&json).filter(|t| !t.trim().is_empty()) else {
        return Ok(Verdict::skip(format!(
            "the clip asked for in English at temperature 0 was answered {}, without a transcript to hold the other formats to",
            json.summary()
        ))
        .with(&json.exchange));
    };
    let chars = transcript.chars().count();
    let (mut held, mut lost) = (Vec::new(), Vec::new());
    let mut evidence = vec![json.exchange.clone()];
    for format in requests::OTHER_FORMATS {
        let reply = s.send(requests::known_answer_in(s, format)).await?;
        if !reply.is_success() {
            continue;
        }
        for (what, text) in reply::transcripts_in(format, &reply) {
            match carried(&text, transcript) {
                None => held.push(what),
                Some(why) => {
                    lost.push(format!("{what} {why}"));
                    if !evidence.contains(&reply.exchange) {
                        evidence.push(reply.exchange.clone());
                    }
                }
            }
        }
    }
    if lost.is_empty() {
        return Ok(match held.as_slice() {
            [] => Verdict::skip("no other format was answered 200 in its format: nothing to hold to the json transcript (SPS-002 to SPS-005 judge the formats)"),
            held => Verdict::pass(format!(
                "{} carry the json answer's transcript ({chars} characters)",
                listed(held.iter().map(String::as_str).collect::<Vec<_>>().as_slice())
            )),
        }
        .with(&json.exchange));
    }
    // Sampling, not a lost transcript, if the json answer itself is not repeated.
    let again = s.send(requests::known_answer(s).fresh()).await?;
    if json_text(&again) != Some(transcript) {
        return Ok(Verdict::skip(format!(
            "{}; but two identical json requests at temperature 0 were transcribed differently: the server samples, and a transcript that is not repeated holds no other to it",
            lost.join("; ")
        ))
        .with_all([&json.exchange, &again.exchange]));
    }
    Ok(Verdict::fail(format!(
        "{}, where the json answer to the same request has {chars} characters: a user asking for that format gets another transcript, or none",
        lost.join("; ")
    ))
    .with_all(evidence.iter()))
}

/// Why `text` does not carry `transcript`, if it does not: empty, or sharing no run
/// long enough to be the same decoding (SPR-001's agreement).
fn carried(text: &str, transcript: &str) -> Option<String> {
    if text.trim().is_empty() {
        return Some("is empty".to_owned());
    }
    match agreement(text, transcript) {
        Agreement::Unrelated { run, run_needed } => Some(format!(
            "shares at most {run} characters in a run with it ({run_needed} needed; {} characters)",
            text.chars().count()
        )),
        _ => None,
    }
}

/// SPS-011: "The minimal request's JSON answer carries usage, where it carries any, in
/// one of OpenAI's two documented shapes, typed: duration with the clip's seconds, or
/// tokens with integer counts."
async fn usage(s: &Session) -> CheckResult {
    let reply = s.send(requests::minimal(s)).await?;
    let Some(answer) = reply.json.as_ref().filter(|_| json_text(&reply).is_some()) else {
        return Ok(Verdict::skip(format!(
            "the minimal request was answered {}, not JSON text (SPS-001 judges it): no usage to read",
            reply.summary()
        ))
        .with(&reply.exchange));
    };
    let clip = requests::clip().seconds;
    let verdict = match reply::usage(answer) {
        Ok(None) => Verdict::skip(
            "the JSON answer carries no usage (optional in OpenAI's Transcription): nothing to judge",
        ),
        Ok(Some(Usage::Duration { seconds })) if !billed_seconds(seconds, clip) => {
            Verdict::fail(format!(
                "usage says {seconds} s for the {clip} s clip: a client billing by usage.seconds (as whisper-1 is billed) records another length; report the clip's seconds, rounded up as OpenAI does"
            ))
        }
        Ok(Some(Usage::Duration { seconds })) => Verdict::pass(format!(
            "usage of type duration: {seconds} s for the {clip} s clip"
        )),
        Ok(Some(Usage::Tokens {
            input,
            output,
            total,
        })) => Verdict::pass(format!(
            "usage of type tokens: {input} in, {output} out, {total} in all"
        )),
        Err(why) => Verdict::fail(format!(
            "{why}: OpenAI's Transcription.usage is duration or tokens, told apart by type, and code that meters by it (usage.type, then seconds or the token counts) records nothing, without an error (Mistral's transcriptions answer a chat completion's usage)"
        )),
    };
    Ok(verdict.with(&reply.exchange))
}

/// Whether `seconds` is the clip's length as billed: whole seconds rounded either way,
/// one second of slack for a decoder's padding or resampling.
fn billed_seconds(seconds: f64, clip: f64) -> bool {
    (clip.floor() - 1.0..=clip.ceil() + 1.0).contains(&seconds)
}

/// SPS-012: "response_format diarized_json is answered 200 with OpenAI's
/// TranscriptionDiarized … or refused with a 4xx where the server does not offer the
/// format (every class but gpt-4o-transcribe-diarize's)."
async fn diarized_json(s: &Session) -> CheckResult {
    let reply = s.send(requests::in_format(s, "diarized_json")).await?;
    if let Some(verdict) = refused_or_failed(s, &reply, "diarized_json").await? {
        return Ok(verdict);
    }
    let problems = json_problems(&reply, reply::diarized_problems);
    if !problems.is_empty() {
        return Ok(Verdict::fail(format!(
            "diarized_json answered with {}: OpenAI's TranscriptionDiarized and its segments require each, typed, and the SDKs' users read each segment's speaker, start and end (vLLM's diarized answer has integer ids, no type and no task, and a string duration: its protocol.py)",
            problems.join("; ")
        ))
        .with(&reply.exchange));
    }
    let segments = segment_count(&reply);
    Ok(Verdict::pass(format!(
        "task, duration and text as documented, and {} each with its speaker, times and text",
        counted(segments, "segment")
    ))
    .with(&reply.exchange))
}
