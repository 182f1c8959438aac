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
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "$KEY")
        }
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
    fn scrubs_echoed_keys() {
        let key = Secret::new("sk-test-abcdef".into());
        assert_eq!(key.scrub("bad key sk-test-abcdef!"), "bad key $KEY!");
    }
}
