//! How real servers depart from OpenAI's speech-to-text routes
//! (`POST /v1/audio/transcriptions` and `/translations`), each with the source it was read or measured
//! from (`speech-notes.md` §3).

use crate::wire::{Answer, Incoming};
use serde_json::json;

/// A departure of the speech-to-text route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpeechQuirk {
    /// No speech-to-text route: 404, as on every server without a speech model (TEI,
    /// Infinity, llama.cpp's llama-server, Ollama, Dynamo 1.6.1, which has no batch
    /// route yet, and vLLM serving an embedding or rerank model).
    NotServed,
    /// Answers every speech request 500, as LiteLLM 1.106.2 does in front of a model it
    /// cannot transcribe with (an embeddings model: "litellm.APIConnectionError:
    /// Unmapped provider passed in", measured in the lab on 2026-12-07).
    CannotTranscribe,
    /// Serves speech-to-text alone: every other route (embeddings, rerank, the models
    /// listing) answers 404, as faster-whisper-server 0.0.3 and whisper.cpp 1.8.5's
    /// server do (speech-notes.md §3.2, §3.3).
    SpeechOnly,
    /// No translations route: 404, as whisper.cpp 1.8.5's `whisper-server`, which
    /// translates on its one route when the form says `translate=true`
    /// (speech-notes.md §3.3).
    NoTranslations,
    /// Answers `response_format: text` with the JSON envelope as `application/json`,
    /// on both audio routes, as vLLM 0.32 does (vllm#49095; measured in the lab on
    /// transcriptions and, on 2026-12-05, translations: speech-notes.md §3.1).
    TextAsJson,
    /// Answers the minimal request's JSON as plain text: what a client reading
    /// `["text"]` of a JSON answer cannot read.
    JsonAsPlainText,
    /// Answers 500 text/plain "Internal Server Error" where a file it cannot read
    /// should be refused (not audio, empty, too large) or a language it does not know
    /// (`english`, `xx`), as faster-whisper-server 0.0.3 does: its `async def` handler
    /// lets the decoder's exception through (speech-notes.md §3.2). A request without
    /// a file is FastAPI's 422 before it.
    RefusalsAs500,
    /// Answers `verbose_json` with `no_speech_prob: null` in every segment, as vLLM 0.32
    /// does (measured in the lab: speech-notes.md §3.1); OpenAI requires a number.
    NullNoSpeechProb,
    /// Prints the first subtitle cue's start as `00:-16:-47,-280`, as whisper.cpp
    /// 1.8.5's server does when it has forced no-timestamps on a model it takes for
    /// distil-whisper (speech-notes.md §3.3).
    NegativeCueTimes,
    /// Prints the first cue's end as a negative time with the sign before a zero field,
    /// `-00:00:01,500`, the way formatters print a negative duration (a server that
    /// subtracts where it should add); the cue ends before it starts.
    CueEndsBeforeStart,
    /// Answers `verbose_json` with no text and no segments,
    /// `{"duration": 3.0, "language": "el", "segments": [], "text": "", "words": null}`,
    /// as vLLM cpu 0.32 serving the lab's tiny Whisper did beside a 2,473-character json
    /// transcript of the same clip (breaks SPS-010; SPS-003, which checks the fields'
    /// types, passes it).
    EmptyVerboseJson,
    /// Answers every refusal 400 text/plain "Invalid request", as whisper.cpp 1.8.5's
    /// `whisper-server` does for a missing file, a file that is not audio, an empty one
    /// and 26 MiB (examples/server/server.cpp; speech-notes.md §3.3).
    PlainTextRefusals,
    /// Refuses a WAV file that is not 16 kHz mono with vLLM's 400 "Invalid or
    /// unsupported audio file.", as vLLM 0.32 does when PyAV (`av`), which it resamples
    /// with, is not installed (measured in the lab: speech-notes.md §3.1).
    SixteenKilohertzMonoOnly,
    /// Reads every upload as WAV: any other container answered 500 `server_error`
    /// "invalid WAV RIFF header", as audio.cpp's `/v1/audio/transcriptions` answered an
    /// MP3 in July 2026 (0xShug0/audio.cpp#44). whisper.cpp 1.8.5's server, measured
    /// in the lab, refuses only Ogg, with 400 text/plain.
    WavOnly,
    /// Streams `stream: true` as chat-completion chunks (`object:
    /// "transcription.chunk"`, the text in `choices[0].delta.content`, then `[DONE]`)
    /// instead of OpenAI's `transcript.text.delta`/`done` events, as vLLM 0.32 does
    /// (vllm#49116; measured in the lab on 2026-12-05 with the tiny Whisper).
    ChatChunkStream,
    /// Transcribes with the model it was started with, whatever `model` names, as
    /// faster-whisper-server 0.0.3 does: it reads the model from a form field of its
    /// own, `model_name`, and ignores the SDKs' `model` (its api.py; speech-notes.md
    /// §3.2). Its JSON text is another model's words.
    AnotherModel,
    /// Re-decodes at a higher temperature where temperature 0 was asked for, as
    /// whisper.cpp 1.8.5's server does by default (`temperature_inc` 0.2: two identical
    /// requests at temperature 0 answered different text, speech-notes.md §3.3) and
    /// as OpenAI documents temperature 0 may. Each JSON answer's words differ.
    FallbackSampling,
    /// Keeps the gpt-4o-transcribe contract under a model name of its own: srt, vtt
    /// and verbose_json refused with OpenAI's 400 ("response_format 'srt' is not
    /// compatible with model 'gpt-4o-transcribe'. Use 'json' or 'text' instead.",
    /// `unsupported_value`), and translation refused, as OpenAI answers for that
    /// model, passed through as LiteLLM passes an upstream error through in front of
    /// OpenAI's gpt-4o-transcribe under an alias (`litellm.BadRequestError:
    /// OpenAIException - …`).
    Gpt4oTranscribeAlias,
    /// Answers `verbose_json` with `"words": null` whatever `timestamp_granularities[]`
    /// asks, as speaches v0.9.0-rc.3 does ("I always get the segments and words is
    /// null", speaches#639) and as a server behind LiteLLM did when LiteLLM dropped the
    /// field on the way (litellm#12407).
    WordsNull,
    /// Reads the list only under the SDKs' bracketed name, `timestamp_granularities[]`:
    /// asked with the field's own name, `timestamp_granularities`, it answers
    /// `"words": null`, as speaches does (its form reads the field by that alias,
    /// speaches#379).
    BareListNameIgnored,
    /// Answers a transcription's usage as a chat completion's, `{"prompt_tokens",
    /// "completion_tokens", "total_tokens", "prompt_audio_seconds"}` without a `type`,
    /// as Mistral's transcriptions do (a real answer quoted in pydantic/genai-prices#591:
    /// prompt_tokens 3, audio_tokens 375, completion_tokens 1, total_tokens 379).
    ChatCompletionUsage,
    /// Drops `logprobs` from a JSON transcription, as LiteLLM does in front of OpenAI's
    /// gpt-4o-transcribe: its response copies only language, task, duration, words and
    /// segments beside the text (`optional_keys`, litellm PR #36009), so
    /// `include[]=logprobs` is answered without them; stdapi.ai answered them always
    /// null (stdapi.ai#83).
    LogprobsDropped,
    /// Answers `stream: true` with the whole JSON transcript instead of events, as
    /// LiteLLM's proxy 1.80.11 does ("streaming functionality is omitted and the final
    /// result is just returned", litellm#21310), whatever model it fronts.
    StreamIgnored,
    /// Answers `diarized_json` in vLLM's own shape: segments with integer ids and no
    /// `type`, no `task`, `duration` a string, `language` null (vLLM's
    /// TranscriptionResponseDiarized and TranscriptionDiarizedSegment, protocol.py at
    /// 79ef6467), where OpenAI's TranscriptionDiarized has string ids, each segment's
    /// type `transcript.text.segment`, task and a number duration.
    DiarizedAsVllm,
}

/// Words another model says (none of the reference transcriber's).
const OTHER_WORDS: [&str; 16] = [
    "granite", "meadow", "violet", "thunder", "copper", "lantern", "orchard", "falcon", "harbor",
    "velvet", "glacier", "ember", "willow", "canyon", "saffron", "marble",
];

/// How many answers [`SpeechQuirk::FallbackSampling`] has sampled: each draws other
/// words.
static SAMPLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `text` as another model says it: as many words, from [`OTHER_WORDS`], chosen by
/// `draw`.
fn other_words(text: &str, draw: usize) -> String {
    text.split(' ')
        .enumerate()
        .map(|(i, word)| other_word(i, word, draw))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The other model's word for the `i`th word, `word`.
fn other_word(i: usize, word: &str, draw: usize) -> &'static str {
    OTHER_WORDS[(i * 5 + word.len() + draw) % OTHER_WORDS.len()]
}

impl SpeechQuirk {
    /// Answers the request outright where the route is not served.
    pub(crate) fn before(&self, request: &Incoming) -> Option<Answer> {
        if *self == SpeechQuirk::CannotTranscribe && is_speech(request) {
            return Some(Answer::json_body(
                500,
                &json!({"error": {
                    "code": "500",
                    "message": "litellm.APIConnectionError: Unmapped provider passed in. Unable to get the response.",
                    "param": null,
                    "type": null
                }}),
            ));
        }
        let absent = match self {
            SpeechQuirk::NotServed => is_speech(request),
            SpeechQuirk::NoTranslations => request.path.ends_with("/audio/translations"),
            SpeechQuirk::SpeechOnly => !is_speech(request),
            _ => false,
        };
        absent.then(|| Answer::plain_text(404, "Not Found"))
    }

    /// Rewrites a speech answer.
    pub(crate) fn after(&self, request: &Incoming, answer: &mut Answer) {
        if !is_speech(request) {
            return;
        }
        if *self == SpeechQuirk::SixteenKilohertzMonoOnly
            && answer.status == 200
            && wav_format(request).is_some_and(|format| format != (1, 16_000))
        {
            *answer = Answer::json_body(
                400,
                &json!({"error": {
                    "message": "Invalid or unsupported audio file.",
                    "type": "BadRequestError",
                    "param": null,
                    "code": 400
                }}),
            );
            return;
        }
        if *self == SpeechQuirk::WavOnly && answer.status == 200 && !uploads_wav(request) {
            *answer = Answer::json_body(
                500,
                &json!({"error": {
                    "message": "invalid WAV RIFF header: /tmp/audiocpp_upload_3.mp3",
                    "type": "server_error"
                }}),
            );
            return;
        }
        if answer.status >= 400 {
            self.refusal(request, answer);
            return;
        }
        if *self == SpeechQuirk::Gpt4oTranscribeAlias {
            gpt_4o_transcribe(request, answer);
            return;
        }
        if answer.status != 200 {
            return;
        }
        let format = form_field(request, "response_format");
        if *self == SpeechQuirk::ChatChunkStream
            && form_field(request, "stream").as_deref() == Some("true")
        {
            *answer = chat_chunks(answer);
            return;
        }
        match self {
            SpeechQuirk::NotServed | SpeechQuirk::NoTranslations | SpeechQuirk::SpeechOnly => {}
            SpeechQuirk::AnotherModel | SpeechQuirk::FallbackSampling => {
                let draw = match self {
                    SpeechQuirk::FallbackSampling => {
                        SAMPLED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
                    }
                    _ => 0,
                };
                if let Some(mut body) = answer.json()
                    && let Some(text) = body["text"].as_str()
                {
                    body["text"] = json!(other_words(text, draw));
                    // Its word timestamps are its own words, as its text is.
                    if let Some(words) = body["words"].as_array_mut() {
                        for (i, word) in words.iter_mut().enumerate() {
                            let said = word["word"].as_str().unwrap_or_default();
                            word["word"] = json!(other_word(i, said, draw));
                        }
                    }
                    answer.set_json(&body);
                }
            }
            SpeechQuirk::TextAsJson if format.as_deref() == Some("text") => {
                let text = String::from_utf8_lossy(&answer.body).trim_end().to_owned();
                *answer = Answer::json_body(200, &json!({"text": text}));
            }
            SpeechQuirk::JsonAsPlainText if format.is_none() && answer.json().is_some() => {
                let text = answer
                    .json()
                    .and_then(|j| j.get("text").and_then(|t| t.as_str().map(str::to_owned)))
                    .unwrap_or_default();
                *answer = Answer::plain_text(200, &text);
            }
            SpeechQuirk::NullNoSpeechProb if format.as_deref() == Some("verbose_json") => {
                if let Some(mut body) = answer.json() {
                    if let Some(segments) = body["segments"].as_array_mut() {
                        segments
                            .iter_mut()
                            .for_each(|s| s["no_speech_prob"] = serde_json::Value::Null);
                    }
                    answer.set_json(&body);
                }
            }
            SpeechQuirk::NegativeCueTimes => {
                let (start, negative) = match format.as_deref() {
                    Some("srt") => ("00:00:00,000 -->", "00:-16:-47,-280 -->"),
                    Some("vtt") => ("00:00:00.000 -->", "00:-16:-47.-280 -->"),
                    _ => return,
                };
                let text = String::from_utf8_lossy(&answer.body).replacen(start, negative, 1);
                answer.body = text.into_bytes();
            }
            SpeechQuirk::EmptyVerboseJson if format.as_deref() == Some("verbose_json") => {
                *answer = Answer::json_body(
                    200,
                    &json!({"duration": 3.0, "language": "el", "segments": [], "text": "", "words": null}),
                );
            }
            SpeechQuirk::WordsNull if format.as_deref() == Some("verbose_json") => {
                null_words(answer);
            }
            SpeechQuirk::BareListNameIgnored
                if format.as_deref() == Some("verbose_json")
                    && form_field(request, "timestamp_granularities").is_some()
                    && form_field(request, "timestamp_granularities[]").is_none() =>
            {
                null_words(answer);
            }
            SpeechQuirk::ChatCompletionUsage => {
                if let Some(mut body) = answer.json()
                    && body.get("usage").is_some()
                {
                    body["usage"] = json!({
                        "prompt_tokens": 3,
                        "completion_tokens": 1,
                        "total_tokens": 379,
                        "prompt_audio_seconds": 3
                    });
                    answer.set_json(&body);
                }
            }
            SpeechQuirk::StreamIgnored
                if form_field(request, "stream").as_deref() == Some("true") =>
            {
                let text = streamed_done_text(answer);
                *answer = Answer::json_body(200, &json!({"text": text}));
            }
            SpeechQuirk::DiarizedAsVllm if format.as_deref() == Some("diarized_json") => {
                if let Some(mut body) = answer.json() {
                    vllm_diarized(&mut body);
                    answer.set_json(&body);
                }
            }
            SpeechQuirk::LogprobsDropped => {
                if let Some(mut body) = answer.json()
                    && let Some(object) = body.as_object_mut()
                    && object.remove("logprobs").is_some()
                {
                    answer.set_json(&body);
                }
            }
            SpeechQuirk::CueEndsBeforeStart => {
                let (separator, negative_end) = match format.as_deref() {
                    Some("srt") => (',', "-00:00:01,500"),
                    Some("vtt") => ('.', "-00:00:01.500"),
                    _ => return,
                };
                let text = String::from_utf8_lossy(&answer.body).into_owned();
                answer.body = with_first_end(&text, separator, negative_end).into_bytes();
            }
            SpeechQuirk::TextAsJson
            | SpeechQuirk::JsonAsPlainText
            | SpeechQuirk::NullNoSpeechProb
            | SpeechQuirk::EmptyVerboseJson
            | SpeechQuirk::RefusalsAs500
            | SpeechQuirk::PlainTextRefusals
            | SpeechQuirk::SixteenKilohertzMonoOnly
            | SpeechQuirk::WavOnly
            | SpeechQuirk::ChatChunkStream
            | SpeechQuirk::Gpt4oTranscribeAlias
            | SpeechQuirk::WordsNull
            | SpeechQuirk::StreamIgnored
            | SpeechQuirk::DiarizedAsVllm
            | SpeechQuirk::BareListNameIgnored
            | SpeechQuirk::CannotTranscribe => {}
        }
    }

    /// Rewrites a refusal of a speech request.
    fn refusal(&self, request: &Incoming, answer: &mut Answer) {
        match self {
            SpeechQuirk::RefusalsAs500 if has_file(request) && refuses_the_upload(answer) => {
                *answer = Answer::plain_text(500, "Internal Server Error");
            }
            // A route that is absent is not the handler's refusal.
            SpeechQuirk::PlainTextRefusals if answer.status != 404 => {
                *answer = Answer::plain_text(400, "Invalid request");
            }
            _ => {}
        }
    }
}

/// A diarized answer in vLLM's shape: integer segment ids, no segment type, no task,
/// the duration as a string.
fn vllm_diarized(body: &mut serde_json::Value) {
    if let Some(object) = body.as_object_mut() {
        object.remove("task");
        let duration = object.get("duration").map(ToString::to_string);
        object.insert("duration".to_owned(), json!(duration.unwrap_or_default()));
        object.insert("language".to_owned(), serde_json::Value::Null);
    }
    if let Some(segments) = body["segments"].as_array_mut() {
        for (i, segment) in segments.iter_mut().enumerate() {
            if let Some(segment) = segment.as_object_mut() {
                segment.remove("type");
                segment.insert("id".to_owned(), json!(i));
            }
        }
    }
}

/// The text of a stream's `transcript.text.done` event (empty where it has none).
fn streamed_done_text(answer: &Answer) -> String {
    String::from_utf8_lossy(&answer.body)
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .find(|event| event["type"] == "transcript.text.done")
        .and_then(|done| done["text"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The answer with `words: null`, its segments kept.
fn null_words(answer: &mut Answer) {
    if let Some(mut body) = answer.json() {
        body["words"] = serde_json::Value::Null;
        answer.set_json(&body);
    }
}

/// OpenAI's answer for gpt-4o-transcribe, passed through a gateway: json and text
/// answered, the other formats and translation refused in OpenAI's words.
fn gpt_4o_transcribe(request: &Incoming, answer: &mut Answer) {
    let format = form_field(request, "response_format");
    let message = if request.path.ends_with("/audio/translations") {
        "model 'gpt-4o-transcribe' is not supported for translations.".to_owned()
    } else {
        match format.as_deref() {
            None | Some("json" | "text") => return,
            Some(other) => format!(
                "response_format '{other}' is not compatible with model 'gpt-4o-transcribe'. Use 'json' or 'text' instead."
            ),
        }
    };
    *answer = Answer::json_body(
        400,
        &json!({"error": {
            "message": format!("litellm.BadRequestError: OpenAIException - {message}"),
            "type": "invalid_request_error",
            "param": "response_format",
            "code": "400"
        }}),
    );
}

/// A stream of OpenAI's events rewritten as vLLM 0.32 streams a transcription: one
/// chat-completion chunk a delta, a last chunk with `finish_reason`, then `[DONE]`.
fn chat_chunks(answer: &Answer) -> Answer {
    let body = String::from_utf8_lossy(&answer.body);
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        let chunk = json!({
            "id": "transcribe-0",
            "object": "transcription.chunk",
            "created": 0,
            "model": "whisper",
            "choices": [{"delta": delta, "finish_reason": finish}],
        });
        format!("data: {chunk}\n\n")
    };
    let mut events: String = body
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter_map(|event| event.get("delta").cloned())
        .map(|delta| chunk(json!({"content": delta}), serde_json::Value::Null))
        .collect();
    events.push_str(&chunk(json!({}), json!("stop")));
    events.push_str("data: [DONE]\n\n");
    Answer {
        status: 200,
        content_type: "text/event-stream; charset=utf-8".to_owned(),
        headers: Vec::new(),
        body: events.into_bytes(),
    }
}

/// The channel count and sample rate of the WAV file the request uploads, from its
/// `fmt ` chunk.
fn wav_format(request: &Incoming) -> Option<(u16, u32)> {
    let body = &request.body;
    let at = body.windows(8).position(|w| w == b"WAVEfmt ")? + 8;
    let fmt = body.get(at + 4..at + 16)?;
    let channels = u16::from_le_bytes([fmt[2], fmt[3]]);
    let rate = u32::from_le_bytes([fmt[4], fmt[5], fmt[6], fmt[7]]);
    Some((channels, rate))
}

/// Whether the multipart request uploads a WAV file: a part whose body starts `RIFF`.
fn uploads_wav(request: &Incoming) -> bool {
    request.body.windows(8).any(|w| w == b"\r\n\r\nRIFF")
}

/// Whether a refusal is of the upload itself or its language (its `error.param` is
/// `file` or `language`, or it is 413): what faster-whisper-server's decoder raises on;
/// an option it does not know it never reads.
fn refuses_the_upload(answer: &Answer) -> bool {
    let param = answer.json().and_then(|j| {
        j.pointer("/error/param")
            .and_then(|p| p.as_str().map(str::to_owned))
    });
    answer.status == 413 || matches!(param.as_deref(), Some("file" | "language"))
}

/// Whether the multipart request carries a `file` part.
fn has_file(request: &Incoming) -> bool {
    String::from_utf8_lossy(&request.body).contains("name=\"file\"")
}

/// Whether the request went to a speech-to-text route.
fn is_speech(request: &Incoming) -> bool {
    ["/audio/transcriptions", "/audio/translations"]
        .iter()
        .any(|route| request.path.ends_with(route))
}

/// A text field of a multipart request, found by its part's name.
fn form_field(request: &Incoming, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\"\r\n\r\n");
    let body = String::from_utf8_lossy(&request.body);
    let start = body.find(&marker)? + marker.len();
    let end = body[start..].find("\r\n")?;
    Some(body[start..start + end].to_owned())
}

/// `text` with the first timing line's end time replaced by `end`.
fn with_first_end(text: &str, separator: char, end: &str) -> String {
    let mut done = false;
    text.split('\n')
        .map(|line| match line.split_once("-->") {
            Some((start, rest)) if !done && rest.contains(separator) => {
                done = true;
                let settings = rest.trim_start().split_once(' ').map_or("", |(_, s)| s);
                format!("{start}--> {end} {settings}").trim_end().to_owned()
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
