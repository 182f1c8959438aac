//! A stratified sample of a large corpus: a migration or a recording embeds every
//! document it is given, and a user's corpus (a BEIR set of 57,000 documents, say) is
//! more than a budget should spend. Failures hit some texts, not the mean, so the sample
//! keeps every kind of text the corpus has: each script, each length (the longest
//! included, where truncation shows) and the risky ones (decomposed Unicode, special
//! tokens, code, emoji), in proportion, at least one of each kind.

use super::corpus::{Corpus, Document};
use std::collections::{BTreeMap, BTreeSet};
use unicode_normalization::UnicodeNormalization;

/// Documents a sample keeps by default: 2,000 documents of 1024 dimensions record in
/// about 5.5 MB and cost a few hundred thousand tokens.
pub const DEFAULT_DOCUMENTS: usize = 2000;

/// The stratum a text falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Stratum {
    script: Script,
    length: Length,
    risky: bool,
}

/// The script most of a text's letters are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Script {
    Latin,
    Hangul,
    Han,
    Kana,
    Cyrillic,
    Arabic,
    Other,
}

/// A text's length in characters: short, medium, long, and past what a 512-token model
/// reads (about four characters a token).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Length {
    Short,
    Medium,
    Long,
    OverLimit,
}

fn script_of(c: char) -> Option<Script> {
    Some(match c as u32 {
        0x41..=0x5a | 0x61..=0x7a | 0xc0..=0x24f => Script::Latin,
        0xac00..=0xd7a3 | 0x1100..=0x11ff | 0x3130..=0x318f => Script::Hangul,
        0x4e00..=0x9fff | 0x3400..=0x4dbf => Script::Han,
        0x3040..=0x30ff => Script::Kana,
        0x400..=0x4ff => Script::Cyrillic,
        0x600..=0x6ff => Script::Arabic,
        _ if c.is_alphabetic() => Script::Other,
        _ => return None,
    })
}

fn stratum(text: &str) -> Stratum {
    let mut counts: BTreeMap<Script, usize> = BTreeMap::new();
    for script in text.chars().filter_map(script_of) {
        *counts.entry(script).or_default() += 1;
    }
    let script = counts
        .iter()
        .max_by_key(|(_, n)| **n)
        .map_or(Script::Other, |(s, _)| *s);
    let length = match text.chars().count() {
        0..200 => Length::Short,
        200..1000 => Length::Medium,
        1000..2000 => Length::Long,
        _ => Length::OverLimit,
    };
    Stratum {
        script,
        length,
        risky: risky(text),
    }
}

/// Texts servers get wrong more than others: decomposed Unicode, special tokens, code
/// and emoji.
fn risky(text: &str) -> bool {
    const MARKERS: [&str; 8] = [
        "<s>",
        "</s>",
        "[CLS]",
        "[SEP]",
        "<|",
        "```",
        "def ",
        "function(",
    ];
    text.nfc().ne(text.chars())
        || MARKERS.iter().any(|m| text.contains(m))
        || text
            .chars()
            .any(|c| matches!(c as u32, 0x1f300..=0x1faff | 0x2600..=0x27bf))
}

/// A fixed order of a stratum's documents that does not follow the file's order.
fn shuffled_key(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `corpus` itself when it has at most `max` documents; else the documents every query
/// needs (its relevant ones) and, up to `max`, a share of each stratum in proportion to
/// its size, at least one from each, in a fixed pseudo-random order. Queries whose
/// relevant documents did not all fit are left out.
pub fn stratified(corpus: Corpus, max: usize) -> Corpus {
    let total = corpus.documents.len();
    if total <= max {
        return corpus;
    }
    let mut keep: BTreeSet<&str> = BTreeSet::new();
    for query in &corpus.queries {
        let needed: Vec<&str> = query.relevant.iter().map(String::as_str).collect();
        let new = needed.iter().filter(|id| !keep.contains(**id)).count();
        if keep.len() + new <= max {
            keep.extend(needed);
        }
    }
    let mut strata: BTreeMap<Stratum, Vec<&Document>> = BTreeMap::new();
    for document in &corpus.documents {
        strata
            .entry(stratum(&document.text))
            .or_default()
            .push(document);
    }
    let room = max - keep.len();
    for members in strata.values_mut() {
        members.sort_by_key(|d| shuffled_key(&d.id));
    }
    // One of each kind first, so that no stratum is crowded out; then each its share.
    for members in strata.values() {
        if keep.len() < max {
            keep.insert(&members[0].id);
        }
    }
    for members in strata.values() {
        let share = (members.len() * room).div_ceil(total);
        for document in members.iter().take(share) {
            if keep.len() >= max {
                break;
            }
            keep.insert(&document.id);
        }
    }
    let kept: BTreeSet<String> = keep.into_iter().map(str::to_owned).collect();
    let documents: Vec<Document> = corpus
        .documents
        .iter()
        .filter(|d| kept.contains(&d.id))
        .cloned()
        .collect();
    let queries = corpus
        .queries
        .iter()
        .filter(|q| q.relevant.iter().all(|r| kept.contains(r)))
        .cloned()
        .collect();
    Corpus {
        origin: format!(
            "{} (a stratified sample of {} of its {total} documents)",
            corpus.origin,
            documents.len()
        ),
        documents,
        queries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migration::corpus::Query;

    fn document(id: String, text: String) -> Document {
        Document {
            id,
            lang: "und".to_owned(),
            text,
        }
    }

    fn corpus(documents: Vec<Document>, queries: Vec<Query>) -> Corpus {
        Corpus {
            documents,
            queries,
            origin: "test".to_owned(),
        }
    }

    #[test]
    fn texts_are_told_apart_by_script_length_and_risk() {
        assert_eq!(stratum("The harbour at dawn.").script, Script::Latin);
        assert_eq!(
            stratum("서울은 대한민국의 수도입니다.").script,
            Script::Hangul
        );
        assert_eq!(stratum(&"word ".repeat(500)).length, Length::OverLimit);
        assert!(stratum("cafe\u{301}").risky, "decomposed é");
        assert!(stratum("[CLS] hidden").risky);
        assert!(!stratum("plain text").risky);
    }

    #[test]
    fn a_small_corpus_is_kept_whole() {
        let c = corpus(
            vec![document("d1".into(), "a".into())],
            vec![Query {
                id: "q1".into(),
                lang: "en".into(),
                text: "a".into(),
                relevant: vec!["d1".into()],
            }],
        );
        assert_eq!(stratified(c, 10).origin, "test");
    }

    #[test]
    fn a_sample_keeps_every_stratum_and_every_judged_document() {
        let mut documents: Vec<Document> = (0..1000)
            .map(|i| document(format!("en{i}"), format!("An English note number {i}.")))
            .collect();
        documents.push(document(
            "ko0".into(),
            "서울은 대한민국의 수도입니다.".into(),
        ));
        documents.push(document("long0".into(), "word ".repeat(600)));
        let queries = vec![Query {
            id: "q1".into(),
            lang: "en".into(),
            text: "note 977".into(),
            relevant: vec!["en977".into()],
        }];
        let sample = stratified(corpus(documents, queries), 50);
        let ids: BTreeSet<&str> = sample.documents.iter().map(|d| d.id.as_str()).collect();
        assert!(sample.documents.len() <= 50);
        assert!(
            ids.contains("ko0") && ids.contains("long0"),
            "the rare strata"
        );
        assert!(ids.contains("en977"), "the judged document");
        assert_eq!(sample.queries.len(), 1);
        assert!(
            sample
                .origin
                .ends_with("(a stratified sample of 50 of its 1002 documents)"),
            "{}",
            sample.origin
        );
        assert_eq!(
            stratified(corpus(sample.documents.clone(), Vec::new()), 50).documents,
            sample.documents
        );
    }
}
