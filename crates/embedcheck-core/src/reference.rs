//! Known-answer files: JSON Lines, a header and one line per case, as the lab's scripts
//! write them from a model's own library. Each contract reads its own kind
//! (`contracts::embeddings::reference`, `contracts::rerank::reference`) with the reader
//! here, which names the file and the line in every error.

use serde::de::DeserializeOwned;
use std::path::Path;
use thiserror::Error;

/// Why a reference file cannot be used.
#[derive(Debug, Error)]
pub enum ReferenceError {
    #[error("cannot read the reference file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("reference file {origin}, line {line}: {why}")]
    Line {
        origin: String,
        line: usize,
        why: String,
    },
    #[error("reference file {0} has a header but no texts")]
    NoTexts(String),
    #[error(
        "reference file {origin}: line {line} has {got} values where the first text has {expected}"
    )]
    MixedDimensions {
        origin: String,
        line: usize,
        expected: usize,
        got: usize,
    },
}

/// Reads a reference file's text.
pub(crate) fn read(path: &Path) -> Result<String, ReferenceError> {
    std::fs::read_to_string(path).map_err(|source| ReferenceError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// The one reader of both reference files' layout: JSON Lines, a header first, then
/// at least one record; blank lines skipped; errors name the file and the line.
pub(crate) struct JsonLines<'a> {
    /// The non-blank lines with their 0-based line numbers.
    lines: Vec<(usize, &'a str)>,
    origin: &'a str,
}

impl<'a> JsonLines<'a> {
    pub(crate) fn of(text: &'a str, origin: &'a str) -> Self {
        let lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .collect();
        JsonLines { lines, origin }
    }

    /// An error at 0-based line `line`.
    pub(crate) fn bad(&self, line: usize, why: String) -> ReferenceError {
        ReferenceError::Line {
            origin: self.origin.to_owned(),
            line: line + 1,
            why,
        }
    }

    /// An error at the header unless its `kind` is `expected`: a reference file of
    /// another contract is refused by name.
    pub(crate) fn expect_kind(&self, kind: &str, expected: &str) -> Result<(), ReferenceError> {
        match kind == expected {
            true => Ok(()),
            false => Err(self.bad(
                self.first_line(),
                format!("kind {kind:?}, expected {expected:?}"),
            )),
        }
    }

    /// The header line's 0-based number.
    pub(crate) fn first_line(&self) -> usize {
        self.lines.first().map_or(0, |(n, _)| *n)
    }

    /// The header and every record with its line number; `header` and `record` say
    /// what each line should be, for errors.
    pub(crate) fn read<H: DeserializeOwned, R: DeserializeOwned>(
        &self,
        header: &str,
        record: &str,
    ) -> Result<(H, Vec<(usize, R)>), ReferenceError> {
        let Some(&(n, first)) = self.lines.first() else {
            return Err(self.bad(0, "empty: expected a header line".to_owned()));
        };
        let head =
            serde_json::from_str(first).map_err(|e| self.bad(n, format!("not {header}: {e}")))?;
        let records = self.lines[1..]
            .iter()
            .map(|&(n, line)| {
                serde_json::from_str(line)
                    .map(|r| (n, r))
                    .map_err(|e| self.bad(n, format!("not {record}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if records.is_empty() {
            return Err(ReferenceError::NoTexts(self.origin.to_owned()));
        }
        Ok((head, records))
    }
}
