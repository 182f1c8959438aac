//! The speech contract's route and canonical requests.
//!
//! Every request is a multipart form carrying the canonical clip, so that two clauses
//! asking the same question send the same bytes and the session cache answers the
//! second. Whether the server offers the contract is the minimal request's answer: a
//! route that is absent (404, 405, 501) is "not offered", and every speech clause skips.

use super::audio::{self, Clip};
use crate::contracts::contract::Presence;
use crate::http::form::{Form, Upload};
use crate::http::{Anchor, Body, Probe, Reply, Route, Validity, Work};
use crate::session::Session;
use std::sync::{Arc, OnceLock};

/// `POST {base}/audio/transcriptions`. Its bodies are forms, whose work the session
/// counts itself; its usage (seconds of audio) is never charged as tokens.
pub const ROUTE: Route = Route {
    contract: crate::contracts::speech::ID,
    path: "audio/transcriptions",
    anchor: Anchor::Base,
    work: |_| Work::default(),
    charges_usage: false,
    vendor_fields: false,
};

/// `POST {base}/audio/translations`: the same upload as a transcription, fewer fields
/// (no `language`, no `stream`), the text in English. A server may not offer it.
pub const TRANSLATIONS: Route = Route {
    path: "audio/translations",
    ..ROUTE
};

/// The clip every clause sends unless it needs another, made once.
pub(crate) fn clip() -> &'static Clip {
    static CLIP: OnceLock<Clip> = OnceLock::new();
    CLIP.get_or_init(audio::speech_wav)
}

/// The clip at the other common rates and channel counts, made once: a phone call's
/// 8 kHz stereo, a recording's 44.1 kHz mono.
fn other_rates() -> &'static [(&'static str, Clip); 2] {
    static CLIPS: OnceLock<[(&'static str, Clip); 2]> = OnceLock::new();
    CLIPS.get_or_init(|| {
        [
            ("8 kHz stereo", audio::speech_wav_at(8_000, 2, "phone.wav")),
            (
                "44.1 kHz mono",
                audio::speech_wav_at(44_100, 1, "recording.wav"),
            ),
        ]
    })
}

/// The minimal request with the clip at each other common rate and channel count,
/// each with what it is (SPS-006).
pub(crate) fn at_other_rates(s: &Session) -> Vec<(&'static str, Probe)> {
    other_rates()
        .iter()
        .map(|(what, clip)| (*what, Probe::form(ROUTE, form(s, clip))))
        .collect()
}

/// The clip in the compressed containers clients upload, made once.
fn compressed() -> &'static [(&'static str, Clip); 3] {
    static CLIPS: OnceLock<[(&'static str, Clip); 3]> = OnceLock::new();
    CLIPS.get_or_init(audio::compressed)
}

/// The minimal request with the clip in each compressed container, each with what it
/// is (SPS-009).
pub(crate) fn in_containers(s: &Session) -> Vec<(&'static str, Probe)> {
    compressed()
        .iter()
        .map(|(what, clip)| (*what, Probe::form(ROUTE, form(s, clip))))
        .collect()
}

/// The clip past OpenAI's upload limit, made once.
fn oversize() -> &'static Clip {
    static CLIP: OnceLock<Clip> = OnceLock::new();
    CLIP.get_or_init(audio::oversize_wav)
}

/// The form with `clip` as `file` and the run's `model`, as Open WebUI sends it.
fn form(s: &Session, clip: &Clip) -> Form {
    with_file(s, clip.file_name, clip.content_type, clip.upload.clone())
}

/// The form with these bytes as `file`, and the speech [`model`] unless the vendor's
/// URL names the deployment (Azure's: `--vendor` says so).
fn with_file(s: &Session, name: &str, content_type: &str, upload: Upload) -> Form {
    let form = Form::default().file("file", name, content_type, upload);
    match s.transport().access().fields.send_model {
        true => form.text("model", &model(s)),
        false => form,
    }
}

/// The model speech requests name: `--speech-model`, else the run's.
pub(crate) fn model(s: &Session) -> String {
    super::settings::of(s)
        .model
        .unwrap_or_else(|| s.model().to_owned())
}

/// Requests whose upload no server can transcribe, each with what it is: no file, an
/// empty file, text named as a WAV file (SPE-001).
pub(crate) fn bad_uploads(s: &Session) -> [(&'static str, Probe); 3] {
    let bad = |what: &'static str, form: Form| {
        (
            what,
            Probe::invalid(
                ROUTE,
                Body::Form(form),
                format!("{what}: nothing to transcribe"),
            ),
        )
    };
    let text: &[u8] = b"This is text, not audio, in a file named speech.wav.\n";
    [
        ("no file", Form::default().text("model", &model(s))),
        (
            "an empty file",
            with_file(
                s,
                "speech.wav",
                "audio/wav",
                Upload::new(Arc::from(&b""[..])),
            ),
        ),
        (
            "a text file named speech.wav",
            with_file(s, "speech.wav", "audio/wav", Upload::new(Arc::from(text))),
        ),
    ]
    .map(|(what, form)| bad(what, form))
}

/// The minimal request with a clip past OpenAI's 25 MiB limit (SPE-003): a server may
/// refuse or transcribe it.
pub(crate) fn oversize_upload(s: &Session) -> Probe {
    Probe {
        validity: Validity::Either(
            "over OpenAI's 25 MiB limit: a server may refuse or transcribe it".to_owned(),
        ),
        ..Probe::form(ROUTE, form(s, oversize()))
    }
}

/// The canonical clip with `language` given as a language's name, `english`, where
/// OpenAI documents an ISO-639-1 code (SPE-004): a server may refuse or ignore it.
pub(crate) fn language_by_name(s: &Session) -> Probe {
    Probe {
        validity: Validity::Either(
            "language \"english\" is a name, not an ISO-639-1 code: a server may refuse or ignore it"
                .to_owned(),
        ),
        ..Probe::form(ROUTE, form(s, clip()).text("language", "english"))
    }
}

/// The minimal request: the canonical clip and `model`, nothing else (SPS-001).
pub(crate) fn minimal(s: &Session) -> Probe {
    Probe::form(ROUTE, form(s, clip()))
}

/// The `response_format`s beside the default JSON that OpenAI lists and clients ask
/// for: what the SDKs' users pass, each a call of its own, and what the migration audit
/// asks both servers for.
pub(crate) const OTHER_FORMATS: [&str; 4] = ["text", "srt", "vtt", "verbose_json"];

/// The canonical clip asked for in `response_format` `format`.
pub(crate) fn in_format(s: &Session, format: &str) -> Probe {
    Probe::form(ROUTE, form(s, clip()).text("response_format", format))
}

/// The canonical clip sent for translation, in `response_format` `format` where one is
/// given (SPS-008): as openai-python's `audio.translations.create` sends it.
pub(crate) fn translated(s: &Session, format: Option<&str>) -> Probe {
    let form = form(s, clip());
    let form = match format {
        Some(format) => form.text("response_format", format),
        None => form,
    };
    Probe::form(TRANSLATIONS, form)
}

/// The canonical clip as a known answer is asked for (SPR-001): in English, at
/// temperature 0, as the model's own library decoded it.
pub(crate) fn known_answer(s: &Session) -> Probe {
    Probe::form(
        ROUTE,
        form(s, clip())
            .text("language", "en")
            .text("temperature", "0"),
    )
}

/// The known-answer request in `response_format` `format` (SPS-010): one decoding
/// asked for in every format, so that each carries the same transcript.
pub(crate) fn known_answer_in(s: &Session, format: &str) -> Probe {
    Probe::form(
        ROUTE,
        form(s, clip())
            .text("language", "en")
            .text("temperature", "0")
            .text("response_format", format),
    )
}

/// How a request names a list field: `timestamp_granularities[]` repeated, as both
/// OpenAI SDKs send a list in a form (openai-python's `_qs.py` brackets, openai-node's
/// `key + '[]'`), or the bare name repeated, as the OpenAPI file has named the field
/// since June 2025 and a form built by hand sends it (speaches#379).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListName {
    Bracketed,
    Bare,
}

impl ListName {
    /// `name[]` or `name`.
    pub(crate) fn of(self, name: &str) -> String {
        match self {
            ListName::Bracketed => format!("{name}[]"),
            ListName::Bare => name.to_owned(),
        }
    }
}

/// The clip asked for in `verbose_json` with word and segment timestamps, the list
/// named as `list` names it (SPO-001, SPO-002).
pub(crate) fn with_timestamps(s: &Session, list: ListName) -> Probe {
    let name = list.of("timestamp_granularities");
    Probe::form(
        ROUTE,
        form(s, clip())
            .text("response_format", "verbose_json")
            .text(&name, "word")
            .text(&name, "segment"),
    )
}

/// The clip asked for in `json` with `include[]=logprobs`, as the SDKs send the list
/// (SPO-003).
pub(crate) fn with_logprobs(s: &Session) -> Probe {
    Probe::form(
        ROUTE,
        form(s, clip())
            .text("response_format", "json")
            .text(&ListName::Bracketed.of("include"), "logprobs"),
    )
}

/// The minimal request with `stream: true` (SPS-007).
pub(crate) fn streamed(s: &Session) -> Probe {
    Probe::form(ROUTE, form(s, clip()).text("stream", "true"))
}

/// Whether a refusal is about the model named: a JSON error that names it, or says
/// `model_not_found` or `param: "model"` as OpenAI's does. A plain "Not Found" is the
/// route's absence, whatever the model is called.
fn names_the_model(reply: &Reply, model: &str) -> bool {
    let Some(json) = reply.json.as_ref() else {
        return false;
    };
    let json = Some(json);
    let said = |pointer: &str, value: &str| {
        json.and_then(|j| j.pointer(pointer))
            .and_then(serde_json::Value::as_str)
            == Some(value)
    };
    said("/error/code", "model_not_found")
        || said("/error/param", "model")
        || reply.error_text().contains(&model.to_lowercase())
}

/// The transcript of a JSON answer: its `text`, where it is a string.
pub(crate) fn json_text(reply: &Reply) -> Option<&str> {
    reply.json.as_ref()?.get("text")?.as_str()
}

/// Why the server does not offer speech-to-text, where it does not: the minimal
/// request's route is absent, or it serves no model of that name (OpenAI's 404
/// `model_not_found`: the route answers, for another model), or the request named the
/// model another contract just served (`model_served`, no `--speech-model`) and was
/// answered with a server error (LiteLLM in front of an embeddings model: 500
/// "Unmapped provider passed in"): an embeddings model asked to transcribe says
/// nothing of the server's speech-to-text. Answered when it is offered, or when no
/// answer could say (a budget, a stall: the clauses say so one by one).
pub(crate) async fn presence(s: &Session, model_served: Option<&'static str>) -> Presence {
    match not_offered(s, model_served).await {
        Some(why) => Presence::Absent(why),
        None => Presence::Answered {
            served_the_model: None,
        },
    }
}

/// Why the server does not offer speech-to-text, where it does not (`presence`).
async fn not_offered(s: &Session, model_served: Option<&'static str>) -> Option<String> {
    let reply = match s.send(minimal(s)).await {
        Ok(reply) => reply,
        Err(_) => return None,
    };
    let model = model(s);
    let named = super::settings::of(s).model.is_some();
    if let Some(served) = model_served.filter(|_| reply.is_server_error() && !named) {
        return Some(format!(
            "speech-to-text is not audited: the minimal request to {} named {model:?}, {served}, and was answered {}; name the speech model with --speech-model",
            s.transport().target().url(&ROUTE).path(),
            reply.summary()
        ));
    }
    if reply.status == 404 && names_the_model(&reply, &model) {
        return Some(format!(
            "speech-to-text is not audited: the minimal request to {} was answered {}, the model {model:?} is not served there; name the speech model with --speech-model",
            s.transport().target().url(&ROUTE).path(),
            reply.summary()
        ));
    }
    reply.is_absent().then(|| {
        format!(
            "speech-to-text is not offered: the minimal request to {} was answered {}",
            s.transport().target().url(&ROUTE).path(),
            reply.summary()
        )
    })
}
