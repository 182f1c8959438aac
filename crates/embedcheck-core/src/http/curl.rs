//! Curl commands that reproduce a probe, for every failing verdict.

use super::form::Form;

/// Bodies larger than this are not inlined: the command would be unreadable.
const MAX_INLINE_BODY: usize = 64 * 1024;

/// A request body as a reproducer sends it.
pub(crate) enum Shown<'a> {
    /// Bytes with their content type, inlined where short.
    Bytes(&'a [u8], &'a str),
    /// A form, as `-F` arguments (curl writes the boundary).
    Form(&'a Form),
}

/// A one-line curl command. No secret is inlined: each is a shell variable (`$KEY`).
pub(crate) fn render(
    method: &reqwest::Method,
    url: &str,
    body: Option<Shown<'_>>,
    headers: &[ShownHeader],
) -> String {
    let mut parts = vec!["curl -sS -i".to_owned(), format!("-X {method}"), quote(url)];
    for header in headers {
        parts.push(format!("-H {}", header.quoted()));
    }
    match body {
        Some(Shown::Bytes(bytes, content_type)) => {
            parts.push(format!(
                "-H {}",
                quote(&format!("Content-Type: {content_type}"))
            ));
            parts.push(data_argument(bytes));
        }
        Some(Shown::Form(form)) => {
            for (name, value) in form.curl_arguments() {
                parts.push(format!("-F {}", quote(&format!("{name}={value}"))));
            }
        }
        None => {}
    }
    parts.join(" ")
}

fn data_argument(bytes: &[u8]) -> String {
    if bytes.len() > MAX_INLINE_BODY {
        return format!(
            "--data-binary @body.json  # the {}-byte body is in the request excerpt",
            bytes.len()
        );
    }
    format!("--data-binary {}", quote(&String::from_utf8_lossy(bytes)))
}

/// A header as a reproducer shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ShownHeader {
    /// Shown as sent, single-quoted.
    Plain(String),
    /// Ends in a shell variable standing for a secret (`api-key: $KEY`), so it is
    /// double-quoted for the shell to fill in.
    Secret(String),
}

impl ShownHeader {
    fn quoted(&self) -> String {
        match self {
            ShownHeader::Plain(text) => quote(text),
            ShownHeader::Secret(text) => format!("\"{text}\""),
        }
    }
}

/// POSIX single-quoting: the only character to escape is the single quote itself.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_reproducible_post() {
        let line = render(
            &reqwest::Method::POST,
            "http://127.0.0.1:8000/v1/embeddings",
            Some(Shown::Bytes(br#"{"input":"it's"}"#, "application/json")),
            &[ShownHeader::Secret("Authorization: Bearer $KEY".into())],
        );
        assert_eq!(
            line,
            r#"curl -sS -i -X POST 'http://127.0.0.1:8000/v1/embeddings' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' --data-binary '{"input":"it'\''s"}'"#
        );
    }

    #[test]
    fn plain_headers_are_single_quoted_secrets_left_to_the_shell() {
        let line = render(
            &reqwest::Method::GET,
            "http://h/v1/models",
            None,
            &[
                ShownHeader::Secret("api-key: $KEY".into()),
                ShownHeader::Plain("x-title: a $b".into()),
            ],
        );
        assert!(
            line.ends_with(r#"-H "api-key: $KEY" -H 'x-title: a $b'"#),
            "{line}"
        );
    }

    #[test]
    fn large_bodies_are_not_inlined() {
        let body = vec![b'x'; MAX_INLINE_BODY + 1];
        let line = render(
            &reqwest::Method::POST,
            "http://h/v1",
            Some(Shown::Bytes(&body, "application/json")),
            &[],
        );
        assert!(line.len() < 200 && !line.contains("Authorization"));
    }

    /// A form is sent as curl's `-F` fields, a file by its name.
    #[test]
    fn a_form_renders_as_fields_and_a_named_file() {
        let form = Form::default()
            .file(
                "file",
                "clip.wav",
                "audio/wav",
                crate::http::form::Upload::new(std::sync::Arc::from(&b"RIFF"[..])),
            )
            .text("model", "whisper-1");
        let line = render(
            &reqwest::Method::POST,
            "http://h/v1/audio/transcriptions",
            Some(Shown::Form(&form)),
            &[],
        );
        assert!(
            line.ends_with("-F 'file=@clip.wav;type=audio/wav' -F 'model=whisper-1'"),
            "{line}"
        );
    }
}
