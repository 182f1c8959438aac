//! The one reader of transcription answers beyond `text`: `verbose_json`'s documented
//! fields, SubRip and WebVTT cues, and a stream's server-sent events.

use crate::http::Reply;
use serde_json::Value;

/// Subtitles: SubRip (`00:00:01,000`) or WebVTT (`00:00:01.000`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Subtitles {
    Srt,
    Vtt,
}

impl Subtitles {
    pub(crate) fn format(self) -> &'static str {
        match self {
            Subtitles::Srt => "srt",
            Subtitles::Vtt => "vtt",
        }
    }
}

/// What is wrong with a `verbose_json` answer, each as a sentence; none when it has
/// every documented field, typed as documented.
pub(crate) fn verbose_problems(answer: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(object) = answer.as_object() else {
        return vec![format!("the answer is {}", crate::json::kind(Some(answer)))];
    };
    for (field, wanted, ok) in [
        (
            "language",
            "a string",
            Value::is_string as fn(&Value) -> bool,
        ),
        ("text", "a string", Value::is_string),
        ("duration", "a number", Value::is_number),
    ] {
        let value = object.get(field);
        if !value.is_some_and(ok) {
            problems.push(format!(
                "{field} is {}, not {wanted}",
                crate::json::kind(value)
            ));
        }
    }
    match object.get("segments") {
        None | Some(Value::Null) => {}
        Some(Value::Array(segments)) => {
            let wrong = segments
                .iter()
                .enumerate()
                .find_map(|(i, s)| segment_problem(i, s));
            problems.extend(wrong);
        }
        Some(other) => problems.push(format!(
            "segments is {}, not an array",
            crate::json::kind(Some(other))
        )),
    }
    problems
}

/// The first thing wrong with segment `i`, where anything is.
fn segment_problem(i: usize, segment: &Value) -> Option<String> {
    const NUMBERS: [&str; 8] = [
        "id",
        "seek",
        "start",
        "end",
        "temperature",
        "avg_logprob",
        "compression_ratio",
        "no_speech_prob",
    ];
    let field = |name: &str| segment.get(name);
    if let Some(name) = NUMBERS
        .iter()
        .find(|n| !field(n).is_some_and(Value::is_number))
    {
        return Some(format!(
            "segments[{i}].{name} is {}, not a number",
            crate::json::kind(field(name))
        ));
    }
    if !field("text").is_some_and(Value::is_string) {
        return Some(format!(
            "segments[{i}].text is {}, not a string",
            crate::json::kind(field("text"))
        ));
    }
    let tokens = field("tokens").and_then(Value::as_array);
    if !tokens.is_some_and(|t| t.iter().all(Value::is_u64)) {
        return Some(format!(
            "segments[{i}].tokens is {}, not a list of integers",
            crate::json::kind(field("tokens"))
        ));
    }
    None
}

/// A transcription's `usage` in one of OpenAI's two documented shapes
/// (TranscriptTextUsageDuration, TranscriptTextUsageTokens).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Usage {
    /// `{"type": "duration", "seconds"}`: whisper-1's, billed by the second.
    Duration { seconds: f64 },
    /// `{"type": "tokens", "input_tokens", "output_tokens", "total_tokens"}`: the
    /// gpt-4o-transcribe family's.
    Tokens { input: u64, output: u64, total: u64 },
}

/// The `usage` of a JSON transcription (none where it has none: it is optional), or
/// what keeps it from either documented shape.
pub(crate) fn usage(answer: &Value) -> Result<Option<Usage>, String> {
    let Some(usage) = answer.get("usage").filter(|u| !u.is_null()) else {
        return Ok(None);
    };
    let shown = || crate::http::excerpt::cut(&usage.to_string(), 160);
    let integer = |name: &str| usage.get(name).and_then(Value::as_u64);
    match usage.get("type").and_then(Value::as_str) {
        Some("duration") => match usage.get("seconds").and_then(Value::as_f64) {
            Some(seconds) if seconds >= 0.0 => Ok(Some(Usage::Duration { seconds })),
            _ => Err(format!(
                "usage of type duration without a number of seconds: {}",
                shown()
            )),
        },
        Some("tokens") => {
            let (Some(input), Some(output), Some(total)) = (
                integer("input_tokens"),
                integer("output_tokens"),
                integer("total_tokens"),
            ) else {
                return Err(format!(
                    "usage of type tokens without integer input_tokens, output_tokens and total_tokens: {}",
                    shown()
                ));
            };
            let details = usage.get("input_token_details");
            let details_typed = details
                .is_none_or(|d| d.as_object().is_some_and(|d| d.values().all(Value::is_u64)));
            match details_typed {
                true => Ok(Some(Usage::Tokens {
                    input,
                    output,
                    total,
                })),
                false => Err(format!(
                    "input_token_details is not an object of integer counts: {}",
                    shown()
                )),
            }
        }
        _ => Err(format!(
            "usage is neither {{\"type\": \"duration\", \"seconds\"}} nor {{\"type\": \"tokens\", …}}: {}",
            shown()
        )),
    }
}

/// What is wrong with a `diarized_json` answer, each as a sentence; none where it has
/// OpenAI's TranscriptionDiarized fields typed as documented: task `transcribe`, a number
/// duration, a string text, and segments each of type `transcript.text.segment` with a
/// string id, number start and end (start not after end), string text and speaker.
pub(crate) fn diarized_problems(answer: &Value) -> Vec<String> {
    let field = |name: &str| answer.get(name);
    let mut problems = Vec::new();
    if field("task").and_then(Value::as_str) != Some("transcribe") {
        problems.push(format!(
            "task is {}, not \"transcribe\"",
            crate::json::kind(field("task"))
        ));
    }
    if !field("duration").is_some_and(Value::is_number) {
        problems.push(format!(
            "duration is {}, not a number",
            crate::json::kind(field("duration"))
        ));
    }
    if !field("text").is_some_and(Value::is_string) {
        problems.push(format!(
            "text is {}, not a string",
            crate::json::kind(field("text"))
        ));
    }
    match field("segments").and_then(Value::as_array) {
        None => problems.push(format!(
            "segments is {}, not a list",
            crate::json::kind(field("segments"))
        )),
        Some(segments) => problems.extend(
            segments
                .iter()
                .enumerate()
                .find_map(|(i, s)| diarized_segment_problem(i, s)),
        ),
    }
    problems
}

/// The first thing wrong with diarized segment `i`, where anything is.
fn diarized_segment_problem(i: usize, segment: &Value) -> Option<String> {
    let field = |name: &str| segment.get(name);
    if field("type").and_then(Value::as_str) != Some("transcript.text.segment") {
        return Some(format!(
            "segments[{i}].type is {}, not \"transcript.text.segment\"",
            crate::json::kind(field("type"))
        ));
    }
    for (name, wanted, ok) in [
        ("id", "a string", Value::is_string as fn(&Value) -> bool),
        ("start", "a number", Value::is_number),
        ("end", "a number", Value::is_number),
        ("text", "a string", Value::is_string),
        ("speaker", "a string", Value::is_string),
    ] {
        if !field(name).is_some_and(ok) {
            return Some(format!(
                "segments[{i}].{name} is {}, not {wanted}",
                crate::json::kind(field(name))
            ));
        }
    }
    let time = |name: &str| field(name).and_then(Value::as_f64).unwrap_or_default();
    (time("start") > time("end")).then(|| {
        format!(
            "segments[{i}] ends at {} s, before it starts at {} s",
            time("end"),
            time("start")
        )
    })
}

/// One token's log probability from a JSON transcription's `logprobs`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TokenLogprob {
    pub(crate) token: String,
    pub(crate) logprob: f64,
}

/// The `logprobs` of a JSON transcription (none where absent or null), or what is wrong
/// with them: not a list, or an item without a string token and a number logprob, or a
/// logprob above zero, which no probability has.
pub(crate) fn logprobs(answer: &Value) -> Result<Option<Vec<TokenLogprob>>, String> {
    let items = match answer.get("logprobs") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(format!(
                "logprobs is {}, not a list",
                crate::json::kind(Some(other))
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let token = item.get("token").and_then(Value::as_str);
            let logprob = item.get("logprob").and_then(Value::as_f64);
            match (token, logprob) {
                (Some(token), Some(logprob)) if logprob <= 0.0 => Ok(TokenLogprob {
                    token: token.to_owned(),
                    logprob,
                }),
                (Some(_), Some(logprob)) => Err(format!(
                    "logprobs[{i}].logprob is {logprob}, above zero: no probability's logarithm is"
                )),
                _ => Err(format!(
                    "logprobs[{i}] is not a string token with a number logprob: {}",
                    crate::http::excerpt::cut(&item.to_string(), 120)
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// One word of a `verbose_json` answer's `words`, its times in seconds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TimedWord {
    pub(crate) word: String,
    pub(crate) start: f64,
    pub(crate) end: f64,
}

/// Whisper's timestamp step, 20 ms: a time may round up past the clip's end by one.
const TIMESTAMP_STEP: f64 = 0.02;

/// The `words` of a `verbose_json` answer asked for word timestamps, or what is wrong
/// with them: absent, null or not a list; an item without a string `word` and numeric
/// `start` and `end` (OpenAI's TranscriptionWord); a word ending before it starts,
/// starting before the word before it, or outside a clip of `seconds` (one timestamp
/// step of slack).
pub(crate) fn timed_words(answer: &Value, seconds: f64) -> Result<Vec<TimedWord>, String> {
    let words = match answer.get("words") {
        Some(Value::Array(words)) => words,
        other => return Err(format!("words is {}, not a list", crate::json::kind(other))),
    };
    let mut read: Vec<TimedWord> = Vec::with_capacity(words.len());
    for (i, item) in words.iter().enumerate() {
        let number = |name: &str| item.get(name).and_then(Value::as_f64);
        let (Some(word), Some(start), Some(end)) = (
            item.get("word").and_then(Value::as_str),
            number("start"),
            number("end"),
        ) else {
            return Err(format!(
                "words[{i}] is not a string word with numbers start and end: {}",
                cut(&item.to_string())
            ));
        };
        let last = seconds + TIMESTAMP_STEP;
        let before = read.last().filter(|b| start < b.start);
        let problem = if start > end {
            Some(format!("ends at {end} s, before it starts at {start} s"))
        } else if start < 0.0 || end > last {
            Some(format!(
                "runs {start}-{end} s, outside the {seconds} s clip"
            ))
        } else {
            before.map(|b| {
                format!(
                    "starts at {start} s, before words[{}] at {} s",
                    i - 1,
                    b.start
                )
            })
        };
        if let Some(problem) = problem {
            return Err(format!("words[{i}] {word:?} {problem}"));
        }
        read.push(TimedWord {
            word: word.to_owned(),
            start,
            end,
        });
    }
    Ok(read)
}

/// One cue's times, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cue {
    pub(crate) start: i64,
    pub(crate) end: i64,
}

/// The cues of a subtitle file, or what makes it invalid.
/// Whether a 2xx answer is in `format` (a `response_format` name) as the SDKs hand it
/// to their users: `text` the bare transcript (not the JSON envelope), `srt` and `vtt`
/// cues that parse, `json` and `verbose_json` JSON with a string `text`.
pub(crate) fn in_format(format: &str, reply: &Reply) -> bool {
    let has_text = || {
        reply
            .json
            .as_ref()
            .and_then(|j| j.get("text"))
            .is_some_and(Value::is_string)
    };
    let subtitles = |kind| cues(&String::from_utf8_lossy(&reply.body), kind).is_ok();
    reply.is_success()
        && match format {
            "text" => !has_text(),
            "srt" => subtitles(Subtitles::Srt),
            "vtt" => subtitles(Subtitles::Vtt),
            _ => has_text(),
        }
}

/// The transcripts a 2xx answer in `format` carries, each with what it is: the body
/// of `text`, the `text` of `json`, `verbose_json`'s `text` and its segments' texts
/// joined, the cue texts of `srt` and `vtt` joined. None where the answer is not in its
/// format (SPS-002 to SPS-005 judge that).
pub(crate) fn transcripts_in(format: &str, reply: &Reply) -> Vec<(String, String)> {
    let body = String::from_utf8_lossy(&reply.body);
    let json_text = || {
        reply
            .json
            .as_ref()
            .and_then(|j| j.get("text"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let named = |what: &str, text: Option<String>| text.map(|t| (what.to_owned(), t));
    let found = match format {
        "text" => vec![named(
            "text's body",
            in_format(format, reply).then(|| body.trim().to_owned()),
        )],
        "srt" => vec![named("srt's cues", cue_text(&body, Subtitles::Srt))],
        "vtt" => vec![named("vtt's cues", cue_text(&body, Subtitles::Vtt))],
        "verbose_json" => vec![
            named("verbose_json's text", json_text()),
            named("verbose_json's segments' text", segments_text(reply)),
        ],
        _ => vec![named("json's text", json_text())],
    };
    found.into_iter().flatten().collect()
}

/// `verbose_json`'s segments' texts joined, as OpenAI's `text` joins them; None without
/// a segments list.
fn segments_text(reply: &Reply) -> Option<String> {
    let segments = reply.json.as_ref()?.get("segments")?.as_array()?;
    Some(
        segments
            .iter()
            .filter_map(|s| s.get("text").and_then(Value::as_str))
            .collect::<String>(),
    )
}

/// The cue texts of a subtitle file joined by spaces; None where it does not parse.
fn cue_text(text: &str, format: Subtitles) -> Option<String> {
    cues(text, format).ok()?;
    let text = text.replace("\r\n", "\n");
    let lines: Vec<String> = text
        .split("\n\n")
        .filter_map(|block| {
            let mut lines = block.lines().skip_while(|l| !l.contains("-->"));
            lines.next()?;
            Some(lines.map(str::trim).collect::<Vec<_>>().join(" "))
        })
        .collect();
    Some(lines.join(" "))
}

pub(crate) fn cues(text: &str, format: Subtitles) -> Result<Vec<Cue>, String> {
    let text = text.replace("\r\n", "\n");
    let mut blocks = text.split("\n\n").map(str::trim).filter(|b| !b.is_empty());
    if format == Subtitles::Vtt {
        let header = blocks.next().unwrap_or_default();
        if !header.starts_with("WEBVTT") {
            return Err(format!(
                "it does not start with WEBVTT but {:?}",
                cut(header)
            ));
        }
    }
    let mut cues = Vec::new();
    for (i, block) in blocks.enumerate() {
        let mut lines = block.lines();
        if format == Subtitles::Srt {
            let number = lines.next().unwrap_or_default();
            if number.trim().parse::<u64>().is_err() {
                return Err(format!(
                    "cue {} does not start with its number but {:?}",
                    i + 1,
                    cut(number)
                ));
            }
        }
        let Some(timing) = lines.find(|l| l.contains("-->")) else {
            if format == Subtitles::Vtt && (block.starts_with("NOTE") || block.starts_with("STYLE"))
            {
                continue;
            }
            return Err(format!(
                "cue {} has no timing line: {:?}",
                i + 1,
                cut(block)
            ));
        };
        let cue = timing_of(timing, format)
            .ok_or_else(|| format!("cue {} has the timing {:?}", i + 1, cut(timing)))?;
        if cue.start < 0 || cue.end < cue.start {
            return Err(format!(
                "cue {} runs from {} ms to {} ms",
                i + 1,
                cue.start,
                cue.end
            ));
        }
        if cues.last().is_some_and(|last: &Cue| cue.start < last.start) {
            return Err(format!("cue {} starts before the cue before it", i + 1));
        }
        cues.push(cue);
    }
    Ok(cues)
}

/// `start --> end` of a timing line, in milliseconds.
fn timing_of(line: &str, format: Subtitles) -> Option<Cue> {
    let (start, rest) = line.split_once("-->")?;
    let end = rest.split_whitespace().next()?;
    Some(Cue {
        start: time_of(start.trim(), format)?,
        end: time_of(end.trim(), format)?,
    })
}

/// `HH:MM:SS,mmm` (SubRip) or `[HH:]MM:SS.mmm` (WebVTT) in milliseconds. A minus
/// sign anywhere makes the whole time negative, as a formatter prints a negative
/// duration: `-00:00:01,500` (the sign before a zero field, which parses as 0) and
/// `00:00:-01,500` are both -1.5 s, and whisper.cpp's `00:-16:-47,-280` is negative.
fn time_of(text: &str, format: Subtitles) -> Option<i64> {
    let separator = match format {
        Subtitles::Srt => ',',
        Subtitles::Vtt => '.',
    };
    let negative = text.contains('-');
    let (clock, millis) = text.rsplit_once(separator)?;
    let field = |f: &str| -> Option<i64> {
        let digits = f.trim_start_matches('-');
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    };
    let parts: Vec<i64> = clock.split(':').map(field).collect::<Option<_>>()?;
    let millis = field(millis)?;
    let (hours, minutes, seconds) = match (format, parts.as_slice()) {
        (_, [h, m, s]) => (*h, *m, *s),
        (Subtitles::Vtt, [m, s]) => (0, *m, *s),
        _ => return None,
    };
    let magnitude = ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis;
    Some(if negative { -magnitude } else { magnitude })
}

fn cut(text: &str) -> String {
    text.chars().take(60).collect()
}

/// A stream's events: the JSON of each server-sent event's `data` (its lines joined),
/// up to a `[DONE]`; an event whose data is not JSON is an error naming it.
pub(crate) fn stream_events(body: &str) -> Result<Vec<Value>, String> {
    let mut events = Vec::new();
    for block in body.replace("\r\n", "\n").split("\n\n") {
        let data: Vec<&str> = block
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data))
            .collect();
        if data.is_empty() {
            continue;
        }
        let data = data.join("\n");
        if data == "[DONE]" {
            break;
        }
        let event = serde_json::from_str(&data).map_err(|_| {
            format!(
                "an event's data is not JSON: {}",
                crate::http::excerpt::cut(&data, 80)
            )
        })?;
        events.push(event);
    }
    Ok(events)
}

/// The text of OpenAI's transcription stream: `transcript.text.delta` events, then
/// exactly one `transcript.text.done`, last, whose `text` is the deltas joined (other
/// typed events, such as diarisation's `transcript.text.segment`, pass through).
/// Otherwise why the SDKs' typed events do not give a caller the text.
pub(crate) fn streamed_text(events: &[Value]) -> Result<String, String> {
    let mut deltas = String::new();
    let mut done = None;
    for (i, event) in events.iter().enumerate() {
        let kind = event.get("type").and_then(Value::as_str);
        match (kind, done.is_some()) {
            (_, true) => return Err(format!("event {i} comes after transcript.text.done")),
            (None, _) => {
                return Err(format!(
                    "event {i} has no type: {}",
                    crate::http::excerpt::cut(&event.to_string(), 120)
                ));
            }
            (Some("transcript.text.delta"), _) => {
                match event.get("delta").and_then(Value::as_str) {
                    Some(delta) => deltas.push_str(delta),
                    None => {
                        return Err(format!(
                            "transcript.text.delta event {i} has no string delta"
                        ));
                    }
                }
            }
            (Some("transcript.text.done"), _) => match event.get("text").and_then(Value::as_str) {
                Some(text) => done = Some(text.to_owned()),
                None => return Err(format!("transcript.text.done event {i} has no string text")),
            },
            (Some(_), _) => {}
        }
    }
    let text =
        done.ok_or_else(|| format!("{} events and no transcript.text.done", events.len()))?;
    if text != deltas {
        return Err(format!(
            "the deltas join to {} characters, but transcript.text.done's text has {}",
            deltas.chars().count(),
            text.chars().count()
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A format is answered only by a body in it: the JSON envelope is no text and no
    /// subtitles (a server that ignores response_format answers every one with it).
    #[test]
    fn a_format_is_answered_only_by_a_body_in_it() {
        let envelope = Reply::json_for_test(200, serde_json::json!({"text": "hello"}));
        assert!(in_format("verbose_json", &envelope));
        for format in ["text", "srt", "vtt"] {
            assert!(!in_format(format, &envelope), "{format}");
        }
        let mut srt = Reply::json_for_test(200, Value::Null);
        srt.json = None;
        srt.content_type = Some("application/x-subrip".to_owned());
        srt.body = b"1\n00:00:00,000 --> 00:00:01,000\nhello\n".to_vec();
        assert!(in_format("srt", &srt) && in_format("text", &srt));
        assert!(!in_format("vtt", &srt));
        srt.status = 400;
        assert!(!in_format("srt", &srt));
    }

    #[test]
    fn a_stream_gives_its_text_only_as_openais_typed_events() {
        let openai = "data: {\"type\":\"transcript.text.delta\",\"delta\":\"a\"}\n\n\
                      data: {\"type\":\"transcript.text.delta\",\"delta\":\" b\"}\n\n\
                      data: {\"type\":\"transcript.text.done\",\"text\":\"a b\"}\n\n";
        let events = stream_events(openai).unwrap();
        assert_eq!(streamed_text(&events).unwrap(), "a b");
        let chunks = "data: {\"object\":\"transcription.chunk\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n";
        let events = stream_events(chunks).unwrap();
        assert_eq!(events.len(), 1);
        assert!(streamed_text(&events).unwrap_err().contains("no type"));
        let short = "data: {\"type\":\"transcript.text.delta\",\"delta\":\"a\"}\n\n\
                     data: {\"type\":\"transcript.text.done\",\"text\":\"a b\"}\n\n";
        let events = stream_events(short).unwrap();
        assert!(streamed_text(&events).unwrap_err().contains("deltas join"));
        assert!(stream_events("data: {oops\n\n").is_err());
    }
    use serde_json::json;

    #[test]
    fn subrip_and_webvtt_cues_are_read() {
        let srt =
            "1\n00:00:00,000 --> 00:00:01,500\nhello\n\n2\n00:00:01,500 --> 00:00:03,000\nworld\n";
        assert_eq!(
            cues(srt, Subtitles::Srt).unwrap(),
            [
                Cue {
                    start: 0,
                    end: 1500
                },
                Cue {
                    start: 1500,
                    end: 3000
                }
            ]
        );
        let vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\nhello\n";
        assert_eq!(
            cues(vtt, Subtitles::Vtt).unwrap(),
            [Cue {
                start: 1000,
                end: 2000
            }]
        );
    }

    #[test]
    fn cue_texts_are_joined_without_their_numbers_and_timings() {
        let srt =
            "1\n00:00:00,000 --> 00:00:01,000\n Hello\n\n2\n00:00:01,000 --> 00:00:02,000\nworld\n";
        assert_eq!(
            cue_text(srt, Subtitles::Srt).as_deref(),
            Some("Hello world")
        );
        let vtt = "WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n";
        assert_eq!(cue_text(vtt, Subtitles::Vtt).as_deref(), Some("Hello"));
        assert_eq!(cue_text("not subtitles", Subtitles::Srt), None);
    }

    /// A sign on a zero field used to be lost (`-00` parses as 0), so a cue ending
    /// before it starts passed SPS-004/005; and each field kept its own sign.
    #[test]
    fn a_sign_anywhere_makes_the_whole_time_negative() {
        assert_eq!(time_of("-00:00:01,500", Subtitles::Srt), Some(-1500));
        assert_eq!(time_of("00:00:-01,500", Subtitles::Srt), Some(-1500));
        assert_eq!(time_of("-00:01.500", Subtitles::Vtt), Some(-1500));
        assert_eq!(time_of("00:00:01,500", Subtitles::Srt), Some(1500));
        assert_eq!(time_of("00:00:+1,500", Subtitles::Srt), None);
        let backwards = "1\n00:00:00,000 --> -00:00:01,500\nx\n";
        assert!(
            cues(backwards, Subtitles::Srt)
                .unwrap_err()
                .contains("runs from 0 ms to -1500 ms")
        );
        let vtt = "WEBVTT\n\n00:00.000 --> -00:01.500\nx\n";
        assert!(cues(vtt, Subtitles::Vtt).is_err());
    }

    #[test]
    fn negative_and_malformed_cues_are_named() {
        let negative = "1\n00:-16:-47,-280 --> 00:00:01,000\nx\n";
        assert!(
            cues(negative, Subtitles::Srt)
                .unwrap_err()
                .contains("runs from")
        );
        assert!(
            cues("{\"text\": \"x\"}", Subtitles::Vtt)
                .unwrap_err()
                .contains("WEBVTT")
        );
        assert!(
            cues("hello", Subtitles::Srt)
                .unwrap_err()
                .contains("number")
        );
    }

    #[test]
    fn diarized_json_is_held_to_its_documented_fields() {
        let segment = json!({"type": "transcript.text.segment", "id": "seg_0", "start": 0.0, "end": 1.5, "text": "hi", "speaker": "A"});
        let answer =
            json!({"task": "transcribe", "duration": 3.0, "text": "hi", "segments": [segment]});
        assert!(diarized_problems(&answer).is_empty());
        let vllm = json!({"duration": "3.0", "language": null, "text": "hi", "segments": [{"id": 0, "start": 0.0, "end": 1.5, "text": "hi", "speaker": "A"}]});
        let problems = diarized_problems(&vllm);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems[2].contains("segments[0].type is missing"),
            "{problems:?}"
        );
    }

    #[test]
    fn logprobs_are_typed_tokens_with_logarithms_of_probabilities() {
        let read = |said: Value| logprobs(&json!({"text": "a", "logprobs": said}));
        let ok = read(json!([{"token": "a", "logprob": -0.1, "bytes": [97]}]))
            .unwrap()
            .unwrap();
        assert_eq!(ok[0].token, "a");
        assert_eq!(logprobs(&json!({"text": "a", "logprobs": null})), Ok(None));
        assert!(
            read(json!([{"token": "a", "logprob": 0.5}]))
                .unwrap_err()
                .contains("above zero")
        );
        assert!(read(json!([{"token": "a"}])).is_err());
        assert!(read(json!({"a": 1})).is_err());
    }

    #[test]
    fn usage_is_read_in_either_documented_shape() {
        let read = |said: Value| usage(&json!({"text": "a", "usage": said}));
        assert_eq!(
            read(json!({"type": "duration", "seconds": 3})),
            Ok(Some(Usage::Duration { seconds: 3.0 }))
        );
        assert_eq!(
            read(
                json!({"type": "tokens", "input_tokens": 14, "input_token_details": {"text_tokens": 0, "audio_tokens": 14}, "output_tokens": 45, "total_tokens": 59})
            ),
            Ok(Some(Usage::Tokens {
                input: 14,
                output: 45,
                total: 59
            }))
        );
        assert_eq!(usage(&json!({"text": "a"})), Ok(None));
        for wrong in [
            json!({"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 379}),
            json!({"type": "duration", "seconds": "3"}),
            json!({"type": "tokens", "input_tokens": 1.5, "output_tokens": 1, "total_tokens": 2}),
        ] {
            assert!(read(wrong).is_err());
        }
    }

    #[test]
    fn timed_words_are_typed_in_order_and_inside_the_clip() {
        let words = |words: Value| timed_words(&json!({"text": "a b", "words": words}), 3.0);
        let read = words(json!([{"word": "a", "start": 0.0, "end": 1.0}, {"word": " b", "start": 1.0, "end": 3.02}])).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(
            timed_words(&json!({"words": null}), 3.0).unwrap_err(),
            "words is null, not a list"
        );
        for (wrong, said) in [
            (
                json!([{"word": "a", "start": "0.0", "end": 1.0}]),
                "not a string word",
            ),
            (
                json!([{"word": "a", "start": 2.0, "end": 1.0}]),
                "before it starts",
            ),
            (
                json!([{"word": "a", "start": 0.0, "end": 3.5}]),
                "outside the 3 s clip",
            ),
            (
                json!([{"word": "a", "start": 1.0, "end": 1.5}, {"word": "b", "start": 0.5, "end": 2.0}]),
                "before words[0]",
            ),
        ] {
            let why = words(wrong).unwrap_err();
            assert!(why.contains(said), "{why}");
        }
    }

    #[test]
    fn verbose_json_is_held_to_its_documented_fields() {
        let segment = json!({"id": 0, "seek": 0, "start": 0.0, "end": 1.0, "text": " a",
            "tokens": [1, 2], "temperature": 0.0, "avg_logprob": -0.2,
            "compression_ratio": 1.0, "no_speech_prob": 0.1});
        let good =
            json!({"language": "english", "duration": 1.0, "text": "a", "segments": [segment]});
        assert!(verbose_problems(&good).is_empty());
        let mut null = good.clone();
        null["segments"][0]["no_speech_prob"] = Value::Null;
        assert_eq!(
            verbose_problems(&null),
            ["segments[0].no_speech_prob is null, not a number"]
        );
    }
}
