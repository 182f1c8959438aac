//! `multipart/form-data` bodies: text fields and files in order, as OpenAI's audio
//! routes take an audio file with `model` and the options beside it.
//!
//! The suite encodes a form itself, so that its bytes depend on its parts alone: the
//! boundary is derived from them, the session cache answers the same form twice, and
//! the evidence shows what was sent. Evidence never carries a file's bytes: a file part
//! is shown as its name, type, size and digest, the way a vector is shown as its length.

use crate::sha256;
use std::sync::Arc;

/// A file's bytes with their SHA-256, taken once: a 26 MB clip is hashed once a run,
/// not once a request.
#[derive(Clone, Debug, PartialEq)]
pub struct Upload {
    bytes: Arc<[u8]>,
    digest: Arc<str>,
}

impl Upload {
    pub fn new(bytes: Arc<[u8]>) -> Self {
        let digest = Arc::from(sha256::hex_bytes(&bytes));
        Upload { bytes, digest }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn digest(&self) -> &str {
        &self.digest
    }
}

/// One part of a form.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text {
        name: String,
        value: String,
    },
    File {
        name: String,
        file_name: String,
        content_type: String,
        upload: Upload,
    },
}

/// A `multipart/form-data` body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Form {
    parts: Vec<Part>,
}

impl Form {
    /// The form with a text field added (`model`, `response_format`, …).
    pub fn text(mut self, name: &str, value: &str) -> Self {
        self.parts.push(Part::Text {
            name: name.to_owned(),
            value: value.to_owned(),
        });
        self
    }

    /// The form with a file added.
    pub fn file(mut self, name: &str, file_name: &str, content_type: &str, upload: Upload) -> Self {
        self.parts.push(Part::File {
            name: name.to_owned(),
            file_name: file_name.to_owned(),
            content_type: content_type.to_owned(),
            upload,
        });
        self
    }

    /// The bytes of every file in the form: what the upload budget counts.
    pub fn file_bytes(&self) -> u64 {
        self.parts
            .iter()
            .map(|part| match part {
                Part::File { upload, .. } => upload.bytes().len() as u64,
                Part::Text { .. } => 0,
            })
            .sum()
    }

    /// The form's identity for the session cache: each part's name and content, a
    /// file by its digest.
    pub fn digest(&self) -> String {
        let described: Vec<String> = self.parts.iter().map(described).collect();
        sha256::hex(&described.join("\n"))
    }

    /// The encoded body and its content type, with a boundary taken from the form's
    /// digest (a file containing it would need a SHA-256 collision of its own).
    pub fn encode(&self) -> (Vec<u8>, String) {
        let boundary = format!("embedcheck-{}", &self.digest()[..32]);
        let mut body = Vec::new();
        for part in &self.parts {
            body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
            match part {
                Part::Text { name, value } => {
                    body.extend_from_slice(
                        format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n")
                            .as_bytes(),
                    );
                    body.extend_from_slice(value.as_bytes());
                }
                Part::File {
                    name,
                    file_name,
                    content_type,
                    upload,
                } => {
                    body.extend_from_slice(
                        format!(
                            "Content-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\nContent-Type: {content_type}\r\n\r\n"
                        )
                        .as_bytes(),
                    );
                    body.extend_from_slice(upload.bytes());
                }
            }
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        (body, format!("multipart/form-data; boundary={boundary}"))
    }

    /// The form as evidence shows it: `file=<clip.wav: audio/wav, 32044 bytes,
    /// sha256 1f2e…>; model="whisper-1"`.
    pub fn excerpt(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|part| match part {
                Part::Text { name, value } => {
                    format!("{name}={}", super::excerpt::of_json(&value.as_str().into()))
                }
                Part::File {
                    name,
                    file_name,
                    content_type,
                    upload,
                } => format!(
                    "{name}=<{file_name}: {content_type}, {} bytes, sha256 {}…>",
                    upload.bytes().len(),
                    &upload.digest()[..12]
                ),
            })
            .collect();
        format!("multipart/form-data; {}", parts.join("; "))
    }

    /// The form as curl's `-F` arguments; a file is named, its bytes left to the
    /// reader (the suite made them, and the excerpt says which).
    pub fn curl_arguments(&self) -> Vec<(String, String)> {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Text { name, value } => (name.clone(), value.clone()),
                Part::File {
                    name,
                    file_name,
                    content_type,
                    ..
                } => (name.clone(), format!("@{file_name};type={content_type}")),
            })
            .collect()
    }
}

fn described(part: &Part) -> String {
    match part {
        Part::Text { name, value } => format!("text {name:?} {value:?}"),
        Part::File {
            name,
            file_name,
            content_type,
            upload,
        } => format!(
            "file {name:?} {file_name:?} {content_type:?} {}",
            upload.digest()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip() -> Form {
        Form::default()
            .file(
                "file",
                "clip.wav",
                "audio/wav",
                Upload::new(Arc::from(&b"RIFF\0\x01binary"[..])),
            )
            .text("model", "whisper-1")
            .text("response_format", "json")
    }

    #[test]
    fn a_form_encodes_each_part_between_its_boundary() {
        let (body, content_type) = clip().encode();
        let boundary = content_type
            .strip_prefix("multipart/form-data; boundary=")
            .unwrap();
        let text = String::from_utf8_lossy(&body);
        assert_eq!(text.matches(&format!("--{boundary}\r\n")).count(), 3);
        assert!(text.ends_with(&format!("--{boundary}--\r\n")));
        assert!(text.contains(
            "name=\"file\"; filename=\"clip.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFF"
        ));
        assert!(text.contains("name=\"model\"\r\n\r\nwhisper-1\r\n"));
    }

    /// The same parts give the same bytes (the cache and evidence rest on it), other
    /// parts other bytes.
    #[test]
    fn a_forms_bytes_follow_from_its_parts() {
        assert_eq!(clip().encode(), clip().encode());
        let other = clip().text("language", "en");
        assert_ne!(clip().digest(), other.digest());
        assert_ne!(clip().encode().1, other.encode().1);
    }

    #[test]
    fn evidence_shows_a_file_by_size_and_digest_never_its_bytes() {
        let shown = clip().excerpt();
        assert!(
            shown.starts_with("multipart/form-data; file=<clip.wav: audio/wav, 12 bytes, sha256 ")
        );
        assert!(
            shown.ends_with("; model=\"whisper-1\"; response_format=\"json\""),
            "{shown}"
        );
        assert!(!shown.contains("binary"));
        assert_eq!(clip().file_bytes(), 12);
    }
}
