//! `POST /v1/audio/transcriptions` and `/v1/audio/translations`: OpenAI's
//! speech-to-text, answered by a deterministic transcriber (`audio`) in each documented
//! `response_format`. The transcriber hears English words, so a translation is the
//! transcript.

mod audio;
mod form;

use serde::Serialize;
use serde_json::json;

use super::{ApiError, Engine, HttpRequest, HttpResponse};

/// The form fields OpenAI's `CreateTranscriptionRequest` has, as the SDKs send them.
/// `timestamp_granularities` is read under both names: the SDKs send the list as
/// repeated `timestamp_granularities[]` parts, the OpenAPI file names the field
/// without the brackets since June 2025.
pub const SPEECH_FIELDS: [&str; 12] = [
    "file",
    "model",
    "language",
    "prompt",
    "response_format",
    "temperature",
    "timestamp_granularities[]",
    "timestamp_granularities",
    "stream",
    "chunking_strategy",
    "include[]",
    "include",
];

/// The form fields OpenAI's `CreateTranslationRequest` has: no `language` (the output
/// is English), no streaming.
const TRANSLATION_FIELDS: [&str; 5] = ["file", "model", "prompt", "response_format", "temperature"];

/// What a speech route does with the clip. OpenAI's two audio routes take the same
/// upload and answer in the same formats; translations take fewer fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Task {
    Transcribe,
    Translate,
}

impl Task {
    /// The form fields the route accepts.
    fn fields(self) -> &'static [&'static str] {
        match self {
            Task::Transcribe => &SPEECH_FIELDS,
            Task::Translate => &TRANSLATION_FIELDS,
        }
    }

    /// The `task` of a `verbose_json` answer.
    fn name(self) -> &'static str {
        match self {
            Task::Transcribe => "transcribe",
            Task::Translate => "translate",
        }
    }
}

/// OpenAI's upload limit: 25 MiB, refused with 413 above it.
pub const MAX_AUDIO_BYTES: usize = 26_214_400;

/// Words a segment holds.
const SEGMENT_WORDS: usize = 8;

/// OpenAI's gpt-4o-transcribe family, served beside the configured model: each keeps
/// its class's contract (json and text only), where the configured model keeps
/// whisper-1's.
const GPT_4O_TRANSCRIBE: [&str; 4] = [
    "gpt-4o-transcribe",
    "gpt-4o-mini-transcribe",
    "gpt-4o-mini-transcribe-2025-12-15",
    "gpt-transcribe",
];

/// OpenAI's diarizing model, served beside the configured one: json and text.
const GPT_4O_TRANSCRIBE_DIARIZE: &str = "gpt-4o-transcribe-diarize";

/// Which of OpenAI's transcription contracts a model keeps (its API reference: whisper-1
/// answers five formats, gpt-4o-transcribe json and text, the diarizing model json and
/// text, and only whisper-1 translates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Whisper,
    Gpt4oTranscribe,
    Diarize,
}

impl Class {
    /// The class of `model`, where the server serves it: OpenAI's names keep their
    /// class's contract even as the configured model (a persona serving
    /// `gpt-4o-transcribe` alone), any other configured name whisper-1's.
    fn of(model: &str, configured: &str) -> Option<Class> {
        if GPT_4O_TRANSCRIBE.contains(&model) {
            Some(Class::Gpt4oTranscribe)
        } else if model == GPT_4O_TRANSCRIBE_DIARIZE {
            Some(Class::Diarize)
        } else {
            (model == configured).then_some(Class::Whisper)
        }
    }

    /// The formats the class answers in, as its refusal lists them.
    fn formats(self) -> Option<&'static str> {
        match self {
            Class::Whisper => None,
            Class::Gpt4oTranscribe => Some("'json' or 'text'"),
            Class::Diarize => Some("'json', 'text' or 'diarized_json'"),
        }
    }

    fn offers(self, format: Format) -> bool {
        match self {
            Class::Whisper => format != Format::DiarizedJson,
            Class::Gpt4oTranscribe => matches!(format, Format::Json | Format::Text),
            Class::Diarize => matches!(format, Format::Json | Format::Text | Format::DiarizedJson),
        }
    }
}

/// A transcription request, read.
struct Request<'a> {
    audio: &'a [u8],
    format: Format,
    /// `stream: true`: the JSON transcript as OpenAI's server-sent events.
    stream: bool,
    timestamps: Timestamps,
    class: Class,
    /// `include[]=logprobs`: each token's log probability, for a gpt-4o-transcribe
    /// model's json answer.
    logprobs: bool,
}

/// The `timestamp_granularities` asked for: segments where none is named (OpenAI's
/// default, `[segment]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Timestamps {
    words: bool,
    segments: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Text,
    Srt,
    VerboseJson,
    Vtt,
    /// The diarizing model's segments, each with its speaker.
    DiarizedJson,
}

impl Format {
    /// Its `response_format` name.
    fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Text => "text",
            Format::Srt => "srt",
            Format::VerboseJson => "verbose_json",
            Format::Vtt => "vtt",
            Format::DiarizedJson => "diarized_json",
        }
    }
}

impl Engine {
    pub(super) fn speech(
        &self,
        request: &HttpRequest<'_>,
        task: Task,
    ) -> Result<HttpResponse, ApiError> {
        let read = self.read_speech(request, task)?;
        let heard = audio::hear(read.audio)?;
        Ok(match (read.stream, read.format) {
            (true, Format::Json | Format::Text) => streamed(&heard),
            _ => answer(&heard, &read, task),
        })
    }

    fn read_speech<'a>(
        &self,
        request: &HttpRequest<'a>,
        task: Task,
    ) -> Result<Request<'a>, ApiError> {
        let parts = form::parts(request.content_type, request.body)?;
        if let Some(unknown) = parts
            .iter()
            .find(|p| !task.fields().contains(&p.name.as_str()))
        {
            return Err(ApiError::UnrecognizedArgument(unknown.name.clone()));
        }
        let field = |name: &str| parts.iter().find(|p| p.name == name);
        let text = |name: &'static str| -> Result<Option<String>, ApiError> {
            field(name)
                .map(|p| {
                    String::from_utf8(p.body.to_vec()).map_err(|_| ApiError::InvalidType {
                        param: name,
                        location: name.to_owned(),
                        expected: "a string",
                        actual: "bytes that are not UTF-8",
                    })
                })
                .transpose()
        };
        let file = field("file").ok_or(ApiError::MissingParameter("file"))?;
        if file.body.len() > MAX_AUDIO_BYTES {
            return Err(ApiError::PayloadTooLarge {
                limit: MAX_AUDIO_BYTES,
            });
        }
        let model = text("model")?.ok_or(ApiError::MissingParameter("model"))?;
        let Some(class) = Class::of(&model, &self.config.model_id) else {
            return Err(ApiError::ModelNotFound(model));
        };
        if task == Task::Translate && class != Class::Whisper {
            return Err(ApiError::DoesNotTranslate(model));
        }
        if let Some(language) = text("language")?
            && !(language.len() == 2 && language.bytes().all(|b| b.is_ascii_lowercase()))
        {
            return Err(ApiError::UnsupportedValue {
                param: "language",
                value: language,
                supported: "ISO-639-1 codes such as 'en'",
            });
        }
        if let Some(temperature) = text("temperature")?
            && !temperature
                .parse::<f64>()
                .is_ok_and(|t| (0.0..=1.0).contains(&t))
        {
            return Err(ApiError::UnsupportedValue {
                param: "temperature",
                value: temperature,
                supported: "a number from 0 to 1",
            });
        }
        let format = match text("response_format")?.as_deref() {
            None | Some("json") => Format::Json,
            Some("text") => Format::Text,
            Some("srt") => Format::Srt,
            Some("verbose_json") => Format::VerboseJson,
            Some("vtt") => Format::Vtt,
            Some("diarized_json") if class == Class::Diarize => Format::DiarizedJson,
            Some(other) => {
                return Err(ApiError::UnsupportedValue {
                    param: "response_format",
                    value: other.to_owned(),
                    supported: "'json', 'text', 'srt', 'verbose_json', 'vtt'",
                });
            }
        };
        if let Some(formats) = class.formats().filter(|_| !class.offers(format)) {
            return Err(ApiError::IncompatibleFormat {
                format: text("response_format")?.unwrap_or_default(),
                model,
                formats,
            });
        }
        let stream = match text("stream")?.as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(ApiError::UnsupportedValue {
                    param: "stream",
                    value: other.to_owned(),
                    supported: "true or false",
                });
            }
        };
        let timestamps = timestamps(&parts)?;
        let logprobs = logprobs(&parts, class, format, &model)?;
        Ok(Request {
            audio: file.body,
            format,
            stream,
            timestamps,
            class,
            logprobs,
        })
    }
}

/// The granularities the form's `timestamp_granularities[]` or
/// `timestamp_granularities` parts name.
fn timestamps(parts: &[form::Part<'_>]) -> Result<Timestamps, ApiError> {
    let named: Vec<&[u8]> = parts
        .iter()
        .filter(|p| p.name == "timestamp_granularities[]" || p.name == "timestamp_granularities")
        .map(|p| p.body)
        .collect();
    if let Some(other) = named.iter().find(|v| !matches!(**v, b"word" | b"segment")) {
        return Err(ApiError::UnsupportedValue {
            param: "timestamp_granularities",
            value: String::from_utf8_lossy(other).into_owned(),
            supported: "'word', 'segment'",
        });
    }
    Ok(Timestamps {
        words: named.contains(&&b"word"[..]),
        segments: named.is_empty() || named.contains(&&b"segment"[..]),
    })
}

/// Whether the form asks for logprobs (`include[]` or `include`, each `logprobs`):
/// refused where OpenAI documents none, for a model outside the gpt-4o-transcribe
/// family or a format other than json.
fn logprobs(
    parts: &[form::Part<'_>],
    class: Class,
    format: Format,
    model: &str,
) -> Result<bool, ApiError> {
    let named: Vec<&[u8]> = parts
        .iter()
        .filter(|p| p.name == "include[]" || p.name == "include")
        .map(|p| p.body)
        .collect();
    if let Some(other) = named.iter().find(|v| **v != b"logprobs") {
        return Err(ApiError::UnsupportedValue {
            param: "include",
            value: String::from_utf8_lossy(other).into_owned(),
            supported: "'logprobs'",
        });
    }
    if named.is_empty() {
        return Ok(false);
    }
    if class != Class::Gpt4oTranscribe || format != Format::Json {
        return Err(ApiError::LogprobsNotSupported {
            model: model.to_owned(),
            format: format.name(),
        });
    }
    Ok(true)
}

/// Each heard word as a token with its log probability, as OpenAI's logprobs.
fn token_logprobs(heard: &audio::Heard) -> Vec<serde_json::Value> {
    heard
        .words
        .iter()
        .enumerate()
        .map(|(i, word)| {
            let token = if i == 0 {
                (*word).to_owned()
            } else {
                format!(" {word}")
            };
            let logprob = -0.05 * (i % 5 + 1) as f64;
            json!({"token": token, "logprob": logprob, "bytes": token.as_bytes()})
        })
        .collect()
}

/// The transcript's segments as the diarizing model answers them: each with its
/// speaker, the speakers taking turns a segment each.
fn diarized(heard: &audio::Heard) -> Vec<serde_json::Value> {
    segments(heard)
        .into_iter()
        .map(|segment| {
            json!({
                "type": "transcript.text.segment",
                "id": format!("seg_{}", segment.id),
                "start": segment.start,
                "end": segment.end,
                "text": segment.text.trim(),
                "speaker": if segment.id % 2 == 0 { "A" } else { "B" },
            })
        })
        .collect()
}

/// One word with its times, as OpenAI's TranscriptionWord.
#[derive(Serialize)]
struct Word {
    word: &'static str,
    start: f64,
    end: f64,
}

/// The heard words, each given an equal share of the clip.
fn words(heard: &audio::Heard) -> Vec<Word> {
    let each = heard.seconds / heard.words.len().max(1) as f64;
    heard
        .words
        .iter()
        .enumerate()
        .map(|(i, word)| Word {
            word,
            start: round_ms(each * i as f64),
            end: round_ms(each * (i + 1) as f64),
        })
        .collect()
}

/// One stretch of the transcript with its times.
#[derive(Serialize)]
struct Segment {
    id: usize,
    seek: usize,
    start: f64,
    end: f64,
    text: String,
    tokens: Vec<usize>,
    temperature: f64,
    avg_logprob: f64,
    compression_ratio: f64,
    no_speech_prob: f64,
}

fn segments(heard: &audio::Heard) -> Vec<Segment> {
    let chunks: Vec<&[&str]> = heard.words.chunks(SEGMENT_WORDS).collect();
    let each = heard.seconds / chunks.len().max(1) as f64;
    chunks
        .iter()
        .enumerate()
        .map(|(id, words)| Segment {
            id,
            seek: 0,
            start: round_ms(each * id as f64),
            end: round_ms(each * (id + 1) as f64),
            text: format!(" {}", words.join(" ")),
            tokens: (0..words.len())
                .map(|i| 50_364 + id * SEGMENT_WORDS + i)
                .collect(),
            temperature: 0.0,
            avg_logprob: -0.25,
            compression_ratio: 1.0,
            no_speech_prob: 0.01,
        })
        .collect()
}

fn round_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

/// What the transcriber hears in an upload, as its JSON answer's `text`: the known
/// answer a persona's speech reference file holds.
pub fn transcript(upload: &[u8]) -> Result<String, ApiError> {
    audio::hear(upload).map(|heard| heard.words.join(" "))
}

/// Audio tokens a second of the clip counts as, for a gpt-4o-transcribe model's usage.
const AUDIO_TOKENS_PER_SECOND: f64 = 10.0;

/// The usage a model's class reports (OpenAI's two documented shapes): whisper-1 the
/// clip's length in whole seconds, rounded up; the gpt-4o-transcribe family tokens, the
/// clip's audio tokens in, the words out.
fn usage(heard: &audio::Heard, class: Class) -> serde_json::Value {
    if class == Class::Whisper {
        return json!({"type": "duration", "seconds": heard.seconds.ceil() as u64});
    }
    let audio = (heard.seconds * AUDIO_TOKENS_PER_SECOND).ceil() as u64;
    let words = heard.words.len() as u64;
    json!({
        "type": "tokens",
        "input_tokens": audio,
        "input_token_details": {"text_tokens": 0, "audio_tokens": audio},
        "output_tokens": words,
        "total_tokens": audio + words,
    })
}

fn answer(heard: &audio::Heard, read: &Request<'_>, task: Task) -> HttpResponse {
    let text = heard.words.join(" ");
    let usage = usage(heard, read.class);
    let timestamps = read.timestamps;
    match read.format {
        Format::Json => {
            let mut body = json!({"text": text, "usage": usage});
            if read.logprobs {
                body["logprobs"] = json!(token_logprobs(heard));
            }
            HttpResponse::json(200, &body)
        }
        Format::Text => plain("text/plain; charset=utf-8", format!("{text}\n")),
        Format::VerboseJson => {
            let mut body = json!({
                "task": task.name(),
                "language": "english",
                "duration": heard.seconds,
                "text": text,
                "usage": usage,
            });
            if timestamps.segments {
                body["segments"] = json!(segments(heard));
            }
            if timestamps.words {
                body["words"] = json!(words(heard));
            }
            HttpResponse::json(200, &body)
        }
        Format::DiarizedJson => HttpResponse::json(
            200,
            &json!({
                "task": "transcribe",
                "duration": heard.seconds,
                "text": text,
                "segments": diarized(heard),
                "usage": usage,
            }),
        ),
        Format::Srt => plain(
            "application/x-subrip; charset=utf-8",
            cues(heard, Format::Srt),
        ),
        Format::Vtt => plain("text/vtt; charset=utf-8", cues(heard, Format::Vtt)),
    }
}

/// The transcript as OpenAI streams it (`stream: true`, for json and text): one
/// `transcript.text.delta` event a word, then one `transcript.text.done` with the whole
/// text and the usage, as server-sent events. The deltas joined are the done text.
fn streamed(heard: &audio::Heard) -> HttpResponse {
    let text = heard.words.join(" ");
    let usage = json!({"type": "duration", "seconds": heard.seconds.ceil() as u64});
    let mut events = String::new();
    for (i, word) in heard.words.iter().enumerate() {
        let delta = if i == 0 {
            (*word).to_owned()
        } else {
            format!(" {word}")
        };
        let event = json!({"type": "transcript.text.delta", "delta": delta});
        events.push_str(&format!("data: {event}\n\n"));
    }
    let done = json!({"type": "transcript.text.done", "text": text, "usage": usage});
    events.push_str(&format!("data: {done}\n\n"));
    plain("text/event-stream; charset=utf-8", events)
}

/// The transcript as SubRip or WebVTT cues, one a segment.
fn cues(heard: &audio::Heard, format: Format) -> String {
    let mut out = String::new();
    if format == Format::Vtt {
        out.push_str("WEBVTT\n\n");
    }
    for segment in segments(heard) {
        if format == Format::Srt {
            out.push_str(&format!("{}\n", segment.id + 1));
        }
        let separator = if format == Format::Srt { ',' } else { '.' };
        out.push_str(&format!(
            "{} --> {}\n{}\n\n",
            timestamp(segment.start, separator),
            timestamp(segment.end, separator),
            segment.text.trim()
        ));
    }
    out
}

/// `HH:MM:SS,mmm` (SubRip) or `HH:MM:SS.mmm` (WebVTT).
fn timestamp(seconds: f64, separator: char) -> String {
    let ms = (seconds * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02}{separator}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

fn plain(content_type: &'static str, body: String) -> HttpResponse {
    HttpResponse {
        status: 200,
        content_type,
        headers: Vec::new(),
        body: body.into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::Value;

    /// A one-second 8 kHz WAV clip of a steady tone.
    fn clip() -> Vec<u8> {
        let samples = 8_000u32;
        let mut bytes = b"RIFF".to_vec();
        bytes.extend_from_slice(&(36 + samples * 2).to_le_bytes());
        bytes.extend_from_slice(b"WAVEfmt ");
        bytes.extend_from_slice(&16u32.to_le_bytes());
        bytes.extend_from_slice(&[1, 0, 1, 0]);
        bytes.extend_from_slice(&8_000u32.to_le_bytes());
        bytes.extend_from_slice(&16_000u32.to_le_bytes());
        bytes.extend_from_slice(&[2, 0, 16, 0]);
        bytes.extend_from_slice(b"data");
        bytes.extend_from_slice(&(samples * 2).to_le_bytes());
        (0..samples).for_each(|i| bytes.extend_from_slice(&((i % 64) as i16 * 100).to_le_bytes()));
        bytes
    }

    /// A form's fields, each a name and its bytes.
    type Fields<'a> = &'a [(&'a str, &'a [u8])];

    fn send(fields: Fields<'_>) -> HttpResponse {
        send_to("/v1/audio/transcriptions", fields)
    }

    fn send_to(path: &str, fields: Fields<'_>) -> HttpResponse {
        let mut body = Vec::new();
        for (name, value) in fields {
            let file = if *name == "file" {
                "; filename=\"a.wav\""
            } else {
                ""
            };
            body.extend_from_slice(
                format!("--B\r\nContent-Disposition: form-data; name=\"{name}\"{file}\r\n\r\n")
                    .as_bytes(),
            );
            body.extend_from_slice(value);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(b"--B--\r\n");
        Engine::new(Config::default()).handle(&HttpRequest {
            method: "POST",
            path,
            authorization: None,
            content_type: Some("multipart/form-data; boundary=B"),
            body: &body,
        })
    }

    #[test]
    fn the_minimal_request_is_answered_with_json_text_and_text_as_itself() {
        let clip = clip();
        let json = send(&[("file", &clip), ("model", b"embedcheck-reference")]);
        assert_eq!((json.status, json.content_type), (200, "application/json"));
        let value: Value = serde_json::from_slice(&json.body).unwrap();
        let text = value["text"].as_str().unwrap().to_owned();
        assert_eq!(text.split(' ').count(), 2);
        let plain = send(&[
            ("file", &clip),
            ("model", b"embedcheck-reference"),
            ("response_format", b"text"),
        ]);
        assert_eq!(plain.content_type, "text/plain; charset=utf-8");
        assert_eq!(String::from_utf8(plain.body).unwrap(), format!("{text}\n"));
    }

    #[test]
    fn a_stream_is_deltas_then_one_done_event_with_their_text() {
        let clip = clip();
        let json = send(&[("file", &clip), ("model", b"embedcheck-reference")]);
        let text = serde_json::from_slice::<Value>(&json.body).unwrap()["text"].clone();
        let streamed = send(&[
            ("file", &clip),
            ("model", b"embedcheck-reference"),
            ("stream", b"true"),
        ]);
        assert_eq!(streamed.content_type, "text/event-stream; charset=utf-8");
        let body = String::from_utf8(streamed.body).unwrap();
        let events: Vec<Value> = body
            .split("\n\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .map(|e| serde_json::from_str(e).unwrap())
            .collect();
        let (done, deltas) = events.split_last().unwrap();
        assert_eq!(done["type"], "transcript.text.done");
        assert_eq!(done["text"], text);
        let joined: String = deltas
            .iter()
            .map(|d| d["delta"].as_str().unwrap())
            .collect();
        assert_eq!(joined, text.as_str().unwrap());
    }

    #[test]
    fn subtitles_have_cues_within_the_clip() {
        let clip = clip();
        let srt = send(&[
            ("file", &clip),
            ("model", b"embedcheck-reference"),
            ("response_format", b"srt"),
        ]);
        let text = String::from_utf8(srt.body).unwrap();
        assert!(
            text.starts_with("1\n00:00:00,000 --> 00:00:01,000\n"),
            "{text}"
        );
        let vtt = send(&[
            ("file", &clip),
            ("model", b"embedcheck-reference"),
            ("response_format", b"vtt"),
        ]);
        assert!(
            String::from_utf8(vtt.body)
                .unwrap()
                .starts_with("WEBVTT\n\n00:00:00.000 --> ")
        );
    }

    #[test]
    fn client_mistakes_are_refused_in_openais_envelope() {
        let clip = clip();
        let cases: [(Fields<'_>, u16, &str); 4] = [
            (&[("model", b"embedcheck-reference")], 400, "file"),
            (&[("file", &clip)], 400, "model"),
            (
                &[("file", b"not audio"), ("model", b"embedcheck-reference")],
                400,
                "file",
            ),
            (
                &[
                    ("file", &clip),
                    ("model", b"embedcheck-reference"),
                    ("response_format", b"xml"),
                ],
                400,
                "response_format",
            ),
        ];
        for (fields, status, param) in cases {
            let answer = send(fields);
            let value: Value = serde_json::from_slice(&answer.body).unwrap();
            assert_eq!(
                (answer.status, value["error"]["param"].as_str()),
                (status, Some(param))
            );
        }
    }

    /// Word timestamps are served under both names of the field, in order across the
    /// clip; without a granularity, segments alone.
    #[test]
    fn word_timestamps_are_served_under_both_names() {
        let clip = clip();
        for name in ["timestamp_granularities[]", "timestamp_granularities"] {
            let answer = send(&[
                ("file", &clip),
                ("model", b"embedcheck-reference"),
                ("response_format", b"verbose_json"),
                (name, b"word"),
            ]);
            let value: Value = serde_json::from_slice(&answer.body).unwrap();
            let words = value["words"].as_array().unwrap();
            assert_eq!(words.len(), 2, "{name}");
            assert_eq!(
                (&words[0]["start"], &words[1]["end"]),
                (&json!(0.0), &json!(1.0))
            );
            assert!(value.get("segments").is_none());
        }
        let plain = send(&[
            ("file", &clip),
            ("model", b"embedcheck-reference"),
            ("response_format", b"verbose_json"),
        ]);
        let value: Value = serde_json::from_slice(&plain.body).unwrap();
        assert!(value.get("words").is_none() && value["segments"].is_array());
    }

    /// Logprobs come with a gpt-4o-transcribe model's json, and are refused elsewhere.
    #[test]
    fn logprobs_are_a_gpt_4o_transcribe_models_own() {
        let clip = clip();
        let asked = |model: &'static [u8], format: &'static [u8]| {
            send(&[
                ("file", &clip),
                ("model", model),
                ("response_format", format),
                ("include[]", b"logprobs"),
            ])
        };
        let answer = asked(b"gpt-4o-transcribe", b"json");
        let value: Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(value["logprobs"].as_array().unwrap().len(), 2);
        assert_eq!(value["usage"]["type"], "tokens");
        assert_eq!(asked(b"gpt-4o-transcribe", b"text").status, 400);
        assert_eq!(asked(b"embedcheck-reference", b"json").status, 400);
    }

    /// The diarizing model answers diarized_json, each segment with its speaker; the
    /// others refuse it.
    #[test]
    fn diarized_json_is_the_diarizing_models_own() {
        let clip = clip();
        let asked = |model: &'static [u8]| {
            send(&[
                ("file", &clip),
                ("model", model),
                ("response_format", b"diarized_json"),
            ])
        };
        let answer = asked(b"gpt-4o-transcribe-diarize");
        let value: Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(value["segments"][0]["type"], "transcript.text.segment");
        assert_eq!(value["segments"][0]["speaker"], "A");
        assert_eq!(asked(b"embedcheck-reference").status, 400);
        assert_eq!(asked(b"gpt-4o-transcribe").status, 400);
    }

    /// A gpt-4o-transcribe model answers json and text, and refuses the other formats
    /// and translation as OpenAI does.
    #[test]
    fn the_gpt_4o_transcribe_class_keeps_its_own_contract() {
        let clip = clip();
        let model: &[u8] = b"gpt-4o-mini-transcribe";
        for format in [&b"json"[..], b"text"] {
            let answer = send(&[
                ("file", &clip),
                ("model", model),
                ("response_format", format),
            ]);
            assert_eq!(answer.status, 200);
        }
        for format in [&b"srt"[..], b"vtt", b"verbose_json"] {
            let answer = send(&[
                ("file", &clip),
                ("model", model),
                ("response_format", format),
            ]);
            let value: Value = serde_json::from_slice(&answer.body).unwrap();
            assert_eq!(answer.status, 400);
            assert_eq!(value["error"]["code"], "unsupported_value");
            let message = value["error"]["message"].as_str().unwrap();
            assert!(
                message.ends_with("Use 'json' or 'text' instead."),
                "{message}"
            );
        }
        let translated = send_to(
            "/v1/audio/translations",
            &[("file", &clip), ("model", model)],
        );
        assert_eq!(translated.status, 400);
    }

    #[test]
    fn a_translation_is_the_transcript_and_takes_no_language() {
        let clip = clip();
        let fields: Fields<'_> = &[
            ("file", &clip),
            ("model", b"embedcheck-reference"),
            ("response_format", b"verbose_json"),
        ];
        let transcribed: Value = serde_json::from_slice(&send(fields).body).unwrap();
        let translated = send_to("/v1/audio/translations", fields);
        let translated: Value = serde_json::from_slice(&translated.body).unwrap();
        assert_eq!(translated["text"], transcribed["text"]);
        assert_eq!(
            (&translated["task"], &translated["language"]),
            (&"translate".into(), &"english".into())
        );
        let with_language = send_to(
            "/v1/audio/translations",
            &[
                ("file", &clip),
                ("model", b"embedcheck-reference"),
                ("language", b"en"),
            ],
        );
        assert_eq!(with_language.status, 400);
    }

    #[test]
    fn cue_times_are_hours_minutes_seconds_and_milliseconds() {
        assert_eq!(timestamp(3725.5, ','), "01:02:05,500");
        assert_eq!(timestamp(0.0, '.'), "00:00:00.000");
    }
}
