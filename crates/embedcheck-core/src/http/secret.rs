//! The API key, kept out of every output by construction.
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

    /// The raw key, for the one place that needs it: the Authorization header.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Removes every occurrence of the key from `text`, as a last line of defence for
    /// text that came from elsewhere (a server echoing the header back, an error).
    pub(crate) fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "$KEY")
        }
    }
}

impl Secret {
    /// [`Secret::scrub`] for bytes that may not be UTF-8 (a response body).
    pub(crate) fn scrub_bytes(&self, bytes: Vec<u8>) -> Vec<u8> {
        let needle = self.0.as_bytes();
        if needle.is_empty() || !bytes.windows(needle.len()).any(|w| w == needle) {
            return bytes;
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = bytes.as_slice();
        while let Some(at) = rest.windows(needle.len()).position(|w| w == needle) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(b"$KEY");
            rest = &rest[at + needle.len()..];
        }
        out.extend_from_slice(rest);
        out
    }
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

    #[test]
    fn scrubs_echoed_keys_in_bytes() {
        let key = Secret::new("sk-k".into());
        assert_eq!(
            key.scrub_bytes(b"\xffsk-k and sk-k".to_vec()),
            b"\xff$KEY and $KEY".to_vec()
        );
        assert_eq!(key.scrub_bytes(b"nothing".to_vec()), b"nothing".to_vec());
    }

    #[test]
    fn scrubs_echoed_keys() {
        let key = Secret::new("sk-test-abcdef".into());
        assert_eq!(key.scrub("bad key sk-test-abcdef!"), "bad key $KEY!");
    }
}
