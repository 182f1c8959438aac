//! What the user declares instead of letting the suite find out: the server's
//! Matryoshka support, the over-length policy the client relies on, and the query
//! instruction the client expects the server to prepend.
//!
//! Each is a typed option value (`--matryoshka`, `--overlength`,
//! `--query-instruction`), carried in [`crate::session::Settings`].

use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// `--matryoshka`: whether `dimensions` below the native size can be honoured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Matryoshka {
    /// Find out from the server's answer to one truncated request.
    #[default]
    Auto,
    /// The model is Matryoshka-trained: every d in [1, native) must be honoured.
    Yes,
    /// It is not: any d below the native size must be refused.
    No,
}

/// `--overlength`: what the client relies on for inputs over the model's limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overlength {
    /// Either policy is fine.
    #[default]
    Any,
    /// The client expects a 4xx and truncates itself.
    Reject,
    /// The client expects the server to truncate.
    Truncate,
    /// The client expects the whole input embedded in chunks and pooled (vLLM's
    /// chunked processing, LangChain's own chunking).
    Aggregate,
}

/// A declared value that is none of the accepted words.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("expected one of {expected}, got {got:?}")]
pub struct UnknownWord {
    expected: String,
    got: String,
}

/// The words an option value can be spelled with, in the order help shows them.
pub trait Words: Sized + Copy + 'static {
    const ALL: &'static [Self];
    fn word(self) -> &'static str;

    /// Every accepted word.
    fn words() -> Vec<&'static str> {
        Self::ALL.iter().map(|v| v.word()).collect()
    }

    /// The value spelled `word`.
    fn parse_word(word: &str) -> Result<Self, UnknownWord> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.word() == word)
            .ok_or_else(|| UnknownWord {
                expected: Self::words().join(", "),
                got: word.to_owned(),
            })
    }
}

/// A command-line parser that accepts exactly the words of a declared value, listed in
/// `--help`.
pub(crate) fn words<T: Words + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(T::words())
        .map(|word: String| T::parse_word(&word).expect("clap accepted only listed words"))
}

impl Words for Matryoshka {
    const ALL: &'static [Self] = &[Matryoshka::Auto, Matryoshka::Yes, Matryoshka::No];

    fn word(self) -> &'static str {
        match self {
            Matryoshka::Auto => "auto",
            Matryoshka::Yes => "yes",
            Matryoshka::No => "no",
        }
    }
}

impl Words for Overlength {
    const ALL: &'static [Self] = &[
        Overlength::Any,
        Overlength::Reject,
        Overlength::Truncate,
        Overlength::Aggregate,
    ];

    fn word(self) -> &'static str {
        match self {
            Overlength::Any => "any",
            Overlength::Reject => "reject",
            Overlength::Truncate => "truncate",
            Overlength::Aggregate => "aggregate",
        }
    }
}

impl fmt::Display for Overlength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// The task text `{task}` stands for unless `--query-task` says otherwise: the one
/// Qwen3-Embedding and E5-style models use for web search.
pub const DEFAULT_QUERY_TASK: &str =
    "Given a web search query, retrieve relevant passages that answer the query";

/// A query-instruction template such as `Instruct: {task}\nQuery: {text}`.
///
/// The escapes `\n`, `\t` and `\\` are decoded, because a shell passes them as two
/// characters and the templates real models document contain newlines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryTemplate(String);

/// Why a `--query-instruction` value is not a usable template.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum TemplateError {
    #[error("the query instruction template has no {{text}} placeholder")]
    NoTextPlaceholder,
}

impl QueryTemplate {
    /// A prompt put before the text, as sentence-transformers applies a model's named
    /// prompt: taken as it is (no escapes read), `{text}` after it.
    pub(crate) fn prompt_before_text(prompt: &str) -> Self {
        QueryTemplate(format!("{prompt}{{text}}"))
    }

    /// The string a client would send bare: the template with `{task}` and `{text}`
    /// filled in.
    pub(crate) fn fill(&self, task: &str, text: &str) -> String {
        // Split on `{text}` first, so a task containing "{text}" stays literal text.
        self.0
            .split("{text}")
            .map(|part| part.replace("{task}", task))
            .collect::<Vec<_>>()
            .join(text)
    }
}

impl FromStr for QueryTemplate {
    type Err = TemplateError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let template = unescape(raw);
        if template.contains("{text}") {
            Ok(QueryTemplate(template))
        } else {
            Err(TemplateError::NoTextPlaceholder)
        }
    }
}

impl fmt::Display for QueryTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Decodes `\n`, `\t` and `\\`; any other backslash stays as it is.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        let decoded = match (c, chars.peek()) {
            ('\\', Some('n')) => Some('\n'),
            ('\\', Some('t')) => Some('\t'),
            ('\\', Some('\\')) => Some('\\'),
            _ => None,
        };
        match decoded {
            Some(d) => {
                out.push(d);
                chars.next();
            }
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qwen3_template_fills_task_and_text() {
        let template: QueryTemplate = r"Instruct: {task}\nQuery: {text}".parse().unwrap();
        assert_eq!(
            template.fill("find it", "where?"),
            "Instruct: find it\nQuery: where?"
        );
    }

    #[test]
    fn a_template_without_text_is_refused() {
        assert_eq!(
            "Instruct: {task}".parse::<QueryTemplate>(),
            Err(TemplateError::NoTextPlaceholder)
        );
    }

    #[test]
    fn unknown_escapes_and_literal_newlines_are_kept() {
        assert_eq!(unescape(r"a\qb\\n"), r"a\qb\n");
        assert_eq!(unescape("a\nb"), "a\nb");
    }

    #[test]
    fn placeholders_in_the_task_stay_literal() {
        let template: QueryTemplate = "{task}: {text}".parse().unwrap();
        assert_eq!(template.fill("say {text}", "hi"), "say {text}: hi");
    }
}
