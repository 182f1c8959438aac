//! The speech model's own transcripts, which SPR-001 holds a server's against
//! (`--speech-reference FILE`), and how far two transcripts agree.
//!
//! A transcript from a random-weight model says nothing about the audio's words, but
//! it is a fingerprint of the weights and the decoding: another model shares no more
//! than a dozen characters with it (three other seeds of the lab's tiny Whisper: 9 to
//! 11), the same model decoded greedily repeats it to the byte (vLLM), and the same
//! model decoded by other rules (timestamp mode, beam search, a window of half the
//! decoder's context) shares hundreds of characters with it.

use crate::reference::{JsonLines, ReferenceError, read};
use serde::Deserialize;
use std::path::Path;

/// A speech model's known answers: what its own library transcribes the suite's clips
/// to, decoding greedily at temperature 0 with language `en`, as
/// `lab/speech_reference.py` writes them.
///
/// ```text
/// {"kind": "speech", "model": "embedcheck/whisper-tiny-random", "library": "transformers", "version": "4.57.6", "language": "en", "temperature": 0}
/// {"id": "speech-notimestamps", "clip": "speech.wav", "sha256": "…", "mode": "notimestamps", "text": "…", "tokens": [1234, …]}
/// ```
///
/// Other keys (the prompt, the weights' digest, each step's margin) are kept by the
/// writer for people and are not read.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeechReference {
    pub header: SpeechHeader,
    pub cases: Vec<SpeechCase>,
    /// Where it was read from, as reports show it.
    pub origin: String,
}

/// The header of a speech reference file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct SpeechHeader {
    pub kind: String,
    pub model: String,
    pub library: String,
    pub version: String,
    /// The language the library was told the clip is in (its prompt's language token).
    pub language: String,
}

/// One clip as the library transcribes it in one decoding mode.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct SpeechCase {
    pub id: String,
    /// The file name the clip is uploaded under.
    pub clip: String,
    /// The WAV file's SHA-256: a case is judged only against the very clip it was made
    /// from.
    pub sha256: String,
    /// `notimestamps` (the prompt ends `<|notimestamps|>`, as vLLM decodes) or
    /// `timestamps` (the prompt without it, as whisper.cpp and faster-whisper decode).
    pub mode: String,
    pub text: String,
    /// The token ids the library chose after the prompt.
    pub tokens: Vec<u32>,
}

impl SpeechCase {
    /// The decoding mode as reasons name it.
    pub fn decoding(&self) -> &'static str {
        match self.mode.as_str() {
            "timestamps" => "in timestamp mode",
            _ => "without timestamps",
        }
    }
}

impl SpeechReference {
    /// Reads a speech reference file.
    pub fn load(path: &Path) -> Result<SpeechReference, ReferenceError> {
        let text = read(path)?;
        SpeechReference::parse(&text, &path.display().to_string())
    }

    /// Parses the JSON Lines of a speech reference file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<SpeechReference, ReferenceError> {
        let lines = JsonLines::of(text, origin);
        let (header, cases) = lines.read::<SpeechHeader, SpeechCase>(
            "a speech header {kind, model, library, version, language}",
            "a case {id, clip, sha256, mode, text, tokens}",
        )?;
        lines.expect_kind(&header.kind, "speech")?;
        if let Some((n, case)) = cases
            .iter()
            .find(|(_, c)| !matches!(c.mode.as_str(), "notimestamps" | "timestamps"))
        {
            return Err(lines.bad(
                *n,
                format!(
                    "mode {:?}, expected \"notimestamps\" or \"timestamps\"",
                    case.mode
                ),
            ));
        }
        Ok(SpeechReference {
            header,
            cases: cases.into_iter().map(|(_, case)| case).collect(),
            origin: origin.to_owned(),
        })
    }

    /// Who made the transcripts, as reasons name it: `transformers 4.57.6`.
    pub fn made_by(&self) -> String {
        let SpeechHeader {
            library, version, ..
        } = &self.header;
        format!("{library} {version}")
    }

    /// The cases made from the clip whose digest is `sha256`.
    pub fn cases_of(&self, sha256: &str) -> Vec<&SpeechCase> {
        self.cases.iter().filter(|c| c.sha256 == sha256).collect()
    }
}

/// How far a server's transcript agrees with the library's, in characters, after
/// line breaks are dropped (whisper.cpp joins its segments with them; OpenAI
/// concatenates) and both are trimmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agreement {
    /// The same text.
    Exact { chars: usize },
    /// The server's text is the library's first `chars` characters of `of`: the
    /// server stopped sooner (openai-whisper, whisper.cpp and faster-whisper decode a
    /// window to half the decoder's context).
    Prefix { chars: usize, of: usize },
    /// The texts differ from character `from` on, but share a run of `run` characters:
    /// the same model decoded by other rules.
    Shared { run: usize, from: usize },
    /// The texts share no run of `run_needed` characters: the longest is `run`.
    Unrelated { run: usize, run_needed: usize },
}

impl Agreement {
    /// How many characters agree: what the best of several cases is chosen by.
    fn weight(self) -> (u8, usize) {
        match self {
            Agreement::Exact { chars } => (3, chars),
            Agreement::Prefix { chars, .. } => (2, chars),
            Agreement::Shared { run, .. } => (1, run),
            Agreement::Unrelated { run, .. } => (0, run),
        }
    }

    /// The better of two agreements.
    pub fn better(self, other: Agreement) -> Agreement {
        if other.weight() > self.weight() {
            other
        } else {
            self
        }
    }
}

/// The run two transcripts must share to be one model's: 64 characters, or half the
/// library's text where that is shorter (a trained model's transcript of a short clip
/// is a sentence). Another model's greedy transcript shares at most 11 with the tiny
/// Whisper's (three seeds measured); the same model in timestamp mode 2,294, decoded
/// by faster-whisper 429.
fn run_needed(library_chars: usize) -> usize {
    (library_chars / 2).clamp(1, 64)
}

/// How far `server` agrees with `library`.
pub fn agreement(server: &str, library: &str) -> Agreement {
    let server: Vec<char> = normalised(server).chars().collect();
    let library: Vec<char> = normalised(library).chars().collect();
    let needed = run_needed(library.len());
    if server == library {
        return Agreement::Exact {
            chars: library.len(),
        };
    }
    if server.len() >= needed && library.starts_with(&server) {
        return Agreement::Prefix {
            chars: server.len(),
            of: library.len(),
        };
    }
    let run = longest_common_run(&server, &library);
    if run >= needed {
        let from = server
            .iter()
            .zip(&library)
            .take_while(|(a, b)| a == b)
            .count();
        return Agreement::Shared { run, from };
    }
    Agreement::Unrelated {
        run,
        run_needed: needed,
    }
}

/// The text without line breaks, trimmed.
fn normalised(text: &str) -> String {
    text.replace(['\n', '\r'], "").trim().to_owned()
}

/// The length of the longest run of characters both hold (dynamic programming over
/// one row: a few milliseconds for two 2,500-character transcripts).
fn longest_common_run(a: &[char], b: &[char]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    let mut best = 0;
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y { diagonal + 1 } else { 0 };
            best = best.max(row[j + 1]);
            diagonal = above;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIBRARY: &str = " sólo sóloмотритемотрите ients elles existed existedNewsNews PC Birmingham bakery autonomous tries fiction";

    #[test]
    fn the_same_text_is_exact_whatever_its_line_breaks() {
        assert_eq!(
            agreement(
                " sólo sóloмотрите\nмотрите ients",
                " sólo sóloмотритемотрите ients "
            ),
            Agreement::Exact { chars: 29 }
        );
    }

    #[test]
    fn a_text_that_stops_sooner_is_a_prefix() {
        let half: String = LIBRARY.chars().take(70).collect();
        assert_eq!(
            agreement(&half, LIBRARY),
            Agreement::Prefix { chars: 69, of: 105 }
        );
        // Too short to tell one model from another.
        assert!(matches!(
            agreement(" sólo", LIBRARY),
            Agreement::Unrelated { run_needed: 52, .. }
        ));
    }

    #[test]
    fn other_rules_share_a_run_and_another_model_does_not() {
        let other_start = format!("ossible bakery essas{}", &LIBRARY[1..]);
        assert_eq!(
            agreement(&other_start, LIBRARY),
            Agreement::Shared { run: 105, from: 0 }
        );
        let another_model = " entste Evansey trips intric intric intric intric intric int";
        assert_eq!(
            agreement(another_model, LIBRARY),
            Agreement::Unrelated {
                run: 4,
                run_needed: 52
            }
        );
        let unrelated = Agreement::Unrelated {
            run: 4,
            run_needed: 52,
        };
        let shared = Agreement::Shared { run: 60, from: 0 };
        assert_eq!(unrelated.better(shared), shared);
        assert_eq!(shared.better(unrelated), shared);
    }

    /// The lab's file holds the suite's own clip in both modes: a clip that changes
    /// makes it stale, and SPR-001 would skip.
    #[test]
    fn the_lab_speech_reference_is_of_the_suites_clip() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/reference/whisper-tiny-random.jsonl");
        let reference = SpeechReference::load(&path).unwrap();
        let clip = crate::contracts::speech::audio::speech_wav();
        let modes: Vec<&str> = reference
            .cases_of(clip.upload.digest())
            .iter()
            .map(|c| c.mode.as_str())
            .collect();
        assert_eq!(modes, ["notimestamps", "timestamps"]);
        assert_eq!(reference.made_by(), "transformers 4.57.6");
    }

    #[test]
    fn a_file_of_another_kind_or_mode_is_refused() {
        let header = "{\"kind\": \"speech\", \"model\": \"m\", \"library\": \"transformers\", \"version\": \"4\", \"language\": \"en\"}";
        let case = |mode: &str| {
            format!(
                "{header}\n{{\"id\": \"a\", \"clip\": \"speech.wav\", \"sha256\": \"00\", \"mode\": \"{mode}\", \"text\": \" a\", \"tokens\": [1]}}\n"
            )
        };
        let reference = SpeechReference::parse(&case("timestamps"), "r").unwrap();
        assert_eq!(reference.made_by(), "transformers 4");
        assert_eq!(reference.cases_of("00").len(), 1);
        assert!(SpeechReference::parse(&case("beam"), "r").is_err());
        let rerank = case("timestamps").replace("\"speech\"", "\"rerank\"");
        assert!(SpeechReference::parse(&rerank, "r").is_err());
    }
}
