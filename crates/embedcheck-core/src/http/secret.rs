//! The API key and every other secret, kept out of every output by construction.
//!
//! The key is only ever read from the environment variable the user named with
//! `--api-key-env`; nothing reads `OPENAI_API_KEY` or similar implicitly, so a key
//! meant for one provider cannot leak to an endpoint under test. `Debug` and
//! `Display` print a placeholder, and curl reproducers use `$KEY`.

use std::fmt;

/// An API key that cannot be printed by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(key: String) -> Self {
        Secret(key)
    }

    /// The raw key, for the one place that sends it ([`super::access::Access::apply`])
    /// and the list of secrets to redact.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

/// Every secret a run knows and what outputs show in its place: the one list that
/// every answer body, error text and report is redacted with (hurl keeps one such
/// list too). A server that echoes a key or a query value back cannot put it in any
/// reason, excerpt, snapshot or report.
#[derive(Clone, Debug, Default)]
pub struct Secrets {
    /// (secret, shown instead), longest first so a secret inside another is not
    /// half-replaced.
    list: Vec<(String, String)>,
}

/// Shorter values are not taken for secrets unless named as such: a query value like
/// `1` would otherwise redact every digit of every vector.
const SHORTEST_GUESSED: usize = 6;

impl Secrets {
    /// A value the user named as secret.
    pub(crate) fn add(&mut self, secret: &str, shown: &str) {
        if !secret.is_empty() {
            self.list.push((secret.to_owned(), shown.to_owned()));
            self.list.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        }
    }

    /// A value that may be secret (a query value), when long enough to be one.
    pub(crate) fn add_guessed(&mut self, value: &str, shown: &str) {
        if value.len() >= SHORTEST_GUESSED {
            self.add(value, shown);
        }
    }

    /// `text` with every secret replaced.
    pub(crate) fn scrub(&self, text: &str) -> String {
        self.list
            .iter()
            .fold(text.to_owned(), |text, (secret, shown)| {
                text.replace(secret, shown)
            })
    }

    /// [`Secrets::scrub`] for bytes that may not be UTF-8 (a response body).
    pub(crate) fn scrub_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        self.list.iter().fold(bytes, |bytes, (secret, shown)| {
            replace_bytes(bytes, secret.as_bytes(), shown.as_bytes())
        })
    }
}

/// `bytes` with every `needle` replaced by `with`. Searched with `memchr`'s `memmem`,
/// built optimised even in test builds: every answer of an audit passes here.
fn replace_bytes(bytes: Vec<u8>, needle: &[u8], with: &[u8]) -> Vec<u8> {
    let finder = memchr::memmem::Finder::new(needle);
    if needle.is_empty() || finder.find(&bytes).is_none() {
        return bytes;
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes.as_slice();
    while let Some(at) = finder.find(rest) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(with);
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_formats_the_key() {
        let key = Secret::new("sk-test-abcdef".into());
        assert!(!format!("{key:?} {key}").contains("abcdef"));
    }

    fn secrets() -> Secrets {
        let mut secrets = Secrets::default();
        secrets.add("sk-k", "$KEY");
        secrets.add("sk-k-longer", "$OTHER");
        secrets.add_guessed("1", "REDACTED");
        secrets
    }

    #[test]
    fn scrubs_echoed_secrets_in_bytes() {
        assert_eq!(
            secrets().scrub_bytes(b"\xffsk-k and sk-k-longer 1".to_vec()),
            b"\xff$KEY and $OTHER 1".to_vec()
        );
        assert_eq!(
            secrets().scrub_bytes(b"nothing".to_vec()),
            b"nothing".to_vec()
        );
    }

    #[test]
    fn scrubs_echoed_secrets() {
        assert_eq!(secrets().scrub("bad key sk-k!"), "bad key $KEY!");
    }
}
