//! The speech-to-text clients' profiles: will a client, with its defaults, get the
//! transcript from this server, and what do its options and a refused upload give?
//! Each is read from the client's source; its calls are the clauses' own requests,
//! replayed through the session (the cache answers them).
//!
//! | client | default call | how it reads the answer |
//! |---|---|---|
//! | openai-python 3.57.0 `audio.transcriptions.create` | `file` and `model` | a JSON body (whatever its content type) as `Transcription`, built without validation; any other body returned as a `str`; `text`, `srt` and `vtt` returned as the body itself |
//! | openai-node 7.55.0 `audio.transcriptions.create` | the same | JSON parsed only under a JSON content type, any other body returned as a string, for every format |
//! | Open WebUI `6adde203` (engine "openai") | `file` and `model` (and `language` when the user set one) | `r.json()["text"]`; a refusal's `error.message`, else "Open WebUI: Server Connection Error" |
//! | LangChain `OpenAIWhisperParser` (`langchain_community`, langchain-ai/langchain `31d8eadd`) | each 20-minute chunk as `part_N.mp3`, with `model` | openai-python's `Transcription.text`, or the `str` it returns for a body that is not JSON, as it is; a failed call tried three times, 5 s apart, then the chunk skipped with a print, no error |
//!
//! A profile breaks only on the default call (an error, or no transcript where one is
//! read); an option that fails (`response_format` refused or misread) and a refusal
//! worded so the client loses it are warnings.

use super::clauses::verdicts::counted;
use super::requests::{self, json_text};
use crate::http::{Exchange, Reply};
use crate::profiles::findings::{answered, release};
use crate::profiles::{
    Client, ClientProfile, ContractFinding, Finding, Judged, Made, SDK_RETRIES, Severity,
    add_evidence, no_answer,
};
use crate::session::Session;
use serde_json::Value;

impl Client {
    /// The OpenAI Python SDK's `audio.transcriptions.create`.
    pub const OPENAI_PYTHON_AUDIO: Client = Client::new("openai-python-audio", "3.57.0");
    /// The OpenAI Node SDK's `audio.transcriptions.create`.
    pub const OPENAI_NODE_AUDIO: Client = Client::new("openai-node-audio", "7.55.0");
    /// Open WebUI's speech-to-text with its engine "openai"
    /// (`backend/open_webui/routers/audio.py`; no release names the code read: its
    /// commit).
    pub const OPEN_WEBUI_STT: Client = Client::new("open-webui-stt", "6adde203");
    /// LangChain's `OpenAIWhisperParser` (`langchain_community`'s
    /// `document_loaders/parsers/audio.py`, read at langchain-ai/langchain's commit).
    pub const LANGCHAIN_WHISPER: Client =
        Client::new("langchain-openai-whisper-parser", "31d8eadd");

    /// Every profiled speech-to-text client, in the order reports show them (after the
    /// rerank clients, and only for a server that offers speech-to-text).
    pub const SPEECH: [Client; 4] = [
        Client::OPENAI_PYTHON_AUDIO,
        Client::OPENAI_NODE_AUDIO,
        Client::OPEN_WEBUI_STT,
        Client::LANGCHAIN_WHISPER,
    ];
}

/// How a client turns a transcription answer into what its caller gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reader {
    /// openai-python: `_parse` casts `json` and `verbose_json` to a model from any body
    /// that parses as JSON, and returns `text`, `srt` and `vtt` as `response.text`.
    Python,
    /// openai-node: `defaultParseResponse` parses JSON only under a JSON content type
    /// and returns any other body as a string, whatever the format asked.
    Node,
    /// Open WebUI: `r.raise_for_status()`, then `r.json()`, whose `["text"]` is joined
    /// into the transcript.
    OpenWebUi,
    /// LangChain's `OpenAIWhisperParser`: openai-python's call with an MP3 chunk, its
    /// `.text` the document; any exception caught, the call tried three times, then
    /// the chunk skipped.
    LangChain,
}

/// A call a profile makes: the default one, one `response_format`, `stream: true`, or
/// `verbose_json` with `timestamp_granularities=["word", "segment"]`, read for its
/// `.words`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call<'a> {
    Default,
    Format(&'a str),
    Stream,
    Words,
}

impl Call<'_> {
    /// What the user asked for, as a refusal's warning says it.
    fn asked(self) -> &'static str {
        match self {
            Call::Stream => "a stream",
            Call::Words => "word timestamps",
            Call::Default | Call::Format(_) => "this format",
        }
    }
}

/// LangChain's attempts at one chunk before it skips it.
const LANGCHAIN_ATTEMPTS: u32 = 3;

/// What a speech client does that no other contract's clients do.
#[derive(Clone, Debug)]
pub enum SpeechFinding {
    /// `call` was refused (`status`, `message`): the client tries `attempts` times, then
    /// skips the chunk without an error, so the document lacks its text.
    SkipsChunk {
        call: &'static str,
        status: u16,
        message: Option<String>,
        attempts: u32,
    },
}

impl ContractFinding for SpeechFinding {
    fn severity(&self) -> Severity {
        match self {
            SpeechFinding::SkipsChunk { .. } => Severity::Breaks,
        }
    }

    fn describe(&self, client: Client) -> String {
        match self {
            SpeechFinding::SkipsChunk {
                call,
                status,
                message,
                attempts,
            } => format!(
                "{call}: answered {}; {} tries it {attempts} times, 5 s apart, then skips the chunk without an error: the document lacks that chunk's text",
                answered(*status, message),
                release(client)
            ),
        }
    }
}

impl Reader {
    fn of(client: Client) -> Reader {
        match client {
            Client::OPENAI_NODE_AUDIO => Reader::Node,
            Client::OPEN_WEBUI_STT => Reader::OpenWebUi,
            Client::LANGCHAIN_WHISPER => Reader::LangChain,
            _ => Reader::Python,
        }
    }

    /// Whether the client retries this answer, as the SDKs do (Open WebUI never does).
    fn attempts(self, reply: &Reply) -> u32 {
        match self {
            Reader::Python | Reader::Node if reply.is_retried_by_sdks() => SDK_RETRIES + 1,
            Reader::LangChain if reply.is_retried_by_sdks() => {
                LANGCHAIN_ATTEMPTS * (SDK_RETRIES + 1)
            }
            Reader::LangChain => LANGCHAIN_ATTEMPTS,
            Reader::Python | Reader::Node | Reader::OpenWebUi => 1,
        }
    }

    /// What the caller gets from a 2xx answer to `call`: the transcript, or why not.
    fn read(self, call: Call<'_>, reply: &Reply) -> Result<String, String> {
        let as_text = match call {
            Call::Stream => return sdk_stream(reply),
            Call::Words => return self.words(reply),
            Call::Format("text") => Some("the transcript"),
            Call::Format("srt" | "vtt") => Some("the subtitles"),
            Call::Default | Call::Format(_) => None,
        };
        match (self, as_text) {
            (Reader::Python, None) => python_model(reply),
            (Reader::LangChain, None) => langchain_page(reply),
            (Reader::Python | Reader::LangChain, Some(what)) => bare_text(reply, what),
            (Reader::Node, None) => node_object(reply),
            (Reader::Node, Some(what)) => node_string(reply, what),
            (Reader::OpenWebUi, _) => open_webui(reply),
        }
    }
}

impl Reader {
    /// The SDKs' `TranscriptionVerbose.words` (optional in both SDKs' types), read
    /// from the JSON the client parses.
    fn words(self, reply: &Reply) -> Result<String, String> {
        let parsed = match self {
            Reader::Node if !reply.is_parsed_as_json_by_node() => None,
            _ => reply.json.as_ref(),
        };
        let Some(json) = parsed else {
            return Err(format!(
                "returns the body as a string, not a TranscriptionVerbose ({}), so .words is undefined",
                content_type(reply)
            ));
        };
        match super::reply::timed_words(json, requests::clip().seconds) {
            Ok(words) => Ok(format!("{} with their times", counted(words.len(), "word"))),
            Err(why) => Err(format!(
                "returns a TranscriptionVerbose without the word timestamps asked for ({why}), without an error"
            )),
        }
    }
}

/// What both SDKs' `Stream` yields a caller iterating a `stream: true` call: the
/// server-sent events by their `type` (`transcript.text.delta`, `.done`). A body
/// without events (a JSON answer) yields none, without an error, and events without a
/// `type` carry no text (both measured with openai-python 3.57.0 and openai-node
/// 7.55.0 in the lab: faster-whisper-server's JSON, 0 events; vLLM's chat chunks, 434
/// events of no type).
fn sdk_stream(reply: &Reply) -> Result<String, String> {
    let body = String::from_utf8_lossy(&reply.body);
    let streamed = reply
        .content_type
        .as_deref()
        .is_some_and(|c| c.starts_with("text/event-stream"));
    if !streamed {
        return Err(format!(
            "iterates a Stream that finds no events in the {} answer: no text and no error (OpenAI documents that whisper-1 ignores stream, so its users get the same)",
            content_type(reply)
        ));
    }
    match super::reply::stream_events(&body).and_then(|events| super::reply::streamed_text(&events))
    {
        Ok(text) => Ok(format!("{}, streamed", transcript(&text))),
        Err(why) => Err(format!(
            "iterates the events by type, but {why}: no text and no error"
        )),
    }
}

/// openai-python's `Transcription` from a JSON body: `construct` without validation,
/// so a missing `text` raises only when read.
fn python_model(reply: &Reply) -> Result<String, String> {
    match (&reply.json, json_text(reply)) {
        (_, Some(text)) => Ok(transcript(text)),
        (None, _) => Err(format!(
            "returns the body as a str, not a Transcription (it is not JSON: {}), so .text raises AttributeError",
            shown(reply)
        )),
        (Some(json), None) => Err(format!(
            "builds a Transcription whose text is {}, not the transcript: {}",
            crate::json::kind(json.get("text")),
            shown(reply)
        )),
    }
}

/// LangChain's page content: openai-python's `Transcription.text`, or the `str`
/// openai-python returns for a body that is not JSON, used as it is
/// (`transcript.text if not isinstance(transcript, str) else transcript`).
fn langchain_page(reply: &Reply) -> Result<String, String> {
    if reply.json.is_some() {
        return python_model(reply);
    }
    let body = String::from_utf8_lossy(&reply.body);
    if body.trim().is_empty() {
        return Err("gets an empty str from openai-python and keeps it as the page: no transcript and no error".to_owned());
    }
    Ok(format!(
        "the body as the page, the str openai-python returns for a body that is not JSON ({} characters)",
        body.chars().count()
    ))
}

/// openai-node's answer for a JSON format: an object only under a JSON content type.
fn node_object(reply: &Reply) -> Result<String, String> {
    if !reply.is_parsed_as_json_by_node() {
        return Err(format!(
            "returns the body as a string ({}), so transcription.text is undefined, without an error",
            content_type(reply)
        ));
    }
    match (&reply.json, json_text(reply)) {
        (_, Some(text)) => Ok(transcript(text)),
        (None, _) => Err(format!(
            "raises a SyntaxError parsing a body labelled JSON: {}",
            shown(reply)
        )),
        (Some(json), None) => Err(format!(
            "returns an object whose text is {}: {}",
            crate::json::kind(json.get("text")),
            shown(reply)
        )),
    }
}

/// openai-node's answer for a text format: a string, unless the content type says JSON.
fn node_string(reply: &Reply, what: &str) -> Result<String, String> {
    if reply.is_parsed_as_json_by_node() {
        return Err(match &reply.json {
            Some(json) => format!(
                "returns the parsed JSON, {}, not the text (the content type is application/json): {}",
                crate::json::kind(Some(json)),
                shown(reply)
            ),
            None => format!(
                "raises a SyntaxError parsing a body labelled JSON: {}",
                shown(reply)
            ),
        });
    }
    bare_text(reply, what)
}

/// The body returned as `what` itself: wrong where it is the JSON envelope.
fn bare_text(reply: &Reply, what: &str) -> Result<String, String> {
    match json_text(reply) {
        Some(_) => Err(format!(
            "returns the JSON envelope {} as the text, verbatim (vllm#49095)",
            shown(reply)
        )),
        None => Ok(format!(
            "the body as {what} ({} characters)",
            String::from_utf8_lossy(&reply.body).chars().count()
        )),
    }
}

/// Open WebUI's `r.json()["text"]`, joined with `" ".join(...)`: a string or an error.
fn open_webui(reply: &Reply) -> Result<String, String> {
    match (&reply.json, json_text(reply)) {
        (_, Some(text)) => Ok(transcript(text)),
        (None, _) => Err(format!(
            "fails in r.json() (the body is not JSON: {}) and shows the user an error",
            shown(reply)
        )),
        (Some(json), None) => Err(format!(
            "reads r.json()[\"text\"], which is {}, and shows the user an error: {}",
            crate::json::kind(json.get("text")),
            shown(reply)
        )),
    }
}

/// What Open WebUI shows for a refusal: `External: {error.message}` where the body
/// has an `error` object, else its own words.
fn open_webui_shows(reply: &Reply) -> Result<String, String> {
    match &reply.json {
        Some(json) if json.get("error").is_some() => Ok(format!(
            "External: {}",
            json.pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or_default()
        )),
        Some(_) => Err("Open WebUI: Server Connection Error".to_owned()),
        None => Err(format!(
            "External: {} Client Error … (the HTTP status, not the server's reason)",
            reply.status
        )),
    }
}

fn transcript(text: &str) -> String {
    format!("the transcript ({} characters)", text.chars().count())
}

fn content_type(reply: &Reply) -> String {
    reply
        .content_type
        .clone()
        .unwrap_or_else(|| "no content type".to_owned())
}

/// The body on one line, cut, for a reason.
fn shown(reply: &Reply) -> String {
    let body = String::from_utf8_lossy(&reply.body);
    let flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{:?}", crate::http::excerpt::cut(&flat, 100))
}

/// The default call in words.
const DEFAULT_CALL: &str = "transcribe speech.wav (file and model)";

/// LangChain's call in words: a chunk as MP3 (SPS-009's MP3 clip).
const CHUNK_CALL: &str = "transcribe a chunk uploaded as speech.mp3 (file and model)";

/// The profiles of the speech clients, for a server that offers speech-to-text.
pub(crate) async fn profile_all(s: &Session, judged: &Judged<'_>) -> Vec<ClientProfile> {
    let default = s.send(requests::minimal(s)).await;
    let chunk = match requests::in_containers(s).into_iter().next() {
        Some((_, mp3)) => Some(s.send(mp3).await),
        None => None,
    };
    let mut formats = Vec::new();
    for format in requests::OTHER_FORMATS {
        formats.push((
            Call::Format(format),
            format!("transcribe speech.wav with response_format {format:?}"),
            s.send(requests::in_format(s, format)).await,
        ));
    }
    formats.push((
        Call::Words,
        "transcribe speech.wav as verbose_json with timestamp_granularities [word, segment], reading .words".to_owned(),
        s.send(requests::with_timestamps(s, requests::ListName::Bracketed))
            .await,
    ));
    formats.push((
        Call::Stream,
        "transcribe speech.wav with stream true, iterating the events".to_owned(),
        s.send(requests::streamed(s)).await,
    ));
    let refusal = not_audio(s).await;
    Client::SPEECH
        .into_iter()
        .map(|client| {
            let mut findings = Vec::new();
            let mut evidence = Vec::new();
            let reader = Reader::of(client);
            let call = match (reader, &chunk) {
                (Reader::LangChain, Some(chunk)) => {
                    called(reader, Call::Default, CHUNK_CALL, chunk, false)
                }
                _ => called(reader, Call::Default, DEFAULT_CALL, &default, false),
            };
            findings.push(call.0);
            add_evidence(&mut evidence, call.1.iter());
            if reader == Reader::LangChain {
                return ClientProfile::of(client, findings, evidence);
            }
            if reader != Reader::OpenWebUi {
                for (option, words, answer) in &formats {
                    let call = called(reader, *option, words, answer, true);
                    findings.push(call.0);
                    add_evidence(&mut evidence, call.1.iter());
                }
            }
            if let Some((finding, exchange)) = refusal_wording(reader, refusal.as_ref()) {
                findings.push(finding);
                add_evidence(&mut evidence, [&exchange]);
            }
            findings.extend(clause_warnings(reader, judged));
            ClientProfile::of(client, findings, evidence)
        })
        .collect()
}

/// The server's answer to an upload that is not audio (SPE-001's text named
/// speech.wav), where it refused it.
async fn not_audio(s: &Session) -> Option<std::sync::Arc<Reply>> {
    let [.., (_, probe)] = requests::bad_uploads(s);
    let reply = s.send(probe).await.ok()?;
    (!reply.is_success()).then_some(reply)
}

/// One call and what `reader` makes of its answer; a failing option is a warning.
fn called(
    reader: Reader,
    call: Call<'_>,
    words: &str,
    answer: &Result<std::sync::Arc<Reply>, crate::session::ProbeError>,
    option: bool,
) -> (Finding, Option<Exchange>) {
    let reply = match answer {
        Ok(reply) => reply,
        Err(error) => {
            let made = Made::NoAnswer {
                why: no_answer(error),
            };
            return (finding(words, made), None);
        }
    };
    let made = if reply.is_success() {
        match reader.read(call, reply) {
            Ok(what) => Made::Read { what },
            Err(why) if option => Made::Warn {
                why: format!("answered {}, but the client {why}", reply.status),
            },
            Err(why) => Made::Misread { why },
        }
    } else if option {
        Made::Warn {
            why: format!(
                "answered {}: the client raises where its user asks for {}",
                reply.summary(),
                call.asked()
            ),
        }
    } else if reader == Reader::LangChain {
        let skips = SpeechFinding::SkipsChunk {
            call: CHUNK_CALL,
            status: reply.status,
            message: reply.error_message(),
            attempts: reader.attempts(reply),
        };
        return (skips.into(), Some(reply.exchange.clone()));
    } else {
        Made::Raises {
            status: reply.status,
            message: reply.error_message(),
            attempts: reader.attempts(reply),
        }
    };
    (finding(words, made), Some(reply.exchange.clone()))
}

fn finding(words: &str, made: Made) -> Finding {
    Finding::Called {
        call: words.to_owned(),
        made,
    }
}

/// What the client's user sees of a refused upload: Open WebUI loses a reason that is
/// not in `error.message`; the SDKs retry a refusal the server answered as a fault.
fn refusal_wording(
    reader: Reader,
    refusal: Option<&std::sync::Arc<Reply>>,
) -> Option<(Finding, Exchange)> {
    let reply = refusal?;
    let why = match reader {
        Reader::OpenWebUi => match open_webui_shows(reply) {
            Ok(_) => return None,
            Err(shows) => format!(
                "answered {}, which Open WebUI shows as {shows:?}: the reason is not in error.message",
                reply.summary()
            ),
        },
        Reader::Python | Reader::Node if reply.is_retried_by_sdks() => format!(
            "answered {}, which the client retries: the mistaken upload reaches the server {} times",
            reply.summary(),
            SDK_RETRIES + 1
        ),
        Reader::Python | Reader::Node | Reader::LangChain => return None,
    };
    let made = Made::Warn { why };
    Some((
        finding("upload a text file named speech.wav", made),
        reply.exchange.clone(),
    ))
}

/// Failed clauses that matter to the SDKs' users beyond the calls above: SPS-003's
/// null or mistyped `verbose_json` fields, which the SDKs pass on without validation.
fn clause_warnings(reader: Reader, judged: &Judged<'_>) -> Vec<Finding> {
    if reader == Reader::OpenWebUi {
        return Vec::new();
    }
    judged
        .failed("SPS-003")
        .map(|failed| Finding::ClauseFailed {
            id: failed.id.to_owned(),
            reason: failed.reason.to_owned(),
            why: "TranscriptionVerbose is built without validation, so a null or mistyped field reaches the caller's code",
        })
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(content_type: &str, body: &str) -> Reply {
        let mut reply = Reply::json_for_test(200, json!(null));
        reply.content_type = Some(content_type.to_owned());
        reply.body = body.as_bytes().to_vec();
        reply.json = serde_json::from_str(body).ok();
        reply
    }

    const ENVELOPE: &str = r#"{"text":"hello there"}"#;

    #[test]
    fn the_default_call_reads_text_from_a_json_object() {
        let good = answer("application/json", ENVELOPE);
        for reader in [Reader::Python, Reader::Node, Reader::OpenWebUi] {
            let read = reader.read(Call::Default, &good).expect("a transcript");
            assert!(read.contains("11 characters"), "{read}");
        }
    }

    #[test]
    fn json_labelled_as_text_is_read_by_python_alone() {
        let mislabelled = answer("text/plain", ENVELOPE);
        assert!(Reader::Python.read(Call::Default, &mislabelled).is_ok());
        assert!(Reader::OpenWebUi.read(Call::Default, &mislabelled).is_ok());
        let node = Reader::Node.read(Call::Default, &mislabelled).unwrap_err();
        assert!(node.contains("undefined"), "{node}");
    }

    #[test]
    fn a_plain_text_answer_to_the_default_call_breaks_every_reader() {
        let plain = answer("text/plain", "hello there");
        for reader in [Reader::Python, Reader::Node, Reader::OpenWebUi] {
            assert!(reader.read(Call::Default, &plain).is_err(), "{reader:?}");
        }
    }

    /// LangChain keeps the `str` openai-python returns for a body that is not JSON.
    #[test]
    fn langchain_takes_a_plain_text_answer_as_the_page() {
        let plain = answer("text/plain", "hello there");
        let read = Reader::LangChain
            .read(Call::Default, &plain)
            .expect("a page");
        assert!(read.contains("11 characters"), "{read}");
        let empty = answer("text/plain", "");
        assert!(Reader::LangChain.read(Call::Default, &empty).is_err());
        let no_text = answer("application/json", r#"{"transcript":"hello"}"#);
        assert!(Reader::LangChain.read(Call::Default, &no_text).is_err());
    }

    #[test]
    fn the_json_envelope_for_text_is_returned_as_the_transcript() {
        let envelope = answer("text/plain", ENVELOPE);
        let python = Reader::Python
            .read(Call::Format("text"), &envelope)
            .unwrap_err();
        assert!(python.contains("vllm#49095"), "{python}");
        let labelled = answer("application/json", ENVELOPE);
        let node = Reader::Node
            .read(Call::Format("srt"), &labelled)
            .unwrap_err();
        assert!(node.contains("parsed JSON, an object"), "{node}");
        let bare = answer("text/plain", "hello there\n");
        assert!(Reader::Node.read(Call::Format("text"), &bare).is_ok());
    }

    /// Both SDKs read a stream by its events' types: OpenAI's events give the text, a
    /// JSON answer (faster-whisper-server ignoring stream) and typeless chunks (vLLM's)
    /// give nothing and raise nothing.
    #[test]
    fn a_stream_is_read_by_its_event_types() {
        let events = "data: {\"type\":\"transcript.text.delta\",\"delta\":\"hello\"}\n\ndata: {\"type\":\"transcript.text.done\",\"text\":\"hello\"}\n\n";
        for reader in [Reader::Python, Reader::Node] {
            let read = reader
                .read(Call::Stream, &answer("text/event-stream", events))
                .expect("a streamed transcript");
            assert!(read.contains("5 characters"), "{read}");
            let json = reader
                .read(Call::Stream, &answer("application/json", ENVELOPE))
                .unwrap_err();
            assert!(json.contains("finds no events"), "{json}");
            let chunks =
                "data: {\"object\":\"transcription.chunk\",\"choices\":[]}\n\ndata: [DONE]\n\n";
            let typeless = reader
                .read(Call::Stream, &answer("text/event-stream", chunks))
                .unwrap_err();
            assert!(typeless.contains("no type"), "{typeless}");
        }
    }

    #[test]
    fn open_webui_loses_a_reason_outside_error_message() {
        let refused = |body: &str| {
            let mut reply = answer("application/json", body);
            reply.status = 400;
            reply
        };
        assert_eq!(
            open_webui_shows(&refused(r#"{"error":{"message":"not audio"}}"#)),
            Ok("External: not audio".to_owned())
        );
        assert!(open_webui_shows(&refused(r#"{"detail":"not audio"}"#)).is_err());
        assert!(open_webui_shows(&answer("text/plain", "Invalid request")).is_err());
    }

    /// LangChain catches the refusal of an MP3 chunk and skips it: a break, counted in
    /// its own attempts times the SDK's where the SDK retries the status too.
    #[test]
    fn langchain_skips_a_refused_chunk_after_its_attempts() {
        let mut refused = answer("text/plain", "Invalid request");
        refused.status = 400;
        let answer400 = Ok(std::sync::Arc::new(refused.clone()));
        let (finding, _) = called(
            Reader::LangChain,
            Call::Default,
            CHUNK_CALL,
            &answer400,
            false,
        );
        assert_eq!(finding.severity(), Severity::Breaks);
        let said = finding.describe(Client::LANGCHAIN_WHISPER);
        assert!(said.contains("tries it 3 times"), "{said}");
        assert!(said.contains("lacks that chunk's text"), "{said}");
        refused.status = 500;
        assert_eq!(Reader::LangChain.attempts(&refused), 9);
    }

    #[test]
    fn a_refused_format_warns_and_a_refused_default_breaks() {
        let mut refused = answer("application/json", r#"{"error":{"message":"no srt"}}"#);
        refused.status = 400;
        let answer = Ok(std::sync::Arc::new(refused));
        let (option, _) = called(Reader::Python, Call::Format("srt"), "srt", &answer, true);
        assert_eq!(option.severity(), crate::profiles::Severity::Warning);
        let (default, _) = called(Reader::Python, Call::Default, DEFAULT_CALL, &answer, false);
        assert_eq!(default.severity(), crate::profiles::Severity::Breaks);
    }
}
